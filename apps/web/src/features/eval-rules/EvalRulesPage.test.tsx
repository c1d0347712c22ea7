import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { answer, fail, invalid, pending, requestsTo, server, settled } from '../../test/api';
import {
  admin,
  BACKFILL_ID,
  evalBackfill,
  evalMetric,
  evalRule,
  evalRulePreview,
  PROJECT_UUID,
  project,
  queue,
  QUEUE_ID,
  ROOT_ID,
  RULE_ID,
  traceTree,
  viewer,
} from '../../test/fixtures';
import { renderPage } from '../../test/render';
import EvalRulesPage from './EvalRulesPage';

const open = () =>
  renderPage(<EvalRulesPage />, {
    route: `/projects/${PROJECT_UUID}/eval-rules`,
    path: '/projects/:projectUuid/eval-rules',
  });

const JUDGE = evalMetric({
  id: 2,
  name: 'helpfulness',
  type: 'llm_judge',
  config: { prompt_template: 'Rate {{output}}', provider: 'openai', model: 'gpt-4o-mini' },
});
const METRICS = [evalMetric(), JUDGE];
const PAUSED = evalRule({
  id: 'a1000000-0000-4000-8000-000000000002',
  name: 'judge-helpfulness',
  metric_names: ['helpfulness'],
  sample_rate: 0.25,
  filters: [{ field: 'metadata', key: 'environment', operator: 'equals', value: 'production' }],
  daily_cost_limit: 2,
  cost_today: 2.01,
  paused_until: '2026-03-03 00:00:00',
  runs: { done: 1500, queued: 3 },
});

// No pause between keys: the form renders again at each, and the typing is not what is tested.
const user = userEvent.setup({ delay: null });

/** Puts text into an input at once (typing it renders the whole form again at each key). */
async function fill(input: HTMLElement, text: string) {
  await user.clear(input);
  await user.click(input);
  await user.paste(text);
}

const sleep = (ms: number) => act(() => new Promise((resolve) => setTimeout(resolve, ms)));

async function choose(label: string, option: string, scope: HTMLElement) {
  await user.click(within(scope).getByRole('combobox', { name: label }));
  await user.click(await screen.findByRole('option', { name: option }));
}

/** Opens the creation form and picks metrics in it. */
async function startCreating(...metrics: string[]) {
  await user.click(await screen.findByRole('button', { name: 'Create rule' }));
  const dialog = await screen.findByRole('dialog', { name: 'Create rule' });
  for (const m of metrics) {
    await user.click(within(dialog).getByRole('combobox', { name: 'Metrics' }));
    await user.click(await screen.findByRole('option', { name: m }));
  }
  return dialog;
}

beforeEach(() => {
  server.use(
    answer('me', admin),
    answer('projects', [project()]),
    answer('evalMetrics', METRICS),
    answer('queues', [queue()]),
  );
});

describe('the eval rules page', () => {
  it('shows that the rules are loading', async () => {
    server.use(pending('evalRules'));
    open();
    expect(await screen.findByText('Loading the rules…')).toBeTruthy();
  });

  it('says what a rule does, and offers to create one, when there is none', async () => {
    server.use(answer('evalRules', []));
    open();
    expect(await screen.findByRole('heading', { name: 'No rules yet' })).toBeTruthy();
    expect(screen.getByText(/A rule scores this project's new traces automatically once they settle/)).toBeTruthy();
    expect(await screen.findAllByRole('button', { name: 'Create rule' })).toHaveLength(1);
    expect(requestsTo('evalRules')[0]!.query).toEqual({ project_uuid: PROJECT_UUID });
  });

  it('shows why the rules could not load, and retries', async () => {
    server.use(answer('evalRules', [evalRule()]));
    server.use(fail('evalRules', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await user.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Evaluation rules' })).toBeTruthy();
    expect(requestsTo('evalRules')).toHaveLength(2);
  });

  it("lists the rules with what they score, their spend and a paused rule's badge", async () => {
    server.use(answer('evalRules', [evalRule(), PAUSED]));
    open();
    const table = await screen.findByRole('table', { name: 'Evaluation rules' });
    const [first, paused] = within(table).getAllByRole('row').slice(1);
    expect(within(first!).getByText('100% sampled')).toBeTruthy();
    expect(within(first!).getByText('Root span')).toBeTruthy();
    expect(within(first!).getByText('Every trace')).toBeTruthy();
    expect(within(first!).getByText('no limit')).toBeTruthy();
    expect(within(paused!).getByText('25% sampled')).toBeTruthy();
    expect(within(paused!).getByText('Where metadata.environment equals production')).toBeTruthy();
    expect(within(paused!).getByText('1,500 done')).toBeTruthy();
    expect(within(paused!).getByText('3 queued')).toBeTruthy();
    expect(within(paused!).getByText('$2.01 of $2.00')).toBeTruthy();
    expect(within(paused!).getByText(/^Paused until/)).toBeTruthy();
    expect(within(paused!).getByText(/judge spend reached the daily limit/)).toBeTruthy();
    expect(within(first!).queryByText(/^Paused until/)).toBeNull();
  });

  it("shows a running backfill's progress, cancels it, and then stays idle", async () => {
    const cancelled = evalBackfill({ status: 'cancelled', finished_at: '2026-03-02 10:05:00' });
    server.use(
      answer('evalRules', () => [
        evalRule({ backfills: [requestsTo('cancelBackfill').length ? cancelled : evalBackfill()] }),
      ]),
      answer('cancelBackfill', cancelled),
    );
    open();
    const bar = await screen.findByRole('progressbar', { name: 'Backfill of answers-exact: 50 of 200 traces' });
    expect(bar.getAttribute('aria-valuenow')).toBe('25');
    const row = screen.getAllByRole('row')[1]!;
    expect(within(row).getByText('50/200')).toBeTruthy();
    expect(within(row).getByText('running')).toBeTruthy();
    expect(within(row).getByText('$0.12')).toBeTruthy();

    await user.click(within(row).getByRole('button', { name: 'Cancel the backfill of answers-exact' }));
    await waitFor(() => expect(requestsTo('cancelBackfill')).toHaveLength(1));
    expect(requestsTo('cancelBackfill')[0]!.path).toBe(`/eval-rules/${RULE_ID}/backfills/${BACKFILL_ID}/cancel`);

    // The list is read again: no backfill runs any more, and the page asks nothing until it is used.
    expect(await within(row).findByText('cancelled')).toBeTruthy();
    expect(within(row).queryByRole('button', { name: /^Cancel/ })).toBeNull();
    const reads = requestsTo('evalRules').length;
    await sleep(2_500);
    expect(requestsTo('evalRules')).toHaveLength(reads);
  });

  it('reads a running backfill again every 2 s', async () => {
    server.use(answer('evalRules', [evalRule({ backfills: [evalBackfill()] })]));
    open();
    await screen.findByRole('progressbar');
    await waitFor(() => expect(requestsTo('evalRules').length).toBeGreaterThan(1), { timeout: 3_000 });
  });

  it('turns a rule off with PATCH', async () => {
    server.use(answer('evalRules', [evalRule()]), answer('updateEvalRule', evalRule({ enabled: false })));
    open();
    await user.click(await screen.findByRole('switch', { name: 'answers-exact enabled' }));
    await waitFor(() => expect(requestsTo('updateEvalRule')).toHaveLength(1));
    expect(requestsTo('updateEvalRule')[0]).toMatchObject({
      method: 'PATCH',
      path: `/eval-rules/${RULE_ID}`,
      body: { enabled: false },
    });
  });

  it('creates a rule, showing a 422 beside the field it names', async () => {
    server.use(
      answer('evalRules', []),
      answer('previewEvalRule', evalRulePreview()),
      answer('createEvalRule', evalRule()),
    );
    server.use(
      invalid(
        'createEvalRule',
        [
          { loc: ['body', 'metric_names', 1], msg: "no eval metric named 'helpfulness'" },
          { loc: ['body', 'filters', 0, 'value'], msg: 'not a value of environment' },
          { loc: ['body', 'annotation_queue', 'queue_id'], msg: 'the queue belongs to another project' },
        ],
        { once: true },
      ),
    );
    open();
    const dialog = await startCreating('exact-answer', 'helpfulness');
    await fill(within(dialog).getByLabelText(/^Name/), 'answers');
    await fill(within(dialog).getByLabelText(/^Sample rate/), '20');
    await user.click(within(dialog).getByRole('radio', { name: 'Every span of a given name in each trace' }));
    await fill(within(dialog).getByLabelText(/^Span name/), 'call-model');
    await user.click(within(dialog).getByRole('button', { name: 'Add filter' }));
    const filter = within(dialog).getByRole('group', { name: 'Filter 1' });
    await choose('Field', 'Metadata', filter);
    await fill(within(filter).getByLabelText(/^Key/), 'environment');
    await fill(within(filter).getByLabelText(/^Value/), 'production');
    await fill(within(dialog).getByLabelText(/^Daily judge limit/), '5');
    // The traces it fails on, or scores below 0.5 by exact-answer, go to a queue of the project.
    await choose('Annotation queue', 'refund-answers', dialog);
    expect(within(dialog).getByText(/To save: say which traces go to the queue/)).toBeTruthy();
    await user.click(within(dialog).getByRole('checkbox', { name: /When an evaluation fails/ }));
    await choose('When the score of', 'exact-answer', dialog);
    await fill(within(dialog).getByLabelText(/^is below/), '0.5');
    await user.click(within(dialog).getByRole('button', { name: 'Create rule' }));

    await waitFor(() => expect(requestsTo('createEvalRule')).toHaveLength(1));
    expect(requestsTo('createEvalRule')[0]!.body).toEqual({
      name: 'answers',
      project_uuid: PROJECT_UUID,
      metric_names: ['exact-answer', 'helpfulness'],
      sample_rate: 0.2,
      filters: [{ field: 'metadata', key: 'environment', operator: 'equals', value: 'production' }],
      target: { kind: 'span', span_name: 'call-model' },
      settle_seconds: 10,
      daily_cost_limit: 5,
      reevaluate_on_update: false,
      enabled: true,
      annotation_queue: { queue_id: QUEUE_ID, on_result: { metric_name: 'exact-answer', below: 0.5 }, on_error: true },
    });
    const described = (input: HTMLElement) =>
      (input.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id) => document.getElementById(id)?.textContent)
        .join(' ');
    const metrics = within(dialog).getByRole('combobox', { name: 'Metrics' });
    await waitFor(() => expect(described(metrics)).toContain("no eval metric named 'helpfulness'"));
    expect(metrics.getAttribute('aria-invalid')).toBe('true');
    expect(described(within(filter).getByLabelText(/^Value/))).toContain('not a value of environment');
    const queueInput = within(dialog).getByRole('combobox', { name: 'Annotation queue' });
    expect(described(queueInput)).toContain('the queue belongs to another project');

    await user.click(within(dialog).getByRole('button', { name: 'Create rule' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(requestsTo('createEvalRule')).toHaveLength(2);
  });

  it('previews what the rule would evaluate, and tries its metrics on the newest trace', async () => {
    server.use(
      answer('evalRules', []),
      answer('previewEvalRule', (r) =>
        (r.body as { metric_names: string[] }).metric_names.includes('helpfulness')
          ? evalRulePreview({ judge_metrics: ['helpfulness'], estimated_daily_cost: null })
          : evalRulePreview(),
      ),
      answer('traceLog', traceTree()),
      answer('tryMetric', (r) =>
        (r.body as { metric: { name: string } }).metric.name === 'helpfulness'
          ? { error: 'no openai key' }
          : { score: 1, reason: 'equal' },
      ),
    );
    open();
    const dialog = await startCreating('exact-answer');
    const preview = within(dialog);
    expect(await preview.findByText('1,200 traces of the last 24 h match, 300 would be evaluated.')).toBeTruthy();
    expect(preview.getByText('Judge spend: none, no judge among these metrics.')).toBeTruthy();
    expect(requestsTo('previewEvalRule')[0]!.body).toEqual({
      project_uuid: PROJECT_UUID,
      metric_names: ['exact-answer'],
      sample_rate: 1,
      filters: [],
    });

    // Typing the name asks nothing; adding a judge asks once the change has settled.
    await fill(preview.getByLabelText(/^Name/), 'answers');
    await user.click(preview.getByRole('combobox', { name: 'Metrics' }));
    await user.click(await screen.findByRole('option', { name: 'helpfulness' }));
    expect(await preview.findByText(/Judge spend a day: not known until the judge has run/)).toBeTruthy();
    expect(requestsTo('previewEvalRule')).toHaveLength(2);

    await user.click(preview.getByRole('button', { name: 'Try on the newest trace' }));
    const results = await preview.findByRole('list', { name: 'Results on the newest trace' });
    expect(
      within(results)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['exact-answer: score 1: equal', 'helpfulness: no score, no openai key']);
    expect(requestsTo('traceLog')[0]!.path).toBe(`/trace_log/${ROOT_ID}`);
    expect(requestsTo('tryMetric').map((r) => r.body)).toContainEqual({
      metric: { name: 'exact-answer', type: 'exact_match', config: { case_sensitive: true } },
      output: 'Within 30 days.',
      target: 'Within 30 days.',
      inputs: { question: 'How do refunds work?' },
    });
  });

  it('edits a rule, backfills it over the last 24 hours and deletes it after asking', async () => {
    server.use(
      answer('evalRules', [PAUSED]),
      answer('previewEvalRule', evalRulePreview()),
      answer('updateEvalRule', PAUSED),
      answer('backfill', evalBackfill()),
      answer('deleteEvalRule', { deleted: true }),
    );
    open();
    await user.click(await screen.findByRole('button', { name: 'Edit the rule judge-helpfulness' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit the rule judge-helpfulness' });
    expect((within(dialog).getByLabelText(/^Sample rate/) as HTMLInputElement).value).toBe('25%');
    await user.click(within(dialog).getByRole('button', { name: 'Remove filter 1' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(requestsTo('updateEvalRule')[0]!.body).toMatchObject({
      sample_rate: 0.25,
      filters: [],
      daily_cost_limit: 2,
    });

    await user.click(screen.getByRole('button', { name: 'Backfill the rule judge-helpfulness' }));
    const form = await screen.findByRole('dialog', { name: 'Backfill the rule judge-helpfulness' });
    await user.click(within(form).getByRole('button', { name: 'Start backfill' }));
    await waitFor(() => expect(requestsTo('backfill')).toHaveLength(1));
    const { from, to } = requestsTo('backfill')[0]!.body as { from: string; to: string };
    expect(Date.parse(to) - Date.parse(from)).toBe(86_400_000);
    expect(Math.abs(Date.parse(to) - Date.now())).toBeLessThan(120_000);

    const confirm = vi.spyOn(window, 'confirm').mockReturnValue(true);
    await user.click(await screen.findByRole('button', { name: 'Delete the rule judge-helpfulness' }));
    expect(confirm).toHaveBeenCalledWith(expect.stringContaining('Delete the rule "judge-helpfulness"?'));
    await waitFor(() => expect(requestsTo('deleteEvalRule')).toHaveLength(1));
    expect(requestsTo('deleteEvalRule')[0]!.path).toBe(`/eval-rules/${PAUSED.id}`);
    confirm.mockRestore();
  });

  it('shows a viewer the rules without the controls that change them', async () => {
    server.use(
      answer('me', viewer),
      answer('evalRules', [evalRule({ backfills: [evalBackfill({ status: 'done' })] })]),
    );
    open();
    await screen.findByRole('table', { name: 'Evaluation rules' });
    await settled();
    expect(screen.queryByRole('button', { name: 'Create rule' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^(Edit|Backfill|Delete) the rule/ })).toBeNull();
    expect((screen.getByRole('switch', { name: 'answers-exact enabled' }) as HTMLInputElement).disabled).toBe(true);
  });
});
