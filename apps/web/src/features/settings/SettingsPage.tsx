import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  Modal,
  Paper,
  PasswordInput,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconAlertTriangle, IconHistory, IconKey, IconPlus, IconTrash, IconUsers } from '@tabler/icons-react';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link } from 'react-router';
import { useApiKeys } from '../../api/api-keys';
import { errorMessage } from '../../api/client';
import { useMe } from '../../api/me';
import { ROLE_COLOR, ROLE_HELP } from '../../api/roles';
import type { ApiKeyCreated, Role, WhoAmI } from '../../api/types';
import { RoleSelect } from '../../components/RoleSelect';
import { CopyIcon } from '../../components/ui/CopyField';
import { DeleteButton } from '../../components/ui/DeleteButton';
import { EmptyState, LoadingState, QueryPanel } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useCreateApiKey } from '../../api/api-keys';
import { useDeleteProviderKey, useProviderKeys, useRevokeApiKey, useSaveProviderKey } from './api';
import { CriteriaSettings } from './components/CriteriaSettings';

export default function SettingsPage() {
  const me = useMe().data;
  if (!me) return <LoadingState label="Loading your account" />;
  if (me.role === 'admin')
    return (
      <SettingsFrame title="Settings" me={me}>
        <ApiKeys me={me} />
        <ProviderKeys />
        <CriteriaSettings />
      </SettingsFrame>
    );
  // A person who is not an admin manages their own keys; a key that is not an admin's manages none.
  if (me.user)
    return (
      <SettingsFrame title="Your API keys" me={me}>
        <ApiKeys me={me} />
      </SettingsFrame>
    );
  return (
    <EmptyState title="Settings are for admins">
      <Text size="sm" c="dimmed">
        Your role is {me.role}. Ask an admin of {me.organization_name} to manage keys.
      </Text>
      <PeopleLink me={me} />
    </EmptyState>
  );
}

const PeopleLink = ({ me }: { me: WhoAmI }) => (
  <Button component={Link} to="/settings/people" variant="default" leftSection={<IconUsers size={16} />}>
    {me.role === 'admin' ? 'People' : `See the people of ${me.organization_name}`}
  </Button>
);

function SettingsFrame({ title, me, children }: { title: string; me: WhoAmI; children: ReactNode }) {
  return (
    <Stack gap="xl" maw={1100} mx="auto">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2}>{title}</Title>
          <Text size="sm" c="dimmed">
            Organization {me.organization_name} · your role: {me.role}
          </Text>
        </div>
        <Group gap="xs">
          <PeopleLink me={me} />
          {me.role === 'admin' && (
            <Button component={Link} to="/settings/audit-log" variant="default" leftSection={<IconHistory size={16} />}>
              Audit log
            </Button>
          )}
        </Group>
      </Group>
      {children}
    </Stack>
  );
}

function ApiKeys({ me }: { me: WhoAmI }) {
  const isAdmin = me.role === 'admin';
  const keys = useApiKeys();
  const revoke = useRevokeApiKey();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);

  const onRevoke = (id: string, label: string | null) => {
    if (!window.confirm(`Revoke the key ${label ?? id}? Clients using it stop working at once.`)) return;
    setRevokeError(null);
    revoke.mutate(id, {
      onSuccess: () => notifications.show({ color: 'teal', message: `Key ${label ?? ''} revoked` }),
      onError: (err) => setRevokeError(errorMessage(err)),
    });
  };

  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <div>
          <Title order={3}>{isAdmin ? 'API keys' : 'Keys you made'}</Title>
          <Text size="sm" c="dimmed">
            {isAdmin
              ? 'Keys of this organization. Only their last four characters are kept readable.'
              : `For your programs: a key acts with a role no higher than yours, and is revoked if you leave ${me.organization_name}. Only its last four characters are kept readable.`}
          </Text>
        </div>
        <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
          Create a key
        </Button>
      </Group>
      {revokeError && (
        <Alert
          color="red"
          variant="light"
          icon={<IconAlertTriangle size={18} />}
          withCloseButton
          onClose={() => setRevokeError(null)}
          title="Not revoked"
        >
          {revokeError}
        </Alert>
      )}
      <QueryPanel
        query={keys}
        loading="Loading keys"
        empty={isAdmin ? undefined : 'You have made no key yet. A program sends one in its x-api-key header.'}
      >
        {(rows) => (
          <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="API keys">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Label</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Made by</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((k) => (
                <Table.Tr key={k.id}>
                  <Table.Td fw={500}>
                    {k.label ?? (
                      <Text span c="dimmed">
                        unlabelled
                      </Text>
                    )}
                    {k.id === me.key_id && (
                      <Badge ml={6} size="xs" variant="outline">
                        this session
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={ROLE_COLOR[k.role]}>
                      {k.role}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Code>{k.api_key}</Code>
                  </Table.Td>
                  <Table.Td>
                    {k.created_by ? (
                      <Text span size="sm" title={k.created_by.email}>
                        {k.created_by.name}
                      </Text>
                    ) : (
                      <Text span size="sm" c="dimmed">
                        service
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Timestamp value={k.created_at} size="sm" />
                  </Table.Td>
                  <Table.Td>
                    {k.last_used_at ? (
                      <Timestamp value={k.last_used_at} size="sm" />
                    ) : (
                      <Text span size="sm" c="dimmed">
                        never
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td ta="right">
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      leftSection={<IconTrash size={14} />}
                      loading={revoke.isPending && revoke.variables === k.id}
                      onClick={() => onRevoke(k.id, k.label)}
                      aria-label={`Revoke the key ${k.label ?? k.api_key}`}
                    >
                      Revoke
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryPanel>
      <CreateKeyModal
        me={me}
        opened={creating}
        onClose={() => setCreating(false)}
        onCreated={(k) => {
          setCreating(false);
          setCreated(k);
        }}
      />
      <Modal
        opened={!!created}
        onClose={() => setCreated(null)}
        title="Your new API key"
        size="lg"
        closeOnClickOutside={false}
      >
        {created && (
          <Stack>
            <Alert color="yellow" variant="light" icon={<IconKey size={18} />}>
              Copy it now: it is shown this once, and Sightline keeps only a hash of it.
            </Alert>
            <Group gap={4} wrap="nowrap">
              <Code block style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }} data-testid="new-key">
                {created.key}
              </Code>
              <CopyIcon value={created.key} label="Copy the key" />
            </Group>
            <Text size="sm" c="dimmed">
              {created.label} · {ROLE_HELP[created.role]}
            </Text>
            <Group justify="flex-end">
              <Button onClick={() => setCreated(null)}>I have copied it</Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}

function CreateKeyModal({
  me,
  opened,
  onClose,
  onCreated,
}: {
  me: WhoAmI;
  opened: boolean;
  onClose: () => void;
  onCreated: (k: ApiKeyCreated) => void;
}) {
  const create = useCreateApiKey();
  const [label, setLabel] = useState('');
  const [role, setRole] = useState<Role>(me.role === 'viewer' ? 'viewer' : 'member');
  // An admin's key for a service has no maker, so it outlives the admin's account.
  const [service, setService] = useState(false);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      { role, label: label.trim(), service },
      {
        onSuccess: (k) => {
          setLabel('');
          setService(false);
          create.reset();
          onCreated(k);
        },
      },
    );
  };
  return (
    <Modal opened={opened} onClose={onClose} title="Create an API key">
      <Stack component="form" onSubmit={submit}>
        <TextInput
          label="Label"
          description="Who holds it: a person's email or a service's name"
          placeholder="ada@example.com"
          value={label}
          onChange={(e) => setLabel(e.currentTarget.value)}
          required
          data-autofocus
        />
        <RoleSelect value={role} onChange={setRole} highest={me.role} />
        {me.role === 'admin' && (
          <Checkbox
            label="A service's key"
            description="Made by no one: it stays when you leave the organization. Otherwise the key is yours."
            checked={service}
            onChange={(e) => setService(e.currentTarget.checked)}
          />
        )}
        {create.isError && (
          <Alert color="red" variant="light">
            {errorMessage(create.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending} disabled={!label.trim()}>
            Create
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function ProviderKeys() {
  const keys = useProviderKeys();
  const save = useSaveProviderKey();
  const remove = useDeleteProviderKey();
  const [provider, setProvider] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(
      { provider: provider.trim(), api_key: apiKey, base_url: baseUrl.trim() || null },
      {
        onSuccess: () => {
          setApiKey('');
          setBaseUrl('');
          setProvider('');
          notifications.show({ color: 'teal', message: 'Provider key saved' });
        },
      },
    );
  };
  return (
    <Stack gap="sm">
      <div>
        <Title order={3}>Provider keys</Title>
        <Text size="sm" c="dimmed">
          Keys the completion gateway uses for this organization's calls, sealed at rest. A request's own key, then
          these, then the server's.
        </Text>
      </div>
      <QueryPanel
        query={keys}
        loading="Loading provider keys"
        empty="No provider key saved: completions use the server's keys, if it has any."
      >
        {(rows) => (
          <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Provider keys">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Provider</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Base URL</Table.Th>
                <Table.Th>Updated</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((k) => (
                <Table.Tr key={k.provider}>
                  <Table.Td fw={500}>{k.provider}</Table.Td>
                  <Table.Td>
                    <Code>{k.api_key}</Code>
                  </Table.Td>
                  <Table.Td>
                    {k.base_url ?? (
                      <Text span c="dimmed" size="sm">
                        provider's own
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Timestamp value={k.updated_at} size="sm" />
                  </Table.Td>
                  <Table.Td ta="right">
                    <DeleteButton
                      label={`Delete the ${k.provider} key`}
                      question={`Delete the saved ${k.provider} key?`}
                      onDelete={() => remove.mutateAsync(k.provider)}
                    />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryPanel>
      <Paper withBorder radius="md" p="md" component="form" onSubmit={submit} aria-label="Save a provider key">
        <Stack gap="sm">
          <Text fw={600} size="sm">
            Save a provider key (replaces the saved one of that provider)
          </Text>
          <Group grow align="flex-start">
            <TextInput
              inputWrapperOrder={['label', 'input', 'description']}
              label="Provider"
              placeholder="openai"
              description="Lower-case: openai, anthropic, azure_openai, or a name of yours"
              value={provider}
              onChange={(e) => setProvider(e.currentTarget.value)}
              required
            />
            <PasswordInput
              inputWrapperOrder={['label', 'input', 'description']}
              description="Shown again only by its last 4 characters"
              label="API key"
              value={apiKey}
              onChange={(e) => setApiKey(e.currentTarget.value)}
              required
              autoComplete="off"
            />
            <TextInput
              inputWrapperOrder={['label', 'input', 'description']}
              label="Base URL (optional)"
              placeholder="https://…"
              description="For OpenAI-compatible servers"
              value={baseUrl}
              onChange={(e) => setBaseUrl(e.currentTarget.value)}
            />
          </Group>
          {save.isError && (
            <Alert color="red" variant="light">
              {errorMessage(save.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button type="submit" loading={save.isPending} disabled={!provider.trim() || !apiKey}>
              Save
            </Button>
          </Group>
        </Stack>
      </Paper>
    </Stack>
  );
}
