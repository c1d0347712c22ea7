import { Text } from '@mantine/core';
import { diffWords, type Change } from 'diff';
import { useMemo } from 'react';

/** Past this many characters on either side, the text is shown without a diff: diffing is quadratic. */
const DIFF_LIMIT = 5000;

/**
 * `text` marked word by word against `base`: words only in `text` highlighted, words only in `base` struck
 * through. Screen readers hear "added" and "removed" before each change.
 */
export function WordDiff({ base, text }: { base: string | null; text: string | null }) {
  const parts = useMemo(
    () =>
      base == null || text == null || base.length > DIFF_LIMIT || text.length > DIFF_LIMIT
        ? null
        : diffWords(base, text),
    [base, text],
  );
  if (!parts)
    return (
      <Text size="xs" c={text == null ? 'dimmed' : undefined} style={{ whiteSpace: 'pre-wrap' }}>
        {text ?? '–'}
      </Text>
    );
  return (
    <Text size="xs" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
      <DiffParts parts={parts} />
    </Text>
  );
}

/** A diff's parts in line: added ones highlighted, removed ones struck through, each named for screen readers. */
export function DiffParts({ parts }: { parts: Change[] }) {
  return parts.map((p, i) =>
    p.added ? (
      <ins key={i} className="diff-added" aria-label={`added: ${p.value}`}>
        {p.value}
      </ins>
    ) : p.removed ? (
      <del key={i} className="diff-removed" aria-label={`removed: ${p.value}`}>
        {p.value}
      </del>
    ) : (
      <span key={i}>{p.value}</span>
    ),
  );
}
