import {
  AgreementSchema,
  CriterionCreateSchema,
  CriterionPatchSchema,
  CriterionSchema,
  DetailSchema,
} from '@sightline/schemas';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { delay, http, HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, server, settled, type Fixture } from '../../../test/api';
import { criterion, evalMetric, tone as valueCriterion } from '../../../test/fixtures';
import { renderPage } from '../../../test/render';
import { CriteriaSettings } from './CriteriaSettings';

// The criteria routes test/api.ts does not list (create, the metric's PATCH, the agreement), answered in
// its manner: a request body is parsed with the schema the server reads it with, an answer with the one it
// answers with, so that neither side can drift from the API. `checkCriteriaApi` runs after each test.

const API = '/api/svc/v1';

type Criterion = Fixture<'criteria'>[number];
type AgreementFixture = z.input<typeof AgreementSchema>;
type Sent = { method: string; path: string; query: Record<string, string>; body: unknown };

const sent: Sent[] = [];
const problems: string[] = [];
const sentTo = (method: string, path: RegExp) => sent.filter((r) => r.method === method && path.test(r.path));
const agreementRequests = () => sentTo('GET', /\/agreement$/);

async function record(request: Request, bodySchema?: z.ZodType) {
  const url = new URL(request.url);
  const text = await request.text();
  const body = text ? JSON.parse(text) : undefined;
  const r = {
    method: request.method,
    path: url.pathname.slice(API.length),
    query: Object.fromEntries(url.searchParams),
    body,
  };
  sent.push(r);
  if (bodySchema) {
    const parsed = bodySchema.safeParse(body);
    if (!parsed.success)
      problems.push(`${r.method} ${r.path}: a body the server refuses: ${z.prettifyError(parsed.error)}`);
  }
  return r;
}

function reply(schema: z.ZodType, value: unknown) {
  const parsed = schema.safeParse(value);
  if (parsed.success) return HttpResponse.json(parsed.data as object);
  problems.push(`a fixture the server would not send: ${z.prettifyError(parsed.error)}`);
  return HttpResponse.json({ detail: 'the mock API refused its fixture' }, { status: 500 });
}

/** The organization's criteria, as the API holds them: created and patched by the handlers below. */
let criteria: Criterion[] = [];

const NEW_ID = '99999999-8888-4777-8666-000000000001';

const createCriterion = () =>
  http.post(`${API}/annotation-criteria`, async ({ request }) => {
    const { body } = await record(request, CriterionCreateSchema);
    const b = body as z.input<typeof CriterionCreateSchema>;
    const made: Criterion = {
      id: NEW_ID,
      name: b.name,
      kind: b.kind,
      description: b.description ?? null,
      min: b.min ?? null,
      max: b.max ?? null,
      options: b.options ?? null,
      eval_metric_name: b.eval_metric_name ?? null,
      created_at: '2026-03-03T09:00:00.000Z',
    };
    criteria = [...criteria, made];
    return reply(CriterionSchema, made);
  });

const patchCriterion = () =>
  http.patch(`${API}/annotation-criteria/:id`, async ({ request, params }) => {
    const { body } = await record(request, CriterionPatchSchema);
    const { eval_metric_name } = body as z.input<typeof CriterionPatchSchema>;
    criteria = criteria.map((c) => (c.id === params.id ? { ...c, eval_metric_name } : c));
    return reply(
      CriterionSchema,
      criteria.find((c) => c.id === params.id),
    );
  });

const answerAgreement = (fixture: AgreementFixture | (() => Promise<never>), options?: { once?: boolean }) =>
  http.get(
    `${API}/annotation-criteria/:id/agreement`,
    async ({ request }) => {
      await record(request);
      if (typeof fixture === 'function') return fixture();
      return reply(AgreementSchema, fixture);
    },
    options,
  );

const failAgreement = (status: number, detail: string) =>
  http.get(
    `${API}/annotation-criteria/:id/agreement`,
    async ({ request }) => {
      await record(request);
      return HttpResponse.json(DetailSchema.parse({ detail }), { status });
    },
    { once: true },
  );

const tone: Criterion = { ...valueCriterion, eval_metric_name: 'tone-judge' };
const helpfulness: Criterion = { ...criterion, eval_metric_name: 'exact-answer' };

const METRICS = [evalMetric(), evalMetric({ id: 2, name: 'tone-judge' }), evalMetric({ id: 3, name: 'relevance' })];

const T_FROM = '2026-02-01T09:00:00.000Z';
const T_TO = '2026-03-03T09:00:00.000Z';

const toneAgreement = (over: Partial<AgreementFixture> = {}): AgreementFixture => ({
  criterion_id: tone.id,
  kind: 'value',
  eval_metric_name: 'tone-judge',
  from: T_FROM,
  to: T_TO,
  judge: {
    n: 340,
    kappa: 0.6213,
    kappa_ci: [0.5149, 0.7211],
    labels: ['friendly', 'neutral', 'rude'],
    confusion: [
      [150, 20, 2],
      [25, 100, 8],
      [1, 6, 28],
    ],
  },
  people: {
    n: 25,
    kappa: 0.7,
    kappa_ci: [0.6, 0.8],
    labels: ['friendly', 'neutral', 'rude'],
    confusion: [
      [10, 1, 0],
      [2, 8, 0],
      [0, 1, 3],
    ],
  },
  disagreements: [
    {
      trace_id: 'b0000000-0000-4000-8000-000000000001',
      root_trace_id: 'b0000000-0000-4000-8000-000000000001',
      project_uuid: null,
      people: 'rude',
      judge: 'friendly',
    },
    {
      trace_id: 'b0000000-0000-4000-8000-000000000002',
      root_trace_id: 'b0000000-0000-4000-8000-0000000000ff',
      project_uuid: 'c0000000-0000-4000-8000-000000000001',
      people: 'friendly',
      judge: 'neutral',
    },
  ],
  ...over,
});

const helpfulnessAgreement = (over: Partial<AgreementFixture> = {}): AgreementFixture => ({
  criterion_id: helpfulness.id,
  kind: 'score',
  eval_metric_name: 'exact-answer',
  from: T_FROM,
  to: T_TO,
  judge: { n: 340, spearman: 0.8123, spearman_ci: [0.7, 0.88], mean_abs_diff: 0.1111, mean_abs_diff_ci: [0.09, 0.13] },
  people: { n: 1, spearman: null, spearman_ci: null, mean_abs_diff: 0.25, mean_abs_diff_ci: null },
  disagreements: [
    {
      trace_id: 'b0000000-0000-4000-8000-000000000003',
      root_trace_id: 'b0000000-0000-4000-8000-000000000003',
      project_uuid: 'c0000000-0000-4000-8000-000000000001',
      people: 0.75,
      judge: 0,
    },
  ],
  ...over,
});

const user = userEvent.setup({ delay: null });

function open(list: Criterion[]) {
  criteria = list;
  server.use(
    answer('criteria', () => criteria),
    answer('evalMetrics', METRICS),
    createCriterion(),
    patchCriterion(),
  );
  return renderPage(<CriteriaSettings />, { route: '/settings' });
}

const table = () => screen.findByRole('table', { name: 'Annotation criteria' });

async function choose(combobox: HTMLElement, option: string) {
  await user.click(combobox);
  await user.click(await screen.findByRole('option', { name: option }));
}

/** Opens a criterion's agreement panel. */
async function openAgreement(name: string) {
  const toggle = within(await table()).getByRole('button', { name: `Agreement of ${name}` });
  expect(toggle.getAttribute('aria-expanded')).toBe('false');
  await user.click(toggle);
  expect(toggle.getAttribute('aria-expanded')).toBe('true');
}

beforeEach(() => {
  sent.length = 0;
});
afterEach(() => {
  const found = problems.splice(0);
  if (found.length) throw new Error(`The mock criteria API saw:\n${found.join('\n')}`);
});

describe('the evaluation metric of a criterion', () => {
  it('is sent when a criterion is created with one', async () => {
    open([]);
    const form = await screen.findByRole('form', { name: 'Create a criterion' });
    await user.type(within(form).getByRole('textbox', { name: 'Name' }), 'correctness');
    await choose(
      within(form).getByRole('combobox', { name: 'Evaluation metric it corresponds to (optional)' }),
      'relevance',
    );
    await user.click(within(form).getByRole('button', { name: 'Create criterion' }));
    await waitFor(() => expect(sentTo('POST', /^\/annotation-criteria$/)).toHaveLength(1));
    expect(sent[0]!.body).toEqual({
      name: 'correctness',
      kind: 'score',
      description: null,
      eval_metric_name: 'relevance',
      min: null,
      max: null,
    });
    const row = (await within(await table()).findByText('correctness')).closest('tr')!;
    expect(within(row).getByRole('combobox', { name: 'Evaluation metric of correctness' })).toHaveProperty(
      'value',
      'relevance',
    );
    // The form forgets the metric with the rest: the next criterion names none unless chosen.
    await waitFor(() =>
      expect(within(form).getByRole('combobox', { name: /Evaluation metric it corresponds to/ })).toHaveProperty(
        'value',
        'No metric',
      ),
    );
    await user.type(within(form).getByRole('textbox', { name: 'Name' }), 'brevity');
    await user.click(within(form).getByRole('button', { name: 'Create criterion' }));
    await waitFor(() => expect(sentTo('POST', /^\/annotation-criteria$/)).toHaveLength(2));
    expect(sent[1]!.body).toMatchObject({ name: 'brevity', eval_metric_name: null });
  });

  it('sends the chosen options of a value criterion with its metric', async () => {
    open([]);
    const form = await screen.findByRole('form', { name: 'Create a criterion' });
    await user.type(within(form).getByRole('textbox', { name: 'Name' }), 'tone');
    await user.click(within(form).getByRole('radio', { name: 'Value' }));
    const options = within(form).getByLabelText('Options');
    await user.type(options, 'friendly{Enter}rude{Enter}');
    await choose(within(form).getByRole('combobox', { name: /Evaluation metric it corresponds to/ }), 'tone-judge');
    expect(
      within(form).getByText("The metric's scores are read as the options, lowest to highest, in the order given"),
    ).toBeTruthy();
    await user.click(within(form).getByRole('button', { name: 'Create criterion' }));
    await waitFor(() => expect(sentTo('POST', /^\/annotation-criteria$/)).toHaveLength(1));
    expect(sent[0]!.body).toEqual({
      name: 'tone',
      kind: 'value',
      description: null,
      eval_metric_name: 'tone-judge',
      options: ['friendly', 'rude'],
    });
  });

  it("is set on a criterion's row, then forgotten, with PATCH", async () => {
    open([criterion]);
    const row = within(await table())
      .getByText('helpfulness')
      .closest('tr')!;
    // No metric: no agreement to show.
    expect(within(row).queryByRole('button', { name: 'Agreement of helpfulness' })).toBeNull();
    await choose(within(row).getByRole('combobox', { name: 'Evaluation metric of helpfulness' }), 'exact-answer');
    await waitFor(() => expect(sentTo('PATCH', /./)).toHaveLength(1));
    expect(sent[0]).toMatchObject({
      path: `/annotation-criteria/${criterion.id}`,
      body: { eval_metric_name: 'exact-answer' },
    });
    expect(await within(row).findByRole('button', { name: 'Agreement of helpfulness' })).toBeTruthy();

    await waitFor(() =>
      expect(within(row).getByRole('combobox', { name: 'Evaluation metric of helpfulness' })).toHaveProperty(
        'disabled',
        false,
      ),
    );
    await choose(within(row).getByRole('combobox', { name: 'Evaluation metric of helpfulness' }), 'No metric');
    await waitFor(() => expect(sentTo('PATCH', /./)).toHaveLength(2));
    expect(sent[1]!.body).toEqual({ eval_metric_name: null });
    await waitFor(() => expect(within(row).queryByRole('button', { name: 'Agreement of helpfulness' })).toBeNull());
    expect(within(row).getByRole('combobox', { name: 'Evaluation metric of helpfulness' })).toHaveProperty(
      'value',
      'No metric',
    );
  });

  it("shows a name that is no longer among the organization's metrics", async () => {
    open([{ ...criterion, eval_metric_name: 'retired-metric' }]);
    const row = within(await table())
      .getByText('helpfulness')
      .closest('tr')!;
    await waitFor(() =>
      expect(within(row).getByRole('combobox', { name: 'Evaluation metric of helpfulness' })).toHaveProperty(
        'value',
        'retired-metric',
      ),
    );
  });
});

describe("a criterion's agreement", () => {
  it('is not asked for until its panel is opened', async () => {
    server.use(answerAgreement(toneAgreement()));
    open([tone, helpfulness]);
    await table();
    await settled();
    expect(agreementRequests()).toHaveLength(0);
    await openAgreement('tone');
    await screen.findByText(/Judge agrees with people/);
    expect(agreementRequests()).toHaveLength(1);
    const { path, query } = agreementRequests()[0]!;
    expect(path).toBe(`/annotation-criteria/${tone.id}/agreement`);
    // The last 30 days.
    expect(Date.parse(query.to!) - Date.parse(query.from!)).toBe(30 * 86_400_000);
    await settled();
    expect(agreementRequests()).toHaveLength(1);
  });

  it('shows that it is being measured', async () => {
    server.use(
      answerAgreement(async () => {
        await delay('infinite');
        throw new Error('never answered');
      }),
    );
    open([tone]);
    await openAgreement('tone');
    expect(await screen.findByText('Measuring the agreement…')).toBeTruthy();
  });

  it("of a value criterion: κ with its interval, people's κ, the confusion matrix and the disagreements", async () => {
    server.use(answerAgreement(toneAgreement()));
    open([tone]);
    await openAgreement('tone');
    const judge = await screen.findByText('Judge agrees with people:');
    expect(judge.parentElement!.textContent).toBe('Judge agrees with people: κ = 0.62 (0.51–0.72), n = 340');
    expect(screen.getByText('People agree with each other:').parentElement!.textContent).toBe(
      'People agree with each other: κ = 0.70 (0.60–0.80), n = 25',
    );

    const matrix = screen.getByRole('table', { name: 'Confusion matrix of tone' });
    const columns = within(matrix)
      .getAllByRole('columnheader')
      .map((h) => h.textContent);
    expect(columns).toEqual(['Judge: friendly', 'Judge: neutral', 'Judge: rude']);
    const rows = within(matrix).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual([
      'People: friendly',
      'People: neutral',
      'People: rude',
    ]);
    expect(
      within(rows[1]!)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['25', '100', '8']);

    const disagreements = screen.getByRole('table', { name: 'Disagreements on tone' });
    const [first, second] = within(disagreements).getAllByRole('row').slice(1);
    expect(within(first!).getByText('b0000000-0000-4000-8000-000000000001')).toBeTruthy();
    expect(within(first!).getByText('rude')).toBeTruthy();
    expect(within(first!).getByText('friendly')).toBeTruthy();
    // A span stored without a project has no page: its id is there to copy.
    expect(
      within(first!).getByRole('button', { name: 'Copy the trace id b0000000-0000-4000-8000-000000000001' }),
    ).toBeTruthy();
    // Any other opens in its trace's page, selected.
    expect(
      within(second!)
        .getByRole('link', { name: 'Open the span b0000000-0000-4000-8000-000000000002' })
        .getAttribute('href'),
    ).toBe(
      '/projects/c0000000-0000-4000-8000-000000000001/traces/b0000000-0000-4000-8000-0000000000ff?span=b0000000-0000-4000-8000-000000000002',
    );
  });

  it('of a score criterion: ρ and the mean difference; too few spans rated by two people', async () => {
    server.use(answerAgreement(helpfulnessAgreement()));
    open([helpfulness]);
    await openAgreement('helpfulness');
    const judge = await screen.findByText('Judge agrees with people:');
    expect(judge.parentElement!.textContent).toBe(
      'Judge agrees with people: ρ = 0.81 (0.70–0.88), mean difference 0.11, n = 340',
    );
    expect(screen.getByText('People agree with each other:').parentElement!.textContent).toBe(
      'People agree with each other: not enough spans rated by two people',
    );
    expect(screen.getByText(/People's scores are read on 0 to 1 \(1 is 0, 5 is 1\)/)).toBeTruthy();
    expect(screen.queryByRole('table', { name: /Confusion matrix/ })).toBeNull();
    const [row] = within(screen.getByRole('table', { name: 'Disagreements on helpfulness' }))
      .getAllByRole('row')
      .slice(1);
    expect(
      within(row!)
        .getAllByRole('cell')
        .map((c) => c.textContent)
        .slice(1),
    ).toEqual(['0.75', '0']);
  });

  it('says plainly that no span has been scored by both yet, and what to do', async () => {
    server.use(
      answerAgreement(
        helpfulnessAgreement({
          judge: { n: 0, spearman: null, spearman_ci: null, mean_abs_diff: null, mean_abs_diff_ci: null },
          people: { n: 0, spearman: null, spearman_ci: null, mean_abs_diff: null, mean_abs_diff_ci: null },
          disagreements: [],
        }),
      ),
    );
    open([helpfulness]);
    await openAgreement('helpfulness');
    expect(
      await screen.findByText('No span has been scored both by the metric exact-answer and by a person yet.'),
    ).toBeTruthy();
    expect(screen.getByText(/annotate helpfulness on spans the metric scored/)).toBeTruthy();
    expect(screen.queryByText('Judge agrees with people:')).toBeNull();
    expect(screen.queryByRole('table', { name: /Disagreements/ })).toBeNull();
  });

  it('shows why it could not be measured, and retries', async () => {
    // The lasting answer first, then the one-time failure that goes before it.
    server.use(answerAgreement(toneAgreement()));
    server.use(failAgreement(503, 'the worker pool is busy'));
    open([tone]);
    await openAgreement('tone');
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('The agreement could not be measured')).toBeTruthy();
    expect(within(alert).getByText(/\(503\): the worker pool is busy/)).toBeTruthy();
    await user.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Judge agrees with people:')).toBeTruthy();
    expect(agreementRequests()).toHaveLength(2);
  });

  it('is measured over another period when asked', async () => {
    server.use(answerAgreement(toneAgreement()));
    open([tone]);
    await openAgreement('tone');
    await screen.findByText('Judge agrees with people:');
    await user.click(screen.getByRole('radio', { name: 'Last 90 days' }));
    await waitFor(() => expect(agreementRequests()).toHaveLength(2));
    const { query } = agreementRequests()[1]!;
    expect(Date.parse(query.to!) - Date.parse(query.from!)).toBe(90 * 86_400_000);
  });
});
