import { describe, expect, it } from 'vitest';
import { costOf } from '@sightline/llm';
import { mapSpan, MAX_METADATA_KEYS, MAX_METADATA_VALUE_CHARS, otelIds } from './conventions';
import type { Attributes, OtlpEvent, OtlpSpan } from './otlp';

// Attribute sets below are written as each convention's documents and instrumentation packages emit them:
// OpenTelemetry's GenAI semantic conventions (spans, events), OpenLLMetry (traceloop), OpenInference
// (Arize), and the Vercel AI SDK's telemetry.

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const PARENT = '53995c3f42cd8ad8';
const START = 1_767_225_600_123_456_789n; // 2026-01-01T00:00:00.123456789Z

function span(attributes: Attributes, more: Partial<OtlpSpan> = {}): OtlpSpan {
  return {
    traceId: TRACE,
    spanId: SPAN,
    parentSpanId: PARENT,
    name: 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: START,
    endTimeUnixNano: START + 2_500_000_001n,
    attributes,
    droppedAttributesCount: 0,
    events: [],
    links: [],
    status: { code: 0, message: '' },
    traceState: '',
    ...more,
  };
}
/** A mapped span's fields, typed as loosely as the assertions read them. */
type Fields = {
  [k: string]: unknown;
  configuration: { messages?: unknown; [k: string]: unknown };
  metadata: Record<string, string>;
  output: string;
};
const event = (name: string, attributes: Attributes): OtlpEvent => ({ name, timeUnixNano: START, attributes });
const map = (s: OtlpSpan, resource: Attributes = { 'service.name': 'svc' }) =>
  mapSpan(s, resource, { name: 'scope', version: '1.2.3' }).fields as Fields;

describe('ids', () => {
  it('a root is stored under its trace id; any other span under the trace id’s first half and its span id', () => {
    const root = mapSpan(span({}, { parentSpanId: null }), {}, { name: '', version: '' });
    expect(root).toMatchObject({ trace_id: '4bf92f35-77b3-4da6-a3ce-929d0e0e4736', root_trace_id: root.trace_id });
    expect(root.parent_trace_id).toBeUndefined();
    const child = mapSpan(span({}), {}, { name: '', version: '' });
    expect(child).toEqual(
      expect.objectContaining({
        trace_id: '4bf92f35-77b3-4da6-00f0-67aa0ba902b7',
        root_trace_id: '4bf92f35-77b3-4da6-a3ce-929d0e0e4736',
        parent_trace_id: '4bf92f35-77b3-4da6-5399-5c3f42cd8ad8',
      }),
    );
    expect(otelIds.span(TRACE, PARENT)).toBe(child.parent_trace_id);
  });
});

describe('name, times, status', () => {
  it('keeps start and end to the microsecond, the exact nanoseconds in metadata, and the latency exact', () => {
    const f = map(span({}));
    expect(f.trace_name).toBe('chat gpt-4o');
    expect(f.start_timestamp).toBe('2026-01-01T00:00:00.123456Z');
    expect(f.end_timestamp).toBe('2026-01-01T00:00:02.623456Z');
    expect(f.metadata['otel.start_time_unix_nano']).toBe('1767225600123456789');
    expect(f.metadata['otel.end_time_unix_nano']).toBe('1767225602623456790');
    expect(f.latency).toBe(2.500000001);
    expect(f.status).toBe('success');
  });

  it('ERROR becomes status error, with the status message and each exception’s type, message and stack', () => {
    const f = map(
      span(
        {},
        {
          status: { code: 2, message: 'upstream failed' },
          events: [
            event('exception', {
              'exception.type': 'openai.RateLimitError',
              'exception.message': 'Rate limit reached',
              'exception.stacktrace': 'Traceback (most recent call last):\n  File "app.py", line 3',
            }),
            event('retry', { attempt: 2 }),
          ],
        },
      ),
    );
    expect(f.status).toBe('error');
    expect(f.error).toBe(
      'upstream failed\n\nopenai.RateLimitError: Rate limit reached\nTraceback (most recent call last):\n  File "app.py", line 3',
    );
    // Other events are kept in metadata, the exception (now in `error`) is not repeated there.
    expect(JSON.parse(f.metadata['otel.events'])).toEqual([
      { name: 'retry', time_unix_nano: String(START), attributes: { attempt: 2 } },
    ]);
  });

  it('keeps links in metadata', () => {
    const f = map(span({}, { links: [{ traceId: TRACE, spanId: PARENT, attributes: { why: 'batch' } }] }));
    expect(JSON.parse(f.metadata['otel.links'])).toEqual([
      { traceId: TRACE, spanId: PARENT, attributes: { why: 'batch' } },
    ]);
  });
});

describe('GenAI semantic conventions (current): JSON message attributes', () => {
  const attrs = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.response.model': 'gpt-4o-2024-08-06',
    'gen_ai.request.temperature': 0.2,
    'gen_ai.request.max_tokens': 200,
    'gen_ai.request.top_p': 0.9,
    'gen_ai.request.stop_sequences': ['\n\n'],
    'gen_ai.usage.input_tokens': 97,
    'gen_ai.usage.output_tokens': 52,
    'gen_ai.usage.cache_read.input_tokens': 40,
    'gen_ai.response.finish_reasons': ['stop'],
    'gen_ai.conversation.id': 'conv_5j66UpCpwteGg4YSxUnt7lPY',
    'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are a helpful bot' }]),
    'gen_ai.input.messages': JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool_call',
            id: 'call_VSPygqKTWdrhaFErNvMV18Yl',
            name: 'get_weather',
            arguments: { location: 'Paris' },
          },
        ],
      },
      {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: 'call_VSPygqKTWdrhaFErNvMV18Yl', response: 'rainy, 57°F' }],
      },
    ]),
    'gen_ai.output.messages': JSON.stringify([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'The weather in Paris is currently rainy with a temperature of 57°F.' }],
        finish_reason: 'stop',
      },
    ]),
  };

  it('messages, output, model, provider, parameters, tokens, cost, session and kind', () => {
    const f = map(span(attrs));
    expect(f.configuration).toEqual({
      model: 'gpt-4o',
      response_model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      model_params: { temperature: 0.2, max_tokens: 200, top_p: 0.9, stop: ['\n\n'] },
      messages: [
        { role: 'system', content: 'You are a helpful bot' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_VSPygqKTWdrhaFErNvMV18Yl',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
            },
          ],
        },
        { role: 'tool', content: 'rainy, 57°F', tool_call_id: 'call_VSPygqKTWdrhaFErNvMV18Yl' },
      ],
    });
    expect(f.output).toBe('The weather in Paris is currently rainy with a temperature of 57°F.');
    expect(f).toMatchObject({
      input_tokens: 97,
      output_tokens: 52,
      total_tokens: 149,
      session_id: 'conv_5j66UpCpwteGg4YSxUnt7lPY',
    });
    const priced = costOf('openai', 'gpt-4o-2024-08-06', {
      input_tokens: 97,
      output_tokens: 52,
      cache_read_tokens: 40,
    });
    expect(priced.known).toBe(true);
    expect(f.cost).toBe(priced.cost);
    expect(f.metadata).toMatchObject({
      kind: 'llm',
      'usage.cache_read_tokens': '40',
      'gen_ai.response.finish_reasons': '["stop"]',
    });
    // What a convention claimed is not repeated in metadata.
    expect(f.metadata['gen_ai.input.messages']).toBeUndefined();
    expect(f.metadata['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  it('keeps the tool definitions the call offered as configuration.functions', () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    expect(map(span({ ...attrs, 'gen_ai.tool.definitions': JSON.stringify(tools) })).configuration.functions).toEqual(
      tools,
    );
  });

  it('a cost the span sends wins over the price tables', () => {
    expect(map(span({ ...attrs, 'gen_ai.usage.cost': 0.5 })).cost).toBe(0.5);
  });

  it('a model the price tables do not know has no cost, and says so', () => {
    const f = map(span({ ...attrs, 'gen_ai.request.model': 'acme-llm-1', 'gen_ai.response.model': 'acme-llm-1' }));
    expect(f.cost).toBeUndefined();
    expect(f.metadata.price_unknown).toBe('true');
  });
});

describe('GenAI events', () => {
  it('the inference details event carries the same JSON attributes', () => {
    const f = map(
      span(
        { 'gen_ai.request.model': 'gpt-4o' },
        {
          events: [
            event('gen_ai.client.inference.operation.details', {
              'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]),
              'gen_ai.output.messages': JSON.stringify([
                { role: 'assistant', parts: [{ type: 'text', content: 'hello' }] },
              ]),
            }),
          ],
        },
      ),
    );
    expect(f.configuration.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(f.output).toBe('hello');
    expect(f.metadata['otel.events']).toBeUndefined();
  });

  it('the older per-message events and gen_ai.choice', () => {
    const f = map(
      span(
        { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o' },
        {
          events: [
            event('gen_ai.system.message', { 'gen_ai.system': 'openai', content: 'You are terse.' }),
            event('gen_ai.user.message', { 'gen_ai.system': 'openai', content: 'What is 2+2?' }),
            event('gen_ai.choice', {
              'gen_ai.system': 'openai',
              index: 0,
              finish_reason: 'stop',
              message: { role: 'assistant', content: '4' },
            }),
          ],
        },
      ),
    );
    expect(f.configuration.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is 2+2?' },
    ]);
    expect(f.output).toBe('4');
  });
});

describe('OpenLLMetry: flattened gen_ai.prompt.N / gen_ai.completion.N', () => {
  const attrs = {
    'llm.request.type': 'chat',
    'gen_ai.system': 'OpenAI',
    'gen_ai.request.model': 'gpt-3.5-turbo',
    'gen_ai.response.model': 'gpt-3.5-turbo-0125',
    'gen_ai.request.temperature': 0.7,
    'gen_ai.prompt.0.role': 'system',
    'gen_ai.prompt.0.content': 'You are a poet.',
    'gen_ai.prompt.1.role': 'user',
    'gen_ai.prompt.1.content': 'Tell me a joke about OpenTelemetry',
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.finish_reason': 'tool_calls',
    'gen_ai.completion.0.tool_calls.0.id': 'call_1',
    'gen_ai.completion.0.tool_calls.0.name': 'get_joke',
    'gen_ai.completion.0.tool_calls.0.arguments': '{"topic": "otel"}',
    'gen_ai.usage.prompt_tokens': 24,
    'gen_ai.usage.completion_tokens': 18,
    'llm.usage.total_tokens': 42,
    'gen_ai.usage.cache_read_input_tokens': 0,
  };

  it('messages in index order, tool calls of the completion, deprecated token names, lowercase provider', () => {
    const f = map(span(attrs));
    expect(f.configuration).toMatchObject({
      model: 'gpt-3.5-turbo',
      provider: 'openai',
      messages: [
        { role: 'system', content: 'You are a poet.' },
        { role: 'user', content: 'Tell me a joke about OpenTelemetry' },
      ],
    });
    expect(JSON.parse(f.output)).toEqual([{ name: 'get_joke', arguments: '{"topic": "otel"}' }]);
    expect(f).toMatchObject({ input_tokens: 24, output_tokens: 18, total_tokens: 42 });
    expect(f.cost).toBe(
      costOf('openai', 'gpt-3.5-turbo-0125', { input_tokens: 24, output_tokens: 18, cache_read_tokens: 0 }).cost,
    );
    expect(f.metadata.kind).toBe('llm');
    expect(Object.keys(f.metadata).some((k) => k.startsWith('gen_ai.prompt.'))).toBe(false);
  });

  it('workflow and task spans: traceloop.entity.input / output', () => {
    const f = map(
      span({
        'traceloop.span.kind': 'workflow',
        'traceloop.workflow.name': 'joke_generator',
        'traceloop.entity.name': 'joke_generator',
        'traceloop.entity.input': JSON.stringify({ args: [], kwargs: { topic: 'otel' } }),
        'traceloop.entity.output': JSON.stringify('Why did the span cross the road?'),
      }),
    );
    expect(f.inputs).toEqual({ args: [], kwargs: { topic: 'otel' } });
    expect(f.output).toBe('"Why did the span cross the road?"');
    expect(f.metadata).toMatchObject({ kind: 'workflow', 'traceloop.workflow.name': 'joke_generator' });
  });
});

describe('OpenInference', () => {
  const attrs = {
    'openinference.span.kind': 'LLM',
    'llm.system': 'openai',
    'llm.provider': 'openai',
    'llm.model_name': 'gpt-4o-mini',
    'llm.invocation_parameters': '{"model":"gpt-4o-mini","temperature":0.1,"max_tokens":64}',
    'input.value': '{"messages":[{"role":"user","content":"Say hi"}],"model":"gpt-4o-mini"}',
    'input.mime_type': 'application/json',
    'output.value': '{"id":"chatcmpl-1","choices":[{"message":{"role":"assistant","content":"hi!"}}]}',
    'output.mime_type': 'application/json',
    'llm.input_messages.0.message.role': 'system',
    'llm.input_messages.0.message.content': 'Be brief.',
    'llm.input_messages.1.message.role': 'user',
    'llm.input_messages.1.message.contents.0.message_content.type': 'text',
    'llm.input_messages.1.message.contents.0.message_content.text': 'What is in this picture?',
    'llm.input_messages.1.message.contents.1.message_content.type': 'image',
    'llm.input_messages.1.message.contents.1.message_content.image.image.url': 'https://example.com/cat.png',
    'llm.output_messages.0.message.role': 'assistant',
    'llm.output_messages.0.message.content': 'hi!',
    'llm.token_count.prompt': 12,
    'llm.token_count.completion': 3,
    'llm.token_count.total': 15,
    'llm.token_count.prompt_details.cache_read': 2,
    'session.id': 'session-42',
    'user.id': 'user-7',
    'tag.tags': ['beta', 'eu'],
    metadata: '{"experiment":"a","tenant":"acme"}',
  };

  it('flattened messages with content parts, invocation parameters, tokens, session, user, tags, metadata', () => {
    const f = map(span(attrs));
    expect(f.configuration).toEqual({
      model: 'gpt-4o-mini',
      provider: 'openai',
      model_params: { temperature: 0.1, max_tokens: 64 },
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    });
    expect(f.output).toBe('hi!');
    expect(f.inputs).toEqual({ messages: [{ role: 'user', content: 'Say hi' }], model: 'gpt-4o-mini' });
    expect(f).toMatchObject({
      input_tokens: 12,
      output_tokens: 3,
      total_tokens: 15,
      session_id: 'session-42',
      end_user_identifier: 'user-7',
      tags: ['beta', 'eu'],
    });
    expect(f.metadata).toMatchObject({ kind: 'llm', experiment: 'a', tenant: 'acme', 'usage.cache_read_tokens': '2' });
  });

  it('a chain span: input.value / output.value as inputs and output', () => {
    const f = map(
      span({ 'openinference.span.kind': 'CHAIN', 'input.value': 'What is OTel?', 'output.value': 'A standard.' }),
    );
    expect(f.inputs).toEqual({ input: 'What is OTel?' });
    expect(f.output).toBe('A standard.');
    expect(f.metadata.kind).toBe('chain');
    expect(f.configuration).toBeUndefined();
  });
});

describe('Vercel AI SDK', () => {
  it('the model call span (doGenerate): prompt messages, response text, usage, provider from ai.model.provider', () => {
    const f = map(
      span({
        'operation.name': 'ai.generateText.doGenerate',
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.id': 'gpt-4o',
        'ai.model.provider': 'openai.chat',
        'ai.prompt.format': 'messages',
        'ai.prompt.messages': JSON.stringify([
          { role: 'system', content: 'You are a weather bot.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Berlin?' }] },
        ]),
        'ai.response.text': 'Sunny, 21°C.',
        'ai.response.finishReason': 'stop',
        'ai.usage.promptTokens': 30,
        'ai.usage.completionTokens': 8,
        'gen_ai.system': 'openai.chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 30,
        'gen_ai.usage.output_tokens': 8,
        'ai.telemetry.metadata.userId': 'u-1',
        'ai.telemetry.metadata.sessionId': 's-1',
      }),
    );
    expect(f.configuration).toMatchObject({
      model: 'gpt-4o',
      provider: 'openai',
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'Weather in Berlin?' },
      ],
    });
    expect(f).toMatchObject({
      output: 'Sunny, 21°C.',
      input_tokens: 30,
      output_tokens: 8,
      session_id: 's-1',
      end_user_identifier: 'u-1',
    });
    expect(f.cost).toBe(costOf('openai', 'gpt-4o', { input_tokens: 30, output_tokens: 8 }).cost);
    expect(f.metadata.kind).toBe('llm');
  });

  it('the outer call span keeps its prompt and text but not its usage, which its model call spans already count', () => {
    const f = map(
      span({
        'ai.operationId': 'ai.streamText',
        'ai.model.id': 'gpt-4o',
        'ai.model.provider': 'openai.chat',
        'ai.prompt': JSON.stringify({ system: 'Be nice.', prompt: 'Hello' }),
        'ai.response.text': 'Hi there',
        'ai.usage.promptTokens': 30,
        'ai.usage.completionTokens': 8,
      }),
    );
    expect(f.configuration.messages).toEqual([
      { role: 'system', content: 'Be nice.' },
      { role: 'user', content: 'Hello' },
    ]);
    expect(f.output).toBe('Hi there');
    expect(f.input_tokens).toBeUndefined();
    expect(f.cost).toBeUndefined();
    expect(f.metadata).toMatchObject({ kind: 'chain', 'ai.usage.promptTokens': '30' });
  });

  it('time to first token from a stream (milliseconds to seconds)', () => {
    expect(
      map(span({ 'ai.operationId': 'ai.streamText.doStream', 'ai.response.msToFirstChunk': 412.5 }))
        .time_to_first_token,
    ).toBe(0.4125);
  });
});

describe('precedence', () => {
  it('the current semconv attributes win over OpenInference’s and the flattened ones on the same span', () => {
    const f = map(
      span({
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'semconv' }] }]),
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'openllmetry',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'openinference',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': 'from openinference',
      }),
    );
    expect(f.configuration.messages).toEqual([{ role: 'user', content: 'semconv' }]);
    expect(f.output).toBe('from openinference');
  });
});

describe('metadata', () => {
  it('keeps unclaimed attributes as strings under dotted keys, the resource’s and the scope’s on roots, and OTel’s own that the UUIDs do not hold', () => {
    const resource = { 'service.name': 'checkout', 'deployment.environment': 'prod' };
    const f = map(span({ 'http.status_code': 200, 'feature.flags': ['a', 'b'], retried: false }), resource);
    expect(f.metadata).toEqual({
      'http.status_code': '200',
      'feature.flags': '["a","b"]',
      retried: 'false',
      'otel.span_kind': 'CLIENT',
      // Finer than the columns' microseconds: kept.
      'otel.start_time_unix_nano': '1767225600123456789',
      'otel.end_time_unix_nano': '1767225602623456790',
    });
    const root = map(
      span({}, { parentSpanId: null, kind: 1, startTimeUnixNano: 1_767_225_600_123_456_000n, endTimeUnixNano: null }),
      resource,
    );
    expect(root.metadata).toEqual({
      'otel.span_id': SPAN,
      'otel.scope.name': 'scope',
      'otel.scope.version': '1.2.3',
      'resource.service.name': 'checkout',
      'resource.deployment.environment': 'prod',
    });
  });

  it('is bounded: long values are cut saying so, and past the key limit OTel’s keys stay and the count of the rest is kept', () => {
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`attr.${i}`, i]));
    const f = map(span({ ...many, big: 'x'.repeat(100_000) }, { parentSpanId: null }));
    expect(Object.keys(f.metadata).length).toBeLessThanOrEqual(MAX_METADATA_KEYS + 1);
    expect(f.metadata['otel.span_id']).toBe(SPAN);
    expect(Number(f.metadata['otel.dropped_attributes_count'])).toBeGreaterThan(9_000);
    const g = map(span({ big: 'x'.repeat(100_000) }));
    expect(g.metadata.big).toHaveLength(MAX_METADATA_VALUE_CHARS + '… [truncated: 100000 characters]'.length);
  });
});
