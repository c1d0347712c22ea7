import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { OpenAIInstrumentation as OpenInferenceInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { Metadata } from '@grpc/grpc-js';
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { OpenAIInstrumentation as OpenLLMetryInstrumentation } from '@traceloop/instrumentation-openai';
import { countTokens as o200kTokens } from 'gpt-tokenizer/encoding/o200k_base';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveOtlpGrpc, type OtlpGrpcServer } from '@sightline/api/otlp-grpc';
import { costOf } from '@sightline/llm';
import { FakeOpenAI } from '../fakes/fake-openai';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';
import { uuidOfHex as uuid } from '../support/otlp';

// Real OTLP exporters and real GenAI instrumentations of the OpenAI SDK, talking over real sockets to the
// API and to a fake OpenAI: what a user's process sends, byte for byte, read back as a user reads it.

const {
  stack,
  orgs: [org],
} = useStack({ orgs: ['otel-clients'] });

const openai = new FakeOpenAI();
let apiBase = '';
let grpc: OtlpGrpcServer;

beforeAll(async () => {
  await openai.start();
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  apiBase = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
  grpc = await serveOtlpGrpc(stack.app, '127.0.0.1', 0);
});
afterAll(async () => {
  await grpc.close(1000);
  await openai.stop();
});

type Tree = { trace_id: string; trace_name: string; depth: number; children: Tree[]; [k: string]: unknown };

// ---- Exporters -------------------------------------------------------------------------------------------

type Exporter = { name: string; make(key: string): SpanExporter };

const EXPORTERS: Exporter[] = [
  {
    // The usual production set-up: protobuf, gzip (set as users set it, by environment), a Bearer token.
    name: 'protobuf exporter (gzip, Bearer, /v1/traces)',
    make(key) {
      vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'gzip');
      try {
        return new OtlpProtobufExporter({ url: `${apiBase}/v1/traces`, headers: { authorization: `Bearer ${key}` } });
      } finally {
        vi.unstubAllEnvs();
      }
    },
  },
  {
    // Most SDKs' and collectors' default: gRPC, here with gzip and the key and project as metadata.
    name: 'gRPC exporter (gzip, Bearer metadata)',
    make(key) {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${key}`);
      vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'gzip');
      try {
        return new OtlpGrpcExporter({ url: `http://127.0.0.1:${grpc.port}`, metadata });
      } finally {
        vi.unstubAllEnvs();
      }
    },
  },
  {
    name: 'JSON exporter (x-api-key, /api/svc/v1/otel/v1/traces)',
    make: (key) => new OtlpJsonExporter({ url: `${apiBase}/api/svc/v1/otel/v1/traces`, headers: { 'x-api-key': key } }),
  },
];

// ---- Instrumentations ------------------------------------------------------------------------------------

// Under ESM no require hook sees `openai` load: both are applied by hand to the module the test imports
// (the OpenAI class, which also carries itself as `.OpenAI`, the shape each one reads). Each answers how to
// undo its patch, so that the next test's instrumentation is the only one on the prototype.
type Instrumentation = { name: string; apply(provider: NodeTracerProvider): () => void };

const pristineCreate = OpenAI.Chat.Completions.prototype.create;

const INSTRUMENTATIONS: Instrumentation[] = [
  {
    name: 'OpenInference (@arizeai/openinference-instrumentation-openai)',
    apply(provider) {
      // Disabled only means no require hook is installed; the manual patch applies all the same.
      const instrumentation = new OpenInferenceInstrumentation({
        tracerProvider: provider,
        instrumentationConfig: { enabled: false },
      });
      instrumentation.manuallyInstrument(OpenAI);
      return () => instrumentation.disable();
    },
  },
  {
    name: 'OpenLLMetry (@traceloop/instrumentation-openai)',
    apply(provider) {
      const instrumentation = new OpenLLMetryInstrumentation({ enabled: false, traceContent: true });
      instrumentation.setTracerProvider(provider);
      instrumentation.manuallyInstrument(OpenAI);
      // Its disable() unpatches only modules its require hook patched; unpatch is manuallyInstrument's
      // counterpart for a module handed to it (private in the typings).
      return () => (instrumentation as unknown as { unpatch(module: unknown): void }).unpatch(OpenAI);
    },
  },
];

// ---- A tracing session -----------------------------------------------------------------------------------

/** The spans the SDK has ended, to wait for one that ends after the call returns (a stream's). */
class EndedSpans implements SpanProcessor {
  readonly spans: ReadableSpan[] = [];
  private waiting: (() => void)[] = [];
  onStart() {}
  onEnd(span: ReadableSpan) {
    this.spans.push(span);
    for (const wake of this.waiting.splice(0)) wake();
  }
  async until(count: number) {
    while (this.spans.length < count) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  forceFlush = () => Promise.resolve();
  shutdown = () => Promise.resolve();
}

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
  // Each test must leave the SDK as it found it, or the next one would trace through two patches.
  expect(OpenAI.Chat.Completions.prototype.create).toBe(pristineCreate);
});

/**
 * A tracer provider as an application sets one up (registered globally, so that the parent span is the
 * active context the instrumentation's span joins), exporting through `exporter` for a project of its own.
 */
function session(exporter: Exporter, instrumentation: Instrumentation) {
  const project = `otel-clients-${randomUUID()}`;
  const ended = new EndedSpans();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': project }),
    spanProcessors: [new BatchSpanProcessor(exporter.make(org.key)), ended],
  });
  provider.register();
  const unpatch = instrumentation.apply(provider);
  cleanups.push(async () => {
    unpatch();
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  });
  const client = new OpenAI({ apiKey: 'sk-fake', baseURL: openai.baseURL, maxRetries: 0 });
  return { project, ended, provider, client, tracer: provider.getTracer('sightline-clients-test') };
}

const MODEL = 'gpt-4o-mini';
const conversation = (): ChatCompletionMessageParam[] => [
  { role: 'system', content: 'Answer in one short sentence.' },
  { role: 'user', content: `What is the capital of France? (${randomUUID()})` },
];

/** What the instrumentation emitted, shown when an expectation on what the server made of it fails. */
const emitted = (span: ReadableSpan | undefined) => `emitted attributes: ${JSON.stringify(span?.attributes, null, 1)}`;

describe.each(INSTRUMENTATIONS)('$name', (instrumentation) => {
  it.each(EXPORTERS)(
    'a chat completion traced and sent by the $name is stored as a child LLM span',
    async (exporter) => {
      const { project, ended, provider, client, tracer } = session(exporter, instrumentation);
      const messages = conversation();

      const { completion, traceId } = await tracer.startActiveSpan('answer question', async (root) => {
        try {
          const completion = await client.chat.completions.create({
            model: MODEL,
            messages,
            temperature: 0.2,
            max_tokens: 50,
          });
          return { completion, traceId: root.spanContext().traceId };
        } finally {
          root.end();
        }
      });
      await provider.forceFlush();

      const answer = completion.choices[0].message.content;
      const usage = completion.usage!;
      expect(answer).toMatch(/^echo: /);
      expect(usage.prompt_tokens).toBeGreaterThan(0);
      const llmSpan = ended.spans.find((s) => s.parentSpanContext?.spanId);
      expect(llmSpan, 'the instrumentation made no child span').toBeDefined();

      const res = await readTrace(stack.app, org.key, uuid(traceId));
      expect(res.statusCode).toBe(200);
      const tree = res.json() as Tree;
      expect(tree).toMatchObject({ trace_name: 'answer question', depth: 0, project_name: project, status: 'success' });
      expect(tree.children).toHaveLength(1);
      const llm = tree.children[0];
      expect(llm.trace_id).toBe(uuid(traceId.slice(0, 16) + llmSpan!.spanContext().spanId));
      expect(llm, emitted(llmSpan)).toMatchObject({
        trace_name: llmSpan!.name,
        depth: 1,
        children: [],
        status: 'success',
        output: answer,
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        cost: costOf('openai', MODEL, { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens })
          .cost,
        metadata: { kind: 'llm' },
        usage_estimated: false,
      });
      expect(llm.cost).toBeGreaterThan(0);
      const configuration = llm.configuration as Record<string, unknown>;
      expect(configuration, emitted(llmSpan)).toMatchObject({
        model: MODEL,
        provider: 'openai',
        model_params: { temperature: 0.2, max_tokens: 50 },
      });
      expect(configuration.messages, emitted(llmSpan)).toEqual(messages);

      // The project's listing shows the same tree.
      const listing = (await call(stack.app, org.key, 'POST', '/get_trace_logs', { project_name: project })).json();
      expect(listing.total).toBe(1);
      expect(listing.results[0]).toMatchObject({ trace_id: uuid(traceId), trace_name: 'answer question' });
      expect(listing.results[0].children).toEqual([
        expect.objectContaining({ trace_id: llm.trace_id, output: answer }),
      ]);
    },
  );

  it('a streamed chat completion is stored with the text the client assembled', async () => {
    const { project, ended, provider, client, tracer } = session(EXPORTERS[1], instrumentation);
    const messages = conversation();

    const { text, traceId } = await tracer.startActiveSpan('stream answer', async (root) => {
      try {
        const stream = await client.chat.completions.create({
          model: MODEL,
          messages,
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
        return { text, traceId: root.spanContext().traceId };
      } finally {
        root.end();
      }
    });
    // OpenInference ends its span when its own copy of the stream is drained, which may be after ours.
    await ended.until(2);
    await provider.forceFlush();

    expect(text).toMatch(/^echo: /);
    const llmSpan = ended.spans.find((s) => s.parentSpanContext?.spanId);
    const tree = (await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree;
    expect(tree).toMatchObject({ trace_name: 'stream answer', project_name: project });
    expect(tree.children).toHaveLength(1);
    // Neither instrumentation records the usage chunk of a stream (both read only `choices`): the store
    // counts the messages and the output with the model's encoding (3 tokens of framing a message, 3 to prime
    // the reply) and prices them, marked as estimated.
    const input = messages.reduce((n, m) => n + 3 + o200kTokens(String(m.content)), 3);
    const output = o200kTokens(text);
    expect(tree.children[0], emitted(llmSpan)).toMatchObject({
      depth: 1,
      status: 'success',
      output: text,
      configuration: { model: MODEL, provider: 'openai', messages },
      metadata: { kind: 'llm' },
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      cost: costOf('openai', MODEL, { input_tokens: input, output_tokens: output }).cost,
      usage_estimated: true,
    });
  });
});
