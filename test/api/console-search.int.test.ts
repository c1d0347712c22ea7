import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// A search term without a word the index knows can be neither looked up nor pre-filtered: it made every
// span of the walk be read whole. Such a search is refused; such a term beside others is left out.
describe('POST /traces: a search without words', () => {
  const {
    stack,
    orgs: [{ key }],
  } = useStack({ orgs: ['search-words'] });
  const roots = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    const spans = [
      { trace_id: roots[0], project_name: 'words', output: 'a green umbrella & a kettle' },
      { trace_id: roots[1], project_name: 'words', output: 'a red kettle' },
    ];
    expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
    for (const id of roots) expect((await readTrace(stack.app, key, id)).statusCode).toBe(200);
  });
  const search = (text: string) => call(stack.app, key, 'POST', '/traces', { project_name: 'words', search: text });
  const ids = async (text: string) => {
    const res = await search(text);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.map((r: { trace_id: string }) => r.trace_id);
  };

  it('is refused with 422 at body.search, saying what a word is and what is not indexed', async () => {
    for (const text of ['&', '-&', '"&&"', '& -& "%%"', '100%', '42', 'ops@example.com', 'https://example.com/a']) {
      const res = await search(text);
      expect(res.statusCode, text).toBe(422);
      expect(res.json(), text).toEqual({
        detail: [
          {
            loc: ['body', 'search'],
            msg: expect.stringMatching(/at least one word.*not indexed/),
            type: 'value_error',
          },
        ],
      });
    }
  });

  it('leaves out a term without words beside others', async () => {
    expect(await ids('umbrella')).toEqual([roots[0]]);
    expect(await ids('umbrella &')).toEqual([roots[0]]);
    expect(await ids('kettle -&')).toEqual(await ids('kettle'));
    expect(await ids('kettle -umbrella 100%')).toEqual([roots[1]]);
    expect(await ids('"umbrella & a"')).toEqual([roots[0]]);
    // No terms at all is no search.
    expect((await ids('  ')).sort()).toEqual([...roots].sort());
  });
});

// Every statement of the API runs under STATEMENT_TIMEOUT_MS. A search whose words every span holds but
// whose phrase none does makes PostgreSQL recheck each span's whole text: honestly slow over many spans
// of 100 KB (about 2 ms each), far beyond the tiny timeout set here.
describe('a query past the statement timeout', () => {
  const {
    stack,
    sql,
    orgs: [org],
  } = useStack({ worker: false, env: { STATEMENT_TIMEOUT_MS: '250' }, orgs: ['statement-timeout'] });
  let project: string;

  beforeAll(async () => {
    project = (await call(stack.app, org.key, 'POST', '/project', { name: 'slow' })).json().uuid;
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, project_id, created, depth,
                         start_ts, output, search_words)
      select ${org.id}::uuid, id, id, id, ${project}::uuid, true, 0, now() - i * interval '1 second',
             repeat('alpha beta ', 9000) || i, array['alpha', 'beta']
      from (select gen_random_uuid() as id, i from generate_series(1, 1000) i) g`;
  }, 120_000);

  it('answers 503 saying how long it may take and how to narrow it, not 500', async () => {
    const res = await call(stack.app, org.key, 'POST', '/traces', {
      project_uuid: project,
      search: '"beta alpha beta beta"',
    });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toEqual({
      detail: 'the query took longer than 0.25 s and was stopped; narrow the time range or add a filter',
    });
    // The pool's connection is free again, and quick queries still run.
    expect(
      (await call(stack.app, org.key, 'POST', '/traces', { project_uuid: project, page_size: 1 })).statusCode,
    ).toBe(200);
  }, 60_000);
});
