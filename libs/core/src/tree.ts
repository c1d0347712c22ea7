// Tree assembly for trace-log responses. Input rows are flat trace logs of one or more traces; output
// nests each span's children (ordered by execution_order, then start time) and lists their ids, followed
// by any child ids the client declared that have not arrived. Iterative, with a visited set, so deep or
// malformed trees cannot overflow the stack or loop.

/**
 * How a tree response is written. api.md nests spans under `children`, lists the ids in `children_ids` and
 * writes every field, null or not. The official clients read the nested spans from `children_logs` and the
 * ids from `children`, as they send them; and the Python client crashes on some nulls (`depth: null`) where
 * a missing key takes its default, so their dialect leaves out the fields that have no value. Each span is
 * written once, under one name.
 */
export type TreeDialect = { readonly nested: string; readonly ids: string; readonly omitNulls: boolean };
export const API_TREES: TreeDialect = { nested: 'children', ids: 'children_ids', omitNulls: false };
export const CLIENT_TREES: TreeDialect = { nested: 'children_logs', ids: 'children', omitNulls: true };

/**
 * Spans already serialized, as columns, for trees of one dialect. `members[i]` is the UTF-8 JSON text of
 * span i's fields without the enclosing braces and without the nested spans and child ids, which the tree
 * supplies; the other columns place the span in the tree, `children_ids` being the ids its client declared.
 */
export type SpanTexts = {
  dialect: TreeDialect;
  trace_id: string[];
  parent_trace_id: string[];
  execution_order: (number | null)[];
  start_timestamp: (string | null)[];
  children_ids: (string[] | null)[];
  members: Uint8Array[];
  /** The members' every `"` is doubled (text for a CSV cell): the tree writes its own text so too. */
  quotesDoubled?: boolean;
};

type Placed = {
  trace_id: string;
  parent_trace_id: string;
  execution_order: number | null;
  start_timestamp: string | null;
  children_ids: string[] | null;
};
type Link<R> = { row: R; children: Link<R>[]; childrenIds: string[] };

function compareSiblings(a: Placed, b: Placed): number {
  const ao = a.execution_order ?? Number.MAX_SAFE_INTEGER,
    bo = b.execution_order ?? Number.MAX_SAFE_INTEGER;
  if (ao !== bo) return ao - bo;
  const as = a.start_timestamp ?? '',
    bs = b.start_timestamp ?? '';
  if (as !== bs) return as < bs ? -1 : 1;
  return a.trace_id < b.trace_id ? -1 : a.trace_id > b.trace_id ? 1 : 0;
}

const placesOf = (spans: SpanTexts) =>
  spans.trace_id.map((trace_id, i) => ({
    i,
    trace_id,
    parent_trace_id: spans.parent_trace_id[i],
    execution_order: spans.execution_order[i],
    start_timestamp: spans.start_timestamp[i],
    children_ids: spans.children_ids[i],
  }));

/**
 * The indexes of the spans of the tree under each requested id, in the order requested, each tree's as
 * renderTrees writes them: a span before its children, siblings in their order.
 */
export function treeOrder(spans: SpanTexts, rootIds: readonly string[]): number[] {
  const order: number[] = [];
  for (const root of link(placesOf(spans), rootIds)) {
    const stack = [root];
    while (stack.length) {
      const node = stack.pop()!;
      order.push(node.row.i);
      for (let c = node.children.length - 1; c >= 0; c--) stack.push(node.children[c]!);
    }
  }
  return order;
}

/** Links the subtree under each requested id, in the order requested; ids not among the rows are skipped. */
function link<R extends Placed>(rows: readonly R[], rootIds: readonly string[]): Link<R>[] {
  const byId = new Map<string, Link<R>>();
  for (const row of rows) byId.set(row.trace_id, { row, children: [], childrenIds: [] });
  const childrenOf = new Map<string, Link<R>[]>();
  for (const node of byId.values()) {
    const { trace_id, parent_trace_id } = node.row;
    if (parent_trace_id === trace_id) continue;
    const siblings = childrenOf.get(parent_trace_id);
    if (siblings) siblings.push(node);
    else childrenOf.set(parent_trace_id, [node]);
  }

  const trees: Link<R>[] = [];
  const visited = new Set<string>();
  for (const rootId of rootIds) {
    const root = byId.get(rootId);
    if (!root || visited.has(rootId)) continue;
    visited.add(rootId);
    const stack = [root];
    while (stack.length) {
      const node = stack.pop()!;
      const children = (childrenOf.get(node.row.trace_id) ?? [])
        .filter((c) => !visited.has(c.row.trace_id))
        .sort((a, b) => compareSiblings(a.row, b.row));
      for (const child of children) visited.add(child.row.trace_id);
      node.children = children;
      node.childrenIds = children.map((c) => c.row.trace_id);
      const promised = node.row.children_ids;
      if (Array.isArray(promised) && promised.length) {
        const listed = new Set(node.childrenIds);
        for (const id of promised) {
          if (listed.has(id)) continue;
          listed.add(id);
          node.childrenIds.push(id);
        }
      }
      for (const child of children) stack.push(child);
    }
    trees.push(root);
  }
  return trees;
}

type Node = Link<ReturnType<typeof placesOf>[number]>;

/**
 * The JSON of the subtree under each requested id, in the order requested (ids not among the spans are
 * skipped), with the spans' dialect's names, the trees separated by `separator` (commas unless given), as UTF-8.
 * The spans' bytes are copied once into the output, never decoded; pieces are listed in output order first, so
 * the cost is linear in the size of the output at any depth.
 */
export function renderTrees(spans: SpanTexts, rootIds: readonly string[], separator = ','): Buffer {
  return render(
    spans,
    link(placesOf(spans), rootIds).map((root) => [root]),
    { separator, open: '', close: '' },
  );
}

/**
 * For each requested id (as renderTrees skips them), the JSON array of its children's subtrees, the arrays
 * separated by newlines (a JSON text holds none).
 */
export function renderChildren(spans: SpanTexts, rootIds: readonly string[]): Buffer {
  return render(
    spans,
    link(placesOf(spans), rootIds).map((root) => root.children),
    { separator: '\n', open: '[', close: ']' },
  );
}

/** Each forest's trees, comma-separated between `open` and `close`, the forests separated by `separator`. */
function render(
  spans: SpanTexts,
  forests: Node[][],
  { separator, open, close }: { separator: string; open: string; close: string },
): Buffer {
  const idsKey = JSON.stringify(spans.dialect.ids),
    nestedKey = JSON.stringify(spans.dialect.nested);
  // The output alternates text and (as a number) the members of a span; adjacent text is joined as it comes.
  const pieces: (string | number)[] = [];
  let text = '';
  for (const [f, forest] of forests.entries()) {
    text += (f ? separator : '') + open;
    const stack: (Node | string)[] = [close];
    for (let t = forest.length - 1; t >= 0; t--) {
      stack.push(forest[t]!);
      if (t) stack.push(',');
    }
    while (stack.length) {
      const item = stack.pop()!;
      if (typeof item === 'string') {
        text += item;
        continue;
      }
      const { i } = item.row;
      pieces.push(text + '{', i);
      text = `${spans.members[i].length ? ',' : ''}${idsKey}:${JSON.stringify(item.childrenIds)},${nestedKey}:[`;
      stack.push(']}');
      for (let c = item.children.length - 1; c >= 0; c--) {
        stack.push(item.children[c]);
        if (c) stack.push(',');
      }
    }
  }
  pieces.push(text);
  if (spans.quotesDoubled)
    for (const [p, piece] of pieces.entries()) if (typeof piece === 'string') pieces[p] = piece.replaceAll('"', '""');
  let length = 0;
  for (const piece of pieces)
    length += typeof piece === 'number' ? spans.members[piece].length : Buffer.byteLength(piece);
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) {
    if (typeof piece === 'number') {
      out.set(spans.members[piece], at);
      at += spans.members[piece].length;
    } else at += out.write(piece, at);
  }
  return out;
}
