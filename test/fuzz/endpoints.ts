// Every endpoint of the API with valid requests to start from: the fuzzer mutates these. Valid bodies name
// the fuzzing organization's own "target" rows (which a valid fuzzed request may legitimately change).
import { randomUUID } from 'node:crypto';

export type Targets = {
  projectName: string;
  projectUuid: string;
  rootTraceId: string;
  /** Span ids that valid fuzzed writes keep overwriting, so that the tables stay small. */
  spanId: string;
  batchIds: [string, string];
  chainIds: [string, string];
  completionTraceId: string;
  experimentUuid: string;
  datasetId: number;
  datasetName: string;
  /** A dataset of the fuzzer's that the fuzzed DELETE may remove. */
  spareDatasetId: number;
  testCaseId: number;
  promptName: string;
  promptVersionId: number;
  deploymentId: string;
  provider: string;
  providerBaseUrl: string;
  evalMetricId: number;
  /** A member key of the fuzzing organization, which the fuzzed DELETE may revoke. */
  apiKeyId: string;
  criterionId: string;
  /** A comment of the fuzzer's on the target root, which the fuzzed DELETE may remove. */
  commentId: string;
  evalMetricName: string;
  /** A disabled rule with one backfill, and a queue holding the target root, leased to the fuzzer. */
  evalRuleId: string;
  backfillId: string;
  queueId: string;
  queueItemId: number;
  /** A monitor of the target project, without channels. */
  monitorId: string;
  /** An alert-only budget of the target project. */
  budgetId: string;
  /** A member of the fuzzing organization (whom the fuzzed DELETE may remove), and a pending invitation. */
  userId: string;
  invitationId: string;
};

export type Endpoint = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to /api/svc/v1 unless `root`; `:name` marks a path parameter. */
  path: string;
  root?: boolean;
  params?: Record<string, string>;
  query?: string;
  /** Valid bodies to start from; absent for endpoints that take none. */
  bodies?: unknown[];
};

export const endpointName = (e: Endpoint) => `${e.method} ${e.root ? '' : '/api/svc/v1'}${e.path}`;

const message = (content: string, role = 'user') => ({ role, content });

/** An OTLP/JSON export of a root and an LLM child, its ids derived from the fuzzer's target span. */
function otlpTrace(t: Targets) {
  const traceId = t.spanId.replaceAll('-', '').split('').reverse().join('');
  const kv = (key: string, value: Record<string, unknown>) => ({ key, value });
  const span = (spanId: string, more: Record<string, unknown>) => ({
    traceId,
    spanId,
    name: 'otel',
    kind: 1,
    startTimeUnixNano: '1767225600000000000',
    endTimeUnixNano: '1767225601000000000',
    ...more,
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', { stringValue: t.projectName })] },
        scopeSpans: [
          {
            scope: { name: 'fuzz', version: '1' },
            spans: [
              span('1111111111111111', { attributes: [kv('session.id', { stringValue: 's' })] }),
              span('2222222222222222', {
                parentSpanId: '1111111111111111',
                attributes: [
                  kv('gen_ai.request.model', { stringValue: 'gpt-4o-mini' }),
                  kv('gen_ai.usage.input_tokens', { intValue: '10' }),
                  kv('gen_ai.input.messages', {
                    stringValue: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]),
                  }),
                  kv('tag.tags', { arrayValue: { values: [{ stringValue: 'a' }] } }),
                ],
                events: [
                  {
                    name: 'exception',
                    timeUnixNano: '1767225600500000000',
                    attributes: [kv('exception.type', { stringValue: 'E' })],
                  },
                ],
                status: { code: 2, message: 'boom' },
              }),
            ],
          },
        ],
      },
    ],
  };
}
const METRIC_NAMES = [
  'fuzz-levenshtein',
  'fuzz-exact',
  'fuzz-contains',
  'fuzz-regex',
  'fuzz-json',
  'fuzz-schema',
  'fuzz-judge',
];

export function endpoints(t: Targets): Endpoint[] {
  const span = {
    trace_id: t.spanId,
    root_trace_id: t.rootTraceId,
    parent_trace_id: t.rootTraceId,
    project_name: t.projectName,
    trace_name: 'fuzzed',
    inputs: { question: 'q', n: 1 },
    output: 'out',
    target: 'gold',
    start_timestamp: '2026-01-02 03:04:05',
    end_timestamp: '2026-01-02T03:04:06.123456Z',
    status: 'success',
    error: 'none',
    configuration: { model: 'gpt-4o-mini', messages: [message('hi')] },
    metadata: { team: 'fuzz', nested: { a: [1, 2] } },
    tags: ['a', 'b'],
    depth: 1,
    execution_order: 1,
    time_to_first_token: 0.1,
    latency: 0.5,
    input_tokens: 3,
    output_tokens: 4,
    total_tokens: 7,
    cost: 0.001,
    output_for_eval_metrics: 'out',
    // The metrics POST /eval-metrics creates from fuzzed bodies, and one that never exists: the worker
    // evaluates fuzzed spans with fuzzed metrics.
    evaluation_metric_names: ['fuzz-no-such-metric', ...METRIC_NAMES],
    scores: [{ name: 'acc', score: 0.5, reason: 'why' }],
    feedback_score: 0.5,
    apply_eval_frac: 1,
    log_sample_rate: 1,
    deployment_id: t.deploymentId,
    cache_hit: false,
    end_user_identifier: 'user-1',
    session_id: 'session-1',
    experiment_uuid: t.experimentUuid,
    images: [{ url: 'https://example.com/a.png', caption: 'a' }],
    comments: [{ comment: 'c', user_id: 'u', created_at: '2026-01-01' }],
    annotations: {
      crit: {
        u1: {
          created_at: '2026-01-01',
          user_id: 'u1',
          score: 1,
          value: 'good',
          annotation_name: 'n',
          user_email_address: 'u@x',
        },
      },
    },
    children: [],
  };
  const completion = {
    llm_configuration: {
      provider: 'openai',
      model: 'gpt-4o-mini',
      messages: [message('be brief', 'system'), message('hi {{name}}')],
      model_params: {
        temp: 0.5,
        max_length: 50,
        top_p: 1,
        frequency_penalty: 0,
        presence_penalty: 0,
        response_format: { type: 'text' },
      },
      functions: [
        { name: 'f', description: 'd', parameters: { type: 'object', properties: { a: { type: 'string' } } } },
      ],
      function_call: 'auto',
    },
    inputs: { name: 'x' },
    project_name: t.projectName,
    experiment_uuid: t.experimentUuid,
    parent_trace_id: t.rootTraceId,
    root_trace_id: t.rootTraceId,
    trace_id: t.completionTraceId,
    end_user_identifier: 'user-1',
    metadata: { k: 'v' },
    tags: ['t'],
    target: 'gold',
    trace_name: 'fuzz-completion',
    provider_api_key: 'sk-fuzz-request-key',
    cache: false,
    log_omit_inputs: false,
    log_omit_outputs: false,
    log_sample_rate: 1,
    eval_metric_ids: [t.evalMetricId],
  };
  const deployed = {
    deployment_id: t.deploymentId,
    inputs: { word: 'w' },
    project_uuid: t.projectUuid,
    trace_id: t.completionTraceId,
    log_omit: true,
  };
  const run = {
    id: t.chainIds[0],
    name: 'chain',
    run_type: 'chain',
    start_time: 1767225600000,
    end_time: '2026-01-01T00:00:03Z',
    inputs: { input: 'q' },
    outputs: { output: 'a' },
    extra: { metadata: { m: 1 } },
    tags: ['x'],
    project_name: t.projectName,
    child_runs: [
      {
        id: t.chainIds[1],
        name: 'llm',
        run_type: 'llm',
        parent_run_id: t.chainIds[0],
        start_time: 1767225601000,
        end_time: 1767225602000,
        execution_order: 2,
        inputs: { messages: [] },
        outputs: {
          generations: [[{ text: 'g' }]],
          llm_output: { token_usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
        },
        extra: { invocation_params: { model: 'gpt-4o-mini', _type: 'openai-chat', temperature: 0.2 } },
        error: null,
        child_runs: [],
      },
    ],
  };
  const filter = { filter_field: 'metadata', filter_key: 'team', filter_operator: 'equals', filter_value: 'fuzz' };
  const cases = [{ inputs: { q: 'one', r: 'two' }, tags: ['t'], target: 'gold' }];

  return [
    { method: 'GET', path: '/' },
    { method: 'POST', path: '/completion', bodies: [completion, deployed] },
    { method: 'POST', path: '/completion/stream', bodies: [completion, deployed] },
    {
      method: 'POST',
      path: '/deployed-prompt',
      bodies: [
        { deployment_id: t.deploymentId, llm_inputs: { word: 'w' } },
        { deployment_id: t.deploymentId, inputs: { word: 'w' } },
      ],
    },
    {
      method: 'POST',
      path: '/feedback',
      bodies: [
        { trace_id: t.spanId, score: 0.5, name: 'n', comment: 'c', target: 't' },
        { inference_id: t.spanId, score: 1 },
      ],
    },
    {
      method: 'POST',
      path: '/trace_log',
      bodies: [span, { trace_id: t.rootTraceId, project_uuid: t.projectUuid, trace_name: 'root' }],
    },
    {
      method: 'POST',
      path: '/trace_logs/batch',
      bodies: [
        {
          trace_logs: [
            { ...span, trace_id: t.batchIds[0] },
            { trace_id: t.batchIds[1], project_uuid: t.projectUuid, output: 'o' },
          ],
        },
      ],
    },
    {
      method: 'PUT',
      path: '/trace_log',
      bodies: [
        {
          trace_id: t.spanId,
          root_trace_id: t.rootTraceId,
          field_name_to_value_map: {
            output: 'o2',
            status: 'error',
            error: 'e',
            metadata: { k: 1 },
            tags: ['u'],
            latency: 2,
            end_timestamp: '2026-01-02 03:04:07',
            scores: [{ name: 'acc', score: 1 }],
          },
        },
      ],
    },
    { method: 'GET', path: '/trace_log/:trace_id', params: { trace_id: t.rootTraceId } },
    {
      method: 'POST',
      path: '/get_trace_logs',
      bodies: [
        { project_name: t.projectName, ...filter, page: 1, page_size: 10, time_range: 'na', status: 'success' },
        {
          filter_field: 'score:acc',
          filter_operator: 'between',
          filter_value: '0,1',
          time_range: '1y',
          page: 2,
          page_size: 1,
        },
        {
          project_name: t.projectName,
          filters: [
            { field: 'metadata', key: 'k', operator: 'equals', value: '1' },
            { field: 'latency', operator: 'between', value: '0,5' },
          ],
          include_experiments: false,
        },
      ],
    },
    { method: 'POST', path: '/trace_log/chainlib', bodies: [run] },
    { method: 'POST', path: '/trace_log/langchain', bodies: [run] },
    { method: 'POST', path: '/project', bodies: [{ name: t.projectName }] },
    {
      method: 'POST',
      path: '/experiment',
      bodies: [
        { name: 'fuzz', project_uuid: t.projectUuid, run_name: 'fuzz-run', is_public: true, metadata: { k: 'v' } },
        { name: 'fuzz', project_uuid: t.projectUuid },
      ],
    },
    {
      method: 'POST',
      path: '/experiments',
      bodies: [
        {
          project_name: t.projectName,
          metadata_filter: { k: 'v' },
          experiment_name_filter: 'fu',
          run_name_filter: 'run',
          experiment_uuids: [t.experimentUuid],
        },
      ],
    },
    { method: 'GET', path: '/experiment/:experiment_uuid/stats', params: { experiment_uuid: t.experimentUuid } },
    {
      method: 'POST',
      path: '/experiment/:experiment_uuid/finished',
      params: { experiment_uuid: t.experimentUuid },
      bodies: [
        { status: 'completed', dataset_level_stats: [{ name: 'corr', score: 0.5 }], metadata: { k: 'v' } },
        null,
      ],
    },
    {
      method: 'POST',
      path: '/experiment/:experiment_uuid/trace_logs',
      params: { experiment_uuid: t.experimentUuid },
      bodies: [filter, {}],
    },
    {
      method: 'POST',
      path: '/collection',
      bodies: [{ name: `fuzz-collection-${randomUUID()}`, column_names: ['q', 'r'], test_cases: cases }],
    },
    {
      method: 'GET',
      path: '/collection/:test_collection_identifier',
      params: { test_collection_identifier: String(t.datasetId) },
    },
    {
      method: 'POST',
      path: '/testcases',
      bodies: [
        { name: t.datasetName, test_cases: cases },
        { id: t.datasetId, test_cases: cases },
      ],
    },
    {
      method: 'POST',
      path: '/update_test_case/:dataset_id/:test_case_id',
      params: { dataset_id: String(t.datasetId), test_case_id: String(t.testCaseId) },
      bodies: [{ inputs: { q: 'new' }, target: 'gold', tags: ['x'] }],
    },
    {
      method: 'POST',
      path: '/experiments/summaries',
      bodies: [{ project_uuid: t.projectUuid, experiment_name_filter: 'fuzz', metadata_filter: { a: 1 } }],
    },
    {
      method: 'POST',
      path: '/experiment/:experiment_uuid/samples',
      params: { experiment_uuid: t.experimentUuid },
      bodies: [
        {
          page: 1,
          page_size: 10,
          filter_field: 'score:accuracy',
          filter_operator: 'greater_than',
          filter_value: '0.5',
        },
      ],
    },
    {
      method: 'POST',
      path: '/experiments/compare',
      bodies: [{ experiment_uuids: [t.experimentUuid, randomUUID()], baseline_uuid: t.experimentUuid }],
    },
    {
      method: 'POST',
      path: '/experiments/compare/rows',
      bodies: [
        { experiment_uuids: [t.experimentUuid, randomUUID()], baseline_uuid: t.experimentUuid, page: 1, page_size: 50 },
        {
          experiment_uuids: [t.experimentUuid, '00000000-0000-4000-8000-00000000c0de'],
          baseline_uuid: '00000000-0000-4000-8000-00000000c0de',
          outcome: { run_uuid: t.experimentUuid, kind: 'score', metric: 'accuracy', change: 'improved' },
          trace_id: t.rootTraceId,
        },
      ],
    },
    {
      method: 'POST',
      path: '/eval-metrics/try',
      bodies: [{ metric: { name: 'fuzz', type: 'contains', config: { value: 'x' } }, output: 'xyz', target: null }],
    },
    { method: 'GET', path: '/datasets' },
    {
      method: 'GET',
      path: '/datasets/:dataset_id/test_cases',
      params: { dataset_id: String(t.datasetId) },
      query: '?page=1&page_size=10',
    },
    {
      method: 'PATCH',
      path: '/datasets/:dataset_id',
      params: { dataset_id: String(t.datasetId) },
      bodies: [{ name: t.datasetName }],
    },
    {
      method: 'GET',
      path: '/datasets/:dataset_id/export',
      params: { dataset_id: String(t.datasetId) },
      query: '?format=csv',
    },
    {
      method: 'POST',
      path: '/datasets/:dataset_id/import',
      params: { dataset_id: String(t.datasetId) },
      bodies: [
        { format: 'csv', content: 'q,r,target,tags\none,two,gold,"[""t""]"\n' },
        { format: 'jsonl', content: JSON.stringify(cases[0]) },
      ],
    },
    {
      method: 'DELETE',
      path: '/datasets/:dataset_id/test_cases/:test_case_id',
      params: { dataset_id: String(t.datasetId), test_case_id: String(t.testCaseId) },
    },
    { method: 'DELETE', path: '/datasets/:dataset_id', params: { dataset_id: String(t.spareDatasetId) } },
    {
      method: 'POST',
      path: '/prompts',
      // Versions go under a name of their own, so that GET /prompts?name= of the target stays short.
      bodies: [
        {
          name: `${t.promptName}-fuzzed`,
          messages: [message('say {{word}}')],
          model: 'gpt-4o-mini',
          provider: 'openai',
          model_params: { temp: 1 },
          functions: completion.llm_configuration.functions,
          function_call: 'auto',
        },
      ],
    },
    { method: 'GET', path: '/prompts', query: `?name=${encodeURIComponent(t.promptName)}` },
    {
      method: 'POST',
      path: '/deployments',
      bodies: [{ prompt_version_id: t.promptVersionId, deployment_id: t.deploymentId }],
    },
    { method: 'GET', path: '/deployments' },
    { method: 'GET', path: '/deployments/:deployment_id/history', params: { deployment_id: t.deploymentId } },
    {
      method: 'POST',
      path: '/provider-keys',
      bodies: [{ provider: t.provider, api_key: 'sk-fuzz-saved', base_url: t.providerBaseUrl }],
    },
    { method: 'GET', path: '/provider-keys' },
    { method: 'DELETE', path: '/provider-keys/:provider', params: { provider: t.provider } },
    {
      method: 'POST',
      path: '/routes',
      bodies: [
        {
          name: 'fuzz-route',
          strategy: 'loadbalance',
          targets: [{ provider: t.provider, model: 'gpt-4o-mini', weight: 2 }],
          retry_on: [429, 'timeout'],
        },
      ],
    },
    { method: 'GET', path: '/routes' },
    { method: 'DELETE', path: '/routes/:name', params: { name: 'fuzz-route' } },
    { method: 'GET', path: '/me' },
    { method: 'GET', path: '/projects' },
    {
      method: 'POST',
      path: '/dashboard',
      bodies: [
        { project_uuid: t.projectUuid, time_range: '24h' },
        { project_uuid: t.projectUuid, from: '2026-01-01T00:00:00Z', to: '2026-01-02 00:00:00' },
        {
          project_uuid: t.projectUuid,
          time_range: '7d',
          filters: [
            { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
            { field: 'latency', operator: 'greater_than', value: '1' },
          ],
          include_experiments: true,
        },
        { project_uuid: t.projectUuid, time_range: '24h', status: 'error', search: 'refund -"gift card"' },
      ],
    },
    {
      method: 'POST',
      path: '/trace-groups',
      bodies: [
        { project_uuid: t.projectUuid, by: 'session', time_range: '7d', page: 1, page_size: 10 },
        { project_uuid: t.projectUuid, by: 'user', search: 'some_one%', time_range: '24h' },
      ],
    },
    {
      method: 'POST',
      path: '/trace-group',
      bodies: [
        { project_uuid: t.projectUuid, by: 'user', key: 'someone' },
        { project_uuid: t.projectUuid, by: 'session', key: 'someone', time_range: '1h' },
      ],
    },
    { method: 'GET', path: '/annotation-criteria' },
    {
      method: 'POST',
      path: '/annotation-criteria',
      bodies: [{ name: 'fuzz-criterion', kind: 'value', description: 'd', options: ['good', 'bad'] }],
    },
    { method: 'DELETE', path: '/annotation-criteria/:id', params: { id: t.criterionId } },
    {
      method: 'PATCH',
      path: '/annotation-criteria/:id',
      params: { id: t.criterionId },
      bodies: [{ eval_metric_name: t.evalMetricName }, { eval_metric_name: null }],
    },
    {
      method: 'GET',
      path: '/annotation-criteria/:id/agreement',
      params: { id: t.criterionId },
      query: 'from=2026-01-01T00:00:00Z&to=2026-02-01',
    },
    { method: 'GET', path: '/eval-rules', query: `project_uuid=${t.projectUuid}` },
    {
      method: 'POST',
      path: '/eval-rules',
      bodies: [
        {
          name: 'fuzz-rule',
          project_uuid: t.projectUuid,
          metric_names: [t.evalMetricName],
          sample_rate: 0.5,
          filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
          target: { kind: 'span', span_name: 'retrieve' },
          settle_seconds: 5,
          daily_cost_limit: 1,
          reevaluate_on_update: true,
          enabled: false,
          annotation_queue: { queue_id: t.queueId, on_result: { metric_name: t.evalMetricName, below: 0.5 } },
        },
      ],
    },
    {
      method: 'POST',
      path: '/eval-rules/preview',
      bodies: [
        {
          project_uuid: t.projectUuid,
          metric_names: [t.evalMetricName],
          sample_rate: 0.5,
          filters: [{ field: 'status', operator: 'equals', value: 'success' }],
        },
      ],
    },
    { method: 'GET', path: '/eval-rules/:id', params: { id: t.evalRuleId } },
    {
      method: 'PATCH',
      path: '/eval-rules/:id',
      params: { id: t.evalRuleId },
      bodies: [{ sample_rate: 0.25, filters: [], target: { kind: 'root' }, enabled: false }],
    },
    { method: 'DELETE', path: '/eval-rules/:id', params: { id: t.evalRuleId } },
    {
      method: 'POST',
      path: '/eval-rules/:id/backfill',
      params: { id: t.evalRuleId },
      bodies: [{ from: '2026-01-01T00:00:00Z', to: '2026-01-02 00:00:00' }],
    },
    {
      method: 'POST',
      path: '/eval-rules/:id/backfills/:backfill_id/cancel',
      params: { id: t.evalRuleId, backfill_id: t.backfillId },
    },
    { method: 'GET', path: '/annotation-queues', query: `project_uuid=${t.projectUuid}` },
    {
      method: 'POST',
      path: '/annotation-queues',
      bodies: [{ name: 'fuzz-queue', project_uuid: t.projectUuid, criterion_ids: [t.criterionId], instructions: 'i' }],
    },
    { method: 'GET', path: '/annotation-queues/:id', params: { id: t.queueId } },
    {
      method: 'PATCH',
      path: '/annotation-queues/:id',
      params: { id: t.queueId },
      bodies: [{ name: 'fuzz-queue-renamed', instructions: 'j', criterion_ids: [] }],
    },
    { method: 'DELETE', path: '/annotation-queues/:id', params: { id: t.queueId } },
    {
      method: 'POST',
      path: '/annotation-queues/:id/items',
      params: { id: t.queueId },
      bodies: [
        { trace_ids: [t.rootTraceId] },
        { filters: [{ field: 'trace_name', operator: 'equals', value: 'target-root' }], sample_size: 2 },
      ],
    },
    { method: 'POST', path: '/annotation-queues/:id/next', params: { id: t.queueId } },
    { method: 'GET', path: '/monitors', query: `project_uuid=${t.projectUuid}` },
    {
      method: 'POST',
      path: '/monitors',
      bodies: [
        {
          name: 'fuzz-monitor',
          project_uuid: t.projectUuid,
          metric: 'score_mean',
          score_name: 'accuracy',
          filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
          window_minutes: 60,
          condition: { anomaly: { mads: 3 } },
          min_samples: 5,
          channels: [],
          enabled: true,
        },
      ],
    },
    {
      method: 'POST',
      path: '/monitors/preview',
      bodies: [{ project_uuid: t.projectUuid, metric: 'error_rate', window_minutes: 15, filters: [] }],
    },
    { method: 'GET', path: '/monitors/:id', params: { id: t.monitorId } },
    {
      method: 'PATCH',
      path: '/monitors/:id',
      params: { id: t.monitorId },
      bodies: [{ condition: { below: 0.5 }, window_minutes: 5, enabled: false }],
    },
    { method: 'DELETE', path: '/monitors/:id', params: { id: t.monitorId } },
    { method: 'GET', path: '/budgets' },
    {
      method: 'POST',
      path: '/budgets',
      bodies: [
        {
          scope: { kind: 'project', project_name: t.projectName },
          limit_usd: 100,
          period: 'month',
          action: 'alert',
          alert_at: [0.5, 1],
          channels: [],
        },
        {
          scope: { kind: 'end_user', end_user_identifier: 'fuzz-user' },
          limit_usd: 50,
          period: 'day',
          action: 'alert',
        },
      ],
    },
    {
      method: 'PATCH',
      path: '/budgets/:id',
      params: { id: t.budgetId },
      bodies: [{ limit_usd: 200, period: 'day', alert_at: [0.8] }],
    },
    { method: 'DELETE', path: '/budgets/:id', params: { id: t.budgetId } },
    ...(['lease', 'complete', 'skip'] as const).map((action): Endpoint => ({
      method: 'POST',
      path: `/annotation-queues/:id/items/:item_id/${action}`,
      params: { id: t.queueId, item_id: String(t.queueItemId) },
    })),
    {
      method: 'POST',
      path: '/trace_log/:trace_id/comments',
      params: { trace_id: t.rootTraceId },
      bodies: [{ comment: 'fuzzed' }],
    },
    {
      method: 'DELETE',
      path: '/trace_log/:trace_id/comments/:comment_id',
      params: { trace_id: t.rootTraceId, comment_id: t.commentId },
    },
    {
      method: 'PUT',
      path: '/trace_log/:trace_id/annotations/:criterion_id',
      params: { trace_id: t.rootTraceId, criterion_id: t.criterionId },
      bodies: [{ score: 0.5, value: 'v' }],
    },
    {
      method: 'DELETE',
      path: '/trace_log/:trace_id/annotations/:criterion_id',
      params: { trace_id: t.rootTraceId, criterion_id: t.criterionId },
    },
    {
      method: 'POST',
      path: '/traces',
      bodies: [
        {
          project_uuid: t.projectUuid,
          search: 'target "some phrase" or -not',
          filter_field: 'trace_name',
          filter_operator: 'equals',
          filter_value: 'target-root',
          time_range: '7d',
          status: 'success',
          page: 1,
          page_size: 5,
        },
        {
          project_uuid: t.projectUuid,
          filters: [
            { field: 'trace_name', operator: 'like', value: 'target' },
            { field: 'tags', operator: 'in', value: 'u,v' },
            { field: 'score:acc', operator: 'greater_than', value: 0 },
          ],
          include_experiments: true,
          sort: 'costliest',
        },
      ],
    },
    {
      method: 'POST',
      path: '/traces/count',
      bodies: [
        {
          project_uuid: t.projectUuid,
          search: 'target -not',
          filters: [{ field: 'metadata', key: 'k', operator: 'equals', value: 'v' }],
          status: 'error',
          time_range: '24h',
        },
      ],
    },
    {
      method: 'POST',
      path: '/traces/export',
      bodies: [
        {
          project_uuid: t.projectUuid,
          search: 'target -not',
          filters: [{ field: 'metadata', key: 'k', operator: 'equals', value: 'v' }],
          format: 'csv',
          shape: 'spans',
        },
        { project_uuid: t.projectUuid, format: 'parquet', export_id: '00000000-0000-4000-8000-000000000001' },
      ],
    },
    {
      method: 'GET',
      path: '/traces/export/:export_id',
      params: { export_id: '00000000-0000-4000-8000-000000000001' },
    },
    { method: 'GET', path: '/trace/:trace_id/skeleton', params: { trace_id: t.rootTraceId } },
    { method: 'GET', path: '/trace/:trace_id/search', params: { trace_id: t.rootTraceId }, query: '?text=100%25_x' },
    { method: 'GET', path: '/span/:trace_id', params: { trace_id: t.rootTraceId } },
    // Never a valid project: a valid request opens a stream that stays open, which a fuzzer cannot wait out.
    { method: 'GET', path: '/traces/live', query: '?project_uuid=not-a-uuid' },
    { method: 'GET', path: '/api-keys' },
    { method: 'GET', path: '/audit-log', query: '?limit=10&target_kind=dataset' },
    { method: 'POST', path: '/api-keys', bodies: [{ role: 'viewer', label: 'fuzz@example.com', service: true }] },
    { method: 'DELETE', path: '/api-keys/:id', params: { id: t.apiKeyId } },
    {
      method: 'POST',
      path: '/eval-metrics',
      bodies: [
        { name: 'fuzz-levenshtein', type: 'levenshtein', config: {} },
        { name: 'fuzz-exact', type: 'exact_match', config: { case_sensitive: true } },
        { name: 'fuzz-contains', type: 'contains', config: { value: 'x', case_sensitive: false } },
        { name: 'fuzz-regex', type: 'regex_match', config: { pattern: '^a+b$', flags: 'i' } },
        { name: 'fuzz-json', type: 'json_valid', config: null },
        {
          name: 'fuzz-schema',
          type: 'json_schema',
          config: { schema: { type: 'object', properties: { a: { type: 'string', pattern: '^x' } }, required: ['a'] } },
        },
        {
          name: 'fuzz-judge',
          type: 'llm_judge',
          config: {
            prompt_template: '{"score": 0.5} {{output}} {{target}} {{inputs.q}}',
            provider: 'openai',
            model: 'gpt-4o-mini',
            model_params: { temp: 0 },
            cache: true,
          },
        },
      ],
    },
    { method: 'GET', path: '/eval-metrics' },
    { method: 'GET', path: '/eval-metrics/:id', params: { id: String(t.evalMetricId) } },
    {
      method: 'PATCH',
      path: '/eval-metrics/:id',
      params: { id: String(t.evalMetricId) },
      bodies: [
        { type: 'exact_match', config: { case_sensitive: false } },
        { type: 'exact_match', config: null },
      ],
    },
    { method: 'GET', path: '/eval-metrics/:id/versions', params: { id: String(t.evalMetricId) } },
    { method: 'GET', path: '/span/:trace_id/eval-results', params: { trace_id: t.rootTraceId } },
    { method: 'DELETE', path: '/eval-metrics/:id', params: { id: String(t.evalMetricId) } },
    // OTLP: a trace of a root and a child, written over and over under the same ids.
    ...['/v1/traces', '/api/svc/v1/otel/v1/traces'].map((path): Endpoint => ({
      method: 'POST',
      path,
      root: true,
      bodies: [otlpTrace(t)],
    })),
    // People: invitations, members, and the routes a person signs in through.
    { method: 'POST', path: '/invitations', bodies: [{ email: 'fuzz-invited@example.com', role: 'viewer' }] },
    { method: 'GET', path: '/invitations' },
    { method: 'DELETE', path: '/invitations/:id', params: { id: t.invitationId } },
    { method: 'GET', path: '/users' },
    { method: 'PATCH', path: '/users/:id', params: { id: t.userId }, bodies: [{ role: 'viewer' }] },
    { method: 'DELETE', path: '/users/:id/sessions', params: { id: t.userId } },
    { method: 'DELETE', path: '/users/:id', params: { id: t.userId } },
    { method: 'GET', path: '/auth/options' },
    { method: 'GET', path: '/auth/invitation', query: '?token=fuzz-token-never-given' },
    {
      method: 'POST',
      path: '/auth/accept-invitation',
      bodies: [{ token: 'fuzz-token-never-given', name: 'Fuzz', password: 'a long enough password' }],
    },
    { method: 'POST', path: '/auth/login', bodies: [{ email: 'fuzz-nobody@example.com', password: 'not a password' }] },
    { method: 'POST', path: '/auth/key', bodies: [{ api_key: 'sl_fuzz-not-a-key' }] },
    { method: 'POST', path: '/auth/logout' },
    {
      method: 'POST',
      path: '/auth/bootstrap',
      bodies: [
        {
          email: 'fuzz-first@example.com',
          name: 'First',
          password: 'a long enough password',
          organization_name: 'fuzz',
        },
      ],
    },
    {
      method: 'POST',
      path: '/auth/password',
      bodies: [{ current_password: 'not a password', new_password: 'a long enough password' }],
    },
    { method: 'POST', path: '/auth/organization', bodies: [{ organization_id: t.projectUuid }] },
    // Single sign-on is not set up here (no OIDC_ISSUER): both answer its refusal, whatever they are sent.
    { method: 'GET', path: '/auth/oidc/start' },
    { method: 'GET', path: '/auth/oidc/callback', query: '?code=fuzz&state=fuzz' },
    { method: 'GET', path: '/healthz', root: true },
    { method: 'GET', path: '/readyz', root: true },
    { method: 'GET', path: '/openapi.json', root: true },
  ];
}
