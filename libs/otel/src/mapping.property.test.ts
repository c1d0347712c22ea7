import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TraceLogFields } from '@sightline/schemas';
import { mapSpan } from './conventions';
import { readResourceSpans, SpanRejected } from './otlp';

// The API stores what mapSpan answers without validating it again, and a span-write job that holds one
// invalid span fails for every span in it: so any span OTLP can carry must map to valid fields, or be
// rejected alone.

const KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.definitions',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.provider.name',
  'gen_ai.operation.name',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cost',
  'gen_ai.request.temperature',
  'gen_ai.prompt.0.role',
  'gen_ai.prompt.0.content',
  'gen_ai.completion.1.tool_calls.0.arguments',
  'llm.input_messages.0.message.contents.0.message_content.text',
  'llm.output_messages.0.message.tool_calls.0.tool_call.function.name',
  'llm.invocation_parameters',
  'llm.token_count.total',
  'llm.model_name',
  'input.value',
  'output.value',
  'traceloop.entity.input',
  'ai.operationId',
  'ai.prompt',
  'ai.prompt.messages',
  'ai.response.toolCalls',
  'ai.response.msToFirstChunk',
  'openinference.span.kind',
  'session.id',
  'user.id',
  'tag.tags',
  'metadata',
];

const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.json(),
  fc.constantFrom('', '\u0000', '\ud800', 'x'.repeat(600)),
);
const scalar = fc.oneof(
  text.map((s) => ({ stringValue: s })),
  fc.oneof(fc.integer(), fc.constantFrom('9223372036854775807', '-1')).map((n) => ({ intValue: String(n) })),
  fc.oneof(fc.double(), fc.constantFrom('NaN', 'Infinity')).map((d) => ({ doubleValue: d })),
  fc.boolean().map((b) => ({ boolValue: b })),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('any'), { maxLength: 3 }).map((values) => ({ arrayValue: { values } })),
    fc
      .array(fc.record({ key: fc.string(), value: tie('any') }), { maxLength: 3 })
      .map((values) => ({ kvlistValue: { values } })),
  ),
})).any;
const attributes = fc.array(fc.record({ key: fc.oneof(fc.constantFrom(...KEYS), fc.string()), value }), {
  maxLength: 12,
});
// Up to the year 2255 for the comparison with the schema's parse, whose microseconds are floats (exact up
// to 2^53 µs); past 9999 a time is rejected.
const nanos = fc
  .oneof(
    fc.bigInt({ min: 0n, max: 9_000_000_000_000_000_000n }),
    fc.constantFrom(0n, 1_767_225_600_123_456_789n, 253_402_300_800_000_000_000n),
  )
  .map(String);

const span = fc.record({
  traceId: fc.constant('5b8efff798038103d269b633813fc60c'),
  spanId: fc.constant('eee19b7ec3c1b174'),
  parentSpanId: fc.constantFrom('', '53995c3f42cd8ad8'),
  name: text,
  kind: fc.integer({ min: 0, max: 9 }),
  startTimeUnixNano: nanos,
  endTimeUnixNano: nanos,
  attributes,
  events: fc.array(
    fc.record({ name: fc.constantFrom('exception', 'gen_ai.choice', 'gen_ai.user.message', 'x'), attributes }),
    {
      maxLength: 3,
    },
  ),
  status: fc.record({ code: fc.integer({ min: 0, max: 3 }), message: text }),
});

const storable = (json: string) => !json.includes('\\u0000') && json.isWellFormed();

describe('mapSpan on any span OTLP can carry', () => {
  it('answers fields TraceLogFields accepts and PostgreSQL can store, or rejects the span alone', () => {
    fc.assert(
      fc.property(span, fc.array(fc.record({ key: fc.string(), value }), { maxLength: 4 }), (raw, resource) => {
        const [group] = readResourceSpans([{ resource: { attributes: resource }, scopeSpans: [{ spans: [raw] }] }]);
        const [outcome] = group.spans;
        if ('error' in outcome) return;
        let mapped;
        try {
          mapped = mapSpan(outcome.span, group.resource, group.scope);
        } catch (err) {
          if (err instanceof SpanRejected) return;
          throw err;
        }
        const checked = TraceLogFields.partial().safeParse(mapped.fields);
        expect(checked.error?.issues ?? []).toEqual([]);
        // Nothing for the schema's transforms (timestamps made canonical, null members dropped) to change.
        expect(checked.data).toEqual(mapped.fields);
        expect(storable(JSON.stringify(mapped.fields))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
