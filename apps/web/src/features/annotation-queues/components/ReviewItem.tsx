import { Alert, Anchor, Button, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { IconClockExclamation } from '@tabler/icons-react';
import { useCallback, useEffect, useEffectEvent, useMemo, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiError, errorMessage } from '../../../api/client';
import { useCriteria } from '../../../api/criteria';
import { useRemarks } from '../../../api/remarks';
import { usePermissions } from '../../../api/roles';
import { useSpan, useTraceSkeleton } from '../../../api/traces';
import { StatusBadge } from '../../../components/TraceCells';
import { Section } from '../../../components/trace/Section';
import { SpanAnnotations } from '../../../components/trace/SpanRemarks';
import { SpanTree } from '../../../components/trace/SpanTree';
import { EmptyState, ErrorState, LoadingState } from '../../../components/ui/StateViews';
import { Timestamp } from '../../../components/ui/Timestamp';
import { ancestorsOf, buildSpanTree, visibleNodes } from '../../../lib/span-tree';
import type { AnnotationQueue, LeasedItem } from '../../../api/annotation-queues';
import { useFinishItem, useRenewLease } from '../api';
import { choiceOf, criteriaOf, isControl, isTyping } from '../lib/queues';
import { SpanContent } from './SpanContent';

/** A lease lasts 10 minutes: it is renewed every 4 while the item is on screen, so that one lapsed renewal is survived. */
export const LEASE_RENEW_MS = 4 * 60_000;
const PANE_HEIGHT = 'calc(100vh - 56px - 260px)';

const isLapsed = (err: unknown) => err instanceof ApiError && err.status === 409;

/**
 * The item leased to the reviewer: its trace (the span tree, and the selected span's conversation or
 * payload) beside the queue's criteria for the trace's root span, with the keys that drive it all.
 */
export function ReviewItem({
  queue,
  item,
  projectUuid,
  onTakeNext,
  taking,
}: {
  queue: AnnotationQueue;
  item: LeasedItem;
  projectUuid: string;
  /** Asks for the next item again (after the lease lapsed). */
  onTakeNext: () => void;
  taking: boolean;
}) {
  const skeleton = useTraceSkeleton(item.trace_id);
  const tree = useMemo(
    () => (skeleton.data ? buildSpanTree(skeleton.data.spans, skeleton.data.root_trace_id) : null),
    [skeleton.data],
  );
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [selected, setSelected] = useState(item.trace_id);
  const span = useSpan(selected);
  // The annotations are the trace's, on its root span: that is what a queue's item is.
  const root = useSpan(item.trace_id);
  const remarks = useRemarks(item.trace_id);
  const criteria = useCriteria();
  const queueCriteria = useMemo(
    () => criteriaOf(criteria.data ?? [], queue.criterion_ids),
    [criteria.data, queue.criterion_ids],
  );
  const [activeId, setActiveId] = useState<string | null>(null);
  const active = queueCriteria.find((c) => c.id === activeId) ?? queueCriteria[0];
  const { canWrite } = usePermissions();
  const finish = useFinishItem(queue.id);
  const renew = useRenewLease(queue.id);
  const lapsed = isLapsed(finish.error) || isLapsed(renew.error);

  const selectedIndex = tree?.index.get(selected);
  const toggle = useCallback(
    (id: string) => {
      const closing = !collapsed.has(id);
      setCollapsed((c) => {
        const next = new Set(c);
        if (!next.delete(id)) next.add(id);
        return next;
      });
      // Collapsing the way to the selected span moves the selection up, so that it stays on screen.
      if (closing && tree && selectedIndex != null && ancestorsOf(tree, selectedIndex).includes(id)) setSelected(id);
    },
    [collapsed, tree, selectedIndex],
  );

  // The annotation a number key is saving: Enter right after it finishes the item once it is saved (and not
  // when saving failed, so that its error stays in view) rather than being dropped.
  const saving = useRef<Promise<boolean> | null>(null);
  const finishItem = (action: 'complete' | 'skip') => {
    if (finish.isPending || lapsed) return;
    const pending = saving.current;
    saving.current = null;
    const go = () => finish.mutate({ itemId: item.item_id, action });
    if (pending) void pending.then((saved) => saved && go());
    else go();
  };
  const moveSpan = (delta: number) => {
    if (!tree) return;
    const rows = visibleNodes(tree, collapsed);
    const at = rows.findIndex((i) => tree.nodes[i]!.span.trace_id === selected);
    const to = rows[Math.max(0, Math.min(rows.length - 1, at < 0 ? 0 : at + delta))];
    if (to != null) setSelected(tree.nodes[to]!.span.trace_id);
  };
  const moveCriterion = (delta: number) => {
    if (!active) return;
    const n = queueCriteria.length;
    setActiveId(queueCriteria[(queueCriteria.indexOf(active) + delta + n) % n]!.id);
  };
  const choose = (n: number) => {
    const body = active && canWrite ? choiceOf(active, n) : null;
    if (body)
      saving.current = remarks.annotate.mutateAsync({ criterionId: active!.id, body }).then(
        () => true,
        () => false,
      );
  };

  // The page's keys, wherever focus is but in a field being written in (and but Enter on a control).
  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return;
    if (isTyping(e.target)) {
      if (e.key === 'Escape') (e.target as HTMLElement).blur();
      return;
    }
    // A held key does not finish one item after another.
    const once = (act: () => void) => (e.repeat ? () => {} : act);
    const actions: Record<string, () => void> = {
      j: () => moveSpan(1),
      k: () => moveSpan(-1),
      c: () => moveCriterion(1),
      C: () => moveCriterion(-1),
      s: once(() => finishItem('skip')),
      ...(!isControl(e.target) && { Enter: once(() => (lapsed ? onTakeNext() : finishItem('complete'))) }),
    };
    const action = /^[1-9]$/.test(e.key) ? () => choose(Number(e.key)) : actions[e.key];
    if (!action) return;
    e.preventDefault();
    action();
  });
  useEffect(() => {
    const listener = (e: KeyboardEvent) => onKey(e);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);

  const renewLease = useEffectEvent(() => {
    if (!lapsed) renew.mutate(item.item_id);
  });
  useEffect(() => {
    const timer = setInterval(() => renewLease(), LEASE_RENEW_MS);
    return () => clearInterval(timer);
  }, []);

  const node = selectedIndex != null ? tree?.nodes[selectedIndex] : undefined;
  const rootSkeleton = tree?.nodes[0]?.span;
  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-end" wrap="nowrap">
        <Group gap="sm" style={{ minWidth: 0 }}>
          <Title order={3} style={{ wordBreak: 'break-word' }}>
            {rootSkeleton?.trace_name || root.data?.trace_name || 'unnamed trace'}
          </Title>
          {rootSkeleton && <StatusBadge status={rootSkeleton.status} />}
          <Anchor component={Link} to={`/projects/${projectUuid}/traces/${item.trace_id}`} size="sm">
            Open the trace
          </Anchor>
        </Group>
        <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
          Yours until <Timestamp value={renew.data?.lease_expires_at ?? item.lease_expires_at} size="xs" />
        </Text>
      </Group>

      <div style={{ display: 'flex', gap: 'var(--mantine-spacing-sm)', alignItems: 'stretch' }}>
        <Paper withBorder radius="md" style={{ flex: '1 1 32%', minWidth: 0, overflow: 'hidden' }}>
          {skeleton.isPending ? (
            <LoadingState label="Loading the trace" />
          ) : skeleton.isError ? (
            <Stack p="md">
              {skeleton.error instanceof ApiError && skeleton.error.status === 404 ? (
                <EmptyState title="This trace no longer exists">
                  <Text size="sm" c="dimmed">
                    It was removed, by retention or by hand: skip the item.
                  </Text>
                </EmptyState>
              ) : (
                <ErrorState
                  error={skeleton.error}
                  title="Could not load the trace"
                  onRetry={() => skeleton.refetch()}
                />
              )}
            </Stack>
          ) : !tree?.nodes.length ? (
            <EmptyState title="This trace has no spans yet" />
          ) : (
            <SpanTree
              tree={tree}
              collapsed={collapsed}
              onToggle={toggle}
              selected={selected}
              onSelect={setSelected}
              height={PANE_HEIGHT}
            />
          )}
        </Paper>
        <Paper
          withBorder
          radius="md"
          style={{ flex: '1 1 40%', minWidth: 0, height: PANE_HEIGHT, overflow: 'auto' }}
          role="region"
          aria-label="Selected span"
        >
          {node && (
            <SpanContent
              skeleton={node.span}
              span={span.data}
              loading={span.isPending}
              error={span.error}
              onRetry={() => span.refetch()}
            />
          )}
        </Paper>
        <Paper
          withBorder
          radius="md"
          style={{ flex: '1 1 28%', minWidth: 0, height: PANE_HEIGHT, overflow: 'auto' }}
          role="region"
          aria-label="Review"
        >
          <Stack gap="md" p="md">
            <Section title="Criteria">
              {root.isPending ? (
                <LoadingState label="Loading the trace's annotations" />
              ) : root.isError ? (
                <ErrorState
                  error={root.error}
                  title="Could not load the trace's annotations"
                  onRetry={() => root.refetch()}
                />
              ) : (
                <SpanAnnotations
                  span={root.data}
                  remarks={remarks}
                  criterionIds={queue.criterion_ids}
                  activeId={active?.id ?? null}
                  onActivate={setActiveId}
                  empty="This queue has no criteria to fill in: complete or skip its items, or edit it to choose some."
                />
              )}
            </Section>
            {lapsed ? (
              <Alert
                color="orange"
                variant="light"
                role="alert"
                icon={<IconClockExclamation size={18} />}
                title="Your lease on this item lapsed"
              >
                <Stack gap="xs" align="flex-start">
                  <Text size="sm">
                    The item went back to the queue, or another reviewer has it now: it can no longer be completed or
                    skipped here. The annotations you made stay on the trace.
                  </Text>
                  <Button size="xs" onClick={onTakeNext} loading={taking}>
                    Take the next item
                  </Button>
                </Stack>
              </Alert>
            ) : (
              (finish.error || renew.error) && (
                <Text size="sm" c="red" role="alert">
                  {errorMessage(finish.error ?? renew.error)}
                </Text>
              )
            )}
            <Group gap="xs">
              <Button
                onClick={() => finishItem('complete')}
                loading={finish.isPending && finish.variables?.action === 'complete'}
                disabled={lapsed || (finish.isPending && finish.variables?.action !== 'complete')}
              >
                Complete
              </Button>
              <Button
                variant="default"
                onClick={() => finishItem('skip')}
                loading={finish.isPending && finish.variables?.action === 'skip'}
                disabled={lapsed || (finish.isPending && finish.variables?.action !== 'skip')}
              >
                Skip
              </Button>
            </Group>
          </Stack>
        </Paper>
      </div>
    </Stack>
  );
}
