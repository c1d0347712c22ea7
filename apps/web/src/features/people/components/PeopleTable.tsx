import { Alert, Badge, Button, Group, Select, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconAlertTriangle, IconLogout, IconUserMinus } from '@tabler/icons-react';
import { useState } from 'react';
import { errorMessage } from '../../../api/client';
import type { Person, Role } from '../../../api/types';
import { Timestamp } from '../../../components/ui/Timestamp';
import { useChangeRole, useEndSessions, useRemovePerson } from '../api';
import { ROLE_COLOR, ROLES } from '../../../api/roles';

/** The organization's people; an admin changes their roles, ends their sessions and removes them. */
export function PeopleTable({
  people,
  meId,
  organization,
  manage,
}: {
  people: Person[];
  meId: string | null;
  organization: string;
  manage: boolean;
}) {
  const changeRole = useChangeRole();
  const endSessions = useEndSessions();
  const remove = useRemovePerson();
  // A refusal stays above the table until closed: the last admin's role, a person removed meanwhile.
  const [problem, setProblem] = useState<{ title: string; message: string } | null>(null);
  const refused = (title: string) => (err: unknown) => setProblem({ title, message: errorMessage(err) });

  const onRole = (p: Person, role: Role) => {
    setProblem(null);
    changeRole.mutate(
      { id: p.id, role },
      {
        onSuccess: () => notifications.show({ color: 'teal', message: `${p.name} is now ${role}` }),
        onError: refused(`${p.name}'s role was not changed`),
      },
    );
  };
  const onEndSessions = (p: Person) => {
    if (!window.confirm(`Sign ${p.name} (${p.email}) out of ${organization} everywhere? They can sign in again.`))
      return;
    endSessions.mutate(p.id, {
      onSuccess: () => notifications.show({ color: 'teal', message: `${p.name}'s sessions ended` }),
      onError: refused(`${p.name}'s sessions were not ended`),
    });
  };
  const onRemove = (p: Person) => {
    const question =
      `Remove ${p.name} (${p.email}) from ${organization}? Their sessions in ${organization} end at once, and the ` +
      `API keys they made in it are revoked. Their account stays, for their other organizations.`;
    if (!window.confirm(question)) return;
    remove.mutate(p.id, {
      onSuccess: () => notifications.show({ color: 'teal', message: `${p.name} removed from ${organization}` }),
      onError: refused(`${p.name} was not removed`),
    });
  };

  return (
    <Stack gap={0}>
      {problem && (
        <Alert
          color="red"
          variant="light"
          icon={<IconAlertTriangle size={18} />}
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setProblem(null)}
          title={problem.title}
          role="alert"
          m="sm"
        >
          {problem.message}
        </Alert>
      )}
      <Table.ScrollContainer minWidth={760}>
        <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="People" style={{ whiteSpace: 'nowrap' }}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Email</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Last seen</Table.Th>
              {manage && (
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              )}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {people.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td fw={500}>
                  <Group gap={6} wrap="nowrap">
                    {p.name}
                    {p.id === meId && (
                      <Badge size="xs" variant="outline">
                        you
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{p.email}</Text>
                </Table.Td>
                <Table.Td>
                  {manage ? (
                    <Select
                      size="xs"
                      w={120}
                      aria-label={`Role of ${p.name}`}
                      data={ROLES}
                      value={p.role}
                      allowDeselect={false}
                      disabled={changeRole.isPending && changeRole.variables?.id === p.id}
                      onChange={(role) => role && role !== p.role && onRole(p, role as Role)}
                    />
                  ) : (
                    <Badge variant="light" color={ROLE_COLOR[p.role]}>
                      {p.role}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  {p.last_seen_at ? (
                    <Timestamp value={p.last_seen_at} size="sm" />
                  ) : (
                    <Text span size="sm" c="dimmed">
                      never
                    </Text>
                  )}
                </Table.Td>
                {manage && (
                  <Table.Td>
                    <Group gap={4} justify="flex-end" wrap="nowrap">
                      <Button
                        size="xs"
                        variant="subtle"
                        color="gray"
                        leftSection={<IconLogout size={14} />}
                        loading={endSessions.isPending && endSessions.variables === p.id}
                        onClick={() => onEndSessions(p)}
                        aria-label={`End sessions of ${p.name}`}
                      >
                        End sessions
                      </Button>
                      <Button
                        size="xs"
                        variant="subtle"
                        color="red"
                        leftSection={<IconUserMinus size={14} />}
                        loading={remove.isPending && remove.variables === p.id}
                        onClick={() => onRemove(p)}
                        aria-label={`Remove ${p.name}`}
                      >
                        Remove
                      </Button>
                    </Group>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
