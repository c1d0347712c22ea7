import { Piscina } from 'piscina';
import { renderTrees } from '@sightline/core';
import { type PackedSpanTexts, unpackMembers } from '../packed-spans';

export default function renderTreesTask({ spans, rootIds }: { spans: PackedSpanTexts; rootIds: string[] }) {
  const out = renderTrees(unpackMembers(spans), rootIds);
  // A large answer owns its memory (Buffer pools only small ones), which is then moved back rather than copied.
  return out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? Piscina.move(out) : out;
}
