import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// A metric's configuration edited in the console as a new version, the score its first version wrote still
// naming that version; a user's sessions searched, each under its own header, a failed turn with its error.
const PROJECT = `support-${randomUUID().slice(0, 6)}`;
const METRIC = `says-paris-${randomUUID().slice(0, 6)}`;
const USER = `ann-${randomUUID().slice(0, 6)}@example.com`;

const session = useConsole('metrics-sessions-e2e');
let page: Page;
let projectUuid = '';
const scored = randomUUID();

async function send(method: string, path: string, body?: object): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

beforeAll(async () => {
  page = session.page;
  projectUuid = (await send('POST', '/project', { name: PROJECT })).uuid;
  await send('POST', '/eval-metrics', { name: METRIC, type: 'contains', config: { value: 'Paris' } });
  const start = Date.now() - 10 * 60_000;
  const turn = (i: number, sessionId: string, failed = false) => ({
    trace_id: i === 0 ? scored : randomUUID(),
    project_uuid: projectUuid,
    trace_name: 'chat-turn',
    start_timestamp: new Date(start + i * 60_000).toISOString(),
    inputs: { question: `question ${i}` },
    output: failed ? null : `Paris, answer ${i}`,
    status: failed ? 'error' : 'success',
    error: failed ? 'the model timed out after 30 s' : null,
    session_id: sessionId,
    end_user_identifier: USER,
    evaluation_metric_names: i === 0 ? [METRIC] : null,
  });
  await writeSpans(session.api, session.keys.admin, [
    turn(0, 'chat-morning'),
    turn(1, 'chat-morning'),
    turn(2, 'chat-evening'),
    turn(3, 'chat-evening', true),
  ]);
  // Scored by the metric's first version before the tests edit it.
  await vi.waitFor(
    async () => {
      const results = await send('GET', `/span/${scored}/eval-results`);
      if (results[METRIC]?.metric_version !== 1) throw new Error('not scored yet');
    },
    { timeout: 15_000, interval: 200 },
  );
}, 60_000);

describe('a metric edited in the console', { timeout: 60_000 }, () => {
  it('shows its configuration, tries and saves a new version, and the older score keeps its version', async () => {
    await session.signIn(session.keys.admin);
    await page.goto(`${session.origin}/evals`);
    await page.getByRole('button', { name: `Edit the metric ${METRIC}` }).click();
    const form = page.getByRole('form', { name: `${METRIC}: version 1` });
    await expect.poll(() => form.getByRole('textbox', { name: 'Value' }).inputValue()).toBe('Paris');
    await form.getByRole('textbox', { name: 'Value' }).fill('London');
    await form.getByRole('textbox', { name: 'Output' }).fill('London calling');
    await form.getByRole('button', { name: 'Try', exact: true }).click();
    await form.getByText(/^Score 1/).waitFor();
    await form.getByRole('button', { name: 'Save as version 2' }).click();
    await page.getByRole('form', { name: `${METRIC}: version 2` }).waitFor();
    const versions = page.getByRole('list', { name: `Versions of ${METRIC}` });
    await expect.poll(() => versions.getByRole('listitem').count()).toBe(2);
    await session.shot('metric-versions');
    await session.expectIdle('a metric with its versions');
    await session.checkA11y('metric-versions');

    await page.goto(`${session.origin}/projects/${projectUuid}/traces/${scored}`);
    await page.getByRole('tab', { name: /^Scores & feedback/ }).click();
    await page.getByRole('group', { name: 'Evaluated by' }).getByText(`${METRIC} · version 1`).waitFor();
  });
});

describe("a user's sessions in the console", { timeout: 60_000 }, () => {
  it('finds the user by a search in the URL, separates their sessions, and shows a failed turn’s error', async () => {
    await page.goto(`${session.origin}/projects/${projectUuid}/sessions?by=user&q=${USER.slice(0, 8)}&range=24h`);
    const table = page.getByRole('table', { name: 'Users' });
    await table.getByRole('button', { name: USER }).click();
    const dialog = page.getByRole('dialog');
    const sessions = dialog.getByRole('region');
    await expect.poll(() => sessions.count()).toBe(2);
    expect(await sessions.evaluateAll((all) => all.map((s) => s.getAttribute('aria-label')))).toEqual([
      'Session chat-morning',
      'Session chat-evening',
    ]);
    const evening = dialog.getByRole('region', { name: 'Session chat-evening' });
    await evening.getByText('the model timed out after 30 s').waitFor();
    await session.shot('user-sessions');
    await session.expectIdle('a user’s sessions');
    await session.checkA11y('user-sessions');
    await evening.getByRole('button', { name: 'Open the session' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('key')).toBe('chat-evening');
    await expect.poll(() => page.getByRole('dialog').getByTestId('turn').count()).toBe(2);
  });
});
