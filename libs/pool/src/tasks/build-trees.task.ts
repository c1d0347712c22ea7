import { buildTrees, type FlatSpan } from '@sightline/core';

export default function buildTreesTask({ rows, rootIds }: { rows: FlatSpan[]; rootIds: string[] }) {
  return buildTrees(rows, rootIds);
}
