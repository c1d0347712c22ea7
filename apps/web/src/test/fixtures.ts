import type { Fixture } from './api';

// API answers for the page tests, typed by the server's response schemas (and parsed by them again when
// the mock API sends them). Each builder takes overrides, so a test states only what it is about.

type ItemOf<T> = T extends readonly (infer U)[] ? U : never;

const T0 = '2026-03-02T09:00:00.000Z';
const T1 = '2026-03-02T10:30:00.000Z';

export const PROJECT_UUID = '6f1d2c3b-4a59-4e68-8b7a-9c0d1e2f3a4b';
export const OTHER_PROJECT_UUID = '7a2e3d4c-5b6a-4f79-9c8b-0d1e2f3a4b5c';

export const ORGANIZATION_ID = '0c9b8a7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d';
export const ADA_ID = '21111111-2222-4333-8444-555555555555';
const KEY_ID = '11111111-2222-4333-8444-555555555555';

/** Ada, an admin of Acme, signed in with her password. */
export const admin: Fixture<'me'> = {
  organization_id: ORGANIZATION_ID,
  organization_name: 'Acme',
  role: 'admin',
  label: 'ada@example.com',
  key_id: null,
  remark_author: 'ada@example.com',
  user: { id: ADA_ID, email: 'ada@example.com', name: 'Ada Lovelace' },
  organizations: [{ id: ORGANIZATION_ID, name: 'Acme', role: 'admin' }],
  must_change_password: false,
};
/** A session opened with an admin's API key: no person, the key's label. */
export const keyAdmin: Fixture<'me'> = { ...admin, key_id: KEY_ID, user: null };
export const viewer: Fixture<'me'> = {
  ...admin,
  role: 'viewer',
  label: 'vic@example.com',
  remark_author: 'vic@example.com',
  user: { id: '31111111-2222-4333-8444-555555555555', email: 'vic@example.com', name: 'Vic Viewer' },
  organizations: [{ id: ORGANIZATION_ID, name: 'Acme', role: 'viewer' }],
};

type Project = ItemOf<Fixture<'projects'>>;
export const project = (over: Partial<Project> = {}): Project => ({
  uuid: PROJECT_UUID,
  name: 'support-bot',
  created_at: '2026-01-10T08:00:00.000Z',
  traces: 1234,
  last_activity: T1,
  traces_24h: 56,
  cost_24h: 1.5,
  error_rate_24h: 0.02,
  ...over,
});

type TraceRow = ItemOf<Fixture<'traces'>['results']>;
export const traceRow = (over: Partial<TraceRow> = {}): TraceRow => ({
  trace_id: 'a0000000-0000-4000-8000-000000000001',
  project_uuid: PROJECT_UUID,
  trace_name: 'answer-question',
  start_timestamp: T0,
  end_timestamp: T0,
  latency: 1.25,
  input_tokens: 100,
  output_tokens: 20,
  total_tokens: 120,
  cost: 0.0012,
  usage_estimated: false,
  status: 'success',
  error: null,
  scores: [],
  feedback_score: null,
  tags: [],
  end_user_identifier: null,
  session_id: null,
  experiment_uuid: null,
  span_count: 3,
  ...over,
});

/** A page of trace rows, counted as the server counts them. */
export const tracePage = (results: TraceRow[], over: Partial<Fixture<'traces'>> = {}): Fixture<'traces'> => ({
  total: results.length,
  total_exact: true,
  searched_roots: null,
  page: 1,
  total_pages: results.length ? 1 : 0,
  page_size: 100,
  results,
  ...over,
});

export const ROOT_ID = 'b0000000-0000-4000-8000-000000000001';
export const CHILD_ID = 'b0000000-0000-4000-8000-000000000002';

type SkeletonSpan = ItemOf<Fixture<'skeleton'>['spans']>;
const skeletonSpan = (over: Partial<SkeletonSpan>): SkeletonSpan => ({
  trace_id: ROOT_ID,
  parent_trace_id: ROOT_ID,
  trace_name: 'answer-question',
  kind: 'chain',
  start_timestamp: '2026-03-02 09:00:00',
  end_timestamp: '2026-03-02 09:00:02',
  latency: 2,
  status: 'success',
  input_tokens: null,
  output_tokens: null,
  total_tokens: null,
  cost: null,
  usage_estimated: false,
  depth: 0,
  execution_order: 0,
  ...over,
});

/** A trace of two spans: a chain and the model call under it. */
export const skeleton: Fixture<'skeleton'> = {
  root_trace_id: ROOT_ID,
  spans: [
    skeletonSpan({}),
    skeletonSpan({
      trace_id: CHILD_ID,
      trace_name: 'call-model',
      kind: 'llm',
      start_timestamp: '2026-03-02 09:00:01',
      latency: 1,
      input_tokens: 80,
      output_tokens: 40,
      total_tokens: 120,
      cost: 0.0009,
      depth: 1,
      execution_order: 1,
    }),
  ],
};

/** One span with its payload, as `GET /span/{id}` answers. */
export const span = (traceId: string, over: Record<string, unknown> = {}): Fixture<'span'> => ({
  trace_id: traceId,
  root_trace_id: ROOT_ID,
  parent_trace_id: ROOT_ID,
  trace_name: traceId === ROOT_ID ? 'answer-question' : 'call-model',
  project_uuid: PROJECT_UUID,
  project_name: 'support-bot',
  start_timestamp: '2026-03-02 09:00:00',
  end_timestamp: '2026-03-02 09:00:02',
  status: 'success',
  depth: traceId === ROOT_ID ? 0 : 1,
  execution_order: traceId === ROOT_ID ? 0 : 1,
  latency: 2,
  total_tokens: null,
  cost: null,
  scores: [],
  feedback_score: null,
  inputs: { question: 'How do refunds work?' },
  output: 'Refunds are paid within 30 days.',
  ...over,
});

export const dashboard = (over: Partial<Fixture<'dashboard'>['totals']> = {}): Fixture<'dashboard'> => ({
  from: '2026-02-23T10:00:00.000Z',
  to: '2026-03-02T10:00:00.000Z',
  bucket_seconds: 86_400,
  totals: {
    traces: 4321,
    errors: 43,
    latency_p50: 0.8,
    latency_p95: 2.5,
    latency_p99: 4,
    input_tokens: 10_000,
    output_tokens: 2_500,
    cost: 12.5,
    error_rate: 0.01,
    ...over,
  },
  buckets: [
    {
      start: '2026-03-01T00:00:00.000Z',
      traces: 4321,
      errors: 43,
      latency_p50: 0.8,
      latency_p95: 2.5,
      latency_p99: 4,
      input_tokens: 10_000,
      output_tokens: 2_500,
      cost: 12.5,
    },
  ],
  cost_by_model: [
    { model: 'gpt-4o-mini', calls: 4000, cost: 2.5 },
    { model: 'claude-sonnet', calls: 321, cost: 10 },
  ],
  cost_by_model_buckets: [
    { start: '2026-03-01T00:00:00.000Z', model: 'claude-sonnet', calls: 321, cost: 10 },
    { start: '2026-03-01T00:00:00.000Z', model: 'gpt-4o-mini', calls: 4000, cost: 2.5 },
  ],
  scores: [],
  feedback: [],
  latency_approximate: false,
});

/** The dashboard of a window without traces. */
export const emptyDashboard: Fixture<'dashboard'> = {
  ...dashboard({
    traces: 0,
    errors: 0,
    latency_p50: null,
    latency_p95: null,
    latency_p99: null,
    input_tokens: 0,
    output_tokens: 0,
    cost: 0,
    error_rate: null,
  }),
  buckets: [],
  cost_by_model: [],
  cost_by_model_buckets: [],
};

type Group = ItemOf<Fixture<'traceGroups'>['results']>;
export const group = (over: Partial<Group> = {}): Group => ({
  key: 'session-42',
  traces: 3,
  first_start: T0,
  last_start: T1,
  errors: 1,
  latency_avg: 1.5,
  cost: 0.004,
  feedback_mean: 0.5,
  ...over,
});

export const conversation: Fixture<'traceGroup'> = {
  key: 'session-42',
  traces: [
    {
      trace_id: 'c0000000-0000-4000-8000-000000000001',
      start_timestamp: T0,
      inputs: { question: 'Where is my order?' },
      output: 'It ships tomorrow.',
    },
    {
      trace_id: 'c0000000-0000-4000-8000-000000000002',
      start_timestamp: T1,
      inputs: { question: 'Can I change the address?' },
      output: 'Yes, until it ships.',
    },
  ],
};

export const EXPERIMENT_A = 'd0000000-0000-4000-8000-00000000000a';
export const EXPERIMENT_B = 'd0000000-0000-4000-8000-00000000000b';

type Experiment = ItemOf<Fixture<'experiments'>['results']>;
export const experiment = (over: Partial<Experiment> = {}): Experiment => ({
  uuid: EXPERIMENT_A,
  name: 'refund-answers',
  project_uuid: PROJECT_UUID,
  run_name: 'baseline-run',
  is_public: false,
  metadata: { model: 'gpt-4o' },
  created_at: T0,
  status: 'completed',
  num_samples: 12,
  samples: 12,
  pinned_stats: [],
  ...over,
});

type Sample = ItemOf<Fixture<'samples'>['results']>;
export const sample = (over: Partial<Sample> = {}): Sample => ({
  ...traceRow({ trace_id: 'e0000000-0000-4000-8000-000000000001' }),
  inputs: { question: 'How do refunds work?' },
  target: 'Within 30 days',
  output: 'Refunds are paid within 30 days.',
  output_truncated: false,
  scores: [{ name: 'accuracy', score: 0.9 }],
  ...over,
});

export const samplePage = (results: Sample[], over: Partial<Fixture<'samples'>> = {}): Fixture<'samples'> => ({
  total: results.length,
  page: 1,
  total_pages: results.length ? 1 : 0,
  page_size: 50,
  summary: results.length
    ? [
        {
          name: 'accuracy',
          count: results.length,
          mean: 0.85,
          median: 0.9,
          standard_deviation: 0.07,
          min: 0.8,
          max: 0.9,
        },
      ]
    : [],
  results,
  ...over,
});

/** Two runs compared on one score, B against the baseline A. */
export const comparison = (baseline = EXPERIMENT_A): Fixture<'compare'> => {
  const other = baseline === EXPERIMENT_A ? EXPERIMENT_B : EXPERIMENT_A;
  return {
    baseline_uuid: baseline,
    test: 'wilcoxon_signed_rank',
    alpha: 0.05,
    experiments: [
      { uuid: EXPERIMENT_A, name: 'refund-answers', run_name: 'baseline-run', status: 'completed', samples: 12 },
      { uuid: EXPERIMENT_B, name: 'refund-answers', run_name: 'new-prompt', status: 'completed', samples: 12 },
    ],
    cases: { total: 12, in_all: 12, repeated: 0, missing: [] },
    metrics: [
      {
        name: 'accuracy',
        kind: 'score',
        better: 'higher',
        runs: [
          { uuid: EXPERIMENT_A, mean: 0.7, n: 12 },
          { uuid: EXPERIMENT_B, mean: 0.9, n: 12 },
        ],
        comparisons: [
          {
            uuid: other,
            pairs: 12,
            mean_difference: baseline === EXPERIMENT_A ? 0.2 : -0.2,
            ci_low: 0.1,
            ci_high: 0.3,
            p_value: 0.01,
            significant: true,
            improved: 8,
            regressed: 1,
            unchanged: 3,
          },
        ],
      },
    ],
  };
};

export const compareRows = (over: Partial<Fixture<'compareRows'>> = {}): Fixture<'compareRows'> => ({
  total: 12,
  page: 1,
  page_size: 20,
  rows: [
    {
      key: 'case-1',
      inputs: { question: 'How do refunds work?' },
      target: 'Within 30 days',
      runs: [
        {
          trace_id: 'f0000000-0000-4000-8000-00000000000a',
          output: 'Refunds take a while.',
          output_truncated: false,
          scores: { accuracy: 0.5 },
          latency: 1.2,
          cost: 0.001,
          status: 'success',
        },
        null,
      ],
    },
  ],
  ...over,
});

type Dataset = ItemOf<Fixture<'datasets'>['results']>;
export const dataset = (over: Partial<Dataset> = {}): Dataset => ({
  id: 7,
  name: 'refund-questions',
  column_names: ['question'],
  created_at: T0,
  last_updated_at: T1,
  test_case_count: 2,
  ...over,
});

type TestCase = ItemOf<Fixture<'testCases'>['results']>;
export const testCase = (id: number, question: string): TestCase => ({
  id,
  inputs: { question },
  target: `answer ${id}`,
  tags: id === 1 ? ['smoke'] : [],
  created_at: T0,
});

type PromptVersion = ItemOf<Fixture<'prompts'>>;
export const promptVersion = (over: Partial<PromptVersion> = {}): PromptVersion => ({
  id: 1,
  name: 'support-bot',
  version_number: 1,
  messages: [
    { role: 'system', content: 'You are a support agent.' },
    { role: 'user', content: '{{question}}' },
  ],
  model: 'gpt-4o-mini',
  provider: 'openai',
  model_params: null,
  functions: null,
  function_call: null,
  created_at: T0,
  ...over,
});

export const deployment = (version: PromptVersion, id = 'production'): ItemOf<Fixture<'deployments'>> => ({
  deployment_id: id,
  updated_at: T1,
  prompt_version: version,
});

export const evalMetric = (over: Partial<ItemOf<Fixture<'evalMetrics'>>> = {}): ItemOf<Fixture<'evalMetrics'>> => ({
  id: 1,
  name: 'exact-answer',
  type: 'exact_match',
  config: { case_sensitive: true },
  version: 1,
  created_at: T0,
  updated_at: T0,
  ...over,
});

export const apiKey = (over: Partial<ItemOf<Fixture<'apiKeys'>>> = {}): ItemOf<Fixture<'apiKeys'>> => ({
  id: KEY_ID,
  label: 'ada@example.com',
  role: 'admin',
  api_key: 'abcd',
  created_at: T0,
  last_used_at: T1,
  created_by: null,
  ...over,
});

export const providerKey: ItemOf<Fixture<'providerKeys'>> = {
  provider: 'openai',
  api_key: 'wxyz',
  base_url: null,
  max_concurrent: null,
  rpm: null,
  tpm: null,
  updated_at: T0,
};

type AuditEntry = ItemOf<Fixture<'auditLog'>['entries']>;
/** An eval rule disabled by the admin: what `GET /audit-log` answers for one change. */
export const auditEntry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: 'c0000000-0000-4000-8000-000000000001',
  at: T1,
  actor: { key_id: null, user_id: ADA_ID, label: 'ada@example.com', role: 'admin' },
  action: 'update',
  target: { kind: 'eval_rule', id: 'd0000000-0000-4000-8000-000000000001', name: 'helpfulness-live' },
  before: { name: 'helpfulness-live', enabled: true, sample_rate: 0.5 },
  after: { name: 'helpfulness-live', enabled: false, sample_rate: 0.5 },
  ...over,
});

export const criterion: ItemOf<Fixture<'criteria'>> = {
  id: '99999999-8888-4777-8666-555555555555',
  name: 'helpfulness',
  kind: 'score',
  description: 'How much the answer helps',
  min: 1,
  max: 5,
  eval_metric_name: null,
  options: null,
  created_at: T0,
};

export const RULE_ID = 'a1000000-0000-4000-8000-000000000001';
export const BACKFILL_ID = 'a2000000-0000-4000-8000-000000000001';

type Backfill = ItemOf<Fixture<'evalRules'>[number]['backfills']>;
export const evalBackfill = (over: Partial<Backfill> = {}): Backfill => ({
  id: BACKFILL_ID,
  status: 'running',
  from: '2026-03-01 10:00:00',
  to: '2026-03-02 10:00:00',
  total: 200,
  done: 50,
  cost: 0.12,
  created_at: '2026-03-02 10:00:00',
  finished_at: null,
  ...over,
});

/** A rule scoring every root of the project with one metric, enabled, without backfills. */
export const evalRule = (over: Partial<ItemOf<Fixture<'evalRules'>>> = {}): ItemOf<Fixture<'evalRules'>> => ({
  id: RULE_ID,
  project_uuid: PROJECT_UUID,
  name: 'answers-exact',
  metric_names: ['exact-answer'],
  sample_rate: 1,
  filters: [],
  target: { kind: 'root' },
  settle_seconds: 10,
  daily_cost_limit: null,
  reevaluate_on_update: false,
  enabled: true,
  annotation_queue: null,
  created_at: '2026-03-01 09:00:00',
  updated_at: '2026-03-01 09:00:00',
  cost_today: 0,
  paused_until: null,
  runs: { done: 0, queued: 0 },
  backfills: [],
  ...over,
});

export const evalRulePreview = (over: Partial<Fixture<'previewEvalRule'>> = {}): Fixture<'previewEvalRule'> => ({
  matching_24h: 1200,
  sampled_24h: 300,
  example_trace_id: ROOT_ID,
  judge_metrics: [],
  estimated_daily_cost: 0,
  ...over,
});

/** `GET /trace_log/{id}` of a trace of one span, with what a metric scores: output, target, inputs. */
export const traceTree = (over: Record<string, unknown> = {}): Fixture<'traceLog'> => ({
  trace_id: ROOT_ID,
  root_trace_id: ROOT_ID,
  parent_trace_id: ROOT_ID,
  trace_name: 'answer-question',
  project_uuid: PROJECT_UUID,
  project_name: 'support-bot',
  start_timestamp: '2026-03-02 09:00:00',
  end_timestamp: '2026-03-02 09:00:02',
  status: 'success',
  depth: 0,
  execution_order: 0,
  latency: 2,
  total_tokens: null,
  cost: null,
  scores: [],
  feedback_score: null,
  children_ids: [],
  children: [],
  inputs: { question: 'How do refunds work?' },
  output: 'Within 30 days.',
  target: 'Within 30 days.',
  ...over,
});

// Annotation queues, and the criteria their reviewers fill in.
type Criterion = ItemOf<Fixture<'criteria'>>;

export const QUEUE_ID = 'a3000000-0000-4000-8000-000000000001';
export const OTHER_QUEUE_ID = 'a3000000-0000-4000-8000-000000000002';

export const helpfulness: Criterion = {
  id: 'c1000000-0000-4000-8000-000000000001',
  name: 'helpfulness',
  kind: 'score',
  description: 'How much the answer helps',
  min: 1,
  max: 5,
  options: null,
  eval_metric_name: null,
  created_at: '2026-03-01T09:00:00.000Z',
};

export const tone: Criterion = {
  ...helpfulness,
  id: 'c1000000-0000-4000-8000-000000000002',
  name: 'tone',
  kind: 'value',
  description: null,
  min: null,
  max: null,
  options: ['friendly', 'neutral', 'rude'],
};

/** A queue of ten items, three of them finished, with both criteria. */
export const queue = (over: Partial<Fixture<'queue'>> = {}): Fixture<'queue'> => ({
  id: QUEUE_ID,
  project_uuid: PROJECT_UUID,
  name: 'refund-answers',
  criterion_ids: [helpfulness.id, tone.id],
  instructions: 'Is the refund policy stated correctly?',
  created_at: '2026-03-01 09:00:00',
  updated_at: '2026-03-01 09:00:00',
  counts: { pending: 6, in_review: 1, done: 2, skipped: 1 },
  reviewers: [{ reviewer: 'ada@example.com', done: 2, skipped: 1 }],
  ...over,
});

// Monitors.
export const MONITOR_ID = 'a4000000-0000-4000-8000-000000000001';

/** An error-rate monitor above 5% over 15 minutes, firing, telling one webhook. */
export const monitor = (over: Partial<Fixture<'createMonitor'>> = {}): Fixture<'createMonitor'> => ({
  id: MONITOR_ID,
  project_uuid: PROJECT_UUID,
  name: 'refund errors',
  metric: 'error_rate',
  score_name: null,
  filters: [{ field: 'trace_name', key: null, operator: 'equals', value: 'refund' }],
  window_minutes: 15,
  condition: { above: 0.05 },
  min_samples: 10,
  channels: [{ kind: 'webhook', url: 'https://hooks.example.com/sightline', secret_set: true }],
  enabled: true,
  state: 'firing',
  last_value: 0.125,
  last_evaluated_at: '2026-03-02 10:29:00',
  created_at: '2026-03-01 09:00:00',
  updated_at: '2026-03-01 09:00:00',
  ...over,
});

/** The hourly points of the last 24 hours ending 2026-03-02 10:00: `values[i]` from 20 traces each. */
export const monitorSeries = (values: (number | null)[]) =>
  values.map((value, i) => ({
    at: new Date(Date.UTC(2026, 2, 1, 11 + i)).toISOString(),
    value,
    samples: value === null ? 0 : 20,
  }));

/** The monitor's detail: one change (to firing) told once to its webhook. */
export const monitorDetail = (over: Partial<Fixture<'monitor'>> = {}): Fixture<'monitor'> => ({
  ...monitor(),
  history: [{ at: '2026-03-02 10:20:00', state: 'firing', previous_state: 'ok', value: 0.125 }],
  deliveries: [
    {
      id: 'a5000000-0000-4000-8000-000000000001',
      channel: 'webhook',
      url: 'https://hooks.example.com/sightline',
      state: 'firing',
      status: 'delivered',
      attempts: [
        { at: '2026-03-02 10:20:01', status_code: 500, error: 'answered 500', duration_ms: 40 },
        { at: '2026-03-02 10:20:05', status_code: 204, error: null, duration_ms: 35 },
      ],
      created_at: '2026-03-02 10:20:00',
    },
  ],
  series: monitorSeries(Array.from({ length: 24 }, (_, i) => (i < 20 ? 0.02 : 0.125))),
  ...over,
});

export const BUDGET_ID = 'e0000000-0000-4000-8000-0000000000b1';
export const budget = (over: Partial<Fixture<'createBudget'>> = {}): Fixture<'createBudget'> => ({
  id: BUDGET_ID,
  scope: { kind: 'project', project_name: 'demo' },
  limit_usd: 5,
  period: 'day',
  action: 'block',
  alert_at: [0.5, 0.8, 1],
  channels: [{ kind: 'webhook', url: 'https://hooks.example.com/budgets', secret_set: true }],
  spent_usd: 4.1,
  reserved_usd: 0.02,
  remaining_usd: 0.9,
  period_started_at: '2026-03-02T00:00:00.000Z',
  period_ends_at: '2026-03-03T00:00:00.000Z',
  alerts: [
    {
      share: 0.5,
      at: '2026-03-02 10:00:00',
      deliveries: [{ channel_kind: 'webhook', status: 'delivered', attempts: 1 }],
    },
    {
      share: 0.8,
      at: '2026-03-02 15:30:00',
      deliveries: [{ channel_kind: 'webhook', status: 'pending', attempts: 2 }],
    },
  ],
  created_at: '2026-03-01 09:00:00',
  updated_at: '2026-03-01 09:00:00',
  ...over,
});

// People and invitations.
type Person = ItemOf<Fixture<'users'>>;
/** Ada, the admin signed in as `admin`. */
export const ada: Person = {
  id: ADA_ID,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  role: 'admin',
  created_at: T0,
  last_seen_at: T1,
};
export const GRACE_ID = '41111111-2222-4333-8444-555555555555';
export const grace: Person = {
  id: GRACE_ID,
  email: 'grace@example.com',
  name: 'Grace Hopper',
  role: 'member',
  created_at: T0,
  last_seen_at: null,
};

export const INVITATION_ID = '51111111-2222-4333-8444-555555555555';
export const invitation = (over: Partial<ItemOf<Fixture<'invitations'>>> = {}): ItemOf<Fixture<'invitations'>> => ({
  id: INVITATION_ID,
  email: 'alan@example.com',
  role: 'viewer',
  invited_by: { id: ADA_ID, email: 'ada@example.com', name: 'Ada Lovelace' },
  created_at: T0,
  expires_at: '2026-03-09T09:00:00.000Z',
  ...over,
});
