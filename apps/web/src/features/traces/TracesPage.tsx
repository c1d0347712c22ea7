import { Button, Group, Pagination, Paper, Select, Stack, Switch, Text } from '@mantine/core';
import { IconArrowUp } from '@tabler/icons-react';
import type { RowSelectionState } from '@tanstack/react-table';
import { useCallback, useMemo, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { useProjects } from '../../api/projects';
import { usePermissions } from '../../api/roles';
import type { TraceRow } from '../../api/types';
import { AddToDataset } from '../../components/AddToDataset';
import { AddToQueue } from '../../components/AddToQueue';
import { ClientSetup } from '../../components/ClientSetup';
import { FilterChips } from '../../components/FilterChips';
import { ProjectHeader } from '../../components/ProjectHeader';
import { SearchBox } from '../../components/ui/SearchBox';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCount } from '../../lib/format';
import {
  DEFAULT_VIEW,
  isTimeRange,
  PAGE_SIZES,
  requestFromView,
  SORT_LABELS,
  STATUS_OPTIONS,
  statusOf,
  TIME_RANGE_LABELS,
  traceViewCodec,
  type TraceView,
} from '../../lib/trace-view';
import { keyOf } from '../../lib/url-codec';
import { useTraceCount, useTraces } from './api';
import { LiveControl } from './components/LiveControl';
import { ExportTraces } from './components/ExportTraces';
import { ColumnChooser, TracesTable } from './components/TracesTable';
import { showsError, useContentColumns } from './lib/content-columns';
import { useLiveRows } from './lib/use-live-rows';

export default function TracesPage() {
  const { projectUuid = '' } = useParams();
  const [view, setUrlView] = useUrlState(traceViewCodec);
  // A change of the view starts again from its first page.
  const setView = useCallback((change: Partial<TraceView>) => setUrlView({ page: 1, ...change }), [setUrlView]);
  const reset = () => setUrlView(DEFAULT_VIEW);
  const navigate = useNavigate();
  const project = useProjects().data?.find((p) => p.uuid === projectUuid);
  const [chosenContent, setContent] = useContentColumns(projectUuid);
  const content = useMemo(
    () => ({ ...chosenContent, error: showsError(chosenContent, view.status) }),
    [chosenContent, view.status],
  );
  const request = {
    ...requestFromView(view, projectUuid),
    content: content.input || content.output,
    metadata_keys: content.metadata,
  };
  const traces = useTraces(request);
  // Asked beside the page as soon as a page does not tell (with a new filter, while its page still loads).
  const count = useTraceCount(
    request,
    !!traces.data && !traces.data.total_exact && traces.data.searched_roots === null,
  );
  const { canWrite } = usePermissions();
  // Traces picked for "Add to dataset" and "Add to queue", by id: kept across pages until added.
  const [selection, setSelection] = useState<RowSelectionState>({});
  const picked = Object.keys(selection).filter((id) => selection[id]);
  // Rows that wait for a search or a filter are the server's to judge: page 1, asked again.
  const refetch = useCallback(
    () => (view.page === 1 ? void traces.refetch() : setView({ page: 1 })),
    [view.page, traces, setView],
  );
  const live = useLiveRows(projectUuid, view, traces.data?.results, refetch);
  const rows = live.rows;
  const traceLink = (r: TraceRow) => `/projects/${projectUuid}/traces/${r.trace_id}`;
  // Every matching trace, once known: from the page when it is the last one, else from the count.
  const total = traces.data?.total_exact ? traces.data.total : (count.data?.total ?? null);
  const pages = total === null ? (traces.data?.total_pages ?? 0) : Math.ceil(total / view.pageSize);
  const narrowed = !!(view.search || view.filters.length || view.status || view.range !== 'na' || view.experiments);

  return (
    <Stack gap="sm" h="calc(100vh - 56px - 2 * var(--mantine-spacing-md))">
      <ProjectHeader
        projectUuid={projectUuid}
        section="traces"
        title="Traces"
        right={<LiveControl status={live.status} ended={live.ended} paused={live.paused} onToggle={live.togglePause} />}
      />

      <Group gap="xs" wrap="wrap">
        <SearchBox
          label="Search inputs, output and metadata"
          placeholder="Search inputs, output, metadata…"
          width={300}
          value={view.search}
          onSearch={(search) => setView({ search })}
        />
        <Select
          aria-label="Time range"
          w={160}
          data={Object.entries(TIME_RANGE_LABELS).map(([value, label]) => ({ value, label }))}
          value={view.range}
          allowDeselect={false}
          onChange={(range) => range && isTimeRange(range) && setView({ range })}
        />
        <Select
          aria-label="Sort"
          w={150}
          data={Object.entries(SORT_LABELS).map(([value, label]) => ({ value, label }))}
          value={view.sort}
          allowDeselect={false}
          onChange={(sort) => sort && setView({ sort: keyOf(SORT_LABELS, sort, view.sort) })}
        />
        <Select
          aria-label="Status"
          w={140}
          data={STATUS_OPTIONS}
          value={view.status}
          allowDeselect={false}
          onChange={(status) => setView({ status: statusOf(status) })}
        />
        <Switch
          label="Include experiment runs"
          checked={view.experiments}
          onChange={(e) => setView({ experiments: e.currentTarget.checked })}
        />
        {narrowed && (
          <Button variant="subtle" color="gray" onClick={reset}>
            Reset
          </Button>
        )}
        <div style={{ flex: 1 }} />
        {picked.length > 0 && <AddToDataset rootIds={picked} onAdded={() => setSelection({})} />}
        {canWrite && rows.length > 0 && (
          <AddToQueue
            projectUuid={projectUuid}
            rootIds={picked}
            view={view}
            matching={total === null ? null : total + live.added}
            onAdded={() => setSelection({})}
          />
        )}
        {rows.length > 0 && <ExportTraces request={request} matching={total} />}
        <ColumnChooser content={content} onContentChange={(change) => setContent((c) => ({ ...c, ...change }))} />
      </Group>

      <FilterChips view={view} onChange={setView} />

      {live.pending > 0 && (
        <Button
          variant="light"
          fullWidth
          leftSection={<IconArrowUp size={16} />}
          onClick={live.flush}
          aria-live="polite"
        >
          {live.pending} new trace{live.pending === 1 ? '' : 's'}
          {live.paused ? ' (paused)' : ''}: show
        </Button>
      )}

      <Paper
        withBorder
        radius="md"
        style={{ flex: 1, minHeight: 240, overflow: 'hidden', display: 'flex', flexDirection: 'column' }}
      >
        {traces.isPending ? (
          <LoadingState label="Loading traces" />
        ) : traces.isError ? (
          <Stack p="md">
            <ErrorState error={traces.error} title="Could not load the traces" onRetry={() => traces.refetch()} />
          </Stack>
        ) : rows.length === 0 ? (
          traces.data.searched_roots ? (
            <EmptyState title={`No match among the newest ${formatCount(traces.data.searched_roots)} traces`}>
              <Text size="sm" c="dimmed">
                These words are common, so the search tests the newest traces first. Set a time range or a filter to
                search further back.
              </Text>
            </EmptyState>
          ) : narrowed ? (
            <EmptyState title="No trace matches this view">
              <Text size="sm" c="dimmed">
                Widen the time range, remove a filter or change the search, or reset the view.
              </Text>
              <Button variant="light" onClick={reset}>
                Reset the view
              </Button>
            </EmptyState>
          ) : (
            <EmptyState title="No traces in this project yet" width={760}>
              <Text size="sm" c="dimmed">
                Traces written to this project appear here as they arrive.
              </Text>
              <ClientSetup projectName={project?.name} />
            </EmptyState>
          )
        ) : (
          <TracesTable
            rows={rows}
            linkTo={traceLink}
            onOpen={(r) => navigate(traceLink(r))}
            fresh={live.fresh}
            onReadingChange={live.setReading}
            height="100%"
            sort={view.sort}
            onSort={(sort) => setView({ sort })}
            content={content}
            {...(canWrite && { selection, onSelectionChange: setSelection })}
          />
        )}
      </Paper>

      {traces.data && rows.length > 0 && (
        <Group justify="space-between">
          <Text size="sm" c="dimmed" aria-live="polite">
            {formatCount((total ?? traces.data.total) + live.added)}
            {total === null ? '+' : ''} trace{total === 1 ? '' : 's'}
            {traces.data.searched_roots
              ? ` among the newest ${formatCount(traces.data.searched_roots)}: set a time range to search further back`
              : ''}
            {count.isFetching ? ' · counting…' : traces.isFetching ? ' · updating…' : ''}
          </Text>
          <Group gap="sm">
            <Select
              aria-label="Rows per page"
              w={120}
              size="xs"
              data={PAGE_SIZES.map((n) => ({ value: String(n), label: `${n} / page` }))}
              value={String(view.pageSize)}
              allowDeselect={false}
              onChange={(s) => s && setView({ pageSize: Number(s) })}
            />
            {pages > 1 && (
              <Pagination
                size="sm"
                total={pages}
                value={view.page}
                onChange={(page) => setView({ page })}
                getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
              />
            )}
          </Group>
        </Group>
      )}
    </Stack>
  );
}
