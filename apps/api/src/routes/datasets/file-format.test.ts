import { describe, expect, it } from 'vitest';
import type { TestCase } from '@sightline/db';
import { RequestValidationError } from '../../errors';
import { csvFile, jsonlFile, parseImport } from './file-format';

async function* chunks(...lists: TestCase[][]) {
  yield* lists;
}
const text = async (parts: AsyncIterable<string>) => {
  let all = '';
  for await (const part of parts) all += part;
  return all;
};
const testCase = (id: number, q: unknown, target: string | null = null): TestCase => ({
  id,
  inputs: { q } as Record<string, string>,
  target,
  tags: [],
  test_case_collection_id: 1,
});
const refusal = async (parsing: Promise<unknown>) => {
  const err = await parsing.then(
    () => new Error('not refused'),
    (e: unknown) => e,
  );
  if (err instanceof RequestValidationError) return err.detail;
  throw err;
};

describe('dataset files', () => {
  it('writes every chunk under one header, a value that is not a string as JSON', async () => {
    const file = csvFile(['q'], chunks([testCase(1, 'a')], [], [testCase(2, { n: 1 }, 'x')]));
    expect(await text(file)).toBe('q,target,tags\na,,[]\n"{""n"":1}",x,[]\n');
    expect(await text(jsonlFile(chunks([testCase(1, 'a')])))).toBe('{"inputs":{"q":"a"},"target":null,"tags":[]}\n');
  });

  it('reads a CSV with a byte order mark, CRLF line ends and columns in any order', async () => {
    expect(await parseImport('csv', '\ufeffr,q,target\r\n"1",2,""\r\n', ['q', 'r'])).toEqual([
      { inputs: { q: '2', r: '1' }, target: null, tags: [] },
    ]);
  });

  it('keeps a character whose bytes fall on both sides of a slice the parser is given', async () => {
    const value = 'é🙂'.repeat(20_000);
    expect(await parseImport('csv', `q\n"${value}"\n`, ['q'])).toEqual([
      { inputs: { q: value }, target: null, tags: [] },
    ]);
  });

  it('reads JSONL as POST /testcases reads test cases, and cleans text PostgreSQL cannot store', async () => {
    const line = String.raw`{"inputs":{"q":"a\u0000b","r":5},"target":true,"tags":["\ud800x"]}`;
    expect(await parseImport('jsonl', `${line}\r\n\n`, ['q', 'r'])).toEqual([
      { inputs: { q: 'ab', r: '5' }, target: 'true', tags: ['\ufffdx'] },
    ]);
  });

  it('refuses an input value nested too deeply to store, as a bad row', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(await refusal(parseImport('jsonl', `{"inputs":{"q":${deep}}}`, ['q']))).toEqual([
      { loc: ['body', 'content', 'row', 1, 'inputs', 'q'], msg: 'the value nests too deeply', type: 'custom' },
    ]);
  });
});
