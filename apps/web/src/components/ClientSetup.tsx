import {
  ActionIcon,
  Alert,
  Anchor,
  Button,
  Code,
  Group,
  Paper,
  Stack,
  Table,
  Tabs,
  Text,
  Tooltip,
} from '@mantine/core';
import { IconAlertTriangle, IconEye, IconEyeOff, IconKey } from '@tabler/icons-react';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../api/client';
import { useMe } from '../api/me';
import type { WhoAmI } from '../api/types';
import { randomUuid } from '../lib/uuid';
import { apiBaseUrl, KEY_PLACEHOLDER, maskKey, setupSnippets } from './first-run/snippets';
import { useCreateApiKey } from '../api/api-keys';
import { canMakeWritingKey, FIRST_TRACE_KEY } from './first-run/first-trace-key';
import { CopyIcon } from './ui/CopyField';

/** A snippet as shown (its key masked until revealed), copied whole. */
function Snippet({ code, shown, name }: { code: string; shown: string; name: string }) {
  return (
    <div role="group" aria-label={name} style={{ position: 'relative' }}>
      <div style={{ position: 'absolute', top: 6, right: 6 }}>
        <CopyIcon value={code} label={`Copy the ${name}`} />
      </div>
      <Code block fz="xs" style={{ whiteSpace: 'pre', overflowX: 'auto', paddingRight: 40 }}>
        {shown}
      </Code>
    </div>
  );
}

function Step({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Stack gap={6}>
      <Text size="sm" fw={600}>
        {title}
      </Text>
      {children}
    </Stack>
  );
}

/** The official clients' default is the vendor's service: said plainly, beside their snippets. */
function VendorWarning({ when }: { when: string }) {
  return (
    <Alert
      color="yellow"
      variant="light"
      icon={<IconAlertTriangle size={18} />}
      title="Set PAREA_BASE_URL, or your traces leave this server"
    >
      Without it, the Parea client sends every trace, and your API key, to Parea&apos;s hosted service. {when}
    </Alert>
  );
}

type KeyCellProps = {
  me: WhoAmI | undefined;
  apiKey: string | null;
  revealed: boolean;
  onReveal: (revealed: boolean) => void;
  create: ReturnType<typeof useCreateApiKey>;
};

/** The key the snippets carry: made here (a signed-in person has a cookie, not a key), or where to get one. */
function KeyCell({ me, apiKey, revealed, onReveal, create }: KeyCellProps) {
  if (apiKey)
    return (
      <Stack gap={4}>
        <Group gap={4} wrap="nowrap">
          <Code data-testid="first-run-key">{revealed ? apiKey : maskKey(apiKey)}</Code>
          <Tooltip label={revealed ? 'Hide the key' : 'Show the key'} withArrow>
            <ActionIcon
              variant="subtle"
              color="gray"
              onClick={() => onReveal(!revealed)}
              aria-label="Show the key"
              aria-pressed={revealed}
            >
              {revealed ? <IconEyeOff size={16} /> : <IconEye size={16} />}
            </ActionIcon>
          </Tooltip>
          <CopyIcon value={apiKey} label="Copy the API key" />
        </Group>
        <Text size="xs" c="dimmed">
          Copy it now: it is shown this once. It is yours, a member&apos;s key named “{FIRST_TRACE_KEY.label}”, listed
          under your API keys, where you can revoke it.
        </Text>
      </Stack>
    );
  if (!me) return <Code>{KEY_PLACEHOLDER}</Code>;
  if (!canMakeWritingKey(me))
    return (
      <Stack gap={4}>
        <Code>{KEY_PLACEHOLDER}</Code>
        <Text size="xs" c="dimmed">
          {me.user
            ? `Your role (${me.role}) cannot make a key that writes traces`
            : 'A session opened with a key makes no key'}
          : ask an admin of {me.organization_name} for a member&apos;s key, and put it where {KEY_PLACEHOLDER} stands.
        </Text>
      </Stack>
    );
  return (
    <Stack gap={6} align="flex-start">
      <Group gap="xs">
        <Code>{KEY_PLACEHOLDER}</Code>
        <Button
          size="compact-sm"
          variant="light"
          leftSection={<IconKey size={14} />}
          loading={create.isPending}
          onClick={() => create.mutate(FIRST_TRACE_KEY)}
        >
          Create an API key
        </Button>
      </Group>
      <Text size="xs" c="dimmed">
        A member&apos;s key named “{FIRST_TRACE_KEY.label}”, filled into every snippet below.
      </Text>
      {create.isError && (
        <Alert color="red" variant="light" icon={<IconAlertTriangle size={18} />} title="No key was made">
          {errorMessage(create.error)}
        </Alert>
      )}
    </Stack>
  );
}

/**
 * How to send traces here, each way in filled with this server's address, the project and a key made on
 * the spot. The official clients read their base URL (which includes /api/svc/v1) from PAREA_BASE_URL, so
 * pointing them here takes no code change, and forgetting it sends everything to the vendor.
 */
export function ClientSetup({ projectName = 'my-app' }: { projectName?: string }) {
  const me = useMe().data;
  const create = useCreateApiKey();
  const [revealed, setRevealed] = useState(false);
  // One id per visit: the trace the person sent is the one the snippet names.
  const [traceId] = useState(randomUuid);
  const { origin } = window.location;
  const apiKey = create.data?.key ?? null;
  const snippets = setupSnippets({ origin, apiKey: apiKey ?? KEY_PLACEHOLDER, projectName, traceId });
  const snippet = (name: string, code: string) => (
    <Snippet name={name} code={code} shown={apiKey && !revealed ? code.replaceAll(apiKey, maskKey(apiKey)) : code} />
  );
  const baseUrl = apiBaseUrl(origin);

  return (
    <Paper withBorder p="lg" radius="lg" w="100%" ta="left">
      <Stack gap="md">
        <Table withRowBorders={false} verticalSpacing={4} fz="sm" aria-label="This server">
          <Table.Tbody>
            <Table.Tr>
              <Table.Th w={110} fw={400} c="dimmed" scope="row">
                Base URL
              </Table.Th>
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  <Code>{baseUrl}</Code>
                  <CopyIcon value={baseUrl} label="Copy the base URL" />
                </Group>
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th fw={400} c="dimmed" scope="row">
                API key
              </Table.Th>
              <Table.Td>
                <KeyCell me={me} apiKey={apiKey} revealed={revealed} onReveal={setRevealed} create={create} />
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th fw={400} c="dimmed" scope="row">
                Project
              </Table.Th>
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  <Code>{projectName}</Code>
                  <CopyIcon value={projectName} label="Copy the project" />
                </Group>
              </Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>

        <Tabs defaultValue="python">
          <Tabs.List aria-label="Ways to send traces">
            <Tabs.Tab value="python">Python</Tabs.Tab>
            <Tabs.Tab value="typescript">TypeScript</Tabs.Tab>
            <Tabs.Tab value="curl">curl (first trace)</Tabs.Tab>
            <Tabs.Tab value="gateway">Gateway</Tabs.Tab>
            <Tabs.Tab value="otel">OpenTelemetry</Tabs.Tab>
          </Tabs.List>

          <Tabs.Panel value="python" pt="md">
            <Stack gap="md">
              <VendorWarning when="Python reads it when parea is imported: set it before your program starts." />
              <Step title="1. Install the client and point it here">
                {snippet('Python setup', snippets.pythonShell)}
              </Step>
              <Step title="2. Run this program in the same shell">{snippet('Python program', snippets.python)}</Step>
            </Stack>
          </Tabs.Panel>

          <Tabs.Panel value="typescript" pt="md">
            <Stack gap="md">
              <VendorWarning when="Set it in the environment before your program starts." />
              <Step title="1. Install the client and point it here">
                {snippet('TypeScript setup', snippets.typescriptShell)}
                <Text size="xs" c="dimmed">
                  The OpenAI client reads its own key from OPENAI_API_KEY.
                </Text>
              </Step>
              <Step title="2. Run this program in the same shell">
                {snippet('TypeScript program', snippets.typescript)}
              </Step>
            </Stack>
          </Tabs.Panel>

          <Tabs.Panel value="curl" pt="md">
            <Stack gap="xs">
              <Text size="sm">
                Send a first trace: the project is made on the way, and the trace is stamped with the time it arrives.
              </Text>
              {snippet('first-trace curl command', snippets.firstTrace)}
              <Text size="xs" c="dimmed">
                It answers {'{"trace_id": …, "sampled": true}'}; the trace then shows under the project.
              </Text>
            </Stack>
          </Tabs.Panel>

          <Tabs.Panel value="gateway" pt="md">
            <Stack gap="xs">
              <Text size="sm">Sightline calls the provider for you and traces the call, with its tokens and cost.</Text>
              {snippet('gateway curl command', snippets.gateway)}
              <Text size="xs" c="dimmed">
                It needs the organization&apos;s OpenAI key, saved in{' '}
                {me?.role === 'admin' ? (
                  <Anchor component={Link} to="/settings" inherit>
                    Settings → Provider keys
                  </Anchor>
                ) : (
                  'Settings → Provider keys by an admin'
                )}{' '}
                (or the server started with OPENAI_API_KEY).
              </Text>
            </Stack>
          </Tabs.Panel>

          <Tabs.Panel value="otel" pt="md">
            <Stack gap="xs">
              <Text size="sm">
                Any OpenTelemetry SDK or instrumentation (OpenInference, OpenLLMetry, the Vercel AI SDK) exports here
                with the standard variables:
              </Text>
              {snippet('OpenTelemetry variables', snippets.otel)}
              <Text size="xs" c="dimmed">
                The project is x-project-name&apos;s, else the service.name resource attribute.
              </Text>
            </Stack>
          </Tabs.Panel>
        </Tabs>
      </Stack>
    </Paper>
  );
}
