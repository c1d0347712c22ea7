import type { MappedSpan } from './conventions';

// Most exports hold whole traces (an SDK exports a trace's spans as they end, the root last, usually in
// one batch). Where a request holds a trace's root, the API completes the tree itself: the root's children
// point at it, and each span gets the depth and execution order the store would compute, so that the
// store need not walk the trace. Where it does not, the store does the same work once the spans meet.

/** Each span's depth, when every span of the trace in `spans` reaches the root; otherwise null. */
function depthsOf(spans: MappedSpan[], root: string): Map<MappedSpan, number> | null {
  const byId = new Map(spans.map((s) => [s.trace_id, s]));
  const depths = new Map<MappedSpan, number>();
  const depthOf = (span: MappedSpan): number | null => {
    const path: MappedSpan[] = [];
    const onPath = new Set<MappedSpan>();
    let at: MappedSpan | undefined = span;
    let base = 0;
    while (at) {
      const known = depths.get(at);
      if (known !== undefined) {
        base = known;
        break;
      }
      if (at.trace_id === root) {
        depths.set(at, 0);
        break;
      }
      if (onPath.has(at)) return null; // a cycle
      path.push(at);
      onPath.add(at);
      at = byId.get(at.parent_trace_id!);
    }
    if (!at) return null; // the path leaves the request
    path.reverse().forEach((s, i) => depths.set(s, base + i + 1));
    return depths.get(span)!;
  };
  for (const span of spans) if (depthOf(span) === null) return null;
  return depths;
}

/** The store's order: the root, then by start, depth and id. */
function byExecution(depths: Map<MappedSpan, number>) {
  const start = (s: MappedSpan) => (s.fields.start_timestamp as string | undefined) ?? '\uffff';
  return (a: MappedSpan, b: MappedSpan) =>
    Number(depths.get(a) !== 0) - Number(depths.get(b) !== 0) ||
    (start(a) < start(b) ? -1 : start(a) > start(b) ? 1 : 0) ||
    depths.get(a)! - depths.get(b)! ||
    (a.trace_id < b.trace_id ? -1 : a.trace_id > b.trace_id ? 1 : 0);
}

/**
 * Completes, in place, the trees of the traces whose root is among `spans`, and marks the spans whose parent
 * is not among them: the store looks for those spans' root.
 */
export function placeInTrees(spans: MappedSpan[]): void {
  const byRoot = new Map<string, MappedSpan[]>();
  for (const s of spans) {
    const group = byRoot.get(s.root_trace_id);
    if (group) group.push(s);
    else byRoot.set(s.root_trace_id, [s]);
  }
  for (const [root, group] of byRoot) {
    const rootSpan = group.find((s) => s.trace_id === root);
    if (rootSpan?.alias) for (const s of group) if (s.parent_trace_id === rootSpan.alias) s.parent_trace_id = root;
    const ids = new Set(group.map((s) => s.trace_id));
    for (const s of group) if (s.parent_trace_id && !ids.has(s.parent_trace_id)) s.parentElsewhere = true;
    if (!rootSpan) continue;
    const depths = depthsOf(group, root);
    if (!depths) continue;
    [...group]
      .sort(byExecution(depths))
      .forEach((s, order) => (s.tree = { depth: depths.get(s)!, execution_order: order }));
  }
}
