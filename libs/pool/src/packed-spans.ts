import type { SpanTexts } from '@sightline/core';

/** SpanTexts with every span's members in one buffer, span i's ending at `ends[i]`: two objects to move, not one a span. */
export type PackedSpanTexts = Omit<SpanTexts, 'members'> & {
  bytes: Uint8Array<ArrayBuffer>;
  ends: Uint32Array<ArrayBuffer>;
};

export function packMembers({ members, ...rest }: SpanTexts): PackedSpanTexts {
  let length = 0;
  for (const m of members) length += m.length;
  // Its own memory (never a slice of Buffer's pool), which can then be moved to the thread.
  const bytes = new Uint8Array(length);
  const ends = new Uint32Array(members.length);
  let at = 0;
  members.forEach((m, i) => {
    bytes.set(m, at);
    ends[i] = at += m.length;
  });
  return { ...rest, bytes, ends };
}

export function unpackMembers({ bytes, ends, ...rest }: PackedSpanTexts): SpanTexts {
  const members = new Array<Uint8Array>(ends.length);
  let at = 0;
  ends.forEach((end, i) => {
    members[i] = bytes.subarray(at, end);
    at = end;
  });
  return { ...rest, members };
}
