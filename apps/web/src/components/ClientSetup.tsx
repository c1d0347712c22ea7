import { Code, Group, Paper, Stack, Table, Tabs, Text } from '@mantine/core';
import { randomUuid } from '../lib/uuid';
import { CopyIcon } from './ui/CopyField';

function Snippet({ code, label }: { code: string; label: string }) {
  return (
    <div style={{ position: 'relative' }}>
      <div style={{ position: 'absolute', top: 6, right: 6 }}>
        <CopyIcon value={code} label={`Copy the ${label} snippet`} />
      </div>
      <Code block fz="xs" style={{ whiteSpace: 'pre', overflowX: 'auto', paddingRight: 40 }}>
        {code}
      </Code>
    </div>
  );
}

/** Where a program's key goes: the console holds none to fill in (a person signs in with a cookie). */
const API_KEY = '<your API key>';

/**
 * How to send traces here: the official clients read their base URL (which includes /api/svc/v1) from an
 * environment variable, so pointing them at this server takes no code change.
 */
export function ClientSetup({ projectName = 'my-app' }: { projectName?: string }) {
  const apiKey = API_KEY;
  const baseUrl = `${window.location.origin}/api/svc/v1`;
  const now = new Date().toISOString();
  const body = JSON.stringify(
    {
      trace_id: randomUuid(),
      project_name: projectName,
      trace_name: 'hello',
      inputs: { question: 'hi' },
      output: 'hello!',
      status: 'success',
      start_timestamp: now,
      end_timestamp: now,
    },
    null,
    2,
  ).replace(/\n/g, '\n  ');
  const curl = `curl -s ${baseUrl}/trace_log \\
  -H 'x-api-key: ${apiKey}' \\
  -H 'content-type: application/json' \\
  -d '${body}'`;
  // The clients' own names (variable, constructor) are theirs: the snippets say only what to give them.
  const python = `# The official Python client reads its base URL from an environment variable
# (<CLIENT>_BASE_URL, named in its docs); point it here:
export <CLIENT>_BASE_URL="${baseUrl}"

# then, where the client is created in your code:
#   api_key="${apiKey}"
#   project_name="${projectName}"`;
  const typescript = `// The official TypeScript client reads the same variable from process.env:
//   <CLIENT>_BASE_URL=${baseUrl}
// and takes the key and the project name where it is created:
//   apiKey: "${apiKey}"
//   projectName: "${projectName}"`;
  return (
    <Paper withBorder p="lg" radius="lg" w="100%" ta="left">
      <Stack gap="md">
        <Table withRowBorders={false} verticalSpacing={4} fz="sm">
          <Table.Tbody>
            {[
              ['Base URL', baseUrl],
              ['API key', apiKey],
              ['Project', projectName],
            ].map(([name, value]) => (
              <Table.Tr key={name}>
                <Table.Td w={110} c="dimmed">
                  {name}
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <Code>{value}</Code>
                    <CopyIcon value={value!} label={`Copy the ${name!.toLowerCase()}`} />
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Tabs defaultValue="curl">
          <Tabs.List>
            <Tabs.Tab value="curl">curl</Tabs.Tab>
            <Tabs.Tab value="python">Python</Tabs.Tab>
            <Tabs.Tab value="typescript">TypeScript</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="curl" pt="sm">
            <Text size="sm" mb="xs">
              Send a first trace; the project is created on the way:
            </Text>
            <Snippet code={curl} label="curl" />
          </Tabs.Panel>
          <Tabs.Panel value="python" pt="sm">
            <Snippet code={python} label="Python" />
          </Tabs.Panel>
          <Tabs.Panel value="typescript" pt="sm">
            <Snippet code={typescript} label="TypeScript" />
          </Tabs.Panel>
        </Tabs>
        <Text size="xs" c="dimmed">
          Make a key per service under Settings → API keys (or ask an admin), and put it where {API_KEY} stands.
        </Text>
      </Stack>
    </Paper>
  );
}
