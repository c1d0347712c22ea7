import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { manyTraces, writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// The dashboard of the traces page's filters, in a real browser against the processes `npm start` runs: a
// link's filters shown as chips and counted as the traces page counts them, experiment runs included on
// demand, the filters kept on the way to the traces page and back, with the search, status and time range;
// the last 7 days' latency marked as read from hourly histograms; pictures at 1440 and 1024 px in both schemes.
const PROJECT = `dashboard-${randomUUID().slice(0, 6)}`;
const N_TRACES = 60;
const EXPERIMENT_TRACES = 3;
const FILTERS = [
  { field: 'metadata', key: 'environment', operator: 'equals', value: 'production' },
  { field: 'trace_name', operator: 'in', value: 'answer-question,summarize-ticket,draft-reply' },
];
/** The filters as the traces page writes them in its URL. */
const LINK_FILTERS: [string, string][] = [
  ['filter', '["metadata","equals","production","environment"]'],
  ['filter', '["trace_name","in","answer-question,summarize-ticket,draft-reply"]'],
];

const session = useConsole('dashboard-e2e');
let page: Page;
let projectUuid = '';
/** The production traces the filters match. */
let matching = 0;
/** The production traces of SEARCHED's search, status and filter; and of any status. */
let searched = 0;
let searchedAnyStatus = 0;
/** A traces page's search, status, time range and filter, as its URL writes them. */
const SEARCHED: [string, string][] = [
  ['q', 'column'],
  ['status', 'success'],
  ['range', '24h'],
  ['filter', '["metadata","equals","production","environment"]'],
];

async function api<T>(path: string, body: object): Promise<T> {
  const res = await fetch(`${session.api}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}
type Dashboard = {
  totals: { traces: number; error_rate: number };
  cost_by_model: { model: string }[];
};

/** The traces the dashboard counts, as its card shows them. */
const shownTraces = async () => Number((await page.getByTestId('dashboard-traces').textContent())!.replace(/\D/g, ''));

beforeAll(async () => {
  page = session.page;
  const now = Date.now();
  const production = manyTraces(PROJECT, N_TRACES, now);
  const names = FILTERS[1]!.value.split(',');
  matching = production.filter(
    (s) => (s.metadata as { environment: string }).environment === 'production' && names.includes(String(s.trace_name)),
  ).length;
  const found = production.filter(
    (s) =>
      (s.metadata as { environment: string }).environment === 'production' &&
      (s.inputs as { ticket: string }).ticket.endsWith('misses the last column'),
  );
  searched = found.filter((s) => s.status === 'success').length;
  searchedAnyStatus = found.length;
  await writeSpans(session.api, session.keys.admin, production);
  projectUuid = (await api<{ uuid: string }>('/project', { name: PROJECT })).uuid;
  const experiment = (
    await api<{ uuid: string }>('/experiment', { name: 'qa', project_uuid: projectUuid, run_name: 'one' })
  ).uuid;
  // An experiment run's traces, which the filters match too.
  const runs = manyTraces(PROJECT, EXPERIMENT_TRACES * 2, now)
    .filter((s) => (s.metadata as { environment: string }).environment === 'production')
    .slice(0, EXPERIMENT_TRACES)
    .map((s) => ({ ...s, trace_id: randomUUID(), trace_name: 'answer-question', experiment_uuid: experiment }));
  await writeSpans(session.api, session.keys.admin, runs);
}, 60_000);

describe('the dashboard of the traces page’s filters', { timeout: 90_000 }, () => {
  it('counts what the filters of a link match, shows them as chips, and plots errors and cost by model', async () => {
    await session.signIn(session.keys.admin);
    await page.getByRole('link', { name: PROJECT }).waitFor();
    const listed = async (include_experiments: boolean) =>
      (
        await api<{ total: number }>('/traces', {
          project_uuid: projectUuid,
          time_range: '24h',
          filters: FILTERS,
          include_experiments,
        })
      ).total;
    // The traces are stored a moment after the batch is acknowledged: all of them, before the page opens.
    await expect.poll(() => listed(true), { timeout: 15_000 }).toBe(matching + EXPERIMENT_TRACES);
    const production = await listed(false);
    expect(production).toBe(matching);

    const query = new URLSearchParams([['range', '24h'], ...LINK_FILTERS]);
    await page.goto(`${session.origin}/projects/${projectUuid}/dashboard?${query}`);
    const chips = page.getByRole('list', { name: 'Conditions of this view' }).getByRole('listitem');
    await expect
      .poll(() => chips.allTextContents())
      .toEqual([
        'metadata.environment equals production',
        'name is one of answer-question,summarize-ticket,draft-reply',
      ]);
    await expect.poll(shownTraces, { timeout: 10_000 }).toBe(production);

    const board = await api<Dashboard>('/dashboard', {
      project_uuid: projectUuid,
      time_range: '24h',
      filters: FILTERS,
    });
    expect(board.totals.traces).toBe(production);
    const errorRate = page.getByRole('region', { name: 'Error rate' });
    const percent = board.totals.error_rate * 100;
    await errorRate.getByText(`${percent.toFixed(percent < 10 ? 1 : 0)}% over the range`).waitFor();
    await errorRate.locator('.recharts-line').first().waitFor();
    const byModel = page.getByRole('region', { name: 'Cost by model over time' });
    // One stack per model called (three in the seed), in the legend too.
    await expect.poll(() => byModel.locator('.recharts-bar').count()).toBe(board.cost_by_model.length);
    for (const m of board.cost_by_model) await byModel.locator('.recharts-legend-item', { hasText: m.model }).waitFor();

    // Idle once the charts' entry animations end: the pictures are of the charts drawn.
    await session.expectIdle('the dashboard of filters');
    await session.shot('dashboard-filters');
    await session.checkA11y('dashboard-filters');
    await byModel.scrollIntoViewIfNeeded();
    await session.shot('dashboard-filters-cost');
    await session.checkA11y('dashboard-filters-cost');
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.evaluate('window.scrollTo(0, 0)');
    await session.expectIdle('the dashboard of filters at 1024 px');
    await session.shot('dashboard-filters-1024');
    await session.checkA11y('dashboard-filters-1024');
    await byModel.scrollIntoViewIfNeeded();
    await session.shot('dashboard-filters-cost-1024');
    await session.checkA11y('dashboard-filters-cost-1024');
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.evaluate('window.scrollTo(0, 0)');
  });

  it('includes experiment runs when asked, and keeps the filters on the way to the traces page', async () => {
    const before = await shownTraces();
    // By the keyboard: the switch's input lies under its track, where a click may land on the track instead.
    const experiments = page.getByRole('switch', { name: 'Include experiment runs' });
    await experiments.focus();
    await page.keyboard.press('Space');
    // The URL changes at once; the page follows it in a transition, which a busy machine takes a while to render.
    await expect.poll(() => experiments.isChecked(), { timeout: 10_000 }).toBe(true);
    await expect.poll(shownTraces, { timeout: 10_000 }).toBe(before + EXPERIMENT_TRACES);
    expect(new URL(page.url()).searchParams.get('experiments')).toBe('1');

    await page.getByRole('tab', { name: 'Traces' }).click();
    await page.getByRole('table', { name: 'Traces' }).waitFor();
    const url = new URL(page.url());
    expect(url.pathname).toBe(`/projects/${projectUuid}/traces`);
    expect(url.searchParams.getAll('filter')).toEqual(LINK_FILTERS.map(([, v]) => v));
    expect(url.searchParams.get('experiments')).toBe('1');
    await page
      .getByRole('list', { name: 'Conditions of this view' })
      .getByRole('listitem')
      .filter({ hasText: 'experiment runs included' })
      .waitFor();

    // And back: the dashboard reads the traces page's filters.
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await expect.poll(shownTraces, { timeout: 10_000 }).toBe(before + EXPERIMENT_TRACES);
  });

  it("lands from the traces page's search, status and filter on a dashboard counting the same traces", async () => {
    const query = new URLSearchParams(SEARCHED);
    await page.goto(`${session.origin}/projects/${projectUuid}/traces?${query}`);
    await page.getByRole('table', { name: 'Traces' }).waitFor();
    // The count under the table: "N traces".
    const total = page.getByText(/^[\d,]+ traces?\b/);
    const listed = async () => Number(/^[\d,]+/.exec((await total.textContent()) ?? '')![0].replace(/,/g, ''));
    await expect.poll(listed, { timeout: 10_000 }).toBe(searched);
    expect(searched).toBeGreaterThan(0);
    expect(searched).toBeLessThan(matching);
    const chips = page.getByRole('list', { name: 'Conditions of this view' }).getByRole('listitem');
    const conditions = ['search "column"', 'status success', 'metadata.environment equals production'];
    expect(await chips.allTextContents()).toEqual([conditions[0], 'last 24 hours', ...conditions.slice(1)]);

    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await expect.poll(shownTraces, { timeout: 10_000 }).toBe(searched);
    const url = new URL(page.url());
    expect(url.pathname).toBe(`/projects/${projectUuid}/dashboard`);
    for (const [name, value] of SEARCHED) expect(url.searchParams.get(name), name).toBe(value);
    expect(await chips.allTextContents()).toEqual(conditions);
    expect(await page.getByRole('textbox', { name: 'Search inputs, output and metadata' }).inputValue()).toBe('column');
    expect(await page.getByRole('combobox', { name: 'Status' }).inputValue()).toBe('Success');
    expect(await page.getByRole('combobox', { name: 'Time range' }).inputValue()).toBe('Last 24 hours');
    await session.expectIdle('the dashboard of a search');
    await session.shot('dashboard-search-status');
    await session.checkA11y('dashboard-search-status');

    // A status changed on the dashboard goes back to the traces page with the rest.
    await page.getByRole('button', { name: 'Remove status success' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBeNull();
    expect(searchedAnyStatus).toBeGreaterThan(searched);
    await expect.poll(shownTraces, { timeout: 10_000 }).toBe(searchedAnyStatus);
    await page.getByRole('tab', { name: 'Traces' }).click();
    await page.getByRole('table', { name: 'Traces' }).waitFor();
    await expect.poll(listed, { timeout: 10_000 }).toBe(searchedAnyStatus);
    expect(new URL(page.url()).searchParams.get('q')).toBe('column');
    expect(new URL(page.url()).searchParams.get('range')).toBe('24h');
  });

  it('reads the last 7 days unfiltered from hourly sums, and marks its latency as within 1%', async () => {
    await page.goto(`${session.origin}/projects/${projectUuid}/dashboard`);
    const board = await api<Dashboard & { latency_approximate: boolean }>('/dashboard', { project_uuid: projectUuid });
    expect(board.latency_approximate).toBe(true);
    await expect.poll(shownTraces, { timeout: 10_000 }).toBe(board.totals.traces);
    for (const p of ['p50', 'p95', 'p99']) {
      const card = page.getByText(`Latency ${p}`).locator('..');
      await expect.poll(() => card.textContent()).toMatch(/≈ .*within 1%, from hourly histograms/);
    }
    await session.expectIdle('the dashboard of the last 7 days');
    await session.shot('dashboard-week');
    await session.checkA11y('dashboard-week');
  });
});
