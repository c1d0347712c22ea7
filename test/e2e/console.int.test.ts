import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentTrace, manyTraces, wideTrace, writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';
import { otlpJson, spanIdHex, traceIdHex, uuidOfHex, type SpanSpec } from '../support/otlp';

// The console in a real browser against the processes `npm start` runs: traces, a trace, the dashboard,
// sessions, settings and roles. Every page it visits is saved to test-artifacts/screenshots/.
const PROJECT = `support-bot-${randomUUID().slice(0, 6)}`;
const N_TRACES = 40;

const session = useConsole('console-e2e');
const { keys, shot, signIn, expectIdle, checkA11y } = session;
let agent: ReturnType<typeof agentTrace>;
let criterion: { id: string; name: string };
let projectId = '';
let page: Page, origin: string, api: string;
beforeAll(() => void ({ page, origin, api } = session));

/** The traces the table says it holds ("40 traces"). */
async function tableTotal(): Promise<number> {
  const text = await page.getByText(/^[\d,]+ traces?( · updating…)?$/).textContent({ timeout: 10_000 });
  return Number(text!.replace(/[^\d]/g, ''));
}

/** Sends spans as an OpenTelemetry exporter does (OTLP JSON, the project by service name) and opens their trace. */
async function openOtlpTrace(traceId: string, spans: SpanSpec[]): Promise<void> {
  const res = await fetch(`${origin}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.admin}` },
    body: JSON.stringify(otlpJson(spans, { 'service.name': PROJECT })),
  });
  expect(res.status).toBe(200);
  await page.goto(`${origin}/projects/x/traces/${uuidOfHex(traceId)}`);
}

describe('the web console', { timeout: 60_000 }, () => {
  it('signs in with a key, refusing a wrong one with a clear message, and shows a first-run guide', async () => {
    await signIn('sl_not-a-key');
    await page.getByText('This API key is not valid on this server').waitFor();
    await shot('sign-in-wrong-key');
    await expectIdle('the sign-in page');
    await checkA11y('sign-in-wrong-key');
    await page.getByLabel('API key').fill(keys.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No traces yet: send your first one').waitFor();
    // The guide names this server and the session's key.
    await page.getByText(`${origin}/api/svc/v1`, { exact: true }).first().waitFor();
    await page.getByRole('banner').getByText('ada@example.com').waitFor();
    await shot('projects-first-run');
    await expectIdle('the first-run guide');
    await checkA11y('projects-first-run');
    // A sign-in link leads to a place in this console only: this one would lead to evil.example.
    await page.goto(`${origin}/sign-in?next=/%5Cevil.example`);
    await page.getByText('No traces yet: send your first one').waitFor();
    expect(new URL(page.url()).pathname).toBe('/projects');
  });

  it('lists the projects with their activity', async () => {
    agent = agentTrace(PROJECT, Date.now() - 30_000);
    await writeSpans(api, keys.admin, [...manyTraces(PROJECT, N_TRACES - 1), ...agent.spans]);
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('heading', { name: /^(Projects|No traces yet: send your first one)$/ }).waitFor();
          return page.getByRole('link', { name: PROJECT }).count();
        },
        { timeout: 15_000 },
      )
      .toBe(1);
    await shot('projects');
    await expectIdle('the projects');
    await checkA11y('projects');
  });

  it('shows a trace written through the API live, at the top of the table', async () => {
    await page.getByRole('link', { name: PROJECT }).click();
    await page.getByRole('table', { name: 'Traces' }).waitFor();
    await expect.poll(tableTotal, { timeout: 15_000 }).toBe(N_TRACES);
    await page.getByText('Live', { exact: true }).waitFor();
    // The live tail holds its stream open: waiting on it is the browser's, not script.
    await expectIdle('the traces, live');
    await page.mouse.move(5, 5); // not reading: a new row may come in at the top
    const name = `live-${randomUUID().slice(0, 8)}`;
    const written = Date.now();
    await writeSpans(api, keys.admin, agentTrace(PROJECT, Date.now(), name).spans);
    await page.getByRole('link', { name }).waitFor({ timeout: 10_000 });
    const onScreenMs = Date.now() - written;
    const firstRow = page.getByRole('table', { name: 'Traces' }).locator('tbody tr:not([aria-hidden])').first();
    await expect(firstRow.textContent()).resolves.toContain(name);
    await shot('traces-live');
    expect(onScreenMs).toBeLessThan(5000);
    await checkA11y('traces-live');

    // While the pointer is over the rows, a new trace waits behind the "new traces" bar.
    await firstRow.hover();
    const queued = `queued-${randomUUID().slice(0, 8)}`;
    await writeSpans(api, keys.admin, agentTrace(PROJECT, Date.now(), queued).spans);
    await page.getByRole('button', { name: /1 new trace/ }).waitFor({ timeout: 10_000 });
    await expect(page.getByRole('link', { name: queued }).count()).resolves.toBe(0);
    await shot('traces-new-bar');
    // Leaving the rows lets what waited come in (so a click on the bar, which leaves them too, races it).
    await page.mouse.move(5, 5);
    await page.getByRole('link', { name: queued }).waitFor();
    await expect(page.getByRole('button', { name: /new trace/ }).count()).resolves.toBe(0);

    // Paused, a new trace waits whatever the pointer does, until the bar is clicked.
    await page.getByRole('button', { name: 'Pause' }).click();
    const held = `held-${randomUUID().slice(0, 8)}`;
    await writeSpans(api, keys.admin, agentTrace(PROJECT, Date.now(), held).spans);
    await page.getByRole('button', { name: /1 new trace \(paused\)/ }).click();
    await page.getByRole('link', { name: held }).waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
  });

  it('narrows the table with the search, the status and the filter builder, and keeps them in the URL', async () => {
    await page.getByRole('textbox', { name: 'Search inputs, output and metadata' }).fill('without downtime');
    // The agent trace of the seed and the three written live ask it.
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(4);
    expect(new URL(page.url()).searchParams.get('q')).toBe('without downtime');
    await page.getByRole('button', { name: 'Reset' }).click();

    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Error' }).click();
    const errors = manyTraces(PROJECT, N_TRACES - 1).filter((s) => s.status === 'error').length;
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(errors);
    await shot('traces-status-error');

    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('combobox', { name: 'Field' }).click();
    await page.getByRole('option', { name: 'Metadata' }).click();
    await page.getByRole('textbox', { name: 'Key' }).fill('environment');
    await page.getByRole('combobox', { name: 'Operator' }).click();
    await page.getByRole('option', { name: 'equals', exact: true }).click();
    await page.getByRole('textbox', { name: 'Value' }).fill('staging');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const stagingErrors = manyTraces(PROJECT, N_TRACES - 1).filter(
      (s) => s.status === 'error' && (s.metadata as { environment: string }).environment === 'staging',
    ).length;
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(stagingErrors);
    const params = new URL(page.url()).searchParams;
    expect(Object.fromEntries(params)).toEqual({
      status: 'error',
      filter: '["metadata","equals","staging","environment"]',
    });
    await shot('traces-filtered');

    // The link reproduces the view.
    await page.goto(page.url());
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(stagingErrors);
    await page.getByText('metadata.environment equals staging').waitFor();
    await expectIdle('the filtered traces');
    await checkA11y('traces-filtered');

    // What the view shows, saved as a file: the CSV the browser keeps holds those traces, one a row.
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Export traces' });
    await dialog.getByText('CSV', { exact: true }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('button', { name: 'Export', exact: true }).click(),
    ]);
    await dialog.getByText(/^Saved .*\.csv: .*, \d+ traces? and \d+ spans?\.$/).waitFor();
    expect(download.suggestedFilename()).toMatch(/-traces-\d{4}-\d\d-\d\d\.csv$/);
    const rows = parse(readFileSync((await download.path())!, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(stagingErrors);
    expect(rows.every((r) => r.status === 'error' && JSON.parse(r.metadata!).environment === 'staging')).toBe(true);
    await shot('traces-export');
    await checkA11y('traces-export');
    await dialog.getByRole('button', { name: 'Done' }).click();
  });

  it('narrows the table by several filters from a link, and sorts it by a header', async () => {
    const projectUuid = new URL(page.url()).pathname.split('/')[2]!;
    const link = new URLSearchParams([
      ['filter', '["tags","equals","beta"]'],
      ['filter', '["metadata","equals","production","environment"]'],
      ['filter', '["status","equals","success"]'],
    ]);
    await page.goto(`${origin}/projects/${projectUuid}/traces?${link}`);
    const seeded = manyTraces(PROJECT, N_TRACES - 1) as unknown as {
      tags: string[];
      metadata: { environment: string };
      status: string;
      cost: number;
      trace_name: string;
    }[];
    const betaInProduction = seeded.filter((s) => s.tags.includes('beta') && s.metadata.environment === 'production');
    const matching = betaInProduction.filter((s) => s.status === 'success');
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(matching.length);
    const chips = page.getByRole('list', { name: 'Conditions of this view' }).getByRole('listitem');
    await expect(chips.allTextContents()).resolves.toEqual([
      'tags equals beta',
      'metadata.environment equals production',
      'status equals success',
    ]);

    const cost = page.getByRole('columnheader', { name: /^Cost/ });
    await cost.getByRole('button').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('costliest');
    await expect.poll(() => cost.getAttribute('aria-sort')).toBe('descending');
    const byCost = [...matching].sort((a, b) => b.cost - a.cost);
    const firstRow = page.getByRole('table', { name: 'Traces' }).locator('tbody tr:not([aria-hidden])').first();
    await expect.poll(() => firstRow.textContent()).toContain(byCost[0]!.trace_name);
    await shot('traces-several-filters-by-cost');
    await checkA11y('traces-several-filters-by-cost');

    await cost.getByRole('button').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('cheapest');
    await expect.poll(() => cost.getAttribute('aria-sort')).toBe('ascending');
    await expect.poll(() => firstRow.textContent()).toContain(byCost.at(-1)!.trace_name);

    // A chip removed widens the view and keeps the others and the order.
    await page.getByRole('button', { name: 'Remove status equals success' }).click();
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(betaInProduction.length);
    expect(new URL(page.url()).searchParams.getAll('filter')).toHaveLength(2);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('cheapest');

    // A chip edited in place, by the keyboard: Escape leaves it, a save puts the new condition in its place.
    const edit = page.getByRole('button', { name: 'Edit filter: metadata.environment equals production' });
    await edit.focus();
    await page.keyboard.press('Enter');
    const editor = page.getByRole('form', { name: 'Edit filter' });
    const value = editor.getByRole('textbox', { name: 'Value' });
    await expect.poll(() => value.inputValue()).toBe('production');
    await page.keyboard.press('Escape');
    await editor.waitFor({ state: 'hidden' });
    await edit.press('Enter');
    await value.fill('staging');
    await value.press('Enter');
    const betaInStaging = seeded.filter((s) => s.tags.includes('beta') && s.metadata.environment === 'staging');
    await expect.poll(tableTotal, { timeout: 10_000 }).toBe(betaInStaging.length);
    expect(new URL(page.url()).searchParams.getAll('filter')).toEqual([
      '["tags","equals","beta"]',
      '["metadata","equals","staging","environment"]',
    ]);
    await expect(chips.allTextContents()).resolves.toEqual(['tags equals beta', 'metadata.environment equals staging']);
    await page.getByRole('button', { name: 'Reset' }).click();
  });

  it('opens a 3-level trace and reads the chat messages of its LLM span', async () => {
    await page.goto(`${origin}/projects/${new URL(page.url()).pathname.split('/')[2]}/traces/${agent.root}`);
    const tree = page.getByRole('tree', { name: 'Spans of the trace' });
    await tree.waitFor();
    await expect(tree.getByRole('treeitem').count()).resolves.toBe(4);
    await expect(tree.locator('[aria-level="3"]').textContent()).resolves.toContain('search_docs');
    await tree.getByRole('treeitem').filter({ hasText: 'llm-openai' }).click();
    expect(new URL(page.url()).searchParams.get('span')).toBe(agent.llm);
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.waitFor();
    await expect(messages.getByLabel('system message').textContent()).resolves.toContain(
      'You are the support assistant of Sightline',
    );
    await expect(messages.getByLabel('Call of search_docs').textContent()).resolves.toContain('"top_k": 3');
    await expect(messages.getByLabel('tool message').textContent()).resolves.toContain('keys.md#rotation');
    await expect(messages.locator('strong', { hasText: 'without downtime' }).count()).resolves.toBe(1);
    await shot('trace-chat');
    await expectIdle('a trace');
    await checkA11y('trace-chat');

    // Keyboard: Tab reaches the selected span (the tree's one tab stop); the arrows move focus, the selection
    // and the detail with it: down to the tool span under the LLM call, left back to its parent, left again
    // collapses it, right opens it, Home and End.
    await page.getByRole('button', { name: 'Collapse all' }).focus();
    await page.keyboard.press('Tab');
    const focused = () => page.evaluate('document.activeElement?.id');
    await expect.poll(focused, { message: 'Tab into the tree' }).toBe(`span-${agent.llm}`);
    const selected = () => tree.locator('[aria-selected="true"]').getAttribute('id');
    const detail = (name: string) => page.getByLabel('Selected span').getByRole('heading', { name, exact: true });
    const key = async (press: string, id: string, name: string) => {
      await page.keyboard.press(press);
      await expect.poll(selected, { message: `${press}: selected` }).toBe(`span-${id}`);
      await expect.poll(focused, { message: `${press}: focused` }).toBe(`span-${id}`);
      await detail(name).waitFor();
    };
    await key('ArrowDown', agent.tool, 'search_docs');
    await shot('trace-keyboard');
    await key('ArrowLeft', agent.llm, 'llm-openai');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => tree.getByRole('treeitem').count(), { message: 'left collapses' }).toBe(3);
    await expect(tree.locator(`#span-${agent.llm}`).getAttribute('aria-expanded')).resolves.toBe('false');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => tree.getByRole('treeitem').count(), { message: 'right expands' }).toBe(4);
    await key('Home', agent.root, agent.spans[0]!.trace_name as string);
    await key('End', agent.tool, 'search_docs');
    await key('ArrowUp', agent.llm, 'llm-openai');
    expect(new URL(page.url()).searchParams.get('span')).toBe(agent.llm);
    await page.getByRole('tab', { name: 'Input & output' }).click();
    await shot('trace-io');
  });

  it('comments on a span and annotates it, then finds the trace by the annotation', async () => {
    const projectUuid = (projectId = new URL(page.url()).pathname.split('/')[2]!);
    const res = await fetch(`${api}/annotation-criteria`, {
      method: 'POST',
      headers: { 'x-api-key': keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `helpfulness-${randomUUID().slice(0, 4)}`, kind: 'score', min: 1, max: 5 }),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    criterion = (await res.json()) as { id: string; name: string };
    await page.goto(`${origin}/projects/${projectUuid}/traces/${agent.root}?span=${agent.root}`);
    await page.getByRole('tab', { name: /Comments & annotations/ }).click();
    await page.getByRole('textbox', { name: 'New comment' }).fill('The answer cites the right page.');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await page.getByTestId('comment').filter({ hasText: 'The answer cites the right page.' }).waitFor();
    await expect(page.getByRole('textbox', { name: 'New comment' }).inputValue()).resolves.toBe('');
    await page.getByRole('button', { name: 'Delete the comment' }).waitFor();
    await page.getByRole('textbox', { name: `Your ${criterion.name}` }).fill('4');
    await page.getByRole('button', { name: 'Annotate', exact: true }).click();
    await page.getByRole('button', { name: 'Update', exact: true }).waitFor();
    await page.getByLabel(`Criterion ${criterion.name}`).getByText('ada@example.com', { exact: true }).waitFor();
    await shot('trace-annotations');
    await expectIdle('a span’s remarks');
    await checkA11y('trace-annotations');

    await page.goto(
      `${origin}/projects/${projectUuid}/traces?filter=annotation:score:${criterion.id}&op=greater_than&value=3`,
    );
    await expect.poll(tableTotal, { timeout: 15_000 }).toBe(1);
    await page.getByRole('link', { name: agent.spans[0]!.trace_name as string }).waitFor();
    await expectIdle('the traces filtered by an annotation');
  });

  it('manages annotation criteria in Settings', async () => {
    await page.goto(`${origin}/settings`);
    await page.getByRole('table', { name: 'Annotation criteria' }).getByText(criterion.name).waitFor();
    await expectIdle('the settings');
    await checkA11y('settings-criteria');
    const form = page.getByRole('form', { name: 'Create a criterion' });
    await form.getByRole('textbox', { name: 'Name' }).fill('tone');
    await form.getByText('Value', { exact: true }).click();
    const options = form.getByLabel('Options');
    for (const o of ['friendly', 'neutral', 'curt']) {
      await options.fill(o);
      await options.press('Enter');
    }
    await form.getByRole('button', { name: 'Create criterion' }).click();
    const table = page.getByRole('table', { name: 'Annotation criteria' });
    await table.getByText('friendly, neutral, curt').waitFor();
    await page.getByRole('heading', { name: 'Annotation criteria' }).scrollIntoViewIfNeeded();
    await shot('settings-criteria');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete the criterion tone' }).click();
    await expect.poll(() => table.getByText('friendly, neutral, curt').count()).toBe(0);
  });

  it("shows a dashboard whose trace count is the API's", async () => {
    const projectUuid = projectId;
    await page.goto(`${origin}/projects/${projectUuid}/dashboard?range=7d`);
    const shown = page.getByTestId('dashboard-traces');
    await shown.waitFor();
    const res = await fetch(`${api}/traces`, {
      method: 'POST',
      headers: { 'x-api-key': keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ project_uuid: projectUuid, time_range: '7d', page_size: 1 }),
    });
    const { total } = (await res.json()) as { total: number };
    expect(total).toBeGreaterThan(0);
    await expect.poll(async () => Number((await shown.textContent())!.replace(/[^\d]/g, ''))).toBe(total);
    await page.getByRole('table', { name: 'Cost by model' }).waitFor();
    await page.locator('.recharts-surface').first().waitFor();
    await shot('dashboard');
    await expectIdle('the dashboard');
    await checkA11y('dashboard');
    await page.getByRole('combobox', { name: 'Time range' }).click();
    await page.getByRole('option', { name: 'Last 24 hours' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('24h');
    await page.getByRole('table', { name: 'Cost by model' }).scrollIntoViewIfNeeded();
    await sleep(300); // the charts' entry animation
    await shot('dashboard-24h');
  });

  it('groups traces by session and reads one as a conversation', async () => {
    await page.getByRole('tab', { name: 'Sessions & users' }).click();
    const table = page.getByRole('table', { name: 'Sessions' });
    await table.getByText('session-42', { exact: true }).waitFor();
    await shot('sessions');
    await expectIdle('the sessions');
    await checkA11y('sessions');
    await table.getByText('session-42', { exact: true }).click();
    const turns = page.getByRole('dialog').getByTestId('turn');
    await turns.first().waitFor();
    expect(await turns.count()).toBeGreaterThanOrEqual(3);
    await sleep(500); // the drawer's slide-in
    await shot('session-conversation');
    await expectIdle('a session’s conversation');
    await checkA11y('session-conversation');
    await turns.first().getByRole('link', { name: 'Open the trace' }).click();
    await page.getByRole('tree').waitFor();
  });

  it('follows a dark system theme on every page', async () => {
    // The console's scheme is "auto" until someone picks one: it follows the system's.
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      const pages: [string, string, () => Promise<unknown>][] = [
        ['traces', `projects/${projectId}/traces`, () => page.getByRole('table', { name: 'Traces' }).waitFor()],
        [
          'trace-annotations',
          `projects/${projectId}/traces/${agent.root}?span=${agent.root}`,
          () => page.getByRole('tree').waitFor(),
        ],
        ['dashboard', `projects/${projectId}/dashboard?range=7d`, () => page.getByText('Traces').first().waitFor()],
        [
          'sessions',
          `projects/${projectId}/sessions`,
          () => page.getByRole('table', { name: 'Sessions' }).getByText('session-42').waitFor(),
        ],
        ['settings', 'settings', () => page.getByRole('table', { name: 'API keys' }).waitFor()],
      ];
      for (const [name, path, ready] of pages) {
        await page.goto(`${origin}/${path}`);
        await ready();
        expect(await page.locator('html').getAttribute('data-mantine-color-scheme')).toBe('dark');
        await sleep(300); // charts and drawers settle
        await shot(`${name}-dark-system`); // `${name}-dark` is checkA11y's, in a scheme it switched to
        await expectIdle(`${name}, dark`);
      }
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('opens a 10,000-span trace quickly and scrolls it', async () => {
    const wide = wideTrace(PROJECT, 10_000);
    await writeSpans(api, keys.admin, wide.spans);
    await expect
      .poll(
        async () => {
          const res = await fetch(`${api}/trace/${wide.root}/skeleton`, { headers: { 'x-api-key': keys.admin } });
          return res.ok ? ((await res.json()) as { spans: unknown[] }).spans.length : 0;
        },
        { timeout: 60_000, interval: 500 },
      )
      .toBe(10_000);
    const started = Date.now();
    const skeleton = page
      .waitForResponse((r) => r.url().endsWith(`/trace/${wide.root}/skeleton`))
      .then(() => Date.now() - started);
    await page.goto(`${origin}/projects/x/traces/${wide.root}`);
    await page.getByRole('tree').getByRole('treeitem').first().waitFor();
    console.log(`skeleton answered after ${await skeleton} ms`);
    await page.getByRole('heading', { name: 'agent-run' }).first().waitFor();
    const interactiveMs = Date.now() - started;
    await page.getByRole('tree').focus();
    await page.keyboard.press('End');
    // The last span in depth-first order: the last child of the last child, down to a leaf.
    let last = 0;
    while (4 * last + 1 < 10_000) last = Math.min(4 * last + 4, 9_999);
    await page
      .getByRole('tree')
      .locator('[aria-selected="true"]', { hasText: `step-${last}` })
      .waitFor();
    await shot('trace-10k');
    await expectIdle('a 10,000-span trace');
    await checkA11y('trace-10k');
    console.log(`10,000-span trace interactive in ${interactiveMs} ms`);
    // A guard against a slowdown of another order, not the speed target: that is `npm run bench -- queries`
    // (the skeleton of a 10,000-span trace), on a quiet machine. Here the suite's files run side by side on
    // 2 cores, and this has read 1.1 s to 2.1 s depending on the host.
    expect(interactiveMs).toBeLessThan(5000);
  }, 120_000);

  it('opens a span with a 5 MB input without freezing, cut to a preview', async () => {
    const id = randomUUID();
    const input = `${'lorem ipsum '.repeat((5 * 1024 * 1024) / 12)}THE-END`;
    await writeSpans(api, keys.admin, [
      {
        trace_id: id,
        project_name: PROJECT,
        trace_name: 'huge-input',
        inputs: { document: input },
        output: 'ok',
        status: 'success',
      },
    ]);
    await expect
      .poll(async () => (await fetch(`${api}/trace/${id}/skeleton`, { headers: { 'x-api-key': keys.admin } })).status, {
        timeout: 20_000,
      })
      .toBe(200);
    const started = Date.now();
    await page.goto(`${origin}/projects/x/traces/${id}`);
    await page.getByRole('button', { name: 'Show all' }).waitFor();
    const shownMs = Date.now() - started;
    await expect(page.getByText('THE-END').count()).resolves.toBe(0);
    // The page still answers while the payload is on screen.
    const responded = Date.now();
    await page.getByRole('tab', { name: 'Model & metadata' }).click();
    await page.getByRole('tab', { name: 'Input & output' }).click();
    expect(Date.now() - responded).toBeLessThan(1000);
    await shot('trace-large-input');
    await expectIdle('a span with a 5 MB input');
    await checkA11y('trace-large-input');
    console.log(`5 MB span shown in ${shownMs} ms`);
    expect(shownMs).toBeLessThan(3000);
    await page.getByRole('button', { name: 'Show all' }).click();
    await page.getByText(/THE-END/).waitFor();
  });

  it('opens a trace an OpenTelemetry exporter sent: each span’s kind, and the LLM span’s conversation', async () => {
    const traceId = traceIdHex();
    const [root, llm, tool] = [spanIdHex(), spanIdHex(), spanIdHex()];
    const at = (ms: number) => 1_767_225_600_000_000_000n + BigInt(ms) * 1_000_000n;
    const spans: SpanSpec[] = [
      {
        traceId,
        spanId: root,
        name: 'support agent',
        start: at(0),
        end: at(2400),
        attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      },
      {
        traceId,
        spanId: llm,
        parentSpanId: root,
        name: 'chat gpt-4o-mini',
        start: at(20),
        end: at(1900),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.usage.input_tokens': 812,
          'gen_ai.usage.output_tokens': 64,
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: 'How do I rotate an API key?' }] },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: [{ type: 'text', content: 'Create a new key, deploy it, then **revoke** the old one.' }],
            },
          ]),
        },
      },
      {
        traceId,
        spanId: tool,
        parentSpanId: root,
        name: 'execute_tool search_docs',
        start: at(1950),
        end: at(2300),
        attributes: { 'gen_ai.operation.name': 'execute_tool' },
      },
    ];
    await openOtlpTrace(traceId, spans);
    const tree = page.getByRole('tree', { name: 'Spans of the trace' });
    await tree.waitFor();
    await expect(tree.getByRole('treeitem').count()).resolves.toBe(3);
    for (const [name, kind] of [
      ['support agent', 'agent'],
      ['chat gpt-4o-mini', 'llm'],
      ['execute_tool search_docs', 'tool'],
    ])
      await expect(tree.getByRole('treeitem').filter({ hasText: name }).textContent()).resolves.toContain(kind);
    await tree.getByRole('treeitem').filter({ hasText: 'chat gpt-4o-mini' }).click();
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.waitFor();
    await expect(messages.getByLabel('user message').textContent()).resolves.toContain('How do I rotate an API key?');
    await expect(messages.locator('strong', { hasText: 'revoke' }).count()).resolves.toBe(1);
    await shot('trace-otel');
    await expectIdle('an OpenTelemetry trace');
  });

  it('marks as estimated the tokens and cost of an LLM span sent without usage', async () => {
    const traceId = traceIdHex();
    const llm = spanIdHex();
    const at = (ms: number) => 1_767_225_600_000_000_000n + BigInt(ms) * 1_000_000n;
    const spans: SpanSpec[] = [
      {
        traceId,
        spanId: llm,
        name: 'streamed chat',
        start: at(0),
        end: at(1200),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: 'Summarize our refund policy in a sentence.' }] },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'text', content: 'Refunds are paid within 30 days.' }] },
          ]),
        },
      },
    ];
    await openOtlpTrace(traceId, spans);
    const detail = page.getByLabel('Selected span');
    await detail.getByRole('heading', { name: 'streamed chat' }).waitFor();
    // The figures as the eye sees them (≈) and a screen reader reads them ("estimated").
    const marked = detail.locator('span').filter({ hasText: /^≈ estimated / });
    await expect
      .poll(() => marked.allTextContents(), { timeout: 15_000 })
      .toEqual([
        expect.stringMatching(/^≈ estimated \d+ \/ \d+$/),
        expect.stringMatching(/^≈ estimated \$0\.0000\d+$/),
        expect.stringMatching(/^≈ estimated \d+$/),
      ]);
    // So do the trace's totals above, and the span's row in the tree.
    await expect(
      page
        .locator('span')
        .filter({ hasText: /^≈ estimated / })
        .count(),
    ).resolves.toBe(5);
    const row = page.getByRole('tree', { name: 'Spans of the trace' }).getByRole('treeitem');
    await expect(row.textContent()).resolves.toMatch(/≈\d+ tok · ≈\$0\.0000\d+ · /);
    await shot('span-usage-estimated');
    await checkA11y('span-usage-estimated');
  });

  it('manages API keys as an admin: a new key shown once, and the last admin key kept', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('table', { name: 'API keys' }).waitFor();
    await expectIdle('the API keys');
    await page.getByRole('button', { name: 'Create a key' }).click();
    await page.getByRole('textbox', { name: 'Label' }).fill('ci@example.com');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('dialog', { name: 'Create an API key' }).waitFor({ state: 'hidden' });
    const key = (await page.getByTestId('new-key').textContent())!;
    expect(key).toMatch(/^sl_/);
    await shot('settings-new-key');
    await checkA11y('settings-new-key');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke the key ci@example.com' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Revoke the key ci@example.com' }).count()).toBe(0);
    // The session's own key is the organization's only admin key: the API refuses, the page says why.
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke the key ada@example.com' }).click();
    await page.getByText("this is the organization's last admin key").waitFor();
    await shot('settings');
  });

  it('shows a viewer no write controls', async () => {
    await page.getByRole('button', { name: /^Account:/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByText('You signed out.').waitFor();
    await signIn(keys.viewer);
    await page.getByRole('link', { name: PROJECT }).waitFor();
    await page.getByRole('banner').getByText('viewer', { exact: true }).waitFor();
    await expect(page.getByRole('link', { name: 'Settings' }).count()).resolves.toBe(0);
    await shot('viewer-projects');
    await expectIdle('the projects, as a viewer');
    await page.goto(`${origin}/settings`);
    await page.getByText('Settings are for admins').waitFor();
    await expectIdle('the settings, as a viewer');
    await expect(page.getByRole('button', { name: /Create|Revoke|Save|Delete/ }).count()).resolves.toBe(0);
    await page.goto(`${origin}/no-such-page`);
    await page.getByRole('heading', { name: 'This page does not exist' }).waitFor();
    await shot('not-found');
    await expectIdle('the not-found page');
    await checkA11y('not-found');
    await page.goto(`${origin}/projects/x/traces/${agent.root}`);
    await page.getByRole('tree').waitFor();
    // Everyone's comments and annotations, read-only.
    await page.getByRole('tab', { name: /Comments & annotations/ }).click();
    await page.getByTestId('comment').filter({ hasText: 'The answer cites the right page.' }).waitFor();
    await page.getByLabel(`Criterion ${criterion.name}`).getByText('ada@example.com', { exact: true }).waitFor();
    await expect(page.getByRole('textbox', { name: 'New comment' }).count()).resolves.toBe(0);
    await shot('viewer-annotations');
    await expectIdle('a span’s remarks, as a viewer');
    await checkA11y('viewer-annotations');
    await expect(
      page.getByRole('button', { name: /Create|Revoke|Save|Delete|Comment|Annotate/ }).count(),
    ).resolves.toBe(0);
  });

  it('signs out everywhere when the key its session was opened with is revoked', async () => {
    const listed = await fetch(`${api}/api-keys`, { headers: { 'x-api-key': keys.admin } });
    const viewerKey = ((await listed.json()) as { id: string; label: string }[]).find(
      (k) => k.label === 'viewer@example.com',
    )!;
    const revoked = await fetch(`${api}/api-keys/${viewerKey.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': keys.admin },
    });
    expect(revoked.status).toBe(200);
    await page.getByRole('link', { name: 'Datasets' }).click();
    await page.getByText(/You were signed out: your session has ended/).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/datasets');
    await expectIdle('the sign-in page, signed out');
    await checkA11y('sign-in-signed-out');
  });
});
