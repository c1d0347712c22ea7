import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeExperimentRun } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// A deployment moved and rolled back in a real browser against the processes `npm start` runs: each move
// asked for first, naming the versions; its history (who, from which version to which) newest first; a
// viewer who reads it without the roll back. Then a comparison's counts shown as cases, a case's trace,
// and the way back from the trace to its case.
const session = useConsole('deployments-e2e');
let page: Page;
const name = `faq-bot-${randomUUID().slice(0, 6)}`;
const deploymentId = `${name}-prod`;

async function call(method: 'GET' | 'POST', path: string, body?: object): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': session.keys.admin, ...(body && { 'content-type': 'application/json' }) },
    body: body && JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}
const version = (system: string) =>
  call('POST', '/prompts', {
    name,
    model: 'gpt-4o-mini',
    provider: 'openai',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: '{{question}}' },
    ],
  });
/** The version the deployment serves, as the clients read it. */
/** Signs out, and in with `key`. */
async function switchTo(key: string) {
  await page.getByRole('button', { name: /^Account:/ }).click();
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.getByText('You signed out.').waitFor();
  await session.signIn(key);
}
const served = async () =>
  ((await call('GET', '/deployments')) as { deployment_id: string; prompt_version: { version_number: number } }[]).find(
    (d) => d.deployment_id === deploymentId,
  )?.prompt_version.version_number;

beforeAll(async () => {
  page = session.page;
  const v1 = await version('You answer questions.');
  await version('You answer questions briefly.');
  await call('POST', '/deployments', { prompt_version_id: v1.id, deployment_id: deploymentId });
}, 60_000);

describe('a deployment in the console', { timeout: 60_000 }, () => {
  it('moves a deployment once the move is confirmed, and rolls it back the same way', async () => {
    await session.signIn(session.keys.admin);
    await page.goto(`${session.origin}/prompts?name=${name}`);
    const versions = page.getByRole('table', { name: `Versions of ${name}` });
    const history = page.getByRole('table', { name: `History of ${deploymentId}` });
    await history.getByRole('row', { name: /created at v1/ }).waitFor();

    await versions.getByRole('row', { name: /v2/ }).getByRole('button', { name: 'Deploy' }).click();
    await page.getByRole('button', { name: `${deploymentId} (now v1)` }).click();
    const move = page.getByRole('dialog', { name: `Move ${deploymentId}?` });
    await move.getByText(`${deploymentId} moves from ${name} v1 to ${name} v2.`).waitFor();
    await session.shot('deployment-move-confirm');
    expect(await served()).toBe(1); // nothing moves before the confirmation
    await move.getByRole('button', { name: 'Move to v2' }).click();
    await move.waitFor({ state: 'detached' });
    await history.getByRole('row').nth(1).getByText('v1 → v2').waitFor();
    expect(await served()).toBe(2);

    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    const rollBack = page.getByRole('dialog', { name: `Roll back ${deploymentId}?` });
    await rollBack.getByText(`${deploymentId} moves from ${name} v2 to ${name} v1.`).waitFor();
    await rollBack.getByRole('button', { name: 'Roll back to v1' }).click();
    await rollBack.waitFor({ state: 'detached' });
    await history.getByRole('row').nth(1).getByText('v2 → v1').waitFor();
    expect(await served()).toBe(1);
    await versions.getByRole('row', { name: /v1/ }).getByText(deploymentId).waitFor();

    // Newest first, each by the admin's key (its label and role).
    const rows = await history.getByRole('row').allTextContents();
    expect(rows.slice(1).map((r) => r.replace(/^.*?(v\d → v\d|created at v\d)/, '$1'))).toEqual([
      'v2 → v1ada@example.com (admin)',
      'v1 → v2ada@example.com (admin)',
      'created at v1ada@example.com (admin)',
    ]);
    await session.shot('deployment-history');
    await session.expectIdle('a deployment’s history');
    await session.checkA11y('deployment-history');

    // The playground opens on the prompt selected, its newest version loaded, with its model parameters.
    await page.getByRole('tab', { name: 'Playground' }).click();
    await page.getByRole('group', { name: 'Model parameters' }).getByLabel('Temperature').waitFor();
    expect(await page.getByRole('textbox', { name: 'Message 1' }).inputValue()).toBe('You answer questions briefly.');
    await session.shot('playground-parameters');
    await session.checkA11y('playground-parameters');
  });

  it('shows a viewer the history, with no roll back', async () => {
    await switchTo(session.keys.viewer);
    await page.getByRole('banner').getByText('viewer', { exact: true }).waitFor();
    await page.goto(`${session.origin}/prompts?name=${name}`);
    await page
      .getByRole('table', { name: `History of ${deploymentId}` })
      .getByText('v2 → v1')
      .waitFor();
    expect(await page.getByRole('button', { name: /Roll back/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Deploy', exact: true }).count()).toBe(0);
    await session.shot('deployment-history-viewer');
  });
});

describe('a comparison’s cases in the console', { timeout: 60_000 }, () => {
  const CASES = 6;
  let projectUuid = '';
  const runs: Record<string, string> = {};

  /** One run over six questions: each a root trace with its correctness score. */
  async function run(runName: string, correct: (i: number) => number) {
    const experiment = await writeExperimentRun(session.api, session.keys.admin, {
      projectUuid,
      name: 'faq-eval',
      runName,
      cases: CASES,
      caseOf: (i) => ({
        trace_name: 'faq-case',
        latency: 1,
        inputs: { question: `Question ${i}?` },
        target: `Answer ${i}`,
        output: correct(i) ? `Answer ${i}` : `Not sure about ${i}`,
        scores: [{ name: 'correct', score: correct(i) }],
      }),
    });
    runs[runName] = experiment.uuid;
  }

  beforeAll(async () => {
    projectUuid = (await call('POST', '/project', { name: `faq-${randomUUID().slice(0, 6)}` })).uuid;
    // The candidate fixes cases 1 and 2 and breaks case 4.
    await run('baseline', (i) => Number(i === 0 || i === 4));
    await run('candidate', (i) => Number(i !== 4 && i !== 5));
  }, 60_000);

  it('shows the cases a count stands for, opens one’s trace, and leads back to its case', async () => {
    await switchTo(session.keys.admin);
    await page.goto(
      `${session.origin}/projects/${projectUuid}/experiments/compare?ids=${runs.baseline},${runs.candidate}&baseline=${runs.baseline}`,
    );
    const metrics = page.getByRole('table', { name: 'Metrics by run' });
    await metrics.getByRole('button', { name: 'Show the 3 cases where candidate improved on correct' }).click();
    await page.getByText('Cases where candidate improved on correct').waitFor();
    const cases = page.getByRole('table', { name: 'Test cases side by side' });
    await cases.getByText('Question 1?').waitFor();
    expect(new URL(page.url()).searchParams.get('cases')).toBe('improved');
    // The filtered rows replace the ones shown before them once they arrive.
    await expect.poll(() => cases.getByRole('row').count()).toBe(1 + 3);
    await session.shot('compare-improved-cases');
    await session.checkA11y('compare-improved-cases');

    await metrics.getByRole('button', { name: 'Show the 1 case where candidate regressed on correct' }).click();
    await cases.getByText('Question 4?').waitFor();
    await expect.poll(() => cases.getByRole('row').count()).toBe(1 + 1);

    // The candidate's trace of case 4: its header names the run, and leads back to the case.
    await cases.getByRole('link', { name: 'Open trace' }).nth(1).click();
    const run = page.getByRole('group', { name: 'Experiment run' });
    await run.getByRole('link', { name: 'faq-eval · candidate' }).waitFor();
    await session.shot('trace-of-experiment-run');
    await session.checkA11y('trace-of-experiment-run');
    await run.getByRole('link', { name: 'Its case in the comparison' }).click();
    await page.getByText(/^The case of trace /).waitFor();
    await cases.getByText('Question 4?').waitFor();
    await expect.poll(() => cases.getByRole('row').count()).toBe(1 + 1);
    await session.expectIdle('a comparison’s case');

    await page.goBack();
    await run.getByRole('link', { name: 'faq-eval · candidate' }).click();
    await page.waitForURL(new RegExp(`/experiments/${runs.candidate}$`));
  });
});
