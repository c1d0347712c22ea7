// Realistic spans for the ingest benchmarks: traces of 5 spans (a root and four children: retrieval, two
// LLM calls, a tool call), each 1–3 KB of JSON with metadata, tags and an LLM configuration, as the
// client libraries send them.
import { randomUUID } from 'node:crypto';

const WORDS =
  'the of model answer question context retrieval document score latency token prompt user system tool call result cache vector index query'.split(
    ' ',
  );
const text = (chars: number) => {
  let out = '';
  while (out.length < chars) out += WORDS[Math.floor(Math.random() * WORDS.length)] + ' ';
  return out.slice(0, chars);
};
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
const NAMES = ['rag-pipeline', 'retrieve', 'llm-draft', 'llm-refine', 'tool-search'];

export type BenchSpan = Record<string, unknown> & { trace_id: string; root_trace_id: string };

/** One trace: the root first, then its children, in the order a client sends them. */
function makeTrace(project_name: string): BenchSpan[] {
  const root = randomUUID();
  const ids = [root, randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const start = Date.now() - 1000;
  const user = `user-${between(1, 5000)}`;
  return ids.map((trace_id, i) => ({
    trace_id,
    root_trace_id: root,
    parent_trace_id: root,
    project_name,
    trace_name: NAMES[i],
    depth: i === 0 ? 0 : 1,
    execution_order: i,
    start_timestamp: new Date(start + i * 100).toISOString(),
    end_timestamp: new Date(start + i * 100 + between(50, 900)).toISOString(),
    status: Math.random() < 0.05 ? 'error' : 'success',
    inputs: { question: text(between(100, 600)), context_id: randomUUID() },
    output: text(between(200, 1200)),
    metadata: {
      user_id: user,
      env: 'production',
      release: `1.${between(0, 20)}.${between(0, 9)}`,
      region: ['eu-west-1', 'us-east-1'][i % 2],
      feature: 'support-bot',
    },
    tags: ['bench', i === 0 ? 'root' : 'step', Math.random() < 0.5 ? 'cohort-a' : 'cohort-b'],
    configuration: {
      model: 'gpt-4o-mini',
      provider: 'openai',
      temp: 0.2,
      max_length: 512,
      messages: [{ role: 'system', content: text(between(80, 300)) }],
    },
    latency: Math.random() * 2,
    input_tokens: between(100, 2000),
    output_tokens: between(10, 500),
    total_tokens: 0,
    cost: Math.random() / 100,
    end_user_identifier: user,
    session_id: `session-${between(1, 20000)}`,
    ...(i === 0 && { children: ids.slice(1) }),
  }));
}

/** `size` traces of 5 spans, to render once and send many times (as JSON, or as OTLP: see otlp.ts). */
export const tracePool = (project_name: string, size = 2000): BenchSpan[][] =>
  Array.from({ length: size }, () => makeTrace(project_name));

const SLOT = '$$$$$$$$$$$$';

/**
 * An endless supply of span bodies (JSON text), trace by trace, every span id unique. Bodies come from a
 * pool of pre-rendered traces whose ids end in a slot filled with a per-trace counter, so the load
 * generator spends its CPU on sending, not on building JSON.
 */
export function spanBodies(traces: BenchSpan[][]): () => string {
  const poolSize = traces.length;
  const pool = traces.map((trace) =>
    trace.map((span) => {
      let json = JSON.stringify(span);
      // Each span's ids keep their random first 24 hex digits; the last 12 become the slot.
      for (const id of new Set(json.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g)))
        json = json.split(id).join(id.slice(0, 24) + SLOT);
      return json.split(SLOT);
    }),
  );
  let counter = Math.floor(Math.random() * 2 ** 40);
  let trace = 0,
    span = 0,
    suffix = '';
  return () => {
    if (span === 0) suffix = (counter++).toString(16).padStart(12, '0');
    const body = pool[trace][span].join(suffix);
    if (++span === 5) {
      span = 0;
      trace = (trace + 1) % poolSize;
    }
    return body;
  };
}
