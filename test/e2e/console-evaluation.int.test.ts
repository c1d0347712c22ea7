import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// Experiments and datasets in the console, in a real browser against the processes `npm start` runs: two
// runs over one dataset where one is better on most test cases, and two identical runs; their list, a run's
// samples, the comparison with its paired test; a trace taken into a dataset, and an import refused.
const PROJECT = `qa-bot-${randomUUID().slice(0, 6)}`;
const CASES = 24;

const session = useConsole('experiments-e2e');
let page: Page;
let projectUuid = '';
const runs: Record<string, string> = {};
/** The first test case's trace of each run. */
const firstTrace: Record<string, string> = {};

async function post(path: string, body: object): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** One run over the dataset: each test case a root trace with its correctness score. */
async function run(runName: string, correct: (i: number) => number) {
  const experiment = await post('/experiment', { name: 'qa-eval', project_uuid: projectUuid, run_name: runName });
  const start = Date.now() - 60_000;
  const ids = Array.from({ length: CASES }, () => randomUUID());
  firstTrace[runName] = ids[0];
  await writeSpans(
    session.api,
    session.keys.admin,
    Array.from({ length: CASES }, (_, i) => ({
      trace_id: ids[i],
      project_uuid: projectUuid,
      experiment_uuid: experiment.uuid,
      trace_name: 'qa-case',
      start_timestamp: new Date(start + i * 1000).toISOString(),
      latency: 1 + (i % 5) / 10,
      inputs: { question: `What is ${i} + ${i}?` },
      target: String(2 * i),
      output: correct(i) ? `The answer is ${2 * i}.` : `The answer is ${2 * i + 1}, I think.`,
      scores: [{ name: 'correct', score: correct(i) }],
    })),
  );
  await post(`/experiment/${experiment.uuid}/finished`, {});
  runs[runName] = experiment.uuid;
}

beforeAll(async () => {
  page = session.page;
  projectUuid = (await post('/project', { name: PROJECT })).uuid;
  // The baseline answers a third of the cases right; the candidate all but one of them.
  await run('baseline', (i) => Number(i % 3 === 0));
  await run('candidate', (i) => Number(i !== 5));
  await run('rerun-a', (i) => Number(i % 2 === 0));
  await run('rerun-b', (i) => Number(i % 2 === 0));
}, 120_000);

describe('experiments in the console', { timeout: 60_000 }, () => {
  it('lists the project’s runs with their samples, and shows a run’s scores and samples', async () => {
    await session.signIn(session.keys.admin);
    await page.goto(`${session.origin}/projects/${projectUuid}/experiments`);
    const table = page.getByRole('table', { name: 'Experiments' });
    await table.waitFor();
    for (const name of Object.keys(runs)) await table.getByRole('row', { name: new RegExp(name) }).waitFor();
    await expect(table.getByRole('row', { name: /candidate/ }).textContent()).resolves.toContain(String(CASES));
    await session.shot('experiments');

    await table.getByRole('link', { name: 'qa-eval' }).first().click();
    await page.getByRole('table', { name: 'Scores over all samples' }).waitFor();
    await page.getByRole('table', { name: 'Samples' }).getByText('What is 7 + 7?').waitFor();
    await session.shot('experiment');
  });

  it('compares a better run with its baseline: significant, with the cases improved and regressed', async () => {
    await page.goto(`${session.origin}/projects/${projectUuid}/experiments`);
    await page.getByRole('checkbox', { name: /Compare qa-eval \(baseline\)/ }).check();
    await page.getByRole('checkbox', { name: /Compare qa-eval \(candidate\)/ }).check();
    await page.getByRole('button', { name: /Compare 2 selected experiments/ }).click();
    const metrics = page.getByRole('table', { name: 'Metrics by run' });
    await metrics.waitFor();
    const candidate = metrics.getByRole('row', { name: /candidate/ }).first();
    await expect(candidate.textContent()).resolves.toMatch(/significantly better/);
    // The baseline is wrong on 16 cases; the candidate gets all of them right but case 5 (wrong in both),
    // and is right wherever the baseline is: 15 improved, none regressed, 9 the same.
    await expect(candidate.textContent()).resolves.toContain('15 / 0 / 9');
    await expect(candidate.textContent()).resolves.toMatch(/p [<=] 0\.0\d+, n = 24/);
    await page.getByRole('table', { name: 'Test cases side by side' }).getByText('What is 7 + 7?').waitFor();
    await session.shot('experiments-compare');
  });

  it('finds no significant difference between two identical runs', async () => {
    await page.goto(
      `${session.origin}/projects/${projectUuid}/experiments/compare?ids=${runs['rerun-a']},${runs['rerun-b']}&baseline=${runs['rerun-a']}`,
    );
    const metrics = page.getByRole('table', { name: 'Metrics by run' });
    await metrics.waitFor();
    const rerun = metrics.getByRole('row', { name: /rerun-b/ }).first();
    await expect(rerun.textContent()).resolves.toMatch(/no difference|not significant/);
    await expect(rerun.textContent()).resolves.not.toMatch(/significantly/);
    await expect(rerun.textContent()).resolves.toContain(`0 / 0 / ${CASES}`);
  });
});

describe('datasets in the console', { timeout: 60_000 }, () => {
  let dataset: { id: number };
  /** The dataset's test cases as the clients read them. */
  const count = async () => {
    const res = await fetch(`${session.api}/collection/${dataset.id}`, {
      headers: { 'x-api-key': session.keys.admin },
    });
    return Object.keys(((await res.json()) as { test_cases: object }).test_cases).length;
  };

  it('takes a trace’s inputs and target into a dataset, and shows it there', async () => {
    dataset = await post('/collection', {
      name: `qa-gold-${randomUUID().slice(0, 6)}`,
      column_names: ['question'],
      test_cases: [],
    });
    await page.goto(`${session.origin}/projects/${projectUuid}/traces/${firstTrace.baseline}`);
    await page.getByRole('button', { name: 'Add to dataset' }).click();
    await page.getByRole('combobox', { name: 'Dataset' }).click();
    await page.getByRole('option', { name: /qa-gold-/ }).click();
    await page.getByRole('dialog').getByText('What is 0 + 0?').waitFor();
    await session.shot('trace-add-to-dataset');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText(/Added the trace to qa-gold-/).waitFor();
    expect(await count()).toBe(1);

    await page.goto(`${session.origin}/datasets/${dataset.id}`);
    const table = page.getByRole('table', { name: 'Test cases' });
    await table.getByText('What is 0 + 0?').waitFor();
    await table.getByText('0', { exact: true }).first().waitFor(); // the target: 0 + 0
    await session.shot('dataset');
  });

  it('refuses a CSV import with one bad row: the row’s error shown, nothing imported', async () => {
    await page.getByRole('button', { name: 'Import' }).click();
    const csv = '"question","target","tags"\n"What is 1 + 1?","2","[]"\n"What is 2 + 2?","4","not a list"\n';
    await page
      .locator('input[type=file]')
      .setInputFiles({ name: 'cases.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('dialog').getByRole('button', { name: 'Import' }).click();
    const alert = page.getByRole('dialog').getByRole('alert');
    await alert.getByText('Nothing was imported').waitFor();
    await expect(alert.textContent()).resolves.toMatch(/row 2/);
    await session.shot('dataset-import-refused');
    expect(await count()).toBe(1);
  });
});
