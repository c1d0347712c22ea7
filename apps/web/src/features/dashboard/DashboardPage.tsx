import { Group, Paper, Select, SimpleGrid, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useMemo, type ReactElement, type ReactNode } from 'react';
import { useParams } from 'react-router';
import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
  Bar,
  BarChart,
} from 'recharts';
import type { Dashboard } from '../../api/types';
import { FilterChips } from '../../components/FilterChips';
import { ProjectHeader } from '../../components/ProjectHeader';
import { SearchBox } from '../../components/ui/SearchBox';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useUrlState } from '../../hooks/use-url-state';
import {
  costColumnFormatter,
  formatCost,
  formatCount,
  formatLatency,
  formatPercent,
  formatScore,
} from '../../lib/format';
import { isTimeRange, STATUS_OPTIONS, statusOf, TIME_RANGE_LABELS } from '../../lib/trace-view';
import { useDashboard } from './api';
import { costByModel, fillBuckets, OTHER_MODELS } from './lib/dashboard';
import { dashboardCodec, requestFromView, type DashboardView } from './url-state';

type Range = DashboardView['range'];
/** What the chips show of the view: the range is the select's. */
type Narrowing = Omit<DashboardView, 'range'>;
const RANGES = Object.entries(TIME_RANGE_LABELS)
  .filter(([value]) => value !== 'na')
  .map(([value, label]) => ({ value, label }));
const COLORS = ['#4c6ef5', '#f76707', '#12b886', '#e64980', '#7950f2', '#fab005', '#15aabf', '#82c91e'];
const ERROR_COLOR = '#fa5252';
const OTHER_COLOR = '#868e96';
/** Over long windows the server reads latency from hourly histograms (latency_approximate). */
const APPROXIMATE = 'within 1%, from hourly histograms';

function tickOf(bucketSeconds: number) {
  const fmt = new Intl.DateTimeFormat(
    undefined,
    bucketSeconds < 86_400
      ? { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }
      : { month: 'short', day: 'numeric' },
  );
  return (iso: string) => fmt.format(new Date(iso));
}

export default function DashboardPage() {
  const { projectUuid = '' } = useParams();
  const [view, setView] = useUrlState(dashboardCodec);
  const dashboard = useDashboard(requestFromView(view, projectUuid));
  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section="dashboard"
        title="Dashboard"
        right={
          <Group gap="sm" wrap="nowrap">
            <Switch
              label="Include experiment runs"
              checked={view.experiments}
              onChange={(e) => setView({ experiments: e.currentTarget.checked })}
            />
            <Select
              aria-label="Time range"
              w={170}
              data={RANGES}
              value={view.range}
              allowDeselect={false}
              onChange={(r) => r && isTimeRange(r) && r !== 'na' && setView({ range: r })}
            />
          </Group>
        }
      />
      {/* The search and the status as the traces page offers them, so that the two pages read alike. */}
      <Group gap="xs" wrap="wrap">
        <SearchBox
          label="Search inputs, output and metadata"
          placeholder="Search inputs, output, metadata…"
          width={300}
          value={view.search}
          onSearch={(search) => setView({ search })}
        />
        <Select
          aria-label="Status"
          w={140}
          data={STATUS_OPTIONS}
          value={view.status}
          allowDeselect={false}
          onChange={(status) => setView({ status: statusOf(status) })}
        />
      </Group>
      {/* The time range is the select's: it has no chip, as the dashboard always has one. */}
      <FilterChips<Narrowing>
        view={{ search: view.search, status: view.status, filters: view.filters, experiments: view.experiments }}
        onChange={(change) => setView(change)}
      />
      {dashboard.isPending ? (
        <LoadingState label="Loading the dashboard" />
      ) : dashboard.isError ? (
        <ErrorState error={dashboard.error} title="Could not load the dashboard" onRetry={() => dashboard.refetch()} />
      ) : (
        <DashboardBody
          data={dashboard.data}
          range={view.range}
          filtered={view.filters.length > 0 || !!view.status || !!view.search.trim()}
          updating={dashboard.isPlaceholderData}
        />
      )}
    </Stack>
  );
}

function DashboardBody({
  data,
  range,
  filtered,
  updating,
}: {
  data: Dashboard;
  range: Range;
  filtered: boolean;
  updating: boolean;
}) {
  const t = data.totals;
  const tick = useMemo(() => tickOf(data.bucket_seconds), [data.bucket_seconds]);
  const series = useMemo(() => fillBuckets(data), [data]);
  const byModel = useMemo(() => costByModel(data, series), [data, series]);
  const modelsCost = data.cost_by_model.reduce((n, m) => n + m.cost, 0);
  const modelCalls = data.cost_by_model.reduce((n, m) => n + m.calls, 0);
  const modelCost = useMemo(() => costColumnFormatter(data.cost_by_model.map((m) => m.cost)), [data.cost_by_model]);
  // Means by name on the same time grid as the other charts: a bucket without a score leaves a gap.
  const scores = useMemo(() => {
    const names = [...new Set(data.scores.map((s) => s.name))].sort();
    const rows = series.map((p) => ({ start: p.start }) as Record<string, number | string>);
    const byMs = new Map(rows.map((r) => [Date.parse(String(r.start)), r]));
    const rowOf = (start: string) => {
      let row = byMs.get(Date.parse(start));
      if (!row) byMs.set(Date.parse(start), (row = { start }));
      return row;
    };
    for (const s of data.scores) rowOf(s.start)[s.name] = s.mean;
    for (const f of data.feedback) rowOf(f.start).feedback = f.mean;
    const all = [...byMs.values()].sort((x, y) => Date.parse(String(x.start)) - Date.parse(String(y.start)));
    const empty = !data.scores.length && !data.feedback.length;
    return { names: data.feedback.length ? [...names, 'feedback'] : names, rows: empty ? [] : all };
  }, [series, data.scores, data.feedback]);

  return (
    <Stack gap="md" style={{ opacity: updating ? 0.6 : 1, transition: 'opacity 150ms' }}>
      <SimpleGrid cols={{ base: 2, md: 4, xl: 7 }} spacing="sm">
        <StatCard label="Traces" testId="dashboard-traces">
          {formatCount(t.traces)}
        </StatCard>
        <StatCard label="Errors" hint={`${formatPercent(t.error_rate)} of traces`}>
          {formatCount(t.errors)}
        </StatCard>
        {(['latency_p50', 'latency_p95', 'latency_p99'] as const).map((p) => (
          <StatCard key={p} label={`Latency ${p.slice(-3)}`} hint={data.latency_approximate ? APPROXIMATE : undefined}>
            {data.latency_approximate && t[p] !== null ? '≈ ' : ''}
            {formatLatency(t[p])}
          </StatCard>
        ))}
        <StatCard label="Tokens" hint={`${formatCount(t.input_tokens)} in / ${formatCount(t.output_tokens)} out`}>
          {formatCount(t.input_tokens + t.output_tokens)}
        </StatCard>
        <StatCard label="Cost">{formatCost(t.cost)}</StatCard>
      </SimpleGrid>
      {t.traces === 0 ? (
        <Paper withBorder radius="md">
          <EmptyState
            title={`No traces ${filtered ? 'match these filters ' : ''}in the ${TIME_RANGE_LABELS[range].toLowerCase()}`}
          >
            <Text size="sm" c="dimmed">
              {filtered
                ? 'Remove a filter, change the search or the status, or pick a longer time range.'
                : 'Pick a longer time range, or send traces to this project.'}
            </Text>
          </EmptyState>
        </Paper>
      ) : (
        <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="md">
          <ChartCard title="Traces and errors">
            <BarChart data={series}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
              <YAxis allowDecimals={false} fontSize={11} width={50} tickFormatter={(v: number) => formatCount(v)} />
              <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatCount(Number(v))} />
              <Legend />
              <Bar dataKey="traces" name="Traces" fill={COLORS[0]} />
              <Bar dataKey="errors" name="Errors" fill={ERROR_COLOR} />
            </BarChart>
          </ChartCard>
          <ChartCard title="Error rate" summary={`${formatPercent(t.error_rate)} over the range`}>
            <LineChart data={series}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
              {/* A range without errors still reads as a rate: 0 to 5%, not recharts' 0 to 4 (400%). */}
              <YAxis
                fontSize={11}
                width={50}
                domain={[0, (most: number) => Math.max(most, 0.05)]}
                tickFormatter={(v: number) => formatPercent(v)}
              />
              <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatPercent(Number(v))} />
              <Line type="linear" dataKey="errorRate" name="Error rate" stroke={ERROR_COLOR} dot={{ r: 2 }} />
            </LineChart>
          </ChartCard>
          <ChartCard title="Latency">
            <LineChart data={series}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
              <YAxis tickFormatter={(v: number) => formatLatency(v)} fontSize={11} width={60} />
              <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatLatency(Number(v))} />
              <Legend />
              <Line type="monotone" dataKey="p50" name="p50" stroke={COLORS[2]} dot={{ r: 2 }} connectNulls />
              <Line type="monotone" dataKey="p95" name="p95" stroke={COLORS[1]} dot={{ r: 2 }} connectNulls />
              <Line type="monotone" dataKey="p99" name="p99" stroke={ERROR_COLOR} dot={{ r: 2 }} connectNulls />
            </LineChart>
          </ChartCard>
          <ChartCard title="Tokens">
            <BarChart data={series}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
              <YAxis fontSize={11} width={60} tickFormatter={(v: number) => formatCount(v)} />
              <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatCount(Number(v))} />
              <Bar dataKey="tokens" name="Tokens" fill={COLORS[4]} />
            </BarChart>
          </ChartCard>
          <ChartCard title="Cost">
            <BarChart data={series}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
              <YAxis fontSize={11} width={70} tickFormatter={(v: number) => formatCost(v)} />
              <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatCost(Number(v))} />
              <Bar dataKey="cost" name="Cost" fill={COLORS[2]} />
            </BarChart>
          </ChartCard>
          <ChartCard
            title="Cost by model over time"
            summary={
              byModel.models.length ? `${formatCost(modelsCost)} over ${formatCount(modelCalls)} calls` : undefined
            }
            empty={byModel.models.length === 0 ? 'No model calls in this range.' : undefined}
          >
            <BarChart data={byModel.rows}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
              <YAxis fontSize={11} width={70} tickFormatter={(v: number) => formatCost(v)} />
              <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatCost(Number(v))} />
              {/* Costliest first, as the table lists them (and the bars stack from the bottom). */}
              <Legend itemSorter={(item) => byModel.models.indexOf(String(item.dataKey))} />
              {byModel.models.map((m, i) => (
                <Bar
                  key={m}
                  dataKey={m}
                  name={m}
                  stackId="cost"
                  fill={m === OTHER_MODELS ? OTHER_COLOR : COLORS[i % COLORS.length]}
                />
              ))}
            </BarChart>
          </ChartCard>
          <ChartCard
            title="Scores and feedback (mean)"
            empty={scores.rows.length === 0 ? 'No scores or feedback in this range.' : undefined}
          >
            {
              <LineChart data={scores.rows}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis dataKey="start" tickFormatter={tick} fontSize={11} minTickGap={24} />
                <YAxis fontSize={11} width={40} tickFormatter={(v: number) => formatScore(v)} />
                <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatScore(Number(v))} />
                <Legend />
                {scores.names.map((n, i) => (
                  <Line
                    key={n}
                    type="linear"
                    dataKey={n}
                    stroke={COLORS[i % COLORS.length]}
                    dot={{ r: 2 }}
                    connectNulls
                  />
                ))}
              </LineChart>
            }
          </ChartCard>
          <Paper withBorder radius="md" p="md">
            <Title order={5} mb="xs">
              Cost by model
            </Title>
            {data.cost_by_model.length === 0 ? (
              <Text size="sm" c="dimmed">
                No model calls in this range.
              </Text>
            ) : (
              <Table verticalSpacing={6} aria-label="Cost by model">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Model</Table.Th>
                    <Table.Th ta="right">Calls</Table.Th>
                    <Table.Th ta="right">Cost</Table.Th>
                    <Table.Th ta="right">Share</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {data.cost_by_model.map((m) => (
                    <Table.Tr key={m.model}>
                      <Table.Td ff="monospace">{m.model}</Table.Td>
                      <Table.Td ta="right" ff="monospace">
                        {formatCount(m.calls)}
                      </Table.Td>
                      <Table.Td ta="right" ff="monospace">
                        {modelCost(m.cost)}
                      </Table.Td>
                      <Table.Td ta="right" ff="monospace">
                        {formatPercent(modelsCost ? m.cost / modelsCost : null)}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Paper>
        </SimpleGrid>
      )}
    </Stack>
  );
}

function StatCard({
  label,
  hint,
  testId,
  children,
}: {
  label: string;
  hint?: string;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <Paper withBorder radius="md" px="md" py="sm">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600} style={{ letterSpacing: 0.3 }}>
        {label}
      </Text>
      <Text size="xl" fw={650} ff="monospace" data-testid={testId}>
        {children}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </Paper>
  );
}

function ChartCard({
  title,
  summary,
  empty,
  children,
}: {
  title: string;
  /** The chart's figure in words, beside its title (what a screen reader reads of it). */
  summary?: string;
  empty?: string;
  children: ReactElement;
}) {
  return (
    <Paper withBorder radius="md" p="md" component="section" aria-label={title}>
      <Group justify="space-between" mb="xs" wrap="nowrap">
        <Title order={5}>{title}</Title>
        {summary && (
          <Text size="sm" c="dimmed" ff="monospace">
            {summary}
          </Text>
        )}
      </Group>
      {empty ? (
        <Text size="sm" c="dimmed" h={240}>
          {empty}
        </Text>
      ) : (
        <div style={{ height: 240 }}>
          <ResponsiveContainer width="100%" height="100%">
            {children}
          </ResponsiveContainer>
        </div>
      )}
    </Paper>
  );
}
