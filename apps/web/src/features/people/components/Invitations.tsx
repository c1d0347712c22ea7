import { Button, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconX } from '@tabler/icons-react';
import { errorMessage } from '../../../api/client';
import type { Invitation } from '../../../api/types';
import { Timestamp } from '../../../components/ui/Timestamp';
import { useRevokeInvitation } from '../api';

/** The invitations not yet accepted, each revocable (its link stops working at once). */
export function InvitationsTable({ invitations }: { invitations: Invitation[] }) {
  const revoke = useRevokeInvitation();
  const onRevoke = (i: Invitation) => {
    if (!window.confirm(`Revoke the invitation of ${i.email}? Its link stops working.`)) return;
    revoke.mutate(i.id, {
      onSuccess: () => notifications.show({ color: 'teal', message: `Invitation of ${i.email} revoked` }),
      onError: (err) =>
        notifications.show({ color: 'red', title: 'Invitation not revoked', message: errorMessage(err) }),
    });
  };
  return (
    <Table.ScrollContainer minWidth={700}>
      <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Pending invitations">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Email</Table.Th>
            <Table.Th>Role</Table.Th>
            <Table.Th>Invited by</Table.Th>
            <Table.Th>Expires</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {invitations.map((i) => (
            <Table.Tr key={i.id}>
              <Table.Td fw={500}>{i.email}</Table.Td>
              <Table.Td>{i.role}</Table.Td>
              <Table.Td>
                {i.invited_by ? (
                  <Text size="sm" title={i.invited_by.email}>
                    {i.invited_by.name}
                  </Text>
                ) : (
                  <Text size="sm" c="dimmed">
                    a key
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Timestamp value={i.expires_at} size="sm" />
              </Table.Td>
              <Table.Td ta="right">
                <Button
                  size="xs"
                  variant="subtle"
                  color="red"
                  leftSection={<IconX size={14} />}
                  loading={revoke.isPending && revoke.variables === i.id}
                  onClick={() => onRevoke(i)}
                  aria-label={`Revoke the invitation of ${i.email}`}
                >
                  Revoke
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
