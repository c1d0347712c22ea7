import { describe, expect, it } from 'vitest';
import type { ExperimentSummary } from '../../../api/types';
import { parseMetadataFilter, sortExperiments } from './experiments';

describe('parseMetadataFilter', () => {
  it('reads key=value pairs, taking values that read as JSON as such', () => {
    expect(parseMetadataFilter('model=gpt-4o, temperature=0, tuned=true, note="a, b"')).toEqual({
      ok: false,
      error: 'Write key=value, not "b""',
    });
    expect(parseMetadataFilter('model=gpt-4o, temperature=0, tuned=true, tag="7"')).toEqual({
      ok: true,
      value: { model: 'gpt-4o', temperature: 0, tuned: true, tag: '7' },
    });
  });
  it('reads a JSON object, and refuses other JSON and pairs without a key', () => {
    expect(parseMetadataFilter(' {"nested": {"a": 1}} ')).toEqual({ ok: true, value: { nested: { a: 1 } } });
    expect(parseMetadataFilter('{"a": ')).toMatchObject({ ok: false });
    expect(parseMetadataFilter('=1')).toMatchObject({ ok: false });
    expect(parseMetadataFilter('   ')).toEqual({ ok: true, value: null });
  });
});

describe('sortExperiments', () => {
  const e = (uuid: string, name: string, samples: number) => ({ uuid, name, samples }) as ExperimentSummary;
  it('sorts numbers as numbers and text as text, in either direction, ties by uuid', () => {
    const rows = [e('c', 'beta', 10), e('a', 'alpha', 9), e('b', 'alpha', 100)];
    expect(sortExperiments(rows, { key: 'samples', desc: true }).map((r) => r.uuid)).toEqual(['b', 'c', 'a']);
    expect(sortExperiments(rows, { key: 'name', desc: false }).map((r) => r.uuid)).toEqual(['a', 'b', 'c']);
  });
});
