import {
  Anchor,
  Badge,
  Button,
  Checkbox,
  Group,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Tooltip,
  UnstyledButton,
  VisuallyHidden,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconArrowsSort, IconChevronDown, IconChevronUp, IconGitCompare, IconSearch } from '@tabler/icons-react';
import { useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import type { ExperimentSummary } from '../../api/types';
import { ProjectHeader } from '../../components/ProjectHeader';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCount, formatScore } from '../../lib/format';
import { useExperiments } from './api';
import {
  MAX_COMPARED,
  parseMetadataFilter,
  sortExperiments,
  STATUS_COLOR,
  type ExperimentSort,
} from './lib/experiments';
import { experimentsCodec } from './url-state';

const COLUMNS: { key: ExperimentSort['key']; label: string; numeric?: boolean }[] = [
  { key: 'name', label: 'Experiment' },
  { key: 'run_name', label: 'Run' },
  { key: 'status', label: 'Status' },
  { key: 'samples', label: 'Samples', numeric: true },
  { key: 'created_at', label: 'Created' },
];

/** A project's experiments, filtered as POST /experiments filters them; two to five are picked to compare. */
export default function ExperimentsPage() {
  const { projectUuid = '' } = useParams();
  const [view, setView] = useUrlState(experimentsCodec);
  const navigate = useNavigate();
  const [name, setName] = useState(view.name);
  const [run, setRun] = useState(view.run);
  const [metadata, setMetadata] = useState(view.metadata);
  // One object while the fields stay the same: a fresh one each render would restart the debounce, whose
  // new value renders again, for ever.
  const filters = useMemo(() => ({ name, run, metadata }), [name, run, metadata]);
  const [debounced] = useDebouncedValue(filters, 300);
  const { sort } = view;
  const [selected, setSelected] = useState<string[]>([]);

  // The filters live in the URL (a link reproduces the list) once the typing settles.
  useEffect(() => {
    if (debounced.name !== view.name || debounced.run !== view.run || debounced.metadata !== view.metadata)
      setView(debounced, { replace: true });
  }, [debounced, view.name, view.run, view.metadata, setView]);

  const metadataFilter = parseMetadataFilter(debounced.metadata);
  const experiments = useExperiments({
    project_uuid: projectUuid,
    experiment_name_filter: debounced.name || null,
    run_name_filter: debounced.run || null,
    metadata_filter: metadataFilter.ok ? metadataFilter.value : null,
  });
  const rows = useMemo(() => sortExperiments(experiments.data?.results ?? [], sort), [experiments.data, sort]);
  const setSort = (key: ExperimentSort['key']) =>
    setView({ sort: { key, desc: !(sort.key === key && sort.desc) } }, { replace: true });
  const toggle = (uuid: string) =>
    setSelected((s) => (s.includes(uuid) ? s.filter((x) => x !== uuid) : [...s, uuid].slice(-MAX_COMPARED)));
  const compare = () =>
    navigate(`/projects/${projectUuid}/experiments/compare?ids=${selected.join(',')}&baseline=${selected[0]}`);
  const filtered = !!(debounced.name || debounced.run || debounced.metadata);

  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section="experiments"
        title="Experiments"
        right={
          <Tooltip label="Pick 2 to 5 experiments; the first picked is the baseline" withArrow>
            <Button
              leftSection={<IconGitCompare size={16} />}
              disabled={selected.length < 2}
              onClick={compare}
              aria-label={`Compare ${selected.length} selected experiments`}
            >
              Compare{selected.length ? ` (${selected.length})` : ''}
            </Button>
          </Tooltip>
        }
      />
      <Group gap="sm" align="flex-start">
        <TextInput
          label="Experiment name"
          placeholder="contains…"
          leftSection={<IconSearch size={14} />}
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          w={220}
        />
        <TextInput
          label="Run name"
          placeholder="contains…"
          value={run}
          onChange={(e) => setRun(e.currentTarget.value)}
          w={200}
        />
        <TextInput
          label="Metadata"
          placeholder='model=gpt-4o, temperature=0 or {"model": "gpt-4o"}'
          value={metadata}
          onChange={(e) => setMetadata(e.currentTarget.value)}
          error={metadataFilter.ok ? undefined : metadataFilter.error}
          w={340}
        />
      </Group>
      <Paper withBorder radius="md">
        {experiments.isPending ? (
          <LoadingState label="Loading the experiments" />
        ) : experiments.isError ? (
          <Stack p="md">
            <ErrorState error={experiments.error} onRetry={() => experiments.refetch()} />
          </Stack>
        ) : rows.length === 0 ? (
          <EmptyState title={filtered ? 'No experiment matches these filters' : 'No experiments yet'}>
            <Text size="sm" c="dimmed">
              {filtered
                ? 'Clear a filter to see more.'
                : 'Run an evaluation with the Python or TypeScript client in this project: each run is an experiment, and each of its test cases a sample.'}
            </Text>
          </EmptyState>
        ) : (
          <Table highlightOnHover verticalSpacing="sm" horizontalSpacing="md" aria-label="Experiments">
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={40}>
                  <VisuallyHidden>Compare</VisuallyHidden>
                </Table.Th>
                {COLUMNS.map((c) => (
                  <Table.Th
                    key={c.key}
                    ta={c.numeric ? 'right' : undefined}
                    aria-sort={sort.key === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
                  >
                    <SortButton
                      label={c.label}
                      active={sort.key === c.key}
                      desc={sort.desc}
                      onClick={() => setSort(c.key)}
                    />
                  </Table.Th>
                ))}
                <Table.Th>Pinned stats</Table.Th>
                <Table.Th>Metadata</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((e) => (
                <ExperimentRow
                  key={e.uuid}
                  experiment={e}
                  projectUuid={projectUuid}
                  order={selected.indexOf(e.uuid)}
                  onToggle={() => toggle(e.uuid)}
                />
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Paper>
      {rows.length > 0 && (
        <Text size="xs" c="dimmed">
          {formatCount(rows.length)} experiment{rows.length === 1 ? '' : 's'}
        </Text>
      )}
    </Stack>
  );
}

function SortButton({
  label,
  active,
  desc,
  onClick,
}: {
  label: string;
  active: boolean;
  desc: boolean;
  onClick: () => void;
}) {
  const Icon = !active ? IconArrowsSort : desc ? IconChevronDown : IconChevronUp;
  return (
    <UnstyledButton onClick={onClick} fw={600} fz="sm" aria-label={`Sort by ${label.toLowerCase()}`}>
      <Group gap={4} wrap="nowrap">
        {label}
        <Icon size={14} opacity={active ? 1 : 0.4} />
      </Group>
    </UnstyledButton>
  );
}

function ExperimentRow({
  experiment: e,
  projectUuid,
  order,
  onToggle,
}: {
  experiment: ExperimentSummary;
  projectUuid: string;
  order: number;
  onToggle: () => void;
}) {
  const metadata = Object.entries(e.metadata);
  return (
    <Table.Tr aria-selected={order >= 0}>
      <Table.Td>
        <Checkbox
          checked={order >= 0}
          onChange={onToggle}
          aria-label={`Compare ${e.name} (${e.run_name})${order === 0 ? ', the baseline' : ''}`}
        />
      </Table.Td>
      <Table.Td>
        <Anchor component={Link} to={`/projects/${projectUuid}/experiments/${e.uuid}`} fw={500}>
          {e.name}
        </Anchor>
        {order === 0 && (
          <Badge size="xs" variant="outline" ml={6}>
            baseline
          </Badge>
        )}
      </Table.Td>
      <Table.Td ff="monospace" fz="sm">
        {e.run_name}
      </Table.Td>
      <Table.Td>
        <Badge variant="light" color={STATUS_COLOR[e.status]}>
          {e.status}
        </Badge>
      </Table.Td>
      <Table.Td ta="right" ff="monospace">
        {formatCount(e.samples)}
      </Table.Td>
      <Table.Td>
        <Timestamp value={e.created_at} size="sm" />
      </Table.Td>
      <Table.Td>
        <Group gap={4}>
          {e.pinned_stats.length === 0 && (
            <Text size="sm" c="dimmed">
              –
            </Text>
          )}
          {e.pinned_stats.map((s, i) => (
            <Badge key={i} variant="default" tt="none" fw={500}>
              {s.operation} {s.var1}
              {s.var2 ? `, ${s.var2}` : ''}: {formatScore(s.value)}
            </Badge>
          ))}
        </Group>
      </Table.Td>
      <Table.Td maw={280}>
        <Text size="xs" ff="monospace" c="dimmed" lineClamp={2}>
          {metadata.length ? metadata.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ') : '–'}
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}
