import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { agentTrace, manyTraces, sumCase, writeExperimentRun, writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// Every page of the console on a 1024×768 screen, in both schemes, against the processes `npm start` runs:
// the page never scrolls sideways (a wide table scrolls inside its own box), verdicts are read whole and
// the main actions are on screen. Each page is saved as `<page>-1024` and `<page>-1024-dark`; so are the
// main dialogs, whose buttons must be on screen however long their form.
const PROJECT = `support-assistant-production-${randomUUID().slice(0, 6)}`;
const CASES = 24;

const session = useConsole('narrow-e2e');
let page: Page;
let projectUuid = '';
const ids = { agent: '', experiments: [] as string[], dataset: 0, queue: '', prompt: '', deployment: '' };

async function call(method: string, path: string, body?: object): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    ...(body && { body: JSON.stringify(body) }),
  });
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return res.json();
}

/** One finished run over 24 cases, each a root trace with its correctness score. */
async function experimentRun(runName: string, correct: (i: number) => number) {
  const experiment = await writeExperimentRun(session.api, session.keys.admin, {
    projectUuid,
    name: 'retrieval-augmented-answers-eval',
    runName,
    cases: CASES,
    caseOf: sumCase(correct),
  });
  // Spans are stored by the worker: the run is read once all its samples are.
  await vi.waitFor(
    async () => {
      const samples = await call('POST', `/experiment/${experiment.uuid}/samples`, { page_size: 1 });
      if (samples.total !== CASES) throw new Error(`${samples.total} of ${CASES} samples stored`);
    },
    { timeout: 15_000, interval: 200 },
  );
  return experiment.uuid as string;
}

beforeAll(async () => {
  page = session.page;
  projectUuid = (await call('POST', '/project', { name: PROJECT })).uuid;
  const agent = agentTrace(PROJECT, Date.now() - 30_000);
  ids.agent = agent.root;
  await writeSpans(session.api, session.keys.admin, [...manyTraces(PROJECT, 30), ...agent.spans]);
  ids.experiments = [
    await experimentRun('baseline_gpt-4o-mini_temperature-07', (i) => Number(i % 3 === 0)),
    await experimentRun('candidate_gpt-41_with-reranker_top-k-8', (i) => Number(i !== 5)),
  ];
  ids.dataset = (
    await call('POST', '/collection', {
      name: 'customer-support-golden-answers-november',
      column_names: ['question', 'customer_tier'],
      test_cases: Array.from({ length: 6 }, (_, i) => ({
        inputs: { question: `How do I export invoices for account ${i}?`, customer_tier: i % 2 ? 'pro' : 'free' },
        target: 'Open Billing, then Export.',
      })),
    })
  ).id;
  ids.prompt = `support-answer-with-citations-${randomUUID().slice(0, 6)}`;
  const versions: { id: number }[] = [];
  for (const system of ['You answer support questions.', 'You answer support questions briefly, citing docs.'])
    versions.push(
      await call('POST', '/prompts', {
        name: ids.prompt,
        provider: 'openai',
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'Customer asks: {{question}}' },
        ],
      }),
    );
  // Served by v1: moving it to v2 asks first.
  ids.deployment = `support-production-${randomUUID().slice(0, 6)}`;
  await call('POST', '/deployments', { prompt_version_id: versions[0]!.id, deployment_id: ids.deployment });
  await call('POST', '/eval-metrics', {
    name: 'mentions-the-refund-policy',
    type: 'contains',
    config: { value: 'refund' },
  });
  await call('POST', '/eval-rules', {
    name: 'refund policy on production answers',
    project_uuid: projectUuid,
    metric_names: ['mentions-the-refund-policy'],
    enabled: false,
  });
  const criterion = await call('POST', '/annotation-criteria', { name: 'helpful', kind: 'score', min: 1, max: 5 });
  ids.queue = (
    await call('POST', '/annotation-queues', {
      name: 'weekly review of failed answers',
      project_uuid: projectUuid,
      criterion_ids: [criterion.id],
      instructions: 'Score how helpful the answer is.',
    })
  ).id;
  // The queue takes the trace once the worker has stored it.
  await vi.waitFor(
    async () => {
      const { added } = await call('POST', `/annotation-queues/${ids.queue}/items`, { trace_ids: [agent.root] });
      if (added !== 1) throw new Error('the trace is not stored yet');
    },
    { timeout: 15_000, interval: 200 },
  );
  // Held by this key before the review page asks: the page shows it whatever order its requests run in.
  await call('POST', `/annotation-queues/${ids.queue}/next`, {});
  await call('POST', '/monitors', {
    name: 'error rate of production answers',
    project_uuid: projectUuid,
    metric: 'error_rate',
    window_minutes: 60,
    condition: { above: 0.1 },
    min_samples: 5,
  });
  await call('POST', '/budgets', { scope: { kind: 'organization' }, limit_usd: 50, period: 'month', action: 'alert' });
}, 120_000);

// Finite animations still running (colour transitions read as a mix of both schemes until they end).
const RUNNING_TRANSITIONS = `document.getAnimations().filter((a) =>
  a.playState === 'running' && a.effect && a.effect.getComputedTiming().endTime !== Infinity).length`;

async function useScheme(scheme: 'light' | 'dark') {
  await page.emulateMedia({ colorScheme: scheme });
  await expect.poll(() => page.locator('html').getAttribute('data-mantine-color-scheme')).toBe(scheme);
  await sleep(100); // transitions start on the next frame
  await expect.poll(() => page.evaluate(RUNNING_TRANSITIONS), { timeout: 5000 }).toBe(0);
}

/** How far the page itself scrolls sideways (0: it fits; a wide table scrolls inside its own box). */
// Evaluated in the page, as text: this project's TypeScript has no DOM types.
const sidewaysOverflow = () =>
  page.evaluate('document.scrollingElement.scrollWidth - window.innerWidth') as Promise<number>;

/**
 * Whether the element is in view, left to right, and the one a click there reaches (not under a sticky cell,
 * not scrolled away inside its table's box).
 */
const inView = (locator: Locator) =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.left < 0 || r.right > el.ownerDocument.documentElement.clientWidth) return false;
    const hit = el.ownerDocument.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return !!hit && (el.contains(hit) || hit.contains(el));
  });

/** Whether the element's text, or any of its descendants', is cut (an ellipsis, a clipped box). */
const isCut = (locator: Locator) =>
  locator.evaluate((el) => [el, ...el.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 1));

type Check = {
  /** Shown once the page has its data. */
  ready: Locator;
  /** Buttons, links and headers a user relies on: on screen, where a click reaches them. */
  actions?: Locator[];
  /** Names and verdicts: read whole. */
  whole?: Locator[];
};

/**
 * The page at `path`, once it is ready: no sideways scroll, its actions in view and its names whole, in the
 * light and the dark scheme; saved as `<name>-1024` and `<name>-1024-dark`.
 */
async function visit(name: string, path: string, check: (p: Page) => Check) {
  await page.goto(`${session.origin}${path}`);
  const { ready, actions = [], whole = [] } = check(page);
  await ready.waitFor().catch(async (e: unknown) => {
    await session.shot(`${name}-1024-not-ready`);
    throw e;
  });
  for (const scheme of ['light', 'dark'] as const) {
    await useScheme(scheme);
    for (const shown of [...actions, ...whole.map((t) => t.first())]) await shown.waitFor({ timeout: 5000 });
    await session.shot(scheme === 'light' ? `${name}-1024` : `${name}-1024-dark`);
    expect(await sidewaysOverflow(), `${name} (${scheme}) scrolls sideways`).toBeLessThanOrEqual(0);
    for (const action of actions)
      expect(await inView(action), `${name} (${scheme}): ${action} is out of view`).toBe(true);
    for (const text of whole)
      for (const one of await text.all()) expect(await isCut(one), `${name} (${scheme}): ${one} is cut`).toBe(false);
  }
  await useScheme('light');
}

/**
 * The dialog that `open` opens on the page at `path`: its actions on screen where a click reaches them
 * (a long form scrolls under them), and neither the page nor the dialog scrolling sideways, in the light and
 * the dark scheme; saved as `<name>-1024` and `<name>-1024-dark`, then cancelled.
 */
async function visitDialog(
  name: string,
  path: string,
  open: (p: Page) => Promise<unknown>,
  title: string | RegExp,
  actions: (string | RegExp)[],
) {
  await page.goto(`${session.origin}${path}`);
  await open(page);
  const dialog = page.getByRole('dialog', { name: title });
  await dialog.waitFor().catch(async (e: unknown) => {
    await session.shot(`${name}-1024-not-open`);
    throw e;
  });
  for (const scheme of ['light', 'dark'] as const) {
    await useScheme(scheme);
    await session.shot(scheme === 'light' ? `${name}-1024` : `${name}-1024-dark`);
    // Soft: every dialog is looked at, and each one's faults reported, in one run.
    expect.soft(await sidewaysOverflow(), `${name} (${scheme}): the page scrolls sideways`).toBeLessThanOrEqual(0);
    const sideways = await dialog.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect.soft(sideways, `${name} (${scheme}): the dialog scrolls sideways`).toBeLessThanOrEqual(0);
    for (const action of actions) {
      const button = dialog.getByRole('button', { name: action, exact: true });
      expect.soft(await inView(button), `${name} (${scheme}): ${action} is out of view`).toBe(true);
    }
  }
  await useScheme('light');
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

// Some twenty pages and a dozen dialogs, each in two schemes.
describe('the console at 1024×768', { timeout: 180_000 }, () => {
  it('shows every page whole: no sideways scroll, names and verdicts read whole, the actions in view', async () => {
    await page.setViewportSize({ width: 1024, height: 768 });
    await session.signIn(session.keys.admin);
    await page.getByRole('link', { name: PROJECT }).waitFor();
    const project = `/projects/${projectUuid}`;
    const button = (p: Page, name: string | RegExp) => p.getByRole('button', { name, exact: true });
    await visit('projects', '/projects', (p) => ({
      ready: p.getByRole('link', { name: PROJECT }),
      actions: [
        ...['Projects', 'Datasets', 'Prompts', 'Metrics', 'Budgets', 'Settings'].map((n) =>
          p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: n }),
        ),
        p.getByRole('button', { name: /^Account/ }),
      ],
      whole: [p.getByRole('link', { name: PROJECT }), p.getByRole('columnheader')],
    }));

    // Several filters and every content column: the table scrolls in its box, the page does not.
    const content = { input: true, output: true, error: true, metadata: ['environment', 'customer'] };
    await page.evaluate(
      `localStorage.setItem(${JSON.stringify(`sightline.traceContent.${projectUuid}`)}, ${JSON.stringify(JSON.stringify(content))})`,
    );
    const filters = new URLSearchParams([
      ['filter', '["tags","equals","prod"]'],
      ['filter', '["metadata","equals","production","environment"]'],
      ['status', 'error'],
    ]);
    await visit('traces', `${project}/traces?${filters}`, (p) => ({
      ready: p.getByRole('table', { name: 'Traces' }).getByRole('link').first(),
      actions: [
        ...[
          'Traces',
          'Dashboard',
          'Sessions & users',
          'Experiments',
          'Eval rules',
          'Annotation queues',
          'Monitors',
        ].map((n) => p.getByRole('tab', { name: n })),
        button(p, 'Pause'),
        button(p, 'Add filter'),
        button(p, 'Columns'),
        p.getByRole('combobox', { name: 'Status' }),
        p.getByRole('list', { name: 'Conditions of this view' }).getByRole('button').last(),
      ],
      whole: [
        p.getByText('Live', { exact: true }),
        button(p, 'Pause'),
        p.getByRole('list', { name: 'Conditions of this view' }).getByRole('listitem'),
        p.getByRole('table', { name: 'Traces' }).getByRole('link'),
      ],
    }));
    await visit('trace', `${project}/traces/${ids.agent}`, (p) => ({
      ready: p.getByRole('tree').getByText('search_docs'),
      actions: [button(p, 'Add to dataset'), button(p, 'Copy link'), button(p, 'Copy as JSON')],
      // The tree's names, the LLM call's among them, beside the timeline.
      whole: [p.getByRole('treeitem').getByText(/^(answer-question|search-docs|llm-openai|search_docs)$/)],
    }));
    // Looked at only: the dashboard is being changed elsewhere.
    await visit('dashboard', `${project}/dashboard`, (p) => ({
      ready: p.getByRole('table', { name: 'Cost by model' }),
    }));
    await visit('sessions', `${project}/sessions`, (p) => ({
      ready: p.getByRole('table', { name: 'Sessions' }).getByText('session-42'),
      actions: [p.getByText('By user', { exact: true }), p.getByRole('textbox', { name: /Search/ })],
    }));
    await visit('users', `${project}/sessions?by=user`, (p) => ({
      ready: p.getByRole('table', { name: 'Users' }).getByText('grace@example.com'),
      whole: [p.getByRole('table', { name: 'Users' }).getByText(/@example\.com$/)],
    }));
    await visit('experiments', `${project}/experiments`, (p) => ({
      ready: p.getByRole('table', { name: 'Experiments' }).getByText(/candidate_gpt-41/),
      actions: [p.getByRole('button', { name: /Compare/ }), p.getByRole('checkbox', { name: /Compare .*candidate/ })],
      whole: [
        p.getByRole('button', { name: /Compare/ }),
        p.getByRole('table', { name: 'Experiments' }).getByText('completed'),
      ],
    }));
    await visit('experiment', `${project}/experiments/${ids.experiments[1]}`, (p) => ({
      ready: p.getByRole('table', { name: 'Samples' }).getByText('What is 7 + 7?'),
      actions: [button(p, 'Filter')],
      whole: [p.getByText('completed', { exact: true })],
    }));
    const [baseline, candidate] = ids.experiments;
    await visit('compare', `${project}/experiments/compare?ids=${baseline},${candidate}&baseline=${baseline}`, (p) => {
      const metrics = p.getByRole('table', { name: 'Metrics by run' });
      return {
        ready: metrics.getByText(/significantly better/i),
        actions: [metrics.getByText(/significantly better/i), p.getByRole('combobox', { name: 'Baseline' })],
        // The verdicts, not "SIGNIFICANTL…".
        whole: [metrics.getByText(/^(significantly better|no difference|baseline)$/i)],
      };
    });

    await visit('datasets', '/datasets', (p) => ({
      ready: p.getByRole('table', { name: 'Datasets' }).getByRole('link', { name: /customer-support-golden/ }),
      actions: [p.getByRole('button', { name: /New dataset/ })],
      whole: [p.getByRole('table', { name: 'Datasets' }).getByRole('link')],
    }));
    await visit('dataset', `/datasets/${ids.dataset}`, (p) => {
      const row = p.getByRole('table', { name: 'Test cases' }).getByRole('row').nth(1);
      return {
        ready: p.getByRole('table', { name: 'Test cases' }).getByText('How do I export invoices for account 3?'),
        actions: [
          button(p, 'Export'),
          button(p, 'Import'),
          p.getByRole('button', { name: /Add test case/ }),
          row.getByRole('button', { name: /Edit/ }),
          row.getByRole('button', { name: /Delete/ }),
        ],
      };
    });
    await visit('prompts', `/prompts?name=${ids.prompt}`, (p) => {
      const v2 = p.getByRole('row', { name: /v2/ });
      return {
        ready: p.getByRole('table', { name: `Versions of ${ids.prompt}` }).getByText('v2'),
        actions: [
          p.getByRole('tab', { name: 'Playground' }),
          v2.getByRole('button', { name: 'Deploy' }),
          v2.getByRole('button', { name: 'Open in playground' }),
        ],
      };
    });
    await visit('playground', `/prompts?name=${ids.prompt}&tab=playground`, (p) => ({
      ready: p.getByRole('textbox', { name: '{{question}}' }),
      actions: [button(p, 'Run'), button(p, 'Save as new version')],
    }));
    await visit('metrics', '/evals', (p) => {
      const row = p
        .getByRole('table', { name: 'Evaluation metrics' })
        .getByRole('row', { name: /mentions-the-refund/ });
      return {
        ready: row,
        actions: [
          button(p, 'Try'),
          row.getByRole('button', { name: /Edit/ }),
          row.getByRole('button', { name: /Delete/ }),
        ],
        whole: [row.getByText('mentions-the-refund-policy')],
      };
    });
    await visit('eval-rules', `${project}/eval-rules`, (p) => {
      const row = p.getByRole('row', { name: /refund policy on production answers/ });
      return {
        ready: row,
        actions: [
          p.getByRole('button', { name: 'Create rule' }),
          p.getByRole('columnheader', { name: 'Enabled' }),
          row.getByRole('button', { name: /^Edit/ }),
          row.getByRole('button', { name: /^Backfill/ }),
          row.getByRole('button', { name: /^Delete/ }),
        ],
        whole: [row.getByText('mentions-the-refund-policy')],
      };
    });
    await visit('annotation-queues', `${project}/annotation-queues`, (p) => {
      const row = p.getByRole('row', { name: /weekly review of failed answers/ });
      return {
        ready: row,
        actions: [
          p.getByRole('button', { name: 'Create queue' }),
          row.getByText('Review', { exact: true }),
          row.getByRole('button', { name: /Add traces/ }),
          row.getByRole('button', { name: /^Edit/ }),
          row.getByRole('button', { name: /^Delete/ }),
        ],
      };
    });
    await visit('review', `${project}/annotation-queues/${ids.queue}/review`, (p) => ({
      ready: p.getByRole('treeitem').getByText('llm-openai'),
      actions: [button(p, 'Complete'), button(p, 'Skip'), p.getByRole('link', { name: 'Open the trace' })],
      whole: [p.getByRole('treeitem').getByText(/^(answer-question|search-docs|llm-openai|search_docs)$/)],
    }));
    await visit('monitors', `${project}/monitors`, (p) => {
      const row = p.getByRole('row', { name: /error rate of production answers/ });
      return {
        ready: row,
        actions: [
          p.getByRole('button', { name: 'Create monitor' }),
          p.getByRole('columnheader', { name: 'Enabled' }),
          row.getByRole('button', { name: /History/ }),
          row.getByRole('button', { name: /^Edit/ }),
          row.getByRole('button', { name: /^Delete/ }),
        ],
      };
    });
    await visit('budgets', '/budgets', (p) => {
      const row = p.getByRole('table', { name: 'Budgets' }).getByRole('row').nth(1);
      return {
        ready: row,
        actions: [
          p.getByRole('button', { name: 'Create budget' }),
          row.getByRole('button', { name: /^Edit/ }),
          row.getByRole('button', { name: /^Delete/ }),
        ],
        whole: [row.getByText('Alert', { exact: true })],
      };
    });
    await visit('settings', '/settings', (p) => ({
      ready: p.getByRole('table', { name: 'API keys' }).getByText('viewer@example.com'),
      actions: [
        p.getByRole('link', { name: 'Audit log' }),
        p.getByRole('button', { name: 'Create a key' }),
        p
          .getByRole('table', { name: 'API keys' })
          .getByRole('button', { name: /Revoke/ })
          .last(),
      ],
    }));
    await visit('audit-log', '/settings/audit-log', (p) => ({
      ready: p.getByRole('table', { name: 'Audit log' }).getByRole('row').nth(1),
      actions: [p.getByRole('button', { name: /^Details/ }).first()],
      whole: [p.getByRole('table', { name: 'Audit log' }).getByText('created').first()],
    }));
  });
  it('shows the main dialogs whole: their actions in view, nothing scrolling sideways', async () => {
    await page.setViewportSize({ width: 1024, height: 768 });
    const project = `/projects/${projectUuid}`;
    const click = (name: string | RegExp) => (p: Page) => p.getByRole('button', { name, exact: true }).first().click();
    await visitDialog(
      'deployment-move',
      `/prompts?name=${ids.prompt}`,
      async (p) => {
        await p.getByRole('row', { name: /v2/ }).getByRole('button', { name: 'Deploy' }).click();
        await p.getByRole('button', { name: `${ids.deployment} (now v1)` }).click();
      },
      `Move ${ids.deployment}?`,
      ['Cancel', 'Move to v2'],
    );
    await visitDialog('rule-create', `${project}/eval-rules`, click('Create rule'), 'Create rule', [
      'Cancel',
      'Create rule',
    ]);
    await visitDialog(
      'rule-backfill',
      `${project}/eval-rules`,
      (p) =>
        p
          .getByRole('row', { name: /refund policy/ })
          .getByRole('button', { name: /^Backfill/ })
          .click(),
      /^Backfill the rule/,
      ['Cancel', 'Start backfill'],
    );
    await visitDialog('monitor-create', `${project}/monitors`, click('Create monitor'), 'Create monitor', [
      'Cancel',
      'Create monitor',
    ]);
    await visitDialog('queue-create', `${project}/annotation-queues`, click('Create queue'), 'Create queue', [
      'Cancel',
      'Create queue',
    ]);
    await visitDialog(
      'queue-add-traces',
      `${project}/annotation-queues`,
      (p) =>
        p
          .getByRole('row', { name: /weekly review/ })
          .getByRole('button', { name: /Add traces/ })
          .click(),
      /^Add traces to/,
      ['Cancel', 'Add traces'],
    );
    await visitDialog(
      'traces-add-to-queue',
      `${project}/traces`,
      click('Add to queue'),
      'Add traces of this view to a queue',
      ['Cancel', 'Add to queue'],
    );
    await visitDialog('budget-create', '/budgets', click('Create budget'), 'Create budget', [
      'Cancel',
      'Create budget',
    ]);
    await visitDialog('dataset-create', '/datasets', click(/New dataset/), 'New dataset', ['Cancel', 'Create']);
    await visitDialog('dataset-import', `/datasets/${ids.dataset}`, click('Import'), /^Import test cases into/, [
      'Cancel',
      'Import',
    ]);
    await visitDialog('key-create', '/settings', click('Create a key'), 'Create an API key', ['Cancel', 'Create']);
  });
});
