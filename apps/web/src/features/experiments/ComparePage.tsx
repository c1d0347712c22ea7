import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  Pagination,
  Paper,
  ScrollArea,
  Select,
  Stack,
  Table,
  Text,
  Tooltip,
  UnstyledButton,
} from '@mantine/core';
import { IconFilter, IconInfoCircle } from '@tabler/icons-react';
import { Link, useParams } from 'react-router';
import type {
  CompareCell,
  CompareMetric,
  CompareOutcome,
  CompareResult,
  CompareRows,
  Comparison,
} from '../../api/types';
import { ProjectHeader } from '../../components/ProjectHeader';
import { WordDiff } from '../../components/WordDiff';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCost, formatCount, formatLatency, formatScore } from '../../lib/format';
import { useCompare, useCompareRows } from './api';
import { cellValue, formatDifference, formatP, TONE_COLOR, toneOf, verdict } from './lib/compare';
import { compareCodec, type CompareView } from './url-state';

const ROWS_PER_PAGE = 20;

/** The metrics some run has a value of (a run without costs logged has no cost to compare). */
const withValues = (metrics: CompareMetric[]) => metrics.filter((m) => m.runs.some((r) => r.n > 0));

const formatValue = (kind: CompareMetric['kind'], v: number | null) =>
  kind === 'latency' ? formatLatency(v) : kind === 'cost' ? formatCost(v) : formatScore(v);

/**
 * Two to five experiments side by side against a baseline: per score, latency and cost, each run's mean,
 * its difference from the baseline with a confidence interval and a paired test over the shared test
 * cases; then the test cases themselves, outputs diffed against the baseline's.
 */
export default function ComparePage() {
  const { projectUuid = '' } = useParams();
  const [view, setView] = useUrlState(compareCodec);
  const { ids, baseline } = view;
  const request = { experiment_uuids: ids, baseline_uuid: baseline ?? '' };
  const result = useCompare(request);

  const header = (
    <ProjectHeader
      projectUuid={projectUuid}
      section="experiments"
      title="Compare experiments"
      right={
        result.data && (
          <Select
            label="Baseline"
            value={baseline}
            // Outcomes are against the baseline: another one counts other cases.
            onChange={(v) => v && setView({ baseline: v, page: 1, outcome: null })}
            data={result.data.experiments.map((e) => ({ value: e.uuid, label: `${e.name} · ${e.run_name}` }))}
            allowDeselect={false}
            w={320}
          />
        )
      }
    />
  );
  if (ids.length < 2)
    return (
      <Stack gap="md">
        {header}
        <EmptyState title="Pick the experiments to compare">
          <Text size="sm" c="dimmed">
            Select 2 to 5 experiments on the{' '}
            <Anchor component={Link} to={`/projects/${projectUuid}/experiments`}>
              experiments page
            </Anchor>{' '}
            and press Compare.
          </Text>
        </EmptyState>
      </Stack>
    );
  return (
    <Stack gap="md">
      {header}
      {result.isError ? (
        <ErrorState error={result.error} title="Could not compare" onRetry={() => result.refetch()} />
      ) : result.isPending ? (
        <LoadingState label="Comparing the runs" />
      ) : (
        <>
          <CasesNote result={result.data} />
          <MetricsTable
            result={result.data}
            outcome={view.outcome}
            onOutcome={(outcome) => setView({ outcome, trace: null, page: 1 })}
          />
          <CompareRowsPanel result={result.data} view={view} onView={setView} projectUuid={projectUuid} />
        </>
      )}
    </Stack>
  );
}

function CasesNote({ result }: { result: CompareResult }) {
  const name = (uuid: string) => result.experiments.find((e) => e.uuid === uuid)?.run_name ?? uuid;
  const missing = result.cases.missing.filter((m) => m.count > 0);
  return (
    <Alert variant="light" color={missing.length ? 'yellow' : 'gray'} icon={<IconInfoCircle size={18} />}>
      <Text size="sm">
        {formatCount(result.cases.total)} test cases (by inputs and target); {formatCount(result.cases.in_all)} in every
        run. Differences use the Wilcoxon signed-rank test over the cases both runs share, significant at p &lt;{' '}
        {result.alpha}; intervals are 95% bootstrap intervals of the mean difference.
        {missing.length > 0 &&
          ` Missing: ${missing.map((m) => `${formatCount(m.count)} in ${name(m.uuid)}`).join(', ')} (shown below, not paired).`}
        {result.cases.repeated > 0 &&
          ` ${formatCount(result.cases.repeated)} cases ran more than once in a run: their mean is compared.`}
      </Text>
    </Alert>
  );
}

const CHANGE_WORDS: Record<CompareOutcome['change'], string> = {
  improved: 'improved on',
  regressed: 'regressed on',
  unchanged: 'matched the baseline on',
};

/** "new-prompt improved on accuracy": what an outcome filter shows, in words. */
function outcomeText(result: CompareResult, o: CompareOutcome) {
  const run = result.experiments.find((e) => e.uuid === o.run_uuid);
  return `${run?.run_name ?? run?.name ?? o.run_uuid} ${CHANGE_WORDS[o.change]} ${o.metric ?? o.kind}`;
}

const sameOutcome = (a: CompareOutcome | null, b: CompareOutcome) =>
  !!a &&
  a.run_uuid === b.run_uuid &&
  a.kind === b.kind &&
  (a.metric ?? null) === (b.metric ?? null) &&
  a.change === b.change;

/** The improved / regressed / same counts, each a toggle that shows those cases below. */
function OutcomeCounts({
  result,
  metric,
  comparison: c,
  outcome,
  onOutcome,
}: {
  result: CompareResult;
  metric: CompareMetric;
  comparison: Comparison;
  outcome: CompareOutcome | null;
  onOutcome: (outcome: CompareOutcome | null) => void;
}) {
  const counts = [
    ['improved', c.improved, 'teal'],
    ['regressed', c.regressed, 'red'],
    ['unchanged', c.unchanged, undefined],
  ] as const;
  return (
    <Group gap={4} justify="flex-end" wrap="nowrap">
      {counts.map(([change, count, color], i) => {
        const o: CompareOutcome = {
          run_uuid: c.uuid,
          kind: metric.kind,
          ...(metric.kind === 'score' && { metric: metric.name }),
          change,
        };
        const active = sameOutcome(outcome, o);
        return (
          <Group key={change} gap={4} wrap="nowrap">
            {i > 0 && (
              <Text span c="dimmed" inherit>
                {/* Spaced in the text as on screen, for copying and for screen readers. */}
                {' / '}
              </Text>
            )}
            <UnstyledButton
              disabled={count === 0 && !active}
              aria-pressed={active}
              aria-label={`${active ? 'Showing' : 'Show'} the ${formatCount(count)} case${count === 1 ? '' : 's'} where ${outcomeText(result, o)}`}
              onClick={() => onOutcome(active ? null : o)}
              px={4}
              style={{
                borderRadius: 'var(--mantine-radius-sm)',
                textDecoration: count ? 'underline dotted' : undefined,
                background: active ? 'var(--mantine-color-default-hover)' : undefined,
                cursor: count || active ? 'pointer' : 'default',
              }}
            >
              <Text span c={color} inherit fw={active ? 700 : undefined}>
                {formatCount(count)}
              </Text>
            </UnstyledButton>
          </Group>
        );
      })}
    </Group>
  );
}

function MetricsTable({
  result,
  outcome,
  onOutcome,
}: {
  result: CompareResult;
  outcome: CompareOutcome | null;
  onOutcome: (outcome: CompareOutcome | null) => void;
}) {
  const runs = result.experiments;
  const metrics = withValues(result.metrics);
  if (!metrics.length)
    return (
      <Paper withBorder radius="md">
        <EmptyState title="Nothing to compare yet">
          <Text size="sm" c="dimmed">
            These runs have no samples with scores, latency or cost.
          </Text>
        </EmptyState>
      </Paper>
    );
  return (
    <Paper withBorder radius="md">
      <ScrollArea>
        <Table aria-label="Metrics by run" verticalSpacing="xs" horizontalSpacing="md" miw={900}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Metric</Table.Th>
              <Table.Th>Run</Table.Th>
              <Table.Th ta="right">Mean</Table.Th>
              <Table.Th ta="right">Δ vs baseline (95% CI)</Table.Th>
              <Table.Th>Test</Table.Th>
              <Table.Th ta="right">Improved / regressed / same</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {metrics.map((m) =>
              runs.map((run, i) => {
                const mean = m.runs.find((r) => r.uuid === run.uuid);
                const c = m.comparisons.find((x) => x.uuid === run.uuid);
                const v = c && verdict(m, c);
                return (
                  <Table.Tr key={`${m.name}/${run.uuid}`}>
                    {i === 0 && (
                      <Table.Td rowSpan={runs.length} fw={600} style={{ verticalAlign: 'top' }}>
                        {m.name}
                        <Text size="xs" c="dimmed">
                          {m.better} is better
                        </Text>
                      </Table.Td>
                    )}
                    <Table.Td>
                      <Text size="sm" ff="monospace">
                        {run.run_name ?? run.name}
                      </Text>
                    </Table.Td>
                    <Table.Td ta="right" ff="monospace" style={{ whiteSpace: 'nowrap' }}>
                      {formatValue(m.kind, mean?.mean ?? null)}
                    </Table.Td>
                    {c && v ? (
                      <>
                        <Table.Td ta="right" ff="monospace">
                          <Text span c={TONE_COLOR[toneOf(m, c.mean_difference)]} inherit fw={600}>
                            {formatDifference(m.kind, c.mean_difference)}
                          </Text>{' '}
                          <Text span c="dimmed" size="xs">
                            [{formatDifference(m.kind, c.ci_low)}, {formatDifference(m.kind, c.ci_high)}]
                          </Text>
                        </Table.Td>
                        <Table.Td>
                          <Group gap={6} wrap="nowrap">
                            <Badge variant={v.tone === 'same' ? 'default' : 'light'} color={TONE_COLOR[v.tone]}>
                              {v.label}
                            </Badge>
                            <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                              {formatP(c.p_value)}, n = {formatCount(c.pairs)}
                            </Text>
                          </Group>
                        </Table.Td>
                        <Table.Td ta="right" ff="monospace" fz="sm">
                          <OutcomeCounts
                            result={result}
                            metric={m}
                            comparison={c}
                            outcome={outcome}
                            onOutcome={onOutcome}
                          />
                        </Table.Td>
                      </>
                    ) : (
                      <Table.Td colSpan={3}>
                        <Badge variant="outline">baseline</Badge>
                      </Table.Td>
                    )}
                  </Table.Tr>
                );
              }),
            )}
          </Table.Tbody>
        </Table>
      </ScrollArea>
    </Paper>
  );
}

function CompareRowsPanel({
  result,
  view,
  onView,
  projectUuid,
}: {
  result: CompareResult;
  view: CompareView;
  onView: (change: Partial<CompareView>) => void;
  projectUuid: string;
}) {
  const { page, outcome, trace } = view;
  const rows = useCompareRows({
    experiment_uuids: result.experiments.map((e) => e.uuid),
    baseline_uuid: result.baseline_uuid,
    page,
    page_size: ROWS_PER_PAGE,
    ...(outcome && { outcome }),
    ...(trace && { trace_id: trace }),
  });
  // Where a case's trace links: back here, to this comparison, from its header.
  const back = new URLSearchParams({ compare: view.ids.join(','), baseline: result.baseline_uuid });
  const shown = outcome
    ? `Cases where ${outcomeText(result, outcome)}`
    : trace
      ? `The case of trace ${trace.slice(0, 8)}`
      : null;
  const heading = (
    <Group justify="space-between" wrap="nowrap">
      <Text fw={600}>{shown ?? 'Test cases'}</Text>
      {shown && (
        <Button
          size="compact-sm"
          variant="light"
          leftSection={<IconFilter size={14} />}
          onClick={() => onView({ outcome: null, trace: null, page: 1 })}
        >
          Show all cases
        </Button>
      )}
    </Group>
  );
  if (rows.isPending)
    return (
      <Stack gap="sm">
        {heading}
        <LoadingState label="Loading the test cases" />
      </Stack>
    );
  if (rows.isError)
    return (
      <Stack gap="sm">
        {heading}
        <ErrorState error={rows.error} onRetry={() => rows.refetch()} />
      </Stack>
    );
  const pages = Math.ceil(rows.data.total / ROWS_PER_PAGE);
  if (rows.data.total === 0)
    return (
      <Stack gap="sm">
        {heading}
        <Paper withBorder radius="md">
          <EmptyState title="No test cases to show">
            <Text size="sm" c="dimmed">
              {trace
                ? 'This trace is no sample of the runs compared here. Show all cases, or open the comparison of its own experiment.'
                : 'No case matches. Show all cases, or pick another count above.'}
            </Text>
          </EmptyState>
        </Paper>
      </Stack>
    );
  return (
    <Stack gap="sm">
      {heading}
      {shown && (
        <Text size="sm" c="dimmed" role="status">
          {formatCount(rows.data.total)} case{rows.data.total === 1 ? '' : 's'} shown
        </Text>
      )}
      <Paper withBorder radius="md">
        <ScrollArea>
          <Table
            aria-label="Test cases side by side"
            verticalSpacing="sm"
            horizontalSpacing="sm"
            miw={320 * (result.experiments.length + 1)}
          >
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={260}>Inputs and target</Table.Th>
                {result.experiments.map((e) => (
                  <Table.Th key={e.uuid}>
                    {e.run_name ?? e.name}
                    {e.uuid === result.baseline_uuid && (
                      <Badge size="xs" variant="outline" ml={6}>
                        baseline
                      </Badge>
                    )}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.data.rows.map((row) => (
                <CompareRow key={row.key} row={row} result={result} projectUuid={projectUuid} back={back} />
              ))}
            </Table.Tbody>
          </Table>
        </ScrollArea>
      </Paper>
      {pages > 1 && (
        <Pagination
          value={page}
          onChange={(p) => onView({ page: p })}
          total={pages}
          size="sm"
          getControlProps={(control) => ({ 'aria-label': `${control} page of test cases` })}
        />
      )}
    </Stack>
  );
}

function CompareRow({
  row,
  result,
  projectUuid,
  back,
}: {
  row: CompareRows['rows'][number];
  result: CompareResult;
  projectUuid: string;
  back: URLSearchParams;
}) {
  const baseIndex = result.experiments.findIndex((e) => e.uuid === result.baseline_uuid);
  const base = row.runs[baseIndex];
  return (
    <Table.Tr style={{ verticalAlign: 'top' }}>
      <Table.Td>
        <Text size="xs" ff="monospace" lineClamp={6} style={{ wordBreak: 'break-word' }}>
          {typeof row.inputs === 'string' ? row.inputs : JSON.stringify(row.inputs)}
        </Text>
        {row.target != null && (
          <Text size="xs" c="dimmed" mt={4} lineClamp={3}>
            Target: {row.target}
          </Text>
        )}
      </Table.Td>
      {row.runs.map((cell, i) => (
        <Table.Td key={result.experiments[i].uuid}>
          {cell ? (
            <RunCell
              cell={cell}
              base={i === baseIndex ? null : base}
              metrics={result.metrics}
              projectUuid={projectUuid}
              back={back}
            />
          ) : (
            <Text size="xs" c="dimmed" fs="italic">
              Not in this run
            </Text>
          )}
        </Table.Td>
      ))}
    </Table.Tr>
  );
}

function RunCell({
  cell,
  base,
  metrics,
  projectUuid,
  back,
}: {
  cell: CompareCell;
  base: CompareCell | null | undefined;
  metrics: CompareMetric[];
  projectUuid: string;
  back: URLSearchParams;
}) {
  return (
    <Stack gap={6}>
      {base === null ? (
        <Text size="xs" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
          {cell.output ?? '–'}
        </Text>
      ) : (
        <WordDiff base={base?.output ?? null} text={cell.output} />
      )}
      {cell.output_truncated && (
        <Text size="xs" c="dimmed">
          Output cut: open the trace for all of it.
        </Text>
      )}
      <Group gap={4}>
        {metrics.map((m) => {
          const value = cellValue(m, cell);
          if (value == null) return null;
          const before = base ? cellValue(m, base) : null;
          const delta = value != null && before != null ? value - before : null;
          return (
            <Tooltip key={m.name} label={m.name} withArrow openDelay={300}>
              <Badge variant="default" tt="none" fw={500} size="sm">
                {m.kind === 'score' ? `${m.name} ` : ''}
                {formatValue(m.kind, value)}
                {delta != null && delta !== 0 && (
                  <Text span inherit c={TONE_COLOR[toneOf(m, delta)]} ml={4}>
                    {formatDifference(m.kind, delta)}
                  </Text>
                )}
              </Badge>
            </Tooltip>
          );
        })}
      </Group>
      <Anchor component={Link} to={`/projects/${projectUuid}/traces/${cell.trace_id}?${back}`} size="xs">
        Open trace
      </Anchor>
    </Stack>
  );
}
