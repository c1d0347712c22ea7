import { PassThrough } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_NESTING, nestsDeeperThan, parseStorableJson } from '@sightline/core';
import { spanCreateEvent } from '@sightline/queues';
import {
  decodeProtobufRequest,
  exportResponse,
  mapSpan,
  placeInTrees,
  readResourceSpans,
  SpanRejected,
  statusBody,
  type Attributes,
  type MappedSpan,
  type ResourceGroup,
} from '@sightline/otel';
import { MAX_BATCH_SPANS, ProjectName } from '@sightline/schemas';
import { AppError } from '../../errors';

type Encoding = 'json' | 'protobuf';
const encodingOf = (req: FastifyRequest): Encoding =>
  /^application\/x-protobuf/i.test(req.headers['content-type'] ?? '') ? 'protobuf' : 'json';
const CONTENT_TYPE: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };

// google.rpc.Code of an HTTP status, for the Status body OTLP puts in error answers.
const RPC_CODE: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 413: 3, 415: 3, 429: 8, 503: 14 };

/** The project a resource's spans go to: the header, else the first resource attribute that names one. */
function projectNameOf(header: string | undefined, resource: Attributes): string {
  if (header) return header;
  for (const key of ['sightline.project.name', 'openinference.project.name', 'service.name']) {
    const name = resource[key];
    // An SDK names a service it was not told about `unknown_service[:process]`: no project of its own.
    if (typeof name === 'string' && name && !name.startsWith('unknown_service')) return name;
  }
  return 'default';
}

type Mapped = MappedSpan & { projectId: string };
// Spans mapped in one go. An SDK exports at most 512 by default, and the batch endpoint takes at most this
// many; a larger export lets other requests be served between runs of this many spans.
const YIELD_EVERY = MAX_BATCH_SPANS;

/**
 * This scope's bodies: protobuf as bytes, JSON parsed here so that a bad body answers OTLP's 400; any other
 * content type is refused (415).
 */
function parseBodies(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (nestsDeeperThan(text, MAX_NESTING))
      return done(new AppError(400, `JSON nests deeper than ${MAX_NESTING} levels`), undefined);
    try {
      done(null, text.trim() === '' ? {} : parseStorableJson(text));
    } catch (err) {
      done(new AppError(400, `JSON decode error: ${(err as Error).message}`), undefined);
    }
  });
  app.addContentTypeParser('application/x-protobuf', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Gzip is undone before parsing; the body limit then bounds the inflated size too.
  app.addHook('preParsing', async (req, _reply, payload) => {
    const encoding = req.headers['content-encoding']?.toLowerCase();
    if (!encoding || encoding === 'identity') return payload;
    if (encoding !== 'gzip') throw new AppError(415, `unsupported content-encoding: ${encoding} (send gzip or none)`);
    // Fastify compares the bytes received with content-length: it is told them, not the inflated count.
    const inflated = Object.assign(new PassThrough(), { receivedEncodedLength: 0 });
    const gunzip = createGunzip();
    payload.on('data', (chunk: Buffer) => void (inflated.receivedEncodedLength += chunk.length));
    gunzip.on('error', (err) => inflated.destroy(new AppError(400, `gzip body cannot be inflated: ${err.message}`)));
    payload.on('error', (err) => inflated.destroy(err));
    payload.pipe(gunzip).pipe(inflated);
    return inflated;
  });
}

/** Error answers carry a google.rpc.Status in the request's encoding, as OTLP asks. */
function answerErrorsAsStatus(app: FastifyInstance) {
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
    let message = payload;
    try {
      const detail = (JSON.parse(payload) as { detail?: unknown }).detail;
      message = typeof detail === 'string' ? detail : JSON.stringify(detail);
    } catch {
      // Not the API's error shape: sent as it is.
    }
    const encoding = encodingOf(req);
    reply.header('content-type', CONTENT_TYPE[encoding]);
    return statusBody(RPC_CODE[reply.statusCode] ?? 2, message, encoding);
  });
}

/**
 * The span events of a request's resource groups, and what was refused of them. Past the projects'
 * lookup it runs in one go (up to YIELD_EVERY spans): the intermediate objects (the spans read, the
 * spans mapped) die before any other request allocates, so that the garbage collector need not copy
 * them. Run across awaits, they cost the API more in collection than in mapping.
 */
async function eventsOf(app: FastifyInstance, req: FastifyRequest, groups: ResourceGroup[]) {
  const header = req.headers['x-project-name'];
  const projects: { name: string; id?: string }[] = [];
  for (const group of groups) {
    const name = projectNameOf(Array.isArray(header) ? header[0] : header, group.resource);
    const id = ProjectName.safeParse(name).success
      ? await app.resolveProjectId(req.organizationId, { project_name: name })
      : undefined;
    projects.push({ name, id });
  }
  const mapped: Mapped[] = [];
  const refusals: string[] = [];
  let count = 0;
  for (const [g, group] of groups.entries()) {
    const { name, id: projectId } = projects[g];
    for (const outcome of group.spans) {
      if (count > 0 && count % YIELD_EVERY === 0) await setImmediate();
      count++;
      if ('error' in outcome) {
        refusals.push(outcome.error);
        continue;
      }
      const { span } = outcome;
      if (!projectId) {
        refusals.push(
          `span ${span.spanId}: project name ${JSON.stringify(name.slice(0, 40))} must be 1 to 255 characters`,
        );
        continue;
      }
      try {
        mapped.push(Object.assign(mapSpan(span, group.resource, group.scope), { projectId }));
      } catch (err) {
        if (!(err instanceof SpanRejected)) throw err;
        refusals.push(`span ${span.spanId}: ${err.message}`);
      }
    }
  }
  placeInTrees(mapped);
  const events = mapped.map((m) =>
    spanCreateEvent({
      organization_id: req.organizationId,
      trace_id: m.trace_id,
      root_trace_id: m.root_trace_id,
      parent_trace_id: m.parent_trace_id,
      project_id: m.projectId,
      fields: m.fields,
      tree: m.tree,
      otel: m.alias ? { root_alias: m.alias } : m.parentElsewhere ? { parent_elsewhere: true } : {},
    }),
  );
  return { events, refusals };
}

/** The request's resource groups, read from either encoding. */
function groupsOf(req: FastifyRequest, encoding: Encoding): ResourceGroup[] {
  try {
    const resourceSpans =
      encoding === 'protobuf'
        ? decodeProtobufRequest(req.body as Buffer)
        : ((req.body as { resourceSpans?: unknown } | null)?.resourceSpans ?? []);
    return readResourceSpans(resourceSpans);
  } catch (err) {
    throw new AppError(400, `not an OTLP ExportTraceServiceRequest: ${(err as Error).message}`);
  }
}

async function exportTraces(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const encoding = encodingOf(req);
  const { events, refusals } = await eventsOf(app, req, groupsOf(req, encoding));
  if (events.length) await app.acceptSpanEvents(events, req.id);
  const errorMessage = refusals.length
    ? `${refusals.length} span(s) rejected: ${refusals.slice(0, 5).join('; ')}${refusals.length > 5 ? '; …' : ''}`
    : '';
  return reply
    .code(200)
    .header('content-type', CONTENT_TYPE[encoding])
    .send(exportResponse({ rejectedSpans: refusals.length, errorMessage }, encoding));
}

/**
 * OTLP/HTTP trace export (`POST /v1/traces`): protobuf or JSON, gzip or not. Every span is mapped on its
 * own; one that cannot be is reported in the answer's partial success and the others are stored. The
 * answer is 200 once Redis holds the spans, as for every span write.
 */
export default async function otelRoutes(app: FastifyInstance) {
  parseBodies(app);
  answerErrorsAsStatus(app);

  app.post(
    '/v1/traces',
    {
      config: { writesSpans: true },
      bodyLimit: app.config.OTLP_BODY_LIMIT_BYTES,
      schema: {
        summary: 'OTLP/HTTP trace export (protobuf or JSON, gzip or not)',
        tags: ['opentelemetry'],
        consumes: ['application/x-protobuf', 'application/json'],
      },
    },
    (req, reply) => exportTraces(app, req, reply),
  );
}
