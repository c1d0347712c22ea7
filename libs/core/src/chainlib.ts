// Maps a LangChain run tree (POST /api/svc/v1/trace_log/chainlib) to flat Sightline spans.
// Pure: no I/O. The input has only been parsed as "some JSON object", so every field is checked.
import { storableText, UUID } from './text';
import { parseTimestamp } from './timestamps';

export type ChainlibSpan = {
  trace_id: string;
  root_trace_id: string;
  parent_trace_id: string;
  trace_name: string;
  inputs?: Record<string, unknown>;
  output?: string;
  start_timestamp?: string;
  end_timestamp?: string;
  latency?: number;
  status: 'success' | 'error';
  error?: string;
  configuration?: { model?: string; provider?: string; model_params?: Record<string, unknown> };
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  tags?: string[];
  metadata?: Record<string, unknown>;
  execution_order: number;
  depth: number;
  project_uuid?: string;
};

type Path = (string | number)[];

export class ChainlibError extends Error {
  constructor(
    public path: Path,
    message: string,
  ) {
    super(message);
    this.name = 'ChainlibError';
  }
}

const DEFAULT_MAX_SPANS = 10_000;
const MAX_DEPTH = 1000; // levels of run nesting; the root is level 1
const MAX_VALUE_DEPTH = 1000; // nesting inside inputs/outputs/metadata values
const UUID_RE = new RegExp(`^${UUID}$`);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number | undefined =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : undefined;
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

// A cleaned, non-empty string, or undefined.
const text = (v: unknown): string | undefined => (typeof v === 'string' ? storableText(v) || undefined : undefined);

// Deep copy as JSON-compatible data with strings cleaned. Paths are only built for an error:
// `where` gives the value's own path, `rel` (mutated and restored) the position inside it.
function cleanValue(value: unknown, where: () => Path, rel: Path = [], depth = 0): unknown {
  if (typeof value === 'string') return storableText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined; // undefined, functions, symbols: dropped as JSON does
  if (depth >= MAX_VALUE_DEPTH) {
    throw new ChainlibError([...where(), ...rel], `value is nested more than ${MAX_VALUE_DEPTH} levels deep`);
  }
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  const out: [string | number, unknown][] = [];
  for (const [key, v] of entries) {
    rel.push(key);
    const cleaned = cleanValue(v, where, rel, depth + 1);
    rel.pop();
    if (Array.isArray(value)) out.push([key, cleaned ?? null]);
    else if (cleaned !== undefined) out.push([storableText(key as string), cleaned]);
  }
  if (Array.isArray(value)) return out.map(([, v]) => v);
  return Object.fromEntries(out); // fromEntries defines own props, so a "__proto__" key stays data
}

function parseTime(value: unknown, where: () => Path): number | undefined {
  if (value === undefined || value === null) return undefined;
  let ms = NaN;
  if (typeof value === 'number') {
    ms = new Date(value).getTime();
  } else if (typeof value === 'string') {
    // Python's datetime.isoformat() may omit the offset: LangChain times are UTC, as parseTimestamp reads them.
    const parsed = parseTimestamp(value);
    if (parsed) ms = Math.floor(parsed.micros / 1000);
  }
  // Years 1 to 9999: what PostgreSQL and the trace-log timestamps accept.
  if (Number.isNaN(ms) || ms < -62135596800000 || ms > 253402300799999) {
    throw new ChainlibError(where(), `must be epoch milliseconds or an ISO-8601 date-time between years 1 and 9999`);
  }
  return ms;
}

function serializeOutput(run: Obj, outputs: unknown): string {
  if (run.run_type === 'llm' && isObj(outputs) && Array.isArray(outputs.generations)) {
    const first = Array.isArray(outputs.generations[0]) ? outputs.generations[0][0] : undefined;
    if (isObj(first)) {
      const message = isObj(first.message) ? first.message : {};
      const kwargs = isObj(message.kwargs) ? message.kwargs : {};
      const content = text(first.text) ?? text(message.content) ?? text(kwargs.content);
      if (content !== undefined) return content;
    }
  }
  if (typeof outputs === 'string') return outputs;
  if (isObj(outputs)) {
    const values = Object.values(outputs);
    if (values.length === 1 && typeof values[0] === 'string') return values[0];
  }
  return JSON.stringify(outputs);
}

function llmFields(run: Obj, outputs: unknown, metadata: Obj): Partial<ChainlibSpan> {
  const fields: Partial<ChainlibSpan> = {};
  const extra = isObj(run.extra) ? run.extra : {};
  const params = isObj(extra.invocation_params) ? extra.invocation_params : {};

  const model =
    text(params.model) ?? text(params.model_name) ?? text(params.deployment_name) ?? text(metadata.ls_model_name);
  const type = text(params._type);
  const provider = (type && type.replace(/-chat$/, '')) ?? text(params.provider) ?? text(metadata.ls_provider);
  const modelParams: Obj = {};
  if (finite(params.temperature) !== undefined) modelParams.temp = params.temperature;
  if (finite(params.max_tokens) !== undefined) modelParams.max_length = params.max_tokens;
  if (finite(params.top_p) !== undefined) modelParams.top_p = params.top_p;
  const configuration: ChainlibSpan['configuration'] = {};
  if (model !== undefined) configuration.model = model;
  if (provider !== undefined) configuration.provider = provider;
  if (Object.keys(modelParams).length > 0) configuration.model_params = modelParams;
  if (Object.keys(configuration).length > 0) fields.configuration = configuration;

  const out = isObj(outputs) ? outputs : {};
  const llmOutput = isObj(out.llm_output) ? out.llm_output : {};
  // Newer chat models often report usage only on the message (usage_metadata), not in llm_output.
  const gen = Array.isArray(out.generations) && Array.isArray(out.generations[0]) ? out.generations[0][0] : undefined;
  const message = isObj(gen) && isObj(gen.message) ? gen.message : {};
  const usageMeta = isObj(message.usage_metadata)
    ? message.usage_metadata
    : isObj(message.kwargs) && isObj(message.kwargs.usage_metadata)
      ? message.kwargs.usage_metadata
      : {};
  let input: number | undefined, output: number | undefined, total: number | undefined;
  if (isObj(llmOutput.token_usage)) {
    const u = llmOutput.token_usage;
    [input, output, total] = [count(u.prompt_tokens), count(u.completion_tokens), count(u.total_tokens)];
  } else if (isObj(llmOutput.usage)) {
    const u = llmOutput.usage;
    [input, output, total] = [count(u.input_tokens), count(u.output_tokens), count(u.total_tokens)];
  } else {
    const u = usageMeta;
    [input, output, total] = [count(u.input_tokens), count(u.output_tokens), count(u.total_tokens)];
  }
  if (input !== undefined) fields.input_tokens = input;
  if (output !== undefined) fields.output_tokens = output;
  total ??= input !== undefined || output !== undefined ? (input ?? 0) + (output ?? 0) : undefined;
  if (total !== undefined) fields.total_tokens = total;
  return fields;
}

type Frame = { run: unknown; parent?: Frame; key: Path; depth: number; parentId: string };

// Path of a frame from the top-level run, e.g. ['child_runs', 0, 'child_runs', 2].
function pathOf(frame: Frame | undefined, ...rest: Path): Path {
  const parts: Path[] = [];
  for (let f = frame; f; f = f.parent) parts.push(f.key);
  return [...parts.reverse().flat(), ...rest];
}

function orderKey(run: unknown): number {
  const order = isObj(run) ? finite(run.execution_order) : undefined;
  return order ?? Infinity; // runs without an execution_order go after those with one, in array order
}

/** One run as a span; `frame` names where it is, for errors. */
function spanOf(
  r: Obj,
  frame: Frame,
  ids: { id: string; rootId: string; projectUuid?: string },
  executionOrder: number,
): ChainlibSpan {
  const { id, rootId, projectUuid } = ids;
  const start = parseTime(r.start_time, () => pathOf(frame, 'start_time'));
  const end = parseTime(r.end_time, () => pathOf(frame, 'end_time'));
  const extra = isObj(r.extra) ? r.extra : {};
  const rawMetadata = isObj(extra.metadata) ? extra.metadata : {};
  const metadata = cleanValue(rawMetadata, () => pathOf(frame, 'extra', 'metadata')) as Obj;
  const runType = text(r.run_type);
  const error = text(r.error);
  if (runType) metadata.run_type = runType;
  const outputs = r.outputs == null ? undefined : cleanValue(r.outputs, () => pathOf(frame, 'outputs'));

  const span: ChainlibSpan = {
    trace_id: id,
    root_trace_id: rootId,
    parent_trace_id: frame.parentId,
    trace_name: text(r.name) ?? runType ?? 'run',
    status: error ? 'error' : 'success',
    execution_order: executionOrder,
    depth: frame.depth,
  };
  if (isObj(r.inputs)) span.inputs = cleanValue(r.inputs, () => pathOf(frame, 'inputs')) as Obj;
  if (outputs !== undefined) span.output = serializeOutput(r, outputs);
  if (start !== undefined) span.start_timestamp = new Date(start).toISOString();
  if (end !== undefined) span.end_timestamp = new Date(end).toISOString();
  if (start !== undefined && end !== undefined && end >= start) span.latency = (end - start) / 1000;
  if (error) span.error = error;
  if (r.run_type === 'llm') Object.assign(span, llmFields(r, outputs, metadata));
  const tags = Array.isArray(r.tags) ? r.tags.filter((t): t is string => typeof t === 'string') : [];
  if (tags.length > 0) span.tags = tags.map(storableText);
  if (Object.keys(metadata).length > 0) span.metadata = metadata;
  if (projectUuid) span.project_uuid = projectUuid;
  return span;
}

export function runToSpans(run: unknown, opts: { maxSpans?: number } = {}): ChainlibSpan[] {
  const maxSpans = opts.maxSpans ?? DEFAULT_MAX_SPANS;
  if (!isObj(run)) throw new ChainlibError([], 'run must be a JSON object');
  const rootId = typeof run.id === 'string' && UUID_RE.test(run.id) ? run.id.toLowerCase() : undefined;
  if (!rootId) throw new ChainlibError(['id'], 'id must be a UUID string');
  const projectUuid = text(run.project_uuid);

  const spans: ChainlibSpan[] = [];
  const seen = new Set<string>();
  // Explicit stack instead of recursion so deep trees cannot overflow the JS stack.
  const stack: Frame[] = [{ run, key: [], depth: 0, parentId: rootId }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const r = frame.run;
    if (!isObj(r)) throw new ChainlibError(pathOf(frame), 'run must be a JSON object');
    if (typeof r.id !== 'string' || !UUID_RE.test(r.id)) {
      throw new ChainlibError(pathOf(frame, 'id'), 'id must be a UUID string');
    }
    const id = r.id.toLowerCase();
    if (seen.has(id)) throw new ChainlibError(pathOf(frame, 'id'), `duplicate run id ${id}`);
    seen.add(id);

    spans.push(spanOf(r, frame, { id, rootId, projectUuid }, spans.length));

    const children = Array.isArray(r.child_runs) ? r.child_runs : [];
    if (children.length === 0) continue;
    if (spans.length + stack.length + children.length > maxSpans) {
      throw new ChainlibError(pathOf(frame, 'child_runs'), `trace has more than ${maxSpans} runs`);
    }
    if (frame.depth + 1 >= MAX_DEPTH) {
      throw new ChainlibError(pathOf(frame, 'child_runs'), `runs are nested more than ${MAX_DEPTH} levels deep`);
    }
    const ordered = children
      .map((child, index) => ({ child, index }))
      .sort((a, b) => orderKey(a.child) - orderKey(b.child) || a.index - b.index);
    // Pushed in reverse so the first child is popped (and numbered) first.
    for (let i = ordered.length - 1; i >= 0; i--) {
      const { child, index } = ordered[i];
      stack.push({ run: child, parent: frame, key: ['child_runs', index], depth: frame.depth + 1, parentId: id });
    }
  }
  return spans;
}
