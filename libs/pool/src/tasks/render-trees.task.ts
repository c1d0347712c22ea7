import { renderTrees, type SpanTexts } from '@sightline/core';

export default function renderTreesTask({ spans, rootIds }: { spans: SpanTexts; rootIds: string[] }) {
  return renderTrees(spans, rootIds);
}
