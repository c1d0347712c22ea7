import {
  Badge,
  Button,
  Grid,
  Group,
  NavLink,
  Paper,
  Popover,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconRocket } from '@tabler/icons-react';
import { diffLines } from 'diff';
import { useMemo, useState } from 'react';
import { errorMessage } from '../../api/client';
import { usePermissions } from '../../api/roles';
import type { Deployment, PromptVersion } from '../../api/types';
import { DiffParts } from '../../components/WordDiff';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { oneOf } from '../../lib/url-codec';
import { useDeploy, useDeployments, usePromptVersions } from './api';
import { DeploymentHistory } from './components/DeploymentHistory';
import { MoveDeploymentModal, type DeploymentMove } from './components/MoveDeploymentModal';
import { Playground } from './components/Playground';
import { promptsOf, promptText, type Prompt } from './lib/prompts';
import { BLANK, promptsCodec, TABS } from './url-state';

/**
 * Prompts by name: their versions (immutable), the deployments pointing at them, a diff between any two
 * versions, and a playground that runs a version (or a blank prompt) through the gateway.
 */
export default function PromptsPage() {
  const versions = usePromptVersions();
  const deployments = useDeployments();
  const [view, set] = useUrlState(promptsCodec);
  const prompts = useMemo(
    () => promptsOf(versions.data ?? [], deployments.data ?? []),
    [versions.data, deployments.data],
  );
  const { tab } = view;
  const selected = prompts.find((p) => p.name === view.name) ?? prompts[0];
  // The playground opens the version the URL names, else the selected prompt's newest; blank when asked.
  const opened =
    view.version === BLANK
      ? null
      : ((view.version !== null ? versions.data?.find((v) => String(v.id) === view.version) : undefined) ??
        selected?.versions[0] ??
        null);

  if (versions.isPending || deployments.isPending) return <LoadingState label="Loading the prompts" />;
  if (versions.isError) return <ErrorState error={versions.error} onRetry={() => versions.refetch()} />;
  if (deployments.isError) return <ErrorState error={deployments.error} onRetry={() => deployments.refetch()} />;
  return (
    <Stack gap="md">
      <Title order={2}>Prompts</Title>
      <Grid>
        <Grid.Col span={{ base: 12, md: 3 }}>
          <Paper withBorder radius="md" p={4} component="nav" aria-label="Prompts">
            {prompts.length === 0 && (
              <Text size="sm" c="dimmed" p="sm">
                No prompts yet: write one in the playground and save it.
              </Text>
            )}
            {prompts.map((p) => (
              <NavLink
                key={p.name}
                label={p.name}
                description={`${p.versions.length} version${p.versions.length === 1 ? '' : 's'}${p.deployments.length ? ` · ${p.deployments.length} deployed` : ''}`}
                active={p.name === selected?.name}
                onClick={() =>
                  set({ name: p.name, tab: tab === 'playground' ? 'playground' : 'versions', version: null })
                }
              />
            ))}
          </Paper>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 9 }}>
          <Tabs value={tab} onChange={(v) => v && set({ tab: oneOf(TABS, v, tab) })}>
            <Tabs.List mb="sm">
              <Tabs.Tab value="versions">Versions</Tabs.Tab>
              <Tabs.Tab value="diff">Diff</Tabs.Tab>
              <Tabs.Tab value="playground">Playground</Tabs.Tab>
            </Tabs.List>
            <Tabs.Panel value="versions">
              {selected ? (
                <VersionsPanel
                  prompt={selected}
                  deployments={deployments.data}
                  onOpen={(v) => set({ tab: 'playground', version: String(v.id) })}
                />
              ) : (
                <EmptyState title="No prompts yet">
                  <Text size="sm" c="dimmed">
                    Open the playground, write a prompt, run it, and save it as the first version.
                  </Text>
                </EmptyState>
              )}
            </Tabs.Panel>
            <Tabs.Panel value="diff">{selected && <DiffPanel prompt={selected} />}</Tabs.Panel>
            <Tabs.Panel value="playground">
              <Playground
                key={opened ? opened.id : 'blank'}
                versions={versions.data}
                initial={opened}
                onOpen={(v) => set(v ? { name: v.name, version: String(v.id) } : { version: BLANK })}
              />
            </Tabs.Panel>
          </Tabs>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

function VersionsPanel({
  prompt,
  deployments,
  onOpen,
}: {
  prompt: Prompt;
  /** Every deployment, of any prompt: a new deployment's id may name one of them. */
  deployments: Deployment[];
  onOpen: (v: PromptVersion) => void;
}) {
  const { canWrite } = usePermissions();
  const [move, setMove] = useState<DeploymentMove | null>(null);
  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        <Table aria-label={`Versions of ${prompt.name}`} verticalSpacing="sm" horizontalSpacing="md">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Version</Table.Th>
              <Table.Th>Model</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Deployed as</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {prompt.versions.map((v) => (
              <Table.Tr key={v.id}>
                <Table.Td fw={600}>v{v.version_number}</Table.Td>
                <Table.Td ff="monospace" fz="sm">
                  {v.provider}/{v.model}
                </Table.Td>
                <Table.Td>
                  <Timestamp value={v.created_at} size="sm" />
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {prompt.deployments
                      .filter((d) => d.prompt_version.id === v.id)
                      .map((d) => (
                        <Badge key={d.deployment_id} variant="light" tt="none">
                          {d.deployment_id}
                        </Badge>
                      ))}
                  </Group>
                </Table.Td>
                <Table.Td>
                  {/* On a narrow screen the two stack rather than push the table past its box. */}
                  <Group gap="xs" justify="flex-end">
                    <Button size="xs" variant="subtle" onClick={() => onOpen(v)}>
                      Open in playground
                    </Button>
                    {canWrite && <DeployMenu version={v} prompt={prompt} deployments={deployments} onMove={setMove} />}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Paper>
      {prompt.deployments.length > 0 && (
        <Stack gap="xs" component="section" aria-label="Deployments">
          <Title order={4}>Deployments</Title>
          {prompt.deployments.map((d) => (
            <DeploymentHistory key={d.deployment_id} deployment={d} canWrite={canWrite} onMove={setMove} />
          ))}
        </Stack>
      )}
      {move && <MoveDeploymentModal move={move} onClose={() => setMove(null)} />}
    </Stack>
  );
}

/**
 * Deploys a version: moves one of the prompt's deployments to it (once confirmed), or creates a deployment
 * with a new id. A popover dialog (focus kept inside, Escape closes), not a menu: a menu holds menu items,
 * not a form.
 */
function DeployMenu({
  version,
  prompt,
  deployments,
  onMove,
}: {
  version: PromptVersion;
  prompt: Prompt;
  deployments: Deployment[];
  onMove: (move: DeploymentMove) => void;
}) {
  const deploy = useDeploy();
  const [id, setId] = useState('');
  const [opened, setOpened] = useState(false);
  const run = (deployment_id: string | null) => {
    setOpened(false);
    // An id that names a deployment (of this prompt or another) moves it: that asks first, like the list.
    const existing = deployments.find((d) => d.deployment_id === deployment_id);
    if (existing) {
      onMove({ deploymentId: existing.deployment_id, from: existing.prompt_version, to: version });
      return;
    }
    deploy.mutate(
      { prompt_version_id: version.id, deployment_id },
      {
        onSuccess: (d) =>
          notifications.show({
            color: 'teal',
            message: `${d.deployment_id} now serves ${prompt.name} v${version.version_number}.`,
          }),
        onError: (err) => notifications.show({ color: 'red', message: errorMessage(err) }),
      },
    );
  };
  return (
    <Popover position="bottom-end" width={280} opened={opened} onChange={setOpened} trapFocus>
      <Popover.Target>
        <Button
          size="xs"
          variant="light"
          leftSection={<IconRocket size={14} />}
          loading={deploy.isPending}
          onClick={() => setOpened((o) => !o)}
        >
          Deploy
        </Button>
      </Popover.Target>
      <Popover.Dropdown p="xs">
        <Stack gap={4}>
          {prompt.deployments.length > 0 && (
            <Text size="xs" fw={500} c="dimmed">
              Move a deployment here
            </Text>
          )}
          {prompt.deployments.map((d) => (
            <Button
              key={d.deployment_id}
              size="xs"
              variant="subtle"
              justify="flex-start"
              fullWidth
              disabled={d.prompt_version.id === version.id}
              onClick={() => run(d.deployment_id)}
            >
              {d.deployment_id} (now v{d.prompt_version.version_number})
            </Button>
          ))}
          <Text size="xs" fw={500} c="dimmed">
            New deployment
          </Text>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              run(id.trim() || null);
            }}
          >
            <Group gap={4} wrap="nowrap">
              <TextInput
                size="xs"
                placeholder="id, or blank for a generated one"
                aria-label="New deployment id"
                value={id}
                onChange={(e) => setId(e.currentTarget.value)}
                style={{ flex: 1 }}
              />
              <Button size="xs" type="submit">
                Deploy
              </Button>
            </Group>
          </form>
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}

function DiffPanel({ prompt }: { prompt: Prompt }) {
  const options = prompt.versions.map((v) => ({ value: String(v.id), label: `v${v.version_number}` }));
  const [from, setFrom] = useState<string | null>(options[1]?.value ?? options[0]?.value ?? null);
  const [to, setTo] = useState<string | null>(options[0]?.value ?? null);
  const a = prompt.versions.find((v) => String(v.id) === from);
  const b = prompt.versions.find((v) => String(v.id) === to);
  const parts = useMemo(() => (a && b ? diffLines(promptText(a), promptText(b)) : []), [a, b]);
  return (
    <Stack gap="sm">
      <Group>
        <Select label="From" data={options} value={from} onChange={setFrom} allowDeselect={false} w={140} />
        <Select label="To" data={options} value={to} onChange={setTo} allowDeselect={false} w={140} />
      </Group>
      <Paper
        withBorder
        radius="md"
        p="md"
        aria-label={`Changes from ${a ? `v${a.version_number}` : ''} to ${b ? `v${b.version_number}` : ''}`}
      >
        <Text component="pre" size="sm" ff="monospace" m={0} style={{ whiteSpace: 'pre-wrap' }}>
          <DiffParts parts={parts} />
        </Text>
        {a?.id === b?.id && (
          <Text size="sm" c="dimmed" mt="xs">
            Pick two different versions to see what changed.
          </Text>
        )}
      </Paper>
    </Stack>
  );
}
