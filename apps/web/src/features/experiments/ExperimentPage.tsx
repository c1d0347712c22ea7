import { Anchor, Badge, Group, Pagination, Paper, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { Link, useParams } from 'react-router';
import type { ExperimentSample, ExperimentSamples, ExperimentSummary } from '../../api/types';
import { FilterBuilder } from '../../components/FilterBuilder';
import { ProjectHeader } from '../../components/ProjectHeader';
import { StatusBadge } from '../../components/TraceCells';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { incomplete } from '../../lib/filter-fields';
import { formatCost, formatCount, formatLatency, formatScore, formatTokens } from '../../lib/format';
import { useExperiments, useExperimentSamples } from './api';
import { STATUS_COLOR } from './lib/experiments';
import { samplesCodec } from './url-state';

const PAGE_SIZE = 50;

/** One experiment: its scores summarized, and its samples (one row per test case run) filtered and paged. */
export default function ExperimentPage() {
  const { projectUuid = '', experimentUuid = '' } = useParams();
  const [view, setView] = useUrlState(samplesCodec);
  const filter = view.filter && !incomplete(view.filter) ? view.filter : null;
  const experiment = useExperiments({ experiment_uuids: [experimentUuid] }).data?.results[0];
  const samples = useExperimentSamples(experimentUuid, {
    page: view.page,
    page_size: PAGE_SIZE,
    filter_field: filter?.field ?? null,
    filter_operator: filter?.operator ?? null,
    filter_value: filter?.value ?? null,
    filter_key: filter?.key ?? null,
  });

  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section="experiments"
        title={experiment?.name ?? 'Experiment'}
        right={experiment && <ExperimentFacts experiment={experiment} />}
      />
      {samples.isError ? (
        <ErrorState error={samples.error} title="Could not load the samples" onRetry={() => samples.refetch()} />
      ) : samples.isPending ? (
        <LoadingState label="Loading the samples" />
      ) : (
        <>
          <ScoreSummary summary={samples.data.summary} experiment={experiment} />
          <Group justify="space-between">
            <FilterBuilder value={view.filter} onChange={(filter) => setView({ filter, page: 1 })} />
            <Text size="sm" c="dimmed" role="status">
              {formatCount(samples.data.total)} sample{samples.data.total === 1 ? '' : 's'}
              {filter ? ' match' : ''}
            </Text>
          </Group>
          <SamplesTable data={samples.data} projectUuid={projectUuid} filtered={!!filter} />
          {samples.data.total_pages > 1 && (
            <Pagination
              value={view.page}
              onChange={(page) => setView({ page })}
              total={samples.data.total_pages}
              size="sm"
              getControlProps={(control) => ({ 'aria-label': `${control} page` })}
            />
          )}
        </>
      )}
    </Stack>
  );
}

function ExperimentFacts({ experiment: e }: { experiment: ExperimentSummary }) {
  return (
    <Group gap="md" wrap="nowrap">
      <Text size="sm" ff="monospace" c="dimmed">
        {e.run_name}
      </Text>
      <Badge variant="light" color={STATUS_COLOR[e.status]}>
        {e.status}
      </Badge>
      <Timestamp value={e.created_at} size="sm" c="dimmed" />
    </Group>
  );
}

/** Each score over every sample, and the dataset-level stats the run pinned when it finished. */
function ScoreSummary({
  summary,
  experiment,
}: {
  summary: ExperimentSamples['summary'];
  experiment: ExperimentSummary | undefined;
}) {
  const pinned = experiment?.pinned_stats ?? [];
  if (!summary.length && !pinned.length) return null;
  return (
    <Paper withBorder radius="md" p="md">
      <Stack gap="sm">
        {summary.length > 0 && (
          <Table aria-label="Scores over all samples" horizontalSpacing="md" verticalSpacing={6}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Score</Table.Th>
                {['Samples', 'Mean', 'Median', 'Std. dev.', 'Min', 'Max'].map((h) => (
                  <Table.Th key={h} ta="right">
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {summary.map((s) => (
                <Table.Tr key={s.name}>
                  <Table.Td fw={500}>{s.name}</Table.Td>
                  {[s.count, s.mean, s.median, s.standard_deviation, s.min, s.max].map((v, i) => (
                    <Table.Td key={i} ta="right" ff="monospace">
                      {i === 0 ? formatCount(v) : formatScore(v)}
                    </Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        {pinned.length > 0 && (
          <Group gap="xs">
            <Text size="sm" c="dimmed">
              Dataset-level stats:
            </Text>
            {pinned.map((s, i) => (
              <Badge key={i} variant="default" tt="none" fw={500}>
                {s.operation} {s.var1}
                {s.var2 ? `, ${s.var2}` : ''}: {formatScore(s.value)}
              </Badge>
            ))}
          </Group>
        )}
      </Stack>
    </Paper>
  );
}

function SamplesTable({
  data,
  projectUuid,
  filtered,
}: {
  data: ExperimentSamples;
  projectUuid: string;
  filtered: boolean;
}) {
  const scoreNames = data.summary.map((s) => s.name);
  if (!data.results.length)
    return (
      <Paper withBorder radius="md">
        <EmptyState title={filtered ? 'No sample matches this filter' : 'No samples yet'}>
          <Text size="sm" c="dimmed">
            {filtered
              ? 'Change or clear the filter.'
              : 'Samples appear here as the run logs its traces with this experiment’s uuid.'}
          </Text>
        </EmptyState>
      </Paper>
    );
  return (
    <Paper withBorder radius="md">
      <ScrollArea>
        <Table aria-label="Samples" verticalSpacing="xs" horizontalSpacing="sm" highlightOnHover miw={1100}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Inputs</Table.Th>
              <Table.Th>Output</Table.Th>
              <Table.Th>Target</Table.Th>
              {scoreNames.map((n) => (
                <Table.Th key={n} ta="right">
                  {n}
                </Table.Th>
              ))}
              <Table.Th ta="right">Latency</Table.Th>
              <Table.Th ta="right">Tokens</Table.Th>
              <Table.Th ta="right">Cost</Table.Th>
              <Table.Th>Status</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {data.results.map((r) => (
              <SampleRow key={r.trace_id} row={r} scoreNames={scoreNames} projectUuid={projectUuid} />
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea>
    </Paper>
  );
}

const clip = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

function SampleRow({
  row,
  scoreNames,
  projectUuid,
}: {
  row: ExperimentSample;
  scoreNames: string[];
  projectUuid: string;
}) {
  const scores = new Map(row.scores.map((s) => [s.name, s.score]));
  return (
    <Table.Tr>
      <Table.Td maw={280}>
        <Anchor component={Link} to={`/projects/${projectUuid}/traces/${row.trace_id}`} size="xs" ff="monospace">
          <Text span inherit lineClamp={3}>
            {clip(row.inputs)}
          </Text>
        </Anchor>
      </Table.Td>
      <Table.Td maw={320}>
        <Text size="xs" lineClamp={3} title={row.output_truncated ? 'Cut: open the trace for all of it' : undefined}>
          {row.output ?? '–'}
          {row.output_truncated ? '…' : ''}
        </Text>
      </Table.Td>
      <Table.Td maw={220}>
        <Text size="xs" lineClamp={3} c={row.target == null ? 'dimmed' : undefined}>
          {row.target ?? '–'}
        </Text>
      </Table.Td>
      {scoreNames.map((n) => (
        <Table.Td key={n} ta="right" ff="monospace" fz="sm">
          {formatScore(scores.get(n))}
        </Table.Td>
      ))}
      <Table.Td ta="right" ff="monospace" fz="sm">
        {formatLatency(row.latency)}
      </Table.Td>
      <Table.Td ta="right" ff="monospace" fz="sm">
        {formatTokens(row.input_tokens, row.output_tokens, row.total_tokens)}
      </Table.Td>
      <Table.Td ta="right" ff="monospace" fz="sm">
        {formatCost(row.cost)}
      </Table.Td>
      <Table.Td>
        <StatusBadge status={row.status} error={row.error} />
      </Table.Td>
    </Table.Tr>
  );
}
