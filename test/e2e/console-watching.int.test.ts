import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// Watching production in the console, in a real browser against the processes `npm start` runs: an
// evaluation rule made in the rules page scores the project's new traces, which the traces table then
// shows; three traces picked in the traces table go to an annotation queue and are reviewed with the
// keyboard alone; how far the metric agrees with the reviewers, read on the queue's page.
const PROJECT = `support-bot-${randomUUID().slice(0, 6)}`;
const session = useConsole('watching-e2e');
let page: Page;
let projectUuid = '';

async function api(method: string, path: string, body?: object): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    ...(body && { body: JSON.stringify(body) }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return res.status === 204 ? null : res.json();
}

beforeAll(async () => {
  page = session.page;
  projectUuid = (await api('POST', '/project', { name: PROJECT })).uuid;
  await api('POST', '/eval-metrics', { name: 'mentions-paris', type: 'contains', config: { value: 'Paris' } });
}, 60_000);

const traces: string[] = [];

describe('watching production in the console', { timeout: 90_000 }, () => {
  it('creates a rule in the rules page, and its scores land on new traces in the traces table', async () => {
    await session.signIn(session.keys.admin);
    await page.goto(`${session.origin}/projects/${projectUuid}/eval-rules`);
    await page.getByText('No rules yet', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Create rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create rule' });
    await dialog.getByRole('textbox', { name: /^Name/ }).fill('paris on every trace');
    await dialog.getByRole('combobox', { name: /^Metrics/ }).click();
    await page.getByRole('option', { name: 'mentions-paris' }).click();
    await dialog.getByRole('textbox', { name: /^Settle time/ }).fill('1');
    await session.shot('eval-rule-form');
    await dialog.getByRole('button', { name: 'Create rule' }).click();
    const rules = page.getByRole('table', { name: 'Evaluation rules' });
    await rules.getByRole('row', { name: /paris on every trace/ }).waitFor();
    await session.shot('eval-rules');
    await session.expectIdle('the eval rules');
    await session.checkA11y('eval-rules');

    // The span writers read the rules again within 2 s: traces written after that are watched.
    await new Promise((r) => setTimeout(r, 2500));
    const now = Date.now();
    for (let i = 0; i < 4; i++) traces.push(randomUUID());
    await writeSpans(
      session.api,
      session.keys.admin,
      traces.map((trace_id, i) => ({
        trace_id,
        project_uuid: projectUuid,
        trace_name: 'answer',
        start_timestamp: new Date(now - 10_000 + i * 1000).toISOString(),
        end_timestamp: new Date(now - 9_000 + i * 1000).toISOString(),
        inputs: { question: `Where is the tower? (${i})` },
        output: i % 2 ? 'In Lyon, I believe.' : 'In Paris.',
      })),
    );
    const table = page.getByRole('table', { name: 'Traces' });
    await expect
      .poll(
        async () => {
          await page.goto(`${session.origin}/projects/${projectUuid}/traces`);
          await table
            .getByRole('row', { name: /Where is the tower\? \(0\)|answer/ })
            .first()
            .waitFor();
          return table.getByText(/mentions-paris/).count();
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toBe(traces.length);
    await session.shot('traces-with-rule-scores');
  });

  it('reviews three items of a queue with the keyboard alone, and reads how far the metric agrees', async () => {
    const criterion = await api('POST', '/annotation-criteria', {
      name: `answer-${randomUUID().slice(0, 6)}`,
      kind: 'value',
      options: ['wrong', 'right'],
      eval_metric_name: 'mentions-paris',
    });
    const queue = await api('POST', '/annotation-queues', {
      name: 'weekly review',
      project_uuid: projectUuid,
      criterion_ids: [criterion.id],
      instructions: 'Is the answer right? The tower is in Paris.',
    });

    // The first three traces, picked in the traces table (newest first: the 4th trace is the first row).
    await page.goto(`${session.origin}/projects/${projectUuid}/traces`);
    const pick = page.getByRole('checkbox', { name: 'Select answer' });
    await pick.nth(3).waitFor();
    for (const row of [1, 2, 3]) await pick.nth(row).check();
    await page.getByRole('button', { name: 'Add 3 to queue' }).click();
    const adding = page.getByRole('dialog', { name: 'Add 3 traces to a queue' });
    await adding.getByRole('combobox', { name: 'Annotation queue' }).click();
    await page.getByRole('option', { name: 'weekly review' }).click();
    await session.shot('add-to-queue');
    await adding.getByRole('button', { name: 'Add to queue' }).click();
    await adding.waitFor({ state: 'detached' });
    await expect.poll(async () => (await api('GET', `/annotation-queues/${queue.id}`)).counts.pending).toBe(3);

    await page.goto(`${session.origin}/projects/${projectUuid}/annotation-queues`);
    await page.getByRole('row', { name: /weekly review/ }).waitFor();
    await session.shot('annotation-queues');
    await session.expectIdle('the annotation queues');
    await session.checkA11y('annotation-queues');

    await page.goto(`${session.origin}/projects/${projectUuid}/annotation-queues/${queue.id}/review`);
    await page.getByRole('region', { name: 'Instructions' }).waitFor();
    await page.getByRole('region', { name: 'Review' }).getByText(criterion.name).waitFor();
    await session.shot('review');
    await session.checkA11y('review');
    // Keys only: the option by its number (2: right for Paris, 1: wrong), then Enter for the next item.
    const reviewed = new Set<number>();
    for (let i = 0; i < 3; i++) {
      await page.getByText(`${i} of 3 reviewed`).waitFor();
      // The item the page shows: a trace not reviewed yet, known by its question.
      const question = page.getByRole('region', { name: 'Selected span' }).getByText(/Where is the tower\? \(\d\)/);
      await expect
        .poll(async () => {
          const shown = Number(/\((\d)\)/.exec((await question.textContent().catch(() => '')) ?? '')?.[1] ?? -1);
          return shown >= 0 && !reviewed.has(shown) ? shown : -1;
        })
        .toBeGreaterThanOrEqual(0);
      const n = Number(/\((\d)\)/.exec((await question.textContent())!)![1]);
      reviewed.add(n);
      const right = n % 2 === 0;
      // As a reviewer types: the option, then Enter at once (the item is finished once the annotation is saved).
      await page.keyboard.press(right ? '2' : '1');
      if (i === 0) await session.shot('review-annotated');
      await page.keyboard.press('Enter');
      const given = async () => {
        const byUser = (await api('GET', `/trace_log/${traces[n]}`)).annotations?.[criterion.id] ?? {};
        return (Object.values(byUser)[0] as { value?: string } | undefined)?.value ?? null;
      };
      await expect.poll(given, { timeout: 10_000 }).toBe(right ? 'right' : 'wrong');
    }
    await page.getByText('All done — nothing left to review in this queue').waitFor();
    expect((await api('GET', `/annotation-queues/${queue.id}`)).counts).toMatchObject({ done: 3, pending: 0 });

    const agreement = await api('GET', `/annotation-criteria/${criterion.id}/agreement`);
    expect(agreement.judge).toMatchObject({ n: 3, kappa: 1 });
    // The queue's page says it beside the criterion, over the project's spans.
    await page.goto(`${session.origin}/projects/${projectUuid}/annotation-queues`);
    await page.getByText(/Judge agrees with people: κ = 1\.00 .*n = 3/).waitFor();
    await session.shot('annotation-queues-agreement');
    await session.checkA11y('annotation-queues-agreement');
  });
});
