// Tree assembly for trace-log responses. Input rows are flat trace logs of one or more traces; output
// nests each span's children under `children` (ordered by execution_order, then start time) and lists
// their ids in `children_ids`, followed by any child ids the client declared that have not arrived. Iterative, with a visited set, so deep or malformed trees cannot overflow
// the stack or loop.

export type FlatSpan = {
  trace_id: string;
  parent_trace_id: string;
  execution_order?: number | null;
  start_timestamp?: string | null;
  [key: string]: unknown;
};
export type SpanTree = FlatSpan & { children: SpanTree[]; children_ids: string[] };

function compareSiblings(a: FlatSpan, b: FlatSpan): number {
  const ao = a.execution_order ?? Number.MAX_SAFE_INTEGER, bo = b.execution_order ?? Number.MAX_SAFE_INTEGER;
  if (ao !== bo) return ao - bo;
  const as = a.start_timestamp ?? '', bs = b.start_timestamp ?? '';
  if (as !== bs) return as < bs ? -1 : 1;
  return a.trace_id < b.trace_id ? -1 : a.trace_id > b.trace_id ? 1 : 0;
}

/** Builds the subtree under each requested id, in the order requested; ids not among the rows are skipped. */
export function buildTrees(rows: readonly FlatSpan[], rootIds: readonly string[]): SpanTree[] {
  const byId = new Map<string, SpanTree>();
  const declared = new Map<string, unknown>();
  for (const row of rows) {
    declared.set(row.trace_id, row.children_ids);
    byId.set(row.trace_id, { ...row, children: [], children_ids: [] });
  }
  const childrenOf = new Map<string, SpanTree[]>();
  for (const node of byId.values()) {
    if (node.parent_trace_id === node.trace_id) continue;
    const siblings = childrenOf.get(node.parent_trace_id);
    if (siblings) siblings.push(node);
    else childrenOf.set(node.parent_trace_id, [node]);
  }

  const trees: SpanTree[] = [];
  const visited = new Set<string>();
  for (const rootId of rootIds) {
    const root = byId.get(rootId);
    if (!root || visited.has(rootId)) continue;
    visited.add(rootId);
    const stack = [root];
    while (stack.length) {
      const node = stack.pop()!;
      const children = (childrenOf.get(node.trace_id) ?? []).filter((c) => !visited.has(c.trace_id)).sort(compareSiblings);
      for (const child of children) visited.add(child.trace_id);
      node.children = children;
      node.children_ids = children.map((c) => c.trace_id);
      const promised = declared.get(node.trace_id);
      if (Array.isArray(promised)) for (const id of promised) if (!node.children_ids.includes(id)) node.children_ids.push(id);
      stack.push(...children);
    }
    trees.push(root);
  }
  return trees;
}
