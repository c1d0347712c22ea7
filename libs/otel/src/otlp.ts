import { storableText } from '@sightline/core';

// OTLP trace data read the same way whether it came as protobuf (messages protobufjs decoded: ids as
// bytes, 64-bit integers as Long) or as JSON (OTLP's JSON mapping: ids in hex, 64-bit integers as
// decimal strings or numbers, enums as numbers). Everything the mapping needs comes out as plain values.

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export type OtlpEvent = { name: string; timeUnixNano: bigint | null; attributes: Attributes };
type OtlpLink = { traceId: string; spanId: string; attributes: Attributes };

export type OtlpSpan = {
  traceId: string;
  spanId: string;
  /** Null for a trace's root. */
  parentSpanId: string | null;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: bigint | null;
  endTimeUnixNano: bigint | null;
  attributes: Attributes;
  droppedAttributesCount: number;
  events: OtlpEvent[];
  links: OtlpLink[];
  /** StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  traceState: string;
};

export type OtlpScope = { name: string; version: string };

/** Why one span cannot be stored; the rest of its request still is. */
export class SpanRejected extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Longest text kept of one attribute value; the rest is cut, and the cut says how long the value was. */
export const MAX_VALUE_CHARS = 1_000_000;
/** Text as it is stored: cut at MAX_VALUE_CHARS, without what PostgreSQL refuses (NUL, lone surrogates). */
const text = (v: unknown): string => {
  if (typeof v !== 'string') return '';
  const s = v.length > MAX_VALUE_CHARS ? `${v.slice(0, MAX_VALUE_CHARS)}… [truncated: ${v.length} characters]` : v;
  return storableText(s);
};
/** Deeper array and kvlist values than this are kept as their JSON text, cut at this level. */
const MAX_VALUE_DEPTH = 16;

const HEX = /^[0-9a-f]*$/;

/** An id as lowercase hex: bytes (protobuf) or hex text (JSON), of exactly `bytes` bytes and not all zero. */
function idHex(value: unknown, bytes: number, what: string): string {
  let hex: string;
  if (value instanceof Uint8Array) hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  else if (typeof value === 'string') hex = value.toLowerCase();
  else throw new SpanRejected(`${what} is missing`);
  if (hex.length !== bytes * 2 || !HEX.test(hex))
    throw new SpanRejected(`${what} must be ${bytes} bytes (${bytes * 2} hex digits), got ${JSON.stringify(hex)}`);
  if (/^0+$/.test(hex)) throw new SpanRejected(`${what} is all zeros, which OTLP calls invalid`);
  return hex;
}

/** A parent span id: absent, empty or all zeros means none. */
function parentHex(value: unknown): string | null {
  if (value == null) return null;
  if (value instanceof Uint8Array ? value.length === 0 : value === '') return null;
  const hex = value instanceof Uint8Array ? Buffer.from(value).toString('hex') : String(value).toLowerCase();
  if (/^0+$/.test(hex)) return null;
  return idHex(value, 8, 'parentSpanId');
}

type Long = { low: number; high: number; unsigned: boolean };
const isLong = (v: unknown): v is Long =>
  typeof v === 'object' && v !== null && typeof (v as Long).low === 'number' && typeof (v as Long).high === 'number';

/** A fixed64 / int64: a Long (protobuf), a decimal string or a number (JSON). */
function int64(value: unknown): bigint | null {
  if (value == null || value === '') return null;
  if (isLong(value)) {
    // From its two 32-bit halves: cheaper than through its decimal text.
    const bits = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
    return value.unsigned ? bits : BigInt.asIntN(64, bits);
  }
  if (typeof value === 'object' && 'toString' in value) value = String(value);
  if (typeof value === 'number' && !Number.isInteger(value)) throw new SpanRejected(`not an integer: ${value}`);
  if (typeof value !== 'string' && typeof value !== 'number') throw new SpanRejected('not an integer');
  try {
    return BigInt(value);
  } catch {
    throw new SpanRejected(`not an integer: ${JSON.stringify(value)}`);
  }
}

// Enum names, which proto3's JSON mapping allows where OTLP's asks for numbers.
const ENUM_NAMES: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

function small(value: unknown): number {
  if (typeof value === 'string' && value in ENUM_NAMES) return ENUM_NAMES[value];
  const n = int64(value);
  return n === null ? 0 : Number(n);
}

/** An AnyValue as a plain value; bytes become base64 text, integers past 2^53 their decimal text. */
function anyValue(value: unknown, depth = 0): AttrValue {
  if (!isObj(value)) return null;
  if (value.stringValue != null) return text(String(value.stringValue));
  if (value.boolValue != null) return Boolean(value.boolValue);
  if (value.intValue != null) {
    const long = value.intValue;
    // Most integers fit in 32 bits: their Long's high half is only the sign.
    if (isLong(long) && !long.unsigned && (long.high === 0 ? long.low >= 0 : long.high === -1 && long.low < 0))
      return long.low;
    const n = int64(long)!;
    return Number.isSafeInteger(Number(n)) ? Number(n) : n.toString();
  }
  if (value.doubleValue != null)
    return typeof value.doubleValue === 'number' ? value.doubleValue : Number(value.doubleValue);
  if (value.bytesValue != null)
    return value.bytesValue instanceof Uint8Array
      ? Buffer.from(value.bytesValue).toString('base64')
      : String(value.bytesValue);
  if (depth >= MAX_VALUE_DEPTH) return '[nested too deep]';
  if (isObj(value.arrayValue)) return list(value.arrayValue.values).map((v) => anyValue(v, depth + 1));
  if (isObj(value.kvlistValue)) return attributes(value.kvlistValue.values, depth + 1);
  return null;
}

/** KeyValue pairs as an object; a later pair with the same key wins, as the SDKs' own maps do. */
function attributes(pairs: unknown, depth = 0): Attributes {
  const out: Attributes = {};
  for (const kv of list(pairs)) {
    if (!isObj(kv) || typeof kv.key !== 'string') continue;
    out[text(kv.key)] = anyValue(kv.value, depth);
  }
  return out;
}

function readSpan(raw: unknown): OtlpSpan {
  if (!isObj(raw)) throw new SpanRejected('a span must be an object');
  const status = isObj(raw.status) ? raw.status : {};
  return {
    traceId: idHex(raw.traceId, 16, 'traceId'),
    spanId: idHex(raw.spanId, 8, 'spanId'),
    parentSpanId: parentHex(raw.parentSpanId),
    name: text(raw.name),
    kind: small(raw.kind),
    startTimeUnixNano: int64(raw.startTimeUnixNano),
    endTimeUnixNano: int64(raw.endTimeUnixNano),
    attributes: attributes(raw.attributes),
    droppedAttributesCount: small(raw.droppedAttributesCount),
    events: list(raw.events).map((e) => {
      const event = isObj(e) ? e : {};
      return {
        name: text(event.name),
        timeUnixNano: int64(event.timeUnixNano),
        attributes: attributes(event.attributes),
      };
    }),
    links: list(raw.links).map((l) => {
      const link = isObj(l) ? l : {};
      return {
        traceId: idHex(link.traceId, 16, 'link traceId'),
        spanId: idHex(link.spanId, 8, 'link spanId'),
        attributes: attributes(link.attributes),
      };
    }),
    status: { code: small(status.code), message: text(status.message) },
    traceState: text(raw.traceState),
  };
}

type SpanOutcome = { span: OtlpSpan } | { error: string };

export type ResourceGroup = {
  resource: Attributes;
  scope: OtlpScope;
  /** Each span read, or why it could not be. */
  spans: SpanOutcome[];
};

/**
 * The spans of a request's `resourceSpans`, grouped by resource and scope. A span that cannot be read is
 * reported in its place; the others are unaffected. Accepts `scopeSpans` and its older name
 * `instrumentationLibrarySpans`.
 */
export function readResourceSpans(resourceSpans: unknown): ResourceGroup[] {
  if (!Array.isArray(resourceSpans)) throw new TypeError('resourceSpans must be an array');
  const groups: ResourceGroup[] = [];
  for (const rs of resourceSpans) {
    if (!isObj(rs)) throw new TypeError('each resourceSpans entry must be an object');
    const resource = attributes(isObj(rs.resource) ? rs.resource.attributes : undefined);
    for (const ss of [...list(rs.scopeSpans), ...list(rs.instrumentationLibrarySpans)]) {
      if (!isObj(ss)) throw new TypeError('each scopeSpans entry must be an object');
      const s = isObj(ss.scope) ? ss.scope : isObj(ss.instrumentationLibrary) ? ss.instrumentationLibrary : {};
      groups.push({
        resource,
        scope: { name: text(s.name), version: text(s.version) },
        spans: list(ss.spans).map((raw) => {
          try {
            return { span: readSpan(raw) };
          } catch (err) {
            if (err instanceof SpanRejected) return { error: err.message };
            throw err;
          }
        }),
      });
    }
  }
  return groups;
}
