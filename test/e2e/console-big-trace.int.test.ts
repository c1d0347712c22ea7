import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { wideTrace, writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// A failure deep in a 10,000-span trace, found in a real browser against the processes `npm start` runs:
// the collapsed tree marks the way to it, `e` opens it, and the search finds a span by what it says.
const PROJECT = `big-trace-${randomUUID().slice(0, 6)}`;
const N = 10_000;
// Four children to a parent: span 9,000 is seven levels down, under the root's first child.
const FAILED = 9000;
const SAID = 7777;

const session = useConsole('big-trace-e2e');
let page: Page;
let root = '';
let firstChild = '';
beforeAll(() => void (page = session.page));

/** The tree's selected row. */
const selectedRow = () => page.getByRole('tree').locator('[aria-selected="true"]');

/** The timeline axis's labels as drawn: each one's left and right edge, in order. */
async function axisLabels() {
  const labels = page.getByTestId('timeline-axis').locator('> *');
  const boxes = await Promise.all((await labels.all()).map((l) => l.boundingBox()));
  return boxes.map((b) => [b!.x, b!.x + b!.width] as const).sort((a, b) => a[0] - b[0]);
}

/** Whether the selected row is drawn inside the tree's scroll box. */
async function selectedOnScreen() {
  const [box, tree] = await Promise.all([selectedRow().boundingBox(), page.getByRole('tree').boundingBox()]);
  return !!box && !!tree && box.y >= tree.y && box.y + box.height <= tree.y + tree.height;
}

describe('a big trace in the console', { timeout: 90_000 }, () => {
  it('writes a 10,000-span trace with a failure deep down, and sends its skeleton compressed', async () => {
    const trace = wideTrace(PROJECT, N);
    root = trace.root;
    firstChild = trace.spans[1]!.trace_id;
    const spans = trace.spans.map((s, i) => ({
      ...s,
      status: i === FAILED ? 'error' : 'success',
      ...(i === FAILED && { error: 'ToolError: the refunds service answered 502' }),
      ...(i === SAID && { output: 'The customer asked about a kraken-shaped refund.' }),
    }));
    await writeSpans(session.api, session.keys.admin, spans);
    await expect
      .poll(
        async () => {
          const res = await fetch(`${session.api}/trace/${root}/skeleton`, {
            headers: { 'x-api-key': session.keys.admin },
          });
          return res.ok ? ((await res.json()) as { spans: unknown[] }).spans.length : 0;
        },
        { timeout: 90_000, interval: 500 },
      )
      .toBe(N);
    const res = await fetch(`${session.api}/trace/${root}/skeleton`, {
      headers: { 'x-api-key': session.keys.admin, 'accept-encoding': 'br' },
    });
    expect(res.headers.get('content-encoding')).toBe('br');
    expect(((await res.json()) as { spans: unknown[] }).spans).toHaveLength(N);
  }, 150_000);

  it('finds a failed span seven levels down with e, from a collapsed tree', async () => {
    await session.signIn(session.keys.admin);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    const encoding = page
      .waitForResponse((r) => r.url().endsWith(`/trace/${root}/skeleton`))
      .then((r) => r.headerValue('content-encoding'));
    await page.goto(`${session.origin}/projects/x/traces/${root}`);
    await page.getByRole('tree').getByRole('treeitem').first().waitFor();
    // Chromium asks for brotli over HTTPS only: over plain HTTP, gzip.
    expect(await encoding).toMatch(/^(br|gzip)$/);
    await page.getByLabel('1 failed span', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Collapse all' }).click();
    await page.locator(`#span-${firstChild}`).getByText('1 failed below').waitFor();
    await session.shot('trace-10k-collapsed');

    await page.keyboard.press('e');
    await selectedRow()
      .filter({ hasText: `step-${FAILED}` })
      .waitFor();
    expect(await selectedRow().getAttribute('aria-level')).toBe('8');
    await expect.poll(selectedOnScreen).toBe(true);
    const detail = page.getByRole('region', { name: 'Selected span' });
    await detail.getByText('ToolError: the refunds service answered 502').first().waitFor();
    expect(new URL(page.url()).searchParams.get('span')).toBeTruthy();
    await session.shot('trace-10k-failed');
    // The axis's labels never overlap, however wide the page: as many as fit.
    for (const [width, height] of [
      [1024, 768],
      [1440, 900],
    ]) {
      await page.setViewportSize({ width, height });
      await expect.poll(async () => (await axisLabels()).length).toBeGreaterThanOrEqual(2);
      const labels = await axisLabels();
      for (let i = 1; i < labels.length; i++) expect(labels[i]![0]).toBeGreaterThanOrEqual(labels[i - 1]![1]);
      if (width === 1024) await session.shot('trace-10k-failed-1024');
    }
    await session.expectIdle('a 10,000-span trace opened on its failed span');
    await session.checkA11y('trace-10k-failed');
  });

  it('finds a span by what its output says, with the tree narrowed to it', async () => {
    await page.getByRole('textbox', { name: 'Search the spans' }).fill('KRAKEN-shaped');
    await page.getByText('1 match', { exact: true }).waitFor();
    // The match and the spans on the way to it: the root and six ancestors.
    await expect.poll(() => page.getByRole('tree').getByRole('treeitem').count()).toBe(8);
    await page.getByRole('button', { name: 'Next match' }).click();
    await selectedRow()
      .filter({ hasText: `step-${SAID}` })
      .waitFor();
    await page.getByText('1 of 1', { exact: true }).waitFor();
    await session.shot('trace-10k-search');
    await session.checkA11y('trace-10k-search');
  });
});
