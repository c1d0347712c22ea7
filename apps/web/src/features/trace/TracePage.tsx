import { ActionIcon, Button, Group, Paper, Stack, Text, Tooltip } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconArrowsMaximize, IconArrowsMinimize } from '@tabler/icons-react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError } from '../../api/client';
import { useProjects } from '../../api/projects';
import { usePermissions } from '../../api/roles';
import { useSpan, useTraceSearch, useTraceSkeleton } from '../../api/traces';
import { AddToDataset } from '../../components/AddToDataset';
import { Estimated, StatusBadge } from '../../components/TraceCells';
import { SpanTree, type TreeSearch } from '../../components/trace/SpanTree';
import { PageHeading } from '../../components/ui/PageHeading';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCost, formatCount, formatLatency } from '../../lib/format';
import { ancestorsOf, buildSpanTree, keptFor, nextPlace, type SpanTree as Tree } from '../../lib/span-tree';
import { ExperimentLinks } from './components/ExperimentLinks';
import { FailedSpans } from './components/FailedSpans';
import { SpanDetail } from './components/SpanDetail';
import { TraceSearchBar } from './components/TraceSearchBar';
import { traceCodec } from './url-state';

const PANE_HEIGHT = 'calc(100vh - 56px - 150px)';
/** The contents are searched once typing pauses this long; the names at every key. */
const SEARCH_DEBOUNCE_MS = 300;

/** Typing in a field: the page's own keys (E) are letters there. */
const isTyping = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

/**
 * A search's matches in the tree: the spans whose name holds the text (any case), and those the server
 * found by their contents (`contentIds`, once it answered for this text). Null without a search.
 */
function searchOf(tree: Tree | null, text: string, contentIds: readonly string[] | undefined) {
  if (!tree || text === '') return null;
  const needle = text.toLowerCase();
  const matched = new Uint8Array(tree.nodes.length);
  tree.nodes.forEach((n, i) => {
    if (n.span.trace_name?.toLowerCase().includes(needle)) matched[i] = 1;
  });
  for (const id of contentIds ?? []) {
    const i = tree.index.get(id);
    if (i != null) matched[i] = 1;
  }
  const places: number[] = [];
  matched.forEach((m, i) => m && places.push(i));
  return { text, matched, places, kept: keptFor(tree, places) } satisfies TreeSearch & { places: number[] };
}

export default function TracePage() {
  const { projectUuid = '', traceId = '' } = useParams();
  const [view, setView] = useUrlState(traceCodec);
  const project = useProjects().data?.find((p) => p.uuid === projectUuid);
  const skeleton = useTraceSkeleton(traceId);
  const tree = useMemo(
    () => (skeleton.data ? buildSpanTree(skeleton.data.spans, skeleton.data.root_trace_id) : null),
    [skeleton.data],
  );
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const selected = view.span ?? tree?.nodes[0]?.span.trace_id ?? null;
  const select = useCallback((span: string) => setView({ span }, { replace: true }), [setView]);
  const span = useSpan(selected);
  const { canWrite } = usePermissions();
  const [debouncedSearch] = useDebouncedValue(view.search, SEARCH_DEBOUNCE_MS);
  const contents = useTraceSearch(traceId, debouncedSearch);
  // The server's answer counts once it is for the text in the box: while typing, the names alone.
  const contentsDone = debouncedSearch === view.search && contents.isSuccess;
  const contentIds = contentsDone ? contents.data.trace_ids : undefined;
  const search = useMemo(() => searchOf(tree, view.search, contentIds), [tree, view.search, contentIds]);

  const selectedIndex = selected != null ? tree?.index.get(selected) : undefined;
  // A span opened from a link may sit under collapsed spans: open the way to it.
  useEffect(() => {
    if (!tree || selectedIndex == null) return;
    const ancestors = ancestorsOf(tree, selectedIndex);
    setCollapsed((c) =>
      ancestors.some((id) => c.has(id)) ? new Set([...c].filter((id) => !ancestors.includes(id))) : c,
    );
  }, [tree, selectedIndex]);
  // A search shows its matches: the collapsed spans on the way to them open.
  useEffect(() => {
    if (!tree || !search) return;
    setCollapsed((c) => {
      const next = new Set([...c].filter((id) => !search.kept[tree.index.get(id) ?? -1]));
      return next.size === c.size ? c : next;
    });
  }, [tree, search]);
  const toggle = useCallback(
    (id: string) => {
      const closing = !collapsed.has(id);
      setCollapsed((c) => {
        const next = new Set(c);
        if (!next.delete(id)) next.add(id);
        return next;
      });
      // Collapsing the way to the selected span moves the selection up, so that it stays on screen.
      if (closing && tree && selectedIndex != null && ancestorsOf(tree, selectedIndex).includes(id)) select(id);
    },
    [collapsed, tree, selectedIndex, select],
  );

  // The next failed span (or the previous one), opened as a link to it would be. A search that hides it is
  // cleared, so that `e` always lands on the span.
  const stepFailed = useCallback(
    (step: 1 | -1) => {
      const place = tree ? nextPlace(tree.failed, selectedIndex, step) : undefined;
      if (place == null || !tree) return;
      setView(
        { span: tree.nodes[place]!.span.trace_id, ...(search && !search.kept[place] && { search: '' }) },
        { replace: true },
      );
    },
    [tree, selectedIndex, search, setView],
  );
  const stepMatch = useCallback(
    (step: 1 | -1) => {
      const place = search ? nextPlace(search.places, selectedIndex, step) : undefined;
      if (place != null && tree) select(tree.nodes[place]!.span.trace_id);
    },
    [tree, search, selectedIndex, select],
  );
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if ((e.key !== 'e' && e.key !== 'E') || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      e.preventDefault();
      stepFailed(e.shiftKey ? -1 : 1);
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [stepFailed]);

  if (skeleton.isPending) return <LoadingState label="Loading the trace" />;
  if (skeleton.isError) {
    return skeleton.error instanceof ApiError && skeleton.error.status === 404 ? (
      <EmptyState title="This trace does not exist">
        <Text size="sm" c="dimmed">
          It may not be written yet, or it was removed by retention. Check the link, or go back to the traces.
        </Text>
        <Button component={Link} to={`/projects/${projectUuid}/traces`} variant="light">
          Back to the traces
        </Button>
      </EmptyState>
    ) : (
      <ErrorState error={skeleton.error} title="Could not load the trace" onRetry={() => skeleton.refetch()} />
    );
  }
  if (!tree || !tree.nodes.length) return <EmptyState title="This trace has no spans yet" />;

  const root = tree.nodes[0]!.span;
  const node = selectedIndex != null ? tree.nodes[selectedIndex] : undefined;
  // A root without its own totals shows its spans' sums; none at all shows a dash, not a zero.
  const sum = (pick: (s: typeof root) => number | null) =>
    tree.nodes.reduce<number | null>((t, n) => (pick(n.span) == null ? t : (t ?? 0) + pick(n.span)!), null);
  const totals = { cost: sum((s) => s.cost), tokens: sum((s) => s.total_tokens) };
  // Whether the figures shown count a span whose usage was counted from its text: the root's own, or any span's.
  const estimated =
    root.total_tokens != null || root.cost != null
      ? root.usage_estimated
      : tree.nodes.some((n) => n.span.usage_estimated);
  const allCollapsed = tree.nodes.filter((n) => n.childCount > 0);
  const matchPosition =
    search && selectedIndex != null && search.matched[selectedIndex] ? search.places.indexOf(selectedIndex) + 1 : null;

  return (
    <Stack gap="sm">
      <PageHeading
        crumbs={[
          { label: 'Projects', to: '/projects' },
          { label: project?.name ?? 'Traces', to: `/projects/${projectUuid}/traces` },
          { label: traceId.slice(0, 8), mono: true },
        ]}
        title={root.trace_name || 'unnamed trace'}
        beside={
          <>
            <StatusBadge status={root.status} />
            <ExperimentLinks
              projectUuid={projectUuid}
              rootId={root.trace_id}
              experimentUuid={skeleton.data.experiment_uuid ?? null}
              compare={view.compare ?? null}
            />
            {canWrite && <AddToDataset rootIds={[root.trace_id]} />}
          </>
        }
        right={
          <Group gap="lg" wrap="nowrap">
            <Summary label="Started">
              <Timestamp value={root.start_timestamp} size="sm" fw={500} />
            </Summary>
            <Summary label="Duration">
              {formatLatency(root.latency ?? (tree.endMs > tree.startMs ? (tree.endMs - tree.startMs) / 1000 : null))}
            </Summary>
            <Summary label="Spans">{formatCount(tree.nodes.length)}</Summary>
            <Summary label="Tokens">
              <Estimated estimated={estimated}>{formatCount(root.total_tokens ?? totals.tokens)}</Estimated>
            </Summary>
            <Summary label="Cost">
              <Estimated estimated={estimated}>{formatCost(root.cost ?? totals.cost)}</Estimated>
            </Summary>
            <FailedSpans count={tree.failed.length} onStep={stepFailed} />
          </Group>
        }
      />

      <div style={{ display: 'flex', gap: 'var(--mantine-spacing-sm)', alignItems: 'stretch' }}>
        <Paper withBorder radius="md" style={{ flex: '1 1 55%', minWidth: 0, overflow: 'hidden' }}>
          <Group
            justify="space-between"
            wrap="nowrap"
            gap="xs"
            px="sm"
            py={6}
            style={{ borderBottom: '1px solid var(--mantine-color-default-border)' }}
          >
            <Text size="sm" fw={600} style={{ whiteSpace: 'nowrap' }}>
              Tree and timeline
            </Text>
            <TraceSearchBar
              value={view.search}
              onChange={(text) => setView({ search: text }, { replace: true })}
              matches={search ? search.places.length : null}
              position={matchPosition}
              searching={!!search && !contentsDone && !contents.isError}
              failed={!!search && contents.isError && debouncedSearch === view.search}
              onRetry={() => contents.refetch()}
              onStep={stepMatch}
            />
            {/* Icons beside the search, so that the header holds on one line at 1024 px. */}
            <Group gap={2} wrap="nowrap">
              <Tooltip label="Expand all">
                <ActionIcon
                  variant="subtle"
                  color="gray"
                  aria-label="Expand all"
                  onClick={() => setCollapsed(new Set())}
                >
                  <IconArrowsMaximize size={14} />
                </ActionIcon>
              </Tooltip>
              <Tooltip label="Collapse all">
                <ActionIcon
                  variant="subtle"
                  color="gray"
                  aria-label="Collapse all"
                  onClick={() => {
                    setCollapsed(new Set(allCollapsed.slice(1).map((n) => n.span.trace_id)));
                    select(root.trace_id);
                  }}
                >
                  <IconArrowsMinimize size={14} />
                </ActionIcon>
              </Tooltip>
            </Group>
          </Group>
          {search && !search.places.length && (contentsDone || contents.isError) ? (
            <EmptyState title="No span matches the search">
              <Text size="sm" c="dimmed">
                No span of this trace holds “{search.text}” in its name
                {contents.isError ? '' : ', inputs, output or metadata'}. Check the spelling, or clear the search.
              </Text>
              <Button variant="light" onClick={() => setView({ search: '' }, { replace: true })}>
                Show every span
              </Button>
            </EmptyState>
          ) : (
            <SpanTree
              tree={tree}
              collapsed={collapsed}
              onToggle={toggle}
              selected={selected}
              onSelect={select}
              height={PANE_HEIGHT}
              search={search}
            />
          )}
        </Paper>
        <Paper
          withBorder
          radius="md"
          style={{ flex: '1 1 45%', minWidth: 0, height: `calc(${PANE_HEIGHT} + 37px)`, overflow: 'auto' }}
          role="region"
          aria-label="Selected span"
        >
          {node ? (
            <SpanDetail
              skeleton={node.span}
              span={span.data}
              loading={span.isPending}
              error={span.error}
              onRetry={() => span.refetch()}
              link={`${window.location.origin}/projects/${projectUuid}/traces/${traceId}?span=${node.span.trace_id}`}
            />
          ) : (
            <EmptyState title="No span selected">
              <Text size="sm" c="dimmed">
                The span of the link is not in this trace. Pick one in the tree.
              </Text>
            </EmptyState>
          )}
        </Paper>
      </div>
    </Stack>
  );
}

function Summary({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" fw={500} ff="monospace">
        {children}
      </Text>
    </div>
  );
}
