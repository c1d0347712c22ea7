import { Button, Group, Paper, Stack, Text } from '@mantine/core';
import { IconArrowsMaximize, IconArrowsMinimize } from '@tabler/icons-react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError } from '../../api/client';
import { useProjects } from '../../api/projects';
import { usePermissions } from '../../api/roles';
import { useSpan, useTraceSkeleton } from '../../api/traces';
import { AddToDataset } from '../../components/AddToDataset';
import { StatusBadge } from '../../components/TraceCells';
import { SpanTree } from '../../components/trace/SpanTree';
import { PageHeading } from '../../components/ui/PageHeading';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCost, formatCount, formatLatency } from '../../lib/format';
import { ancestorsOf, buildSpanTree } from '../../lib/span-tree';
import { SpanDetail } from './components/SpanDetail';
import { traceCodec } from './url-state';

const PANE_HEIGHT = 'calc(100vh - 56px - 150px)';

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

  const selectedIndex = selected != null ? tree?.index.get(selected) : undefined;
  // A span opened from a link may sit under collapsed spans: open the way to it.
  useEffect(() => {
    if (!tree || selectedIndex == null) return;
    const ancestors = ancestorsOf(tree, selectedIndex);
    setCollapsed((c) =>
      ancestors.some((id) => c.has(id)) ? new Set([...c].filter((id) => !ancestors.includes(id))) : c,
    );
  }, [tree, selectedIndex]);
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
  const allCollapsed = tree.nodes.filter((n) => n.childCount > 0);

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
            <Summary label="Tokens">{formatCount(root.total_tokens ?? totals.tokens)}</Summary>
            <Summary label="Cost">{formatCost(root.cost ?? totals.cost)}</Summary>
          </Group>
        }
      />

      <div style={{ display: 'flex', gap: 'var(--mantine-spacing-sm)', alignItems: 'stretch' }}>
        <Paper withBorder radius="md" style={{ flex: '1 1 55%', minWidth: 0, overflow: 'hidden' }}>
          <Group
            justify="space-between"
            px="sm"
            py={6}
            style={{ borderBottom: '1px solid var(--mantine-color-default-border)' }}
          >
            <Text size="sm" fw={600}>
              Tree and timeline
            </Text>
            <Group gap={4}>
              <Button
                size="compact-xs"
                variant="subtle"
                color="gray"
                leftSection={<IconArrowsMaximize size={12} />}
                onClick={() => setCollapsed(new Set())}
              >
                Expand all
              </Button>
              <Button
                size="compact-xs"
                variant="subtle"
                color="gray"
                leftSection={<IconArrowsMinimize size={12} />}
                onClick={() => {
                  setCollapsed(new Set(allCollapsed.slice(1).map((n) => n.span.trace_id)));
                  select(root.trace_id);
                }}
              >
                Collapse all
              </Button>
            </Group>
          </Group>
          <SpanTree
            tree={tree}
            collapsed={collapsed}
            onToggle={toggle}
            selected={selected}
            onSelect={select}
            height={PANE_HEIGHT}
          />
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
