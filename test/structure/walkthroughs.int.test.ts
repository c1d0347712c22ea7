import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { coverage } from '../support/crossed-files';

// docs/walkthroughs.md lists, for each request it follows, every file of the project's own code that the
// request runs. This test runs each request and compares: a file added to the path, or one the path no
// longer crosses, fails it until the walkthrough says so.
const DOC = new URL('../../docs/walkthroughs.md', import.meta.url);

function listed(section: string): string[] {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`docs/walkthroughs.md has no section "## ${section}"`);
  const end = text.indexOf('\n## ', start + 1);
  const body = text.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(/^\s*(?:\d+\.|-) `((?:apps|libs)\/[^`]+\.tsx?)`/gm)].map((m) => m[1]);
}

/** Every file both runs crossed is listed; every file listed was crossed by at least one run. */
function expectListed(section: string, crossed: { always: string[]; sometimes: string[] }) {
  const doc = listed(section);
  expect(new Set(doc).size, `${section}: a file listed twice`).toBe(doc.length);
  const missing = crossed.always.filter((f) => !doc.includes(f));
  const stale = doc.filter((f) => !crossed.sometimes.includes(f));
  expect({ 'crossed but not listed': missing, 'listed but not crossed': stale }).toEqual({
    'crossed but not listed': [],
    'listed but not crossed': [],
  });
}

// Coverage starts before the service's modules load (hence the dynamic imports): V8 does not report the
// functions of a script compiled before it started.
const { crossedFiles, stop } = await coverage();
afterAll(stop);
const { call } = await import('../support/app');
const { useGateway } = await import('../support/fixtures');
const { userMessage } = await import('../support/gateway');
const {
  gw,
  sql,
  orgs: [{ key }],
} = useGateway({ orgs: ['walk'] });
const post = (path: string, body?: unknown) => call(gw.stack.app, key, 'POST', path, body);

async function persisted(traceId: string) {
  for (let i = 0; i < 500; i++) {
    const [row] = await sql`select 1 from spans where trace_id = ${traceId}`;
    if (row) return;
    await sleep(10);
  }
  throw new Error(`span ${traceId} not written`);
}

describe('the walkthroughs of docs/walkthroughs.md', () => {
  it('a span write', async () => {
    const crossed = await crossedFiles(async () => {
      const trace_id = randomUUID();
      const res = await post('/trace_log', {
        trace_id,
        project_name: 'walk',
        trace_name: 'walk',
        inputs: { question: 'where' },
        output: 'here',
        start_timestamp: new Date().toISOString(),
      });
      expect(res.statusCode).toBe(200);
      await persisted(trace_id);
    });
    expectListed('A span write', crossed);
  });

  it('a completion', async () => {
    const crossed = await crossedFiles(async () => {
      const trace_id = randomUUID();
      const res = await post('/completion', {
        trace_id,
        project_name: 'walk',
        llm_configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [userMessage('hello')] },
      });
      expect(res.statusCode).toBe(200);
      await persisted(trace_id);
    });
    expectListed('A completion', crossed);
  });

  it('an experiment finish', async () => {
    const project = (await post('/project', { name: `walk-${randomUUID()}` })).json();
    const crossed = await crossedFiles(async () => {
      const experiment = (await post('/experiment', { name: 'walk', project_uuid: project.uuid })).json();
      const written = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post('/trace_log', {
            trace_id: randomUUID(),
            project_uuid: project.uuid,
            experiment_uuid: experiment.uuid,
            scores: [{ name: 'accuracy', score: i % 2 }],
          }),
        ),
      );
      expect(written.every((r) => r.statusCode === 200)).toBe(true);
      const pooled = gw.stack.workerPoolTasks();
      const res = await post(`/experiment/${experiment.uuid}/finished`);
      expect(res.statusCode).toBe(200);
      expect(gw.stack.workerPoolTasks()).toBeGreaterThan(pooled);
    });
    expectListed('An experiment finish', crossed);
  });

  it("the traces page's rows", async () => {
    await post('/trace_log', { trace_id: randomUUID(), project_name: 'walk-list', trace_name: 'listed' });
    const crossed = await crossedFiles(async () => {
      const res = await post('/traces', { project_name: 'walk-list', page_size: 50 });
      expect(res.statusCode).toBe(200);
    });
    expectListed("The traces page's rows", crossed);
  });
});
