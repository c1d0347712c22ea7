import {
  AgreementSchema,
  AnnotationQueueSchema,
  AnnotationSchema,
  ApiKeyCreatedSchema,
  ApiKeySchema,
  AuditLogPageSchema,
  BudgetSchema,
  CompareRowsSchema,
  CompareSchema,
  CriterionSchema,
  DashboardSchema,
  DatasetListSchema,
  DeletedSchema,
  DeploymentHistorySchema,
  DeploymentSchema,
  DetailSchema,
  errorResponses,
  EvalBackfillSchema,
  EvalMetricSchema,
  EvalMetricVersionSchema,
  EvalResult,
  EvalRulePreviewSchema,
  EvalRuleSchema,
  ExperimentSamplesSchema,
  ExperimentSummariesSchema,
  InvitationCreatedSchema,
  InvitationPreviewSchema,
  InvitationSchema,
  ProjectSummarySchema,
  PromptVersionSchema,
  ProviderKeySchema,
  SessionsEndedSchema,
  SignedInSchema,
  SignInOptionsSchema,
  LeasedItemSchema,
  MonitorDetailSchema,
  MonitorPreviewSchema,
  MonitorSchema,
  SpanSchema,
  TestCasePageSchema,
  TraceGroupSchema,
  TraceGroupsSchema,
  TraceRowsSchema,
  TraceCountSchema,
  TraceExportProgressSchema,
  TraceSearchSchema,
  TraceSkeletonSchema,
  TraceTreeResponseSchema,
  UserSchema,
  WhoAmISchema,
} from '@sightline/schemas';
import { act } from '@testing-library/react';
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { z } from 'zod';

// A mock of the Sightline API for page tests. Every answer is parsed with the zod schema the server
// declares for that route's response (apps/api/src/routes/**: `response: { 200: … }`), so a fixture that
// drifts from what the server sends fails the test instead of testing a page against an imaginary API.

/** Where the API node mounts the console's routes (the client prefixes every call with it). */
const API = '/api/svc/v1';

/** An item completed or skipped (the route's inline schema). */
const ItemStatusSchema = z.object({ item_id: z.number(), status: z.string() });

/** The routes the pages call: method, path (msw's `:param` syntax) and the schema of a 200 answer. */
const ROUTES = {
  me: { method: 'get', path: '/me', schema: WhoAmISchema },
  signInOptions: { method: 'get', path: '/auth/options', schema: SignInOptionsSchema },
  login: { method: 'post', path: '/auth/login', schema: SignedInSchema },
  keySignIn: { method: 'post', path: '/auth/key', schema: SignedInSchema },
  bootstrap: { method: 'post', path: '/auth/bootstrap', schema: SignedInSchema },
  logout: { method: 'post', path: '/auth/logout', schema: DetailSchema },
  changePassword: { method: 'post', path: '/auth/password', schema: DetailSchema },
  switchOrganization: { method: 'post', path: '/auth/organization', schema: DetailSchema },
  invitationPreview: { method: 'get', path: '/auth/invitation', schema: InvitationPreviewSchema },
  acceptInvitation: { method: 'post', path: '/auth/accept-invitation', schema: SignedInSchema },
  users: { method: 'get', path: '/users', schema: z.array(UserSchema) },
  updateUser: { method: 'patch', path: '/users/:id', schema: UserSchema },
  removeUser: { method: 'delete', path: '/users/:id', schema: DeletedSchema },
  endSessions: { method: 'delete', path: '/users/:id/sessions', schema: SessionsEndedSchema },
  invitations: { method: 'get', path: '/invitations', schema: z.array(InvitationSchema) },
  invite: { method: 'post', path: '/invitations', schema: InvitationCreatedSchema },
  revokeInvitation: { method: 'delete', path: '/invitations/:id', schema: DeletedSchema },
  projects: { method: 'get', path: '/projects', schema: z.array(ProjectSummarySchema) },
  traces: { method: 'post', path: '/traces', schema: TraceRowsSchema },
  traceCount: { method: 'post', path: '/traces/count', schema: TraceCountSchema },
  exportProgress: { method: 'get', path: '/traces/export/:id', schema: TraceExportProgressSchema },
  skeleton: { method: 'get', path: '/trace/:traceId/skeleton', schema: TraceSkeletonSchema },
  span: { method: 'get', path: '/span/:traceId', schema: SpanSchema },
  traceSearch: { method: 'get', path: '/trace/:traceId/search', schema: TraceSearchSchema },
  criteria: { method: 'get', path: '/annotation-criteria', schema: z.array(CriterionSchema) },
  dashboard: { method: 'post', path: '/dashboard', schema: DashboardSchema },
  traceGroups: { method: 'post', path: '/trace-groups', schema: TraceGroupsSchema },
  traceGroup: { method: 'post', path: '/trace-group', schema: TraceGroupSchema },
  experiments: { method: 'post', path: '/experiments/summaries', schema: ExperimentSummariesSchema },
  samples: { method: 'post', path: '/experiment/:uuid/samples', schema: ExperimentSamplesSchema },
  compare: { method: 'post', path: '/experiments/compare', schema: CompareSchema },
  compareRows: { method: 'post', path: '/experiments/compare/rows', schema: CompareRowsSchema },
  datasets: { method: 'get', path: '/datasets', schema: DatasetListSchema },
  testCases: { method: 'get', path: '/datasets/:id/test_cases', schema: TestCasePageSchema },
  prompts: { method: 'get', path: '/prompts', schema: z.array(PromptVersionSchema) },
  deployments: { method: 'get', path: '/deployments', schema: z.array(DeploymentSchema) },
  deploy: { method: 'post', path: '/deployments', schema: DeploymentSchema },
  deploymentHistory: { method: 'get', path: '/deployments/:id/history', schema: DeploymentHistorySchema },
  createPrompt: { method: 'post', path: '/prompts', schema: PromptVersionSchema },
  evalMetrics: { method: 'get', path: '/eval-metrics', schema: z.array(EvalMetricSchema) },
  tryMetric: { method: 'post', path: '/eval-metrics/try', schema: EvalResult },
  updateEvalMetric: { method: 'patch', path: '/eval-metrics/:id', schema: EvalMetricSchema },
  evalMetricVersions: { method: 'get', path: '/eval-metrics/:id/versions', schema: z.array(EvalMetricVersionSchema) },
  spanEvalResults: { method: 'get', path: '/span/:traceId/eval-results', schema: z.record(z.string(), EvalResult) },
  evalRules: { method: 'get', path: '/eval-rules', schema: z.array(EvalRuleSchema) },
  createEvalRule: { method: 'post', path: '/eval-rules', schema: EvalRuleSchema },
  updateEvalRule: { method: 'patch', path: '/eval-rules/:id', schema: EvalRuleSchema },
  deleteEvalRule: { method: 'delete', path: '/eval-rules/:id', schema: DeletedSchema },
  previewEvalRule: { method: 'post', path: '/eval-rules/preview', schema: EvalRulePreviewSchema },
  backfill: { method: 'post', path: '/eval-rules/:id/backfill', schema: EvalBackfillSchema },
  cancelBackfill: { method: 'post', path: '/eval-rules/:id/backfills/:backfillId/cancel', schema: EvalBackfillSchema },
  traceLog: { method: 'get', path: '/trace_log/:traceId', schema: TraceTreeResponseSchema },
  apiKeys: { method: 'get', path: '/api-keys', schema: z.array(ApiKeySchema) },
  createApiKey: { method: 'post', path: '/api-keys', schema: ApiKeyCreatedSchema },
  providerKeys: { method: 'get', path: '/provider-keys', schema: z.array(ProviderKeySchema) },
  auditLog: { method: 'get', path: '/audit-log', schema: AuditLogPageSchema },
  agreement: { method: 'get', path: '/annotation-criteria/:id/agreement', schema: AgreementSchema },
  annotate: { method: 'put', path: '/trace_log/:traceId/annotations/:criterionId', schema: AnnotationSchema },
  queues: { method: 'get', path: '/annotation-queues', schema: z.array(AnnotationQueueSchema) },
  createQueue: { method: 'post', path: '/annotation-queues', schema: AnnotationQueueSchema },
  queue: { method: 'get', path: '/annotation-queues/:id', schema: AnnotationQueueSchema },
  updateQueue: { method: 'patch', path: '/annotation-queues/:id', schema: AnnotationQueueSchema },
  deleteQueue: { method: 'delete', path: '/annotation-queues/:id', schema: DeletedSchema },
  addItems: { method: 'post', path: '/annotation-queues/:id/items', schema: z.object({ added: z.number() }) },
  // null: the 204 of a queue with nothing left.
  next: { method: 'post', path: '/annotation-queues/:id/next', schema: LeasedItemSchema.nullable() },
  lease: { method: 'post', path: '/annotation-queues/:id/items/:itemId/lease', schema: LeasedItemSchema },
  complete: { method: 'post', path: '/annotation-queues/:id/items/:itemId/complete', schema: ItemStatusSchema },
  skip: { method: 'post', path: '/annotation-queues/:id/items/:itemId/skip', schema: ItemStatusSchema },
  monitors: { method: 'get', path: '/monitors', schema: z.array(MonitorSchema) },
  monitor: { method: 'get', path: '/monitors/:id', schema: MonitorDetailSchema },
  createMonitor: { method: 'post', path: '/monitors', schema: MonitorSchema },
  updateMonitor: { method: 'patch', path: '/monitors/:id', schema: MonitorSchema },
  deleteMonitor: { method: 'delete', path: '/monitors/:id', schema: DeletedSchema },
  previewMonitor: { method: 'post', path: '/monitors/preview', schema: MonitorPreviewSchema },
  budgets: { method: 'get', path: '/budgets', schema: z.array(BudgetSchema) },
  createBudget: { method: 'post', path: '/budgets', schema: BudgetSchema },
  updateBudget: { method: 'patch', path: '/budgets/:id', schema: BudgetSchema },
  deleteBudget: { method: 'delete', path: '/budgets/:id', schema: DeletedSchema },
} as const;

export type Route = keyof typeof ROUTES;
/** What a test writes for a route's answer: the schema's input (its output is what goes on the wire). */
export type Fixture<R extends Route> = z.input<(typeof ROUTES)[R]['schema']>;

/** A request the page made, as the server would read it. */
export type Recorded = {
  route: Route;
  method: string;
  /** Without the API prefix: `/traces`, `/datasets/3/test_cases`. */
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** Its `x-sightline-csrf` header: the API refuses a cookie's write without it. */
  csrf: string | null;
};

/** Every handled request of the running test, in order. */
export const requests: Recorded[] = [];
/** Requests no handler took, and fixtures their schema refused: each fails the test (see `checkMockApi`). */
const problems: string[] = [];

/** Requests being answered: `settled` waits for them. */
let inFlight = 0;

export const server = setupServer();

export function startMockApi() {
  server.listen({
    // msw's 'error' strategy only rejects the fetch, which a page shows as "cannot be reached", and a test
    // of an error view could pass on it: the request is also noted, and the test fails after it ends.
    onUnhandledRequest(request, print) {
      problems.push(`no handler for ${request.method} ${new URL(request.url).pathname}`);
      print.error();
    },
  });
}

/** After each test: forget its handlers and requests, and fail it for what went wrong on the API's side. */
export function checkMockApi() {
  server.resetHandlers();
  requests.length = 0;
  const found = problems.splice(0);
  if (found.length) throw new Error(`The mock API saw:\n${found.join('\n')}`);
}

/** The requests made to one route. */
export const requestsTo = (route: Route) => requests.filter((r) => r.route === route);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until every request made so far is answered and the page has rendered the answers: before
 * asserting that something is absent (a control a viewer must not see), which no `findBy` can wait for.
 */
export async function settled() {
  await act(async () => {
    while (inFlight) await sleep(5);
    // The client reads the body, the query cache notifies on a timer, React renders.
    await sleep(50);
  });
}

/**
 * `once`: the handler answers one request, then steps aside. `server.use` puts the handlers it is given
 * first, so a test calls it with the lasting answer, then again with the one-time failure.
 */
type Options = { once?: boolean };

function handle(
  route: Route,
  respond: (request: Recorded) => Response | Promise<Response>,
  options?: Options,
  // A request that never ends (`pending`) would keep `settled` waiting for ever.
  counted = true,
) {
  const { method, path } = ROUTES[route];
  return http[method](
    `${API}${path}`,
    async ({ request }) => {
      const url = new URL(request.url);
      const text = await request.text();
      const recorded: Recorded = {
        route,
        method: request.method,
        path: url.pathname.slice(API.length),
        query: Object.fromEntries(url.searchParams),
        body: text ? JSON.parse(text) : undefined,
        csrf: request.headers.get('x-sightline-csrf'),
      };
      requests.push(recorded);
      if (!counted) return respond(recorded);
      inFlight++;
      try {
        return await respond(recorded);
      } finally {
        inFlight--;
      }
    },
    options,
  );
}

function parse<R extends Route>(route: R, value: Fixture<R>) {
  const parsed = ROUTES[route].schema.safeParse(value);
  if (!parsed.success) problems.push(`a ${route} fixture the server would not send: ${z.prettifyError(parsed.error)}`);
  return parsed;
}

/**
 * Answers a route with a fixture, or with what a function of the request returns (paging, filters). A
 * fixture given as a value is checked at once, so that the test fails where it was written.
 */
export function answer<R extends Route>(
  route: R,
  reply: Fixture<R> | ((request: Recorded) => Fixture<R>),
  options?: Options,
) {
  if (typeof reply !== 'function') ROUTES[route].schema.parse(reply);
  return handle(
    route,
    (request) => {
      const parsed = parse(route, typeof reply === 'function' ? reply(request) : reply);
      if (!parsed.success) return HttpResponse.json({ detail: 'the mock API refused its fixture' }, { status: 500 });
      // A null answer is a 204 (nothing left to lease).
      return parsed.data === null ? new HttpResponse(null, { status: 204 }) : HttpResponse.json(parsed.data as object);
    },
    options,
  );
}

/** Answers a route with an error, in the API's own error shape (`{detail}`). */
export function fail(route: Route, status: number, detail: string, options?: Options) {
  const body = DetailSchema.parse({ detail });
  return handle(route, () => HttpResponse.json(body, { status }), options);
}

/** Answers a route with a 422 naming the fields it refused, in the API's shape (`{detail: [{loc, msg, type}]}`). */
export function invalid(route: Route, problems: { loc: (string | number)[]; msg: string }[], options?: Options) {
  const body = errorResponses[422].parse({ detail: problems.map((p) => ({ ...p, type: 'value_error' })) });
  return handle(route, () => HttpResponse.json(body, { status: 422 }), options);
}

/** A route that never answers: the page stays in its loading state. */
export function pending(route: Route) {
  return handle(
    route,
    async () => {
      await delay('infinite');
      return HttpResponse.error();
    },
    undefined,
    false,
  );
}
