import type { SkeletonSpan } from '../api/types';
import { apiTimeMs } from './time';

/**
 * One span in the tree, in depth-first order; `size` counts it and its descendants (to skip a collapsed
 * subtree), `failedBelow` its failed descendants (shown on it while it is collapsed).
 */
export type TreeNode = {
  span: SkeletonSpan;
  depth: number;
  parent: number;
  size: number;
  failedBelow: number;
  childCount: number;
  startMs: number | null;
  endMs: number | null;
};

/** `failed`: the failed spans' places in `nodes`, in depth-first order (the order `e` visits them). */
export type SpanTree = {
  nodes: TreeNode[];
  index: Map<string, number>;
  failed: number[];
  startMs: number;
  endMs: number;
};

const isFailed = (span: SkeletonSpan) => span.status === 'error';

/**
 * The tree of a trace's skeleton. Depth and order come from the parent links, not from the stored
 * `depth`/`execution_order` (clients set those, or not): a span whose parent is missing hangs under the
 * root, so every span is shown once. Iterative, since a 10,000-span chain would overflow recursion.
 */
export function buildSpanTree(spans: SkeletonSpan[], rootId?: string): SpanTree {
  const ids = new Set(spans.map((s) => s.trace_id));
  const root =
    spans.find((s) => s.trace_id === rootId) ??
    spans.find((s) => s.parent_trace_id === s.trace_id || !ids.has(s.parent_trace_id)) ??
    spans[0];
  const children = new Map<string, SkeletonSpan[]>();
  for (const s of spans) {
    if (s === root) continue;
    const parent = ids.has(s.parent_trace_id) && s.parent_trace_id !== s.trace_id ? s.parent_trace_id : root!.trace_id;
    (children.get(parent) ?? children.set(parent, []).get(parent)!).push(s);
  }
  const byOrder = (a: SkeletonSpan, b: SkeletonSpan) =>
    a.execution_order - b.execution_order || (apiTimeMs(a.start_timestamp) ?? 0) - (apiTimeMs(b.start_timestamp) ?? 0);
  for (const list of children.values()) list.sort(byOrder);

  const nodes: TreeNode[] = [];
  const index = new Map<string, number>();
  const seen = new Set<string>();
  const stack: { span: SkeletonSpan; depth: number; parent: number }[] = root
    ? [{ span: root, depth: 0, parent: -1 }]
    : [];
  while (stack.length) {
    const { span, depth, parent } = stack.pop()!;
    if (seen.has(span.trace_id)) continue; // a cycle in the parent links
    seen.add(span.trace_id);
    const kids = children.get(span.trace_id) ?? [];
    const startMs = apiTimeMs(span.start_timestamp);
    // The latency is exact where a written end time may be rounded to the second: it places the bar's end.
    const end = startMs != null && span.latency != null ? startMs + span.latency * 1000 : apiTimeMs(span.end_timestamp);
    index.set(span.trace_id, nodes.length);
    nodes.push({ span, depth, parent, size: 1, failedBelow: 0, childCount: kids.length, startMs, endMs: end });
    for (let i = kids.length - 1; i >= 0; i--)
      stack.push({ span: kids[i]!, depth: depth + 1, parent: nodes.length - 1 });
  }
  // Subtree sizes and failures, children before parents: depth-first order puts every descendant after its
  // ancestor. Counted once per skeleton, so that drawing a 10,000-span tree never walks a subtree.
  for (let i = nodes.length - 1; i > 0; i--) {
    const node = nodes[i]!;
    const parent = nodes[node.parent]!;
    parent.size += node.size;
    parent.failedBelow += node.failedBelow + (isFailed(node.span) ? 1 : 0);
  }
  const failed: number[] = [];
  nodes.forEach((n, i) => isFailed(n.span) && failed.push(i));

  let startMs = Infinity,
    endMs = -Infinity;
  for (const n of nodes) {
    if (n.startMs != null) startMs = Math.min(startMs, n.startMs);
    endMs = Math.max(endMs, n.endMs ?? n.startMs ?? -Infinity);
  }
  if (!Number.isFinite(startMs)) startMs = endMs = 0;
  return { nodes, index, failed, startMs, endMs: Math.max(endMs, startMs) };
}

/**
 * The rows to draw: every node whose ancestors are all expanded and, when `kept` is given (a search's
 * matches and their ancestors, see `keptFor`), that it keeps.
 */
export function visibleNodes(tree: SpanTree, collapsed: ReadonlySet<string>, kept?: Uint8Array | null): number[] {
  const rows: number[] = [];
  for (let i = 0; i < tree.nodes.length;) {
    const node = tree.nodes[i]!;
    // A span a search leaves out has no match below it either (a match keeps its ancestors): skip them all.
    if (kept && !kept[i]) {
      i += node.size;
      continue;
    }
    rows.push(i);
    i += collapsed.has(node.span.trace_id) ? node.size : 1;
  }
  return rows;
}

/** Which spans a search shows: its matches (places in `nodes`) and their ancestors, by place. */
export function keptFor(tree: SpanTree, matches: readonly number[]): Uint8Array {
  const kept = new Uint8Array(tree.nodes.length);
  for (const m of matches) {
    // Up to the first ancestor kept already: every span is visited once, however many matches share it.
    for (let i = m; i >= 0 && !kept[i]; i = tree.nodes[i]!.parent) kept[i] = 1;
  }
  return kept;
}

/**
 * The place in `places` (ascending places in `nodes`) that comes after `from` in depth-first order, or
 * before it when `step` is -1, going round at the ends; the first (or last) when `from` is not a span.
 */
export function nextPlace(places: readonly number[], from: number | undefined, step: 1 | -1): number | undefined {
  if (!places.length) return undefined;
  if (from == null) return step === 1 ? places[0] : places.at(-1);
  // Binary search for the first place after `from` (step 1) or the last before it (step -1).
  let lo = 0,
    hi = places.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (places[mid]! <= from) lo = mid + 1;
    else hi = mid;
  }
  if (step === 1) return places[lo] ?? places[0];
  const before = places[lo - 1] === from ? lo - 2 : lo - 1;
  return places[before] ?? places.at(-1);
}

/** Where a span's bar sits on the timeline, as fractions of the trace's duration. */
export function barOf(tree: SpanTree, node: TreeNode): { left: number; width: number; open: boolean } | null {
  if (node.startMs == null) return null;
  const total = tree.endMs - tree.startMs;
  if (total <= 0) return { left: 0, width: 1, open: node.endMs == null };
  const left = (node.startMs - tree.startMs) / total;
  const end = node.endMs ?? tree.endMs;
  return { left, width: Math.max(0, Math.min(1 - left, (end - node.startMs) / total)), open: node.endMs == null };
}

/** The ids of every ancestor of a span, so that selecting a hidden span can expand the way to it. */
export function ancestorsOf(tree: SpanTree, i: number): string[] {
  const ids: string[] = [];
  for (let p = tree.nodes[i]?.parent ?? -1; p >= 0; p = tree.nodes[p]!.parent) ids.push(tree.nodes[p]!.span.trace_id);
  return ids;
}
