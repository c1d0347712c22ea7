import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { MAX_VALUE_CHARS, readResourceSpans, type OtlpSpan } from './otlp';
import { decodeProtobufRequest } from './proto';

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';

const jsonSpan = (more: Record<string, unknown> = {}) => ({
  traceId: TRACE,
  spanId: SPAN,
  name: 'op',
  startTimeUnixNano: '1544712660000000000',
  endTimeUnixNano: '1544712661000000000',
  ...more,
});
const read = (spans: unknown[], key: 'scopeSpans' | 'instrumentationLibrarySpans' = 'scopeSpans') =>
  readResourceSpans([
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
      [key]: [{ scope: { name: 's' }, spans }],
    },
  ]);
const only = (spans: unknown[]) => {
  const [outcome] = read(spans)[0].spans;
  if ('error' in outcome) throw new Error(outcome.error);
  return outcome.span as OtlpSpan;
};

describe('readResourceSpans (OTLP/JSON)', () => {
  it('reads ids in hex, 64-bit times as decimal text, and every AnyValue kind', () => {
    const span = only([
      jsonSpan({
        parentSpanId: '',
        kind: 'SPAN_KIND_SERVER',
        status: { code: 'STATUS_CODE_ERROR', message: 'no' },
        attributes: [
          { key: 's', value: { stringValue: 'text' } },
          { key: 'b', value: { boolValue: true } },
          { key: 'i', value: { intValue: '42' } },
          { key: 'big', value: { intValue: '9007199254740993' } },
          { key: 'd', value: { doubleValue: 0.5 } },
          { key: 'bytes', value: { bytesValue: 'aGk=' } },
          { key: 'arr', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 1 }] } } },
          { key: 'kv', value: { kvlistValue: { values: [{ key: 'x', value: { stringValue: 'y' } }] } } },
          { key: 'nul', value: { stringValue: 'a\u0000b' } },
        ],
      }),
    ]);
    expect(span).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      parentSpanId: null,
      kind: 2,
      status: { code: 2, message: 'no' },
    });
    expect(span.startTimeUnixNano).toBe(1544712660000000000n);
    expect(span.attributes).toEqual({
      s: 'text',
      b: true,
      i: 42,
      big: '9007199254740993',
      d: 0.5,
      bytes: 'aGk=',
      arr: ['a', 1],
      kv: { x: 'y' },
      nul: 'ab',
    });
  });

  it('reports a span with a malformed id alone; its neighbours are read', () => {
    const [group] = read([jsonSpan({ spanId: 'abcdef' }), jsonSpan(), jsonSpan({ traceId: '0'.repeat(32) })]);
    expect(group.spans.map((o) => ('error' in o ? o.error : 'ok'))).toEqual([
      'spanId must be 8 bytes (16 hex digits), got "abcdef"',
      'ok',
      'traceId is all zeros, which OTLP calls invalid',
    ]);
  });

  it('cuts a huge attribute value, saying how long it was', () => {
    const span = only([
      jsonSpan({ attributes: [{ key: 'big', value: { stringValue: 'x'.repeat(MAX_VALUE_CHARS + 10) } }] }),
    ]);
    expect(span.attributes.big).toBe(`${'x'.repeat(MAX_VALUE_CHARS)}… [truncated: ${MAX_VALUE_CHARS + 10} characters]`);
  });

  it('takes the older instrumentationLibrarySpans name', () => {
    expect(read([jsonSpan()], 'instrumentationLibrarySpans')[0].spans).toHaveLength(1);
  });

  it('refuses a request whose structure is not OTLP', () => {
    expect(() => readResourceSpans({})).toThrow(/resourceSpans must be an array/);
    expect(() => readResourceSpans(['x'])).toThrow(/must be an object/);
  });
});

describe('decodeProtobufRequest', () => {
  it('reads 64-bit integers exactly: times past 2^53 and integer attributes of either sign and any size', () => {
    const collector = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js')
      .opentelemetry.proto.collector.trace.v1;
    const ints = [
      '0',
      '42',
      '-5',
      '2147483648',
      '-2147483649',
      '1099511627776',
      '9223372036854775807',
      '-9223372036854775808',
    ];
    const message = collector.ExportTraceServiceRequest.fromObject({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  ...jsonSpan(),
                  traceId: Buffer.from(TRACE, 'hex'),
                  spanId: Buffer.from(SPAN, 'hex'),
                  startTimeUnixNano: '1544712660123456789',
                  endTimeUnixNano: '18446744073709551615',
                  attributes: ints.map((n) => ({ key: n, value: { intValue: n } })),
                },
              ],
            },
          ],
        },
      ],
    });
    const body = collector.ExportTraceServiceRequest.encode(message).finish();
    const [outcome] = readResourceSpans(decodeProtobufRequest(body))[0].spans;
    const span = (outcome as { span: OtlpSpan }).span;
    expect(span.startTimeUnixNano).toBe(1544712660123456789n);
    expect(span.endTimeUnixNano).toBe(18446744073709551615n);
    expect(span.attributes).toEqual({
      '0': 0,
      '42': 42,
      '-5': -5,
      '2147483648': 2147483648,
      '-2147483649': -2147483649,
      '1099511627776': 1099511627776,
      '9223372036854775807': '9223372036854775807',
      '-9223372036854775808': '-9223372036854775808',
    });
  });

  it('refuses bytes that are not an ExportTraceServiceRequest', () => {
    expect(() => decodeProtobufRequest(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]))).toThrow();
  });
});
