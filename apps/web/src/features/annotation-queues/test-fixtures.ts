import {
  AnnotationQueueSchema,
  AnnotationSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
  LeasedItemSchema,
} from '@sightline/schemas';
import { delay, http, HttpResponse } from 'msw';
import { z } from 'zod';
import type { Fixture } from '../../test/api';
import { PROJECT_UUID, ROOT_ID, skeleton, span } from '../../test/fixtures';

// The queue routes for this feature's page tests, in the manner of test/api.ts (which does not list them
// yet): each answer is parsed with the zod schema the server declares for the route, so that a fixture the
// server would not send fails the test. `checkQueueApi` runs after each test.

const API = '/api/svc/v1';

const ItemStatusSchema = z.object({ item_id: z.number(), status: z.string() }); // the route's inline schema

const ROUTES = {
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
  annotate: { method: 'put', path: '/trace_log/:traceId/annotations/:criterionId', schema: AnnotationSchema },
} as const;

type QueueRoute = keyof typeof ROUTES;
type QueueFixture<R extends QueueRoute> = z.input<(typeof ROUTES)[R]['schema']>;
type Recorded = { route: QueueRoute; method: string; path: string; query: Record<string, string>; body: unknown };

const requests: Recorded[] = [];
const problems: string[] = [];

/** The requests made to one of the queue routes in the running test, in order. */
export const queueRequestsTo = (route: QueueRoute) => requests.filter((r) => r.route === route);

/** After each test: forget its requests, and fail it for a fixture the server would not have sent. */
export function checkQueueApi() {
  requests.length = 0;
  const found = problems.splice(0);
  if (found.length) throw new Error(`The mock queue API saw:\n${found.join('\n')}`);
}

type Options = { once?: boolean };

function handle(route: QueueRoute, respond: (request: Recorded) => Response | Promise<Response>, options?: Options) {
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
      };
      requests.push(recorded);
      return respond(recorded);
    },
    options,
  );
}

/** Answers a queue route with a fixture, or with what a function of the request returns. */
export function answerQueue<R extends QueueRoute>(
  route: R,
  reply: QueueFixture<R> | ((request: Recorded) => QueueFixture<R>),
  options?: Options,
) {
  if (typeof reply !== 'function') ROUTES[route].schema.parse(reply);
  return handle(
    route,
    (request) => {
      const parsed = ROUTES[route].schema.safeParse(typeof reply === 'function' ? reply(request) : reply);
      if (!parsed.success) {
        problems.push(`a ${route} fixture the server would not send: ${z.prettifyError(parsed.error)}`);
        return HttpResponse.json({ detail: 'the mock API refused its fixture' }, { status: 500 });
      }
      return parsed.data === null ? new HttpResponse(null, { status: 204 }) : HttpResponse.json(parsed.data);
    },
    options,
  );
}

/** Answers a queue route with an error, in the API's shape (`{detail}`). */
export function failQueue(route: QueueRoute, status: number, detail: string, options?: Options) {
  const body = DetailSchema.parse({ detail });
  return handle(route, () => HttpResponse.json(body, { status }), options);
}

/** Answers a queue route with a 422 naming the fields it refused (`{detail: [{loc, msg, type}]}`). */
export function invalidQueue(
  route: QueueRoute,
  refused: { loc: (string | number)[]; msg: string }[],
  options?: Options,
) {
  const body = errorResponses[422].parse({ detail: refused.map((p) => ({ ...p, type: 'value_error' })) });
  return handle(route, () => HttpResponse.json(body, { status: 422 }), options);
}

/** A queue route that never answers. */
export function pendingQueue(route: QueueRoute) {
  return handle(route, async () => {
    await delay('infinite');
    return HttpResponse.error();
  });
}

type ItemOf<T> = T extends readonly (infer U)[] ? U : never;
type Criterion = ItemOf<Fixture<'criteria'>>;

export const QUEUE_ID = 'a3000000-0000-4000-8000-000000000001';
export const OTHER_QUEUE_ID = 'a3000000-0000-4000-8000-000000000002';
/** The second item's trace: one span. */
export const SECOND_TRACE_ID = 'b0000000-0000-4000-8000-000000000009';

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
export const queue = (over: Partial<QueueFixture<'queue'>> = {}): QueueFixture<'queue'> => ({
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

export const leased = (over: Partial<QueueFixture<'lease'>> = {}): QueueFixture<'lease'> => ({
  item_id: 1,
  trace_id: ROOT_ID,
  lease_expires_at: '2026-03-02T09:10:00.000Z',
  ...over,
});

/** The second item's trace: one span, with its own name. */
export const secondSkeleton: Fixture<'skeleton'> = {
  root_trace_id: SECOND_TRACE_ID,
  spans: [
    {
      ...skeleton.spans[0]!,
      trace_id: SECOND_TRACE_ID,
      parent_trace_id: SECOND_TRACE_ID,
      trace_name: 'cancel-order',
    },
  ],
};

/** Each span as `GET /span/{id}` answers: the model call of the first trace holds a conversation. */
export const spanOf = (traceId: string): Fixture<'span'> =>
  traceId === SECOND_TRACE_ID
    ? span(traceId, {
        root_trace_id: SECOND_TRACE_ID,
        parent_trace_id: SECOND_TRACE_ID,
        trace_name: 'cancel-order',
        inputs: { question: 'How do I cancel an order?' },
        output: 'Open the order and press Cancel.',
      })
    : traceId === ROOT_ID
      ? span(traceId)
      : span(traceId, {
          configuration: {
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: 'How do refunds work?' }],
          },
        });
