import { renderTrees, type SpanTexts, type TreeDialect } from '@sightline/core';

export default function renderTreesTask({ spans, rootIds, dialect }: { spans: SpanTexts; rootIds: string[]; dialect: TreeDialect }) {
  return renderTrees(spans, rootIds, dialect);
}
