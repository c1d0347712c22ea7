// One OTLP span as a Sightline span: its ids, and its fields as `POST /trace_log` takes them. Each
// convention's attributes are read in the order of precedence docs/opentelemetry.md lists; what no
// convention claims is kept in `metadata` under its own dotted key.

import { costOf } from '@sightline/llm/pricing';
import { flattened, messageList, openInferenceMessage, outputText, parseJson, type Message } from './messages';
import { SpanRejected, type Attributes, type AttrValue, type OtlpEvent, type OtlpScope, type OtlpSpan } from './otlp';

/** Text kept of one metadata value; longer values are cut, saying how long they were. */
export const MAX_METADATA_VALUE_CHARS = 8192;
/** Metadata keys kept of one span; the count of those left out is kept too. */
export const MAX_METADATA_KEYS = 256;

const uuidOf = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;

/**
 * Span UUIDs. A trace's root is the trace id itself (an OTel trace id is 16 bytes, as a UUID is), so every
 * span knows its root's UUID before the root arrives. Any other span is the trace id's first 8 bytes and
 * its own 8-byte span id: stable, so a span exported twice is stored once, and readable (the UUID ends with
 * the span id). A child names its parent by the parent's span id, which for the root's children is the
 * root's *span-id form*; the store re-points those to the root (`reattachOtelChildren` in @sightline/db).
 */
export const otelIds = {
  root: (traceId: string) => uuidOf(traceId),
  span: (traceId: string, spanId: string) => uuidOf(traceId.slice(0, 16) + spanId),
};

class Attrs {
  readonly used = new Set<string>();
  /** The keys, listed once: the flattened conventions scan them four times. */
  readonly keys: string[];
  constructor(readonly all: Attributes) {
    this.keys = Object.keys(all);
  }

  /** The first of `keys` present, marked as read. */
  get(...keys: string[]): AttrValue | undefined {
    let found: AttrValue | undefined;
    for (const k of keys) {
      if (this.all[k] === undefined) continue;
      this.used.add(k);
      found ??= this.all[k];
    }
    return found;
  }
  str(...keys: string[]): string | undefined {
    const v = this.get(...keys);
    return v == null ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
  }
  num(...keys: string[]): number | undefined {
    const v = this.get(...keys);
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    return Number.isFinite(n) ? n : undefined;
  }
  count(...keys: string[]): number | undefined {
    const n = this.num(...keys);
    return n !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  }
}

// ---- Kind ------------------------------------------------------------------------------------------------

const OPERATION_KIND: Record<string, string> = {
  chat: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  completion: 'llm',
  embeddings: 'embedding',
  execute_tool: 'tool',
  create_agent: 'agent',
  invoke_agent: 'agent',
};

/** The span's kind in one vocabulary (llm, embedding, tool, agent, chain, retriever, workflow, task, ...). */
function kindOf(a: Attrs): string | undefined {
  const openInference = a.str('openinference.span.kind');
  if (openInference) return openInference.toLowerCase();
  const operation = a.str('gen_ai.operation.name');
  if (operation) return OPERATION_KIND[operation] ?? operation;
  const traceloop = a.str('traceloop.span.kind');
  if (traceloop) return traceloop;
  const vercel = a.str('ai.operationId');
  if (vercel) {
    if (/\.do(Generate|Stream)$/.test(vercel)) return 'llm';
    if (/\.doEmbed$/.test(vercel)) return 'embedding';
    if (vercel === 'ai.toolCall') return 'tool';
    return 'chain';
  }
  if (a.str('llm.request.type')) return 'llm';
  return undefined;
}

// ---- Messages ------------------------------------------------------------------------------------------

type Conversation = { messages?: Message[]; outputs?: Message[]; inputs?: Record<string, unknown>; output?: string };

/** Semconv's current JSON attributes, on the span or on a `gen_ai.client.inference.operation.details` event. */
function semconvMessages(get: (key: string) => AttrValue | undefined): Conversation {
  const system = parseJson(get('gen_ai.system_instructions'));
  const input = messageList(parseJson(get('gen_ai.input.messages')));
  const outputs = messageList(parseJson(get('gen_ai.output.messages')), 'assistant');
  const systemMessages = system === undefined ? [] : (messageList({ role: 'system', parts: system }, 'system') ?? []);
  const messages = input || systemMessages.length ? [...systemMessages, ...(input ?? [])] : undefined;
  return { messages, outputs };
}

const OLDER_MESSAGE_EVENTS: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

/** The GenAI events: the current details event, else the older per-message events and `gen_ai.choice`. */
function eventMessages(events: OtlpEvent[], used: Set<OtlpEvent>): Conversation {
  const details = events.find((e) => e.name === 'gen_ai.client.inference.operation.details');
  if (details) {
    used.add(details);
    return semconvMessages((k) => details.attributes[k]);
  }
  const messages: Message[] = [],
    outputs: Message[] = [];
  for (const e of events) {
    const role = OLDER_MESSAGE_EVENTS[e.name];
    if (role) {
      const m = messageList({ role, ...e.attributes, ...toolCallsOf(e.attributes) }, role);
      if (m) messages.push(...m);
      used.add(e);
    } else if (e.name === 'gen_ai.choice') {
      const raw = parseJson(e.attributes.message) ?? e.attributes.message;
      const m = messageList(raw ?? { role: 'assistant', content: e.attributes.content ?? '' }, 'assistant');
      if (m) outputs.push(...m);
      used.add(e);
    } else if (e.name === 'gen_ai.content.prompt') {
      const m = messageList(parseJson(e.attributes['gen_ai.prompt']) ?? e.attributes['gen_ai.prompt']);
      if (m) messages.push(...m);
      used.add(e);
    } else if (e.name === 'gen_ai.content.completion') {
      const m = messageList(
        parseJson(e.attributes['gen_ai.completion']) ?? e.attributes['gen_ai.completion'],
        'assistant',
      );
      if (m) outputs.push(...m);
      used.add(e);
    }
  }
  return { messages: messages.length ? messages : undefined, outputs: outputs.length ? outputs : undefined };
}

const toolCallsOf = (attrs: Attributes) => {
  const calls = parseJson(attrs.tool_calls);
  return Array.isArray(calls) ? { tool_calls: calls } : {};
};

/** OpenLLMetry's flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`. */
function flattenedMessages(a: Attrs): Conversation {
  const asMessage = (m: Record<string, unknown>) =>
    Array.isArray(m.tool_calls)
      ? {
          ...m,
          tool_calls: m.tool_calls.map((c: Record<string, unknown>) => ({
            id: c?.id,
            function: { name: c?.name, arguments: c?.arguments },
          })),
        }
      : m;
  const prompt = flattened(a.all, a.keys, 'gen_ai.prompt.', a.used).map(asMessage);
  const completion = flattened(a.all, a.keys, 'gen_ai.completion.', a.used).map(asMessage);
  return { messages: messageList(prompt), outputs: messageList(completion, 'assistant') };
}

/** OpenInference's `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*`. */
function openInferenceMessages(a: Attrs): Conversation {
  return {
    messages: messageList(flattened(a.all, a.keys, 'llm.input_messages.', a.used).map(openInferenceMessage)),
    outputs: messageList(
      flattened(a.all, a.keys, 'llm.output_messages.', a.used).map(openInferenceMessage),
      'assistant',
    ),
  };
}

/** A value as `inputs` (a JSON object, kept as it is; anything else under `input`). */
function asInputs(value: AttrValue | undefined): Record<string, unknown> | undefined {
  if (value == null) return undefined;
  const parsed = parseJson(value);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  return { input: parsed ?? value };
}

/** A value as `output`: text as it is, anything else as JSON. */
function asOutput(value: AttrValue | undefined): string | undefined {
  if (value == null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The Vercel AI SDK's `ai.prompt.messages` / `ai.prompt` / `ai.response.text` / `ai.response.toolCalls`. */
function vercelConversation(a: Attrs): Conversation {
  const prompt = parseJson(a.get('ai.prompt'));
  const promptObj =
    prompt && typeof prompt === 'object' && !Array.isArray(prompt) ? (prompt as Record<string, unknown>) : {};
  let messages = messageList(parseJson(a.get('ai.prompt.messages')));
  if (!messages && (promptObj.messages || promptObj.prompt || promptObj.system)) {
    messages = messageList([
      ...(typeof promptObj.system === 'string' ? [{ role: 'system', content: promptObj.system }] : []),
      ...(Array.isArray(promptObj.messages) ? promptObj.messages : []),
      ...(promptObj.prompt != null ? [{ role: 'user', content: promptObj.prompt }] : []),
    ]);
  }
  const text = a.str('ai.response.text');
  const object = a.str('ai.response.object');
  const calls = parseJson(a.get('ai.response.toolCalls'));
  const toolCalls = Array.isArray(calls)
    ? calls.map((c: Record<string, unknown>) => ({
        id: c?.toolCallId,
        function: { name: c?.toolName, arguments: c?.args ?? c?.input },
      }))
    : undefined;
  const outputs =
    text != null || object != null || toolCalls
      ? messageList({ role: 'assistant', content: text ?? object ?? null, tool_calls: toolCalls }, 'assistant')
      : undefined;
  return { messages, outputs, inputs: messages ? undefined : asInputs(a.get('ai.prompt')) };
}

/** Every convention, in precedence order; each field is taken from the first that has it. */
function conversation(a: Attrs, events: OtlpEvent[], usedEvents: Set<OtlpEvent>): Conversation {
  const sources: Conversation[] = [
    semconvMessages((k) => a.get(k)),
    eventMessages(events, usedEvents),
    flattenedMessages(a),
    openInferenceMessages(a),
    {
      inputs: asInputs(a.get('input.value')),
      output: asOutput(a.get('output.value')),
    },
    {
      inputs: asInputs(a.get('traceloop.entity.input')),
      output: asOutput(a.get('traceloop.entity.output')),
    },
    vercelConversation(a),
  ];
  a.get('input.mime_type', 'output.mime_type');
  const first = <K extends keyof Conversation>(key: K) => sources.find((s) => s[key] !== undefined)?.[key];
  const outputs = first('outputs');
  return {
    messages: first('messages'),
    outputs,
    inputs: first('inputs'),
    output: outputText(outputs?.at(-1)) ?? first('output'),
  };
}

// ---- Model, parameters, usage --------------------------------------------------------------------------

const PARAMETERS: [string, string[]][] = [
  ['temperature', ['gen_ai.request.temperature', 'llm.temperature', 'ai.settings.temperature']],
  [
    'max_tokens',
    ['gen_ai.request.max_tokens', 'llm.request.max_tokens', 'ai.settings.maxTokens', 'ai.settings.maxOutputTokens'],
  ],
  ['top_p', ['gen_ai.request.top_p', 'llm.top_p', 'ai.settings.topP']],
  ['top_k', ['gen_ai.request.top_k', 'llm.top_k', 'ai.settings.topK']],
  ['frequency_penalty', ['gen_ai.request.frequency_penalty', 'llm.frequency_penalty', 'ai.settings.frequencyPenalty']],
  ['presence_penalty', ['gen_ai.request.presence_penalty', 'llm.presence_penalty', 'ai.settings.presencePenalty']],
  ['stop', ['gen_ai.request.stop_sequences', 'llm.chat.stop_sequences', 'ai.settings.stopSequences']],
  ['seed', ['gen_ai.request.seed', 'ai.settings.seed']],
  ['n', ['gen_ai.request.choice.count']],
];

function modelParams(a: Attrs): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const invocation = parseJson(a.get('llm.invocation_parameters'));
  if (invocation && typeof invocation === 'object' && !Array.isArray(invocation)) {
    for (const [k, v] of Object.entries(invocation)) if (k !== 'model' && k !== 'messages' && v != null) params[k] = v;
  }
  for (const [name, keys] of PARAMETERS) {
    const v = a.get(...keys);
    if (v != null) params[name] = v;
  }
  return params;
}

/**
 * The provider, lowercase (as the gateway names them). The Vercel AI SDK's `ai.model.provider` (and its
 * `gen_ai.system`) say `openai.chat`: its first part is the provider; semconv's own dotted names
 * (`azure.ai.openai`) stay whole.
 */
function providerOf(a: Attrs): string | undefined {
  const vercel = a.str('ai.model.provider')?.split('.')[0];
  const named = a.str('gen_ai.provider.name', 'gen_ai.system', 'llm.provider', 'llm.system');
  return (vercel ?? named)?.toLowerCase();
}

type Usage = { input?: number; output?: number; total?: number; cacheRead?: number; cacheWrite?: number };

function usageOf(a: Attrs, kind: string | undefined): Usage {
  // The Vercel AI SDK counts a call's tokens on its outer span and again on each step's inner span: only
  // the inner (model call) spans count, so that a trace's sum is not doubled.
  const vercelOuter = a.all['ai.operationId'] !== undefined && kind !== 'llm' && kind !== 'embedding';
  const vercel = (...keys: string[]) => (vercelOuter ? [] : keys);
  return {
    input: a.count(
      'gen_ai.usage.input_tokens',
      'gen_ai.usage.prompt_tokens',
      'llm.token_count.prompt',
      'llm.usage.prompt_tokens',
      ...vercel('ai.usage.inputTokens', 'ai.usage.promptTokens'),
    ),
    output: a.count(
      'gen_ai.usage.output_tokens',
      'gen_ai.usage.completion_tokens',
      'llm.token_count.completion',
      'llm.usage.completion_tokens',
      ...vercel('ai.usage.outputTokens', 'ai.usage.completionTokens'),
    ),
    total: a.count(
      'gen_ai.usage.total_tokens',
      'llm.token_count.total',
      'llm.usage.total_tokens',
      ...vercel('ai.usage.totalTokens'),
    ),
    cacheRead: a.count(
      'gen_ai.usage.cache_read.input_tokens',
      'gen_ai.usage.cache_read_input_tokens',
      'gen_ai.usage.input_tokens.cached',
      'llm.token_count.prompt_details.cache_read',
      ...vercel('ai.usage.cachedInputTokens'),
    ),
    cacheWrite: a.count(
      'gen_ai.usage.cache_creation.input_tokens',
      'gen_ai.usage.cache_creation_input_tokens',
      'gen_ai.usage.input_tokens.cache_write',
      'llm.token_count.prompt_details.cache_write',
    ),
  };
}

/** Seconds to the first token, from the conventions that carry it (the Vercel AI SDK's in milliseconds). */
function timeToFirstToken(a: Attrs): number | undefined {
  const seconds = a.num('gen_ai.response.time_to_first_chunk', 'gen_ai.response.time_to_first_token');
  if (seconds !== undefined) return seconds;
  const ms = a.num('ai.response.msToFirstChunk', 'ai.stream.msToFirstChunk');
  return ms === undefined ? undefined : ms / 1000;
}

// ---- Metadata ------------------------------------------------------------------------------------------

const metadataText = (v: AttrValue): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > MAX_METADATA_VALUE_CHARS
    ? `${s.slice(0, MAX_METADATA_VALUE_CHARS)}… [truncated: ${s.length} characters]`
    : s;
};

const nanosText = (n: bigint | null) => (n === null ? null : n.toString());

const SPAN_KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

/** The span's own identity and shape, under `otel.`: ids, exact times, kind, scope, events and links. */
function otelMetadata(span: OtlpSpan, scope: OtlpScope, events: OtlpEvent[]): Record<string, AttrValue> {
  // Kept lean: every key is indexed twice (search, metadata filters) on every span, which PostgreSQL pays
  // for on each write. The trace id and the span ids are in the UUIDs (a root's is the trace id, so its
  // span id is kept here, and the store needs it); the instrumentation's scope goes with the root, as the
  // resource does; a span's kind only when it says more than "internal"; times only where they are finer
  // than the columns' microseconds.
  const m: Record<string, AttrValue> = {};
  const isRoot = !span.parentSpanId;
  if (isRoot) m['otel.span_id'] = span.spanId;
  if (span.kind > 1) m['otel.span_kind'] = SPAN_KINDS[span.kind] ?? String(span.kind);
  if (span.startTimeUnixNano !== null && span.startTimeUnixNano % 1000n !== 0n)
    m['otel.start_time_unix_nano'] = nanosText(span.startTimeUnixNano);
  if (span.endTimeUnixNano !== null && span.endTimeUnixNano % 1000n !== 0n)
    m['otel.end_time_unix_nano'] = nanosText(span.endTimeUnixNano);
  if (scope.name && isRoot) m['otel.scope.name'] = scope.name;
  if (scope.version && isRoot) m['otel.scope.version'] = scope.version;
  if (span.traceState) m['otel.trace_state'] = span.traceState;
  if (events.length)
    m['otel.events'] = JSON.stringify(
      events.map((e) => ({ name: e.name, time_unix_nano: nanosText(e.timeUnixNano), attributes: e.attributes })),
    );
  if (span.links.length) m['otel.links'] = JSON.stringify(span.links);
  return m;
}

// ---- The span ------------------------------------------------------------------------------------------

/**
 * Unix nanoseconds as an ISO timestamp with microseconds (what PostgreSQL keeps; the exact value stays in
 * metadata), in the canonical form the API's timestamps take. Zero is OTLP's "unset".
 */
function isoOf(nanos: bigint | null, what: string): string | undefined {
  if (nanos === null || nanos === 0n) return undefined;
  const date = new Date(Number(nanos / 1_000_000n));
  const year = date.getUTCFullYear();
  if (nanos < 0n || Number.isNaN(year) || year < 1 || year > 9999)
    throw new SpanRejected(`${what} ${nanos} is outside the years 1 to 9999`);
  const micros = String((nanos / 1000n) % 1000n).padStart(3, '0');
  return `${date.toISOString().slice(0, 23)}${micros}Z`;
}

/** The error text: the status message, and each `exception` event's type, message and stack. */
function errorOf(span: OtlpSpan, used: Set<OtlpEvent>): string | undefined {
  const parts: string[] = [];
  if (span.status.message) parts.push(span.status.message);
  for (const e of span.events) {
    if (e.name !== 'exception') continue;
    used.add(e);
    const type = e.attributes['exception.type'],
      message = e.attributes['exception.message'],
      stack = e.attributes['exception.stacktrace'];
    const head = [type, message].filter((v) => v != null && v !== '').join(': ');
    const text = [head, stack].filter(Boolean).join('\n');
    if (text && !parts.includes(text)) parts.push(text);
  }
  return parts.length ? parts.join('\n\n') : undefined;
}

/** Tags: a list, JSON text of one, or one tag; each kept if it fits an index row as names do. */
function stringList(v: AttrValue | undefined): string[] | undefined {
  const parsed = Array.isArray(v) ? v : parseJson(v);
  const items = Array.isArray(parsed) ? parsed : typeof v === 'string' ? [v] : [];
  const tags = items.filter((t): t is string => typeof t === 'string' && t !== '' && t.length <= 512);
  return tags.length ? tags : undefined;
}

export type MappedSpan = {
  trace_id: string;
  root_trace_id: string;
  /** Absent for the root. */
  parent_trace_id?: string;
  /** The root's span-id form, which its children name as their parent. */
  alias?: string;
  fields: Record<string, unknown>;
  /** The span's place, when the request holds its whole path to the root (see trees.ts). */
  tree?: { depth: number; execution_order: number };
  /** Whether the parent was not in the span's request (see trees.ts). */
  parentElsewhere?: true;
};

/** Input and output tokens added up, when there are any and their sum is exact. */
function totalOf(usage: Usage): number | undefined {
  if (usage.input === undefined && usage.output === undefined) return undefined;
  const total = (usage.input ?? 0) + (usage.output ?? 0);
  return Number.isSafeInteger(total) ? total : undefined;
}

type Model = { requestModel?: string; responseModel?: string; model?: string; provider?: string };

/**
 * The span's cost: the one it sends, else its tokens at the price tables' rates (the response's model
 * first, which names the exact version, then the request's), exactly as for the gateway's completions.
 */
function costOfSpan(a: Attrs, m: Model, usage: Usage): { cost?: number; priceUnknown: boolean } {
  const sent = a.num('llm.cost.total', 'gen_ai.usage.cost', 'gen_ai.cost.usd');
  if (sent !== undefined) return { cost: sent, priceUnknown: false };
  if (!m.model || (usage.input === undefined && usage.output === undefined)) return { priceUnknown: false };
  const tokens = {
    input_tokens: usage.input ?? 0,
    output_tokens: usage.output ?? 0,
    cache_read_tokens: usage.cacheRead,
    cache_write_tokens: usage.cacheWrite,
  };
  for (const model of new Set([m.responseModel, m.requestModel].filter((x): x is string => !!x))) {
    const priced = costOf(m.provider ?? '', model, tokens);
    if (priced.known) return { cost: priced.cost, priceUnknown: false };
  }
  return { priceUnknown: true };
}

function configurationOf(a: Attrs, m: Model, messages: Message[] | undefined): Record<string, unknown> | undefined {
  const configuration: Record<string, unknown> = {};
  if (m.model) configuration.model = m.model;
  if (m.responseModel && m.responseModel !== m.model) configuration.response_model = m.responseModel;
  if (m.provider) configuration.provider = m.provider;
  const params = modelParams(a);
  if (Object.keys(params).length) configuration.model_params = params;
  if (messages) configuration.messages = messages;
  const tools = parseJson(a.get('gen_ai.tool.definitions', 'llm.request.functions'));
  if (Array.isArray(tools)) configuration.functions = tools;
  return Object.keys(configuration).length ? configuration : undefined;
}

type Found = { kind?: string; priceUnknown: boolean; usage: Usage; usedEvents: Set<OtlpEvent> };

/**
 * Sightline's and OTel's own keys first (they survive the bound on keys: the store finds a root by its
 * `otel.span_id`), then the user's metadata, what no convention claimed, and the resource's attributes.
 * Call it last: what the conventions read is known by then.
 */
function metadataOf(a: Attrs, span: OtlpSpan, resource: Attributes, scope: OtlpScope, found: Found) {
  a.get('openinference.span.kind', 'gen_ai.operation.name', 'traceloop.span.kind');
  const own: Record<string, AttrValue> = otelMetadata(
    span,
    scope,
    span.events.filter((e) => !found.usedEvents.has(e)),
  );
  if (found.kind) own.kind = found.kind;
  if (found.priceUnknown) own.price_unknown = 'true';
  if (found.usage.cacheRead !== undefined) own['usage.cache_read_tokens'] = found.usage.cacheRead;
  if (found.usage.cacheWrite !== undefined) own['usage.cache_write_tokens'] = found.usage.cacheWrite;
  const rest: Record<string, AttrValue> = {};
  const userMetadata = parseJson(a.get('metadata'));
  if (userMetadata && typeof userMetadata === 'object' && !Array.isArray(userMetadata))
    Object.assign(rest, userMetadata);
  for (const k of a.keys) if (!a.used.has(k) && a.all[k] !== null) rest[k] = a.all[k];
  // The resource (service, SDK, host, process) is the same for every span an SDK sends: kept on roots.
  if (!span.parentSpanId) for (const k in resource) if (resource[k] !== null) rest[`resource.${k}`] = resource[k];
  return boundedMetadata(own, rest, span.droppedAttributesCount);
}

/** The span's fields as `POST /trace_log` takes them, the ones without a value left out. */
function fieldsOf(span: OtlpSpan, resource: Attributes, scope: OtlpScope): Record<string, unknown> {
  const a = new Attrs(span.attributes);
  const usedEvents = new Set<OtlpEvent>();
  const kind = kindOf(a);
  const chat = conversation(a, span.events, usedEvents);
  const requestModel = a.str('gen_ai.request.model', 'llm.model_name', 'ai.model.id');
  const responseModel = a.str('gen_ai.response.model', 'ai.response.model');
  const model: Model = { requestModel, responseModel, model: requestModel ?? responseModel, provider: providerOf(a) };
  // Model names are indexed with the trace's sums: as long as any name the API takes, no longer.
  if ((model.model?.length ?? 0) > 512 || (responseModel?.length ?? 0) > 512)
    throw new SpanRejected('the model name is longer than 512 characters');
  const usage = usageOf(a, kind);
  const { cost, priceUnknown } = costOfSpan(a, model, usage);
  const start = span.startTimeUnixNano,
    end = span.endTimeUnixNano;
  const fields: Record<string, unknown> = {
    trace_name: span.name.slice(0, 512),
    start_timestamp: isoOf(start, 'startTimeUnixNano'),
    end_timestamp: isoOf(end, 'endTimeUnixNano'),
    latency: start !== null && end !== null && start > 0n && end >= start ? Number(end - start) / 1e9 : undefined,
    status: span.status.code === 2 ? 'error' : 'success',
    error: errorOf(span, usedEvents),
    inputs: chat.inputs,
    output: chat.output,
    configuration: configurationOf(a, model, chat.messages),
    input_tokens: usage.input,
    output_tokens: usage.output,
    total_tokens: usage.total ?? totalOf(usage),
    cost,
    time_to_first_token: timeToFirstToken(a),
    session_id: a.str('session.id', 'gen_ai.conversation.id', 'ai.telemetry.metadata.sessionId')?.slice(0, 512),
    end_user_identifier: a.str('user.id', 'enduser.id', 'ai.telemetry.metadata.userId')?.slice(0, 512),
    tags: stringList(a.get('tag.tags')),
  };
  fields.metadata = metadataOf(a, span, resource, scope, { kind, priceUnknown, usage, usedEvents });
  // Copied rather than `delete`d: an object that loses keys turns slow for every later read and stringify.
  const defined: Record<string, unknown> = {};
  for (const k in fields) if (fields[k] !== undefined) defined[k] = fields[k];
  return defined;
}

/**
 * One OTLP span as a Sightline span, its fields valid for `TraceLogFields` by construction (a property test
 * holds it to that); throws SpanRejected for a span Sightline cannot store.
 */
export function mapSpan(span: OtlpSpan, resource: Attributes, scope: OtlpScope): MappedSpan {
  const fields = fieldsOf(span, resource, scope);
  const root = otelIds.root(span.traceId);
  return span.parentSpanId
    ? {
        trace_id: otelIds.span(span.traceId, span.spanId),
        root_trace_id: root,
        parent_trace_id: otelIds.span(span.traceId, span.parentSpanId),
        fields,
      }
    : { trace_id: root, root_trace_id: root, alias: otelIds.span(span.traceId, span.spanId), fields };
}

/** Metadata as strings, each cut at MAX_METADATA_VALUE_CHARS: `own` whole, then `rest` up to MAX_METADATA_KEYS keys. */
function boundedMetadata(
  own: Record<string, AttrValue>,
  rest: Record<string, AttrValue>,
  droppedBySdk: number,
): Record<string, string> {
  const out: Record<string, string> = {};
  let kept = 0,
    dropped = droppedBySdk;
  for (const k in own) {
    if (own[k] === null) continue;
    out[k] = metadataText(own[k]);
    kept++;
  }
  for (const k in rest) {
    if (k in own) continue;
    if (kept >= MAX_METADATA_KEYS) {
      dropped++;
      continue;
    }
    out[k] = metadataText(rest[k]);
    kept++;
  }
  if (dropped) out['otel.dropped_attributes_count'] = String(dropped);
  return out;
}
