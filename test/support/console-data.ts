import { randomUUID } from 'node:crypto';

// Traces that look like a real LLM application's, written through the public API: what the console's
// browser test reads, and what its screenshots show.

type Span = Record<string, unknown> & { trace_id: string };

export async function writeSpans(base: string, key: string, spans: Span[]) {
  for (let i = 0; i < spans.length; i += 500) {
    const res = await fetch(`${base}/trace_logs/batch`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ trace_logs: spans.slice(i, i + 500) }),
    });
    if (res.status !== 200) throw new Error(`batch refused: ${res.status} ${await res.text()}`);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A 3-level agent trace: a chain, a retriever and an LLM call with a tool call under it. */
export function agentTrace(project: string, startMs: number, name = 'answer-question') {
  const [root, retrieve, llm, tool] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const at = (offset: number) => iso(startMs + offset);
  const spans: Span[] = [
    {
      trace_id: root,
      project_name: project,
      trace_name: name,
      start_timestamp: at(0),
      end_timestamp: at(2400),
      status: 'success',
      inputs: { question: 'How do I rotate an API key without downtime?' },
      output: 'Create a second key, deploy it, then revoke the first.',
      tags: ['prod', 'agent'],
      end_user_identifier: 'ada@example.com',
      session_id: 'session-42',
      metadata: { environment: 'production', release: '2026.11.3' },
      scores: [
        { name: 'helpfulness', score: 0.92, reason: 'Answers the question with steps in order.' },
        { name: 'groundedness', score: 0.8 },
      ],
      depth: 0,
      execution_order: 0,
    },
    {
      trace_id: retrieve,
      root_trace_id: root,
      parent_trace_id: root,
      project_name: project,
      trace_name: 'search-docs',
      start_timestamp: at(40),
      end_timestamp: at(420),
      status: 'success',
      inputs: { query: 'rotate API key', top_k: 3 },
      output: JSON.stringify([{ doc: 'keys.md#rotation', score: 0.88 }]),
      metadata: { index: 'docs-v7' },
      depth: 1,
      execution_order: 1,
    },
    {
      trace_id: llm,
      root_trace_id: root,
      parent_trace_id: root,
      project_name: project,
      trace_name: 'llm-openai',
      start_timestamp: at(450),
      end_timestamp: at(2350),
      status: 'success',
      input_tokens: 412,
      output_tokens: 128,
      cost: 0.00231,
      time_to_first_token: 0.38,
      depth: 1,
      execution_order: 2,
      configuration: {
        model: 'gpt-4o-mini',
        provider: 'openai',
        model_params: { temp: 0.2, max_length: 512 },
        messages: [
          { role: 'system', content: 'You are the support assistant of Sightline. Answer briefly, with steps.' },
          { role: 'user', content: 'How do I rotate an API key without downtime?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'search_docs', arguments: '{"query":"rotate API key","top_k":3}' },
              },
            ],
          },
          {
            role: 'tool',
            tool_call_id: 'call_1',
            content: 'keys.md#rotation: create a new key, switch clients, revoke the old key.',
          },
        ],
      },
      output:
        'To rotate a key **without downtime**:\n\n1. Create a second key in *Settings*.\n2. Deploy it to your clients.\n3. Revoke the first key.\n\n```sh\nnpm run apikey -- create --org acme --role member --label ci\n```',
    },
    {
      trace_id: tool,
      root_trace_id: root,
      parent_trace_id: llm,
      project_name: project,
      trace_name: 'search_docs',
      start_timestamp: at(900),
      end_timestamp: at(1250),
      status: 'success',
      inputs: { query: 'rotate API key', top_k: 3 },
      output: 'keys.md#rotation',
      depth: 2,
      execution_order: 3,
    },
  ];
  return { root, llm, tool, spans };
}

const NAMES = ['answer-question', 'summarize-ticket', 'classify-intent', 'draft-reply', 'extract-entities'];
const USERS = ['ada@example.com', 'grace@example.com', 'linus@example.com', null];
const MODELS = ['gpt-4o-mini', 'claude-3-5-haiku', 'gpt-4.1'];

/** `n` root traces over the last hours, of several names, users, sessions, tags and outcomes. */
export function manyTraces(project: string, n: number, nowMs = Date.now()): Span[] {
  const spans: Span[] = [];
  for (let i = 0; i < n; i++) {
    const root = randomUUID();
    const start = nowMs - (i + 1) * 7 * 60_000;
    const failed = i % 7 === 3;
    const duration = 300 + ((i * 977) % 4200);
    const tokensIn = 120 + ((i * 131) % 900),
      tokensOut = 40 + ((i * 37) % 300);
    spans.push({
      trace_id: root,
      project_name: project,
      trace_name: NAMES[i % NAMES.length],
      start_timestamp: iso(start),
      end_timestamp: iso(start + duration),
      status: failed ? 'error' : 'success',
      error: failed
        ? 'RateLimitError: 429 Too Many Requests\n    at callProvider (gateway/provider-call.ts:88:11)\n    at async answer (app/agent.ts:41:5)'
        : null,
      inputs: { ticket: `Ticket #${1000 + i}: the export to CSV ${i % 2 ? 'times out' : 'misses the last column'}` },
      output: failed ? null : `Resolved ticket ${1000 + i}`,
      tags: i % 3 === 0 ? ['prod', 'beta'] : ['prod'],
      end_user_identifier: USERS[i % USERS.length],
      session_id: `session-${Math.floor(i / 3)}`,
      metadata: { environment: i % 4 === 0 ? 'staging' : 'production', customer: `acme-${i % 5}` },
      scores: i % 2 ? [{ name: 'helpfulness', score: Number(((i % 10) / 10).toFixed(1)) }] : [],
      input_tokens: tokensIn,
      output_tokens: tokensOut,
      cost: Number(((tokensIn * 0.15 + tokensOut * 0.6) / 1e6).toFixed(6)),
      configuration: { model: MODELS[i % MODELS.length] },
    });
  }
  return spans;
}

/** A trace of `n` spans, four children to a parent, each 4 ms after the one before. */
export function wideTrace(project: string, n: number, startMs = Date.now() - 60_000) {
  const ids = Array.from({ length: n }, () => randomUUID());
  const spans: Span[] = ids.map((id, i) => ({
    trace_id: id,
    project_name: project,
    trace_name: i ? `step-${i}` : 'agent-run',
    start_timestamp: iso(startMs + i * 4),
    end_timestamp: iso(startMs + i * 4 + (i ? 3 : n * 4)),
    status: i % 997 === 5 ? 'error' : 'success',
    depth: 0,
    execution_order: i,
    ...(i && { root_trace_id: ids[0], parent_trace_id: ids[Math.floor((i - 1) / 4)] }),
  }));
  return { root: ids[0]!, spans };
}

/**
 * A finished experiment run: one root trace per case (`caseOf(i)` its fields: name, inputs, target, output,
 * scores, latency), started a second apart a minute ago. Answers the run's uuid and its traces' ids.
 */
export async function writeExperimentRun(
  base: string,
  key: string,
  run: {
    projectUuid: string;
    name: string;
    runName: string;
    cases: number;
    caseOf: (i: number) => Record<string, unknown>;
  },
): Promise<{ uuid: string; traceIds: string[] }> {
  const post = async (path: string, body: object): Promise<{ uuid: string }> => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${path} refused: ${res.status} ${await res.text()}`);
    return (await res.json()) as { uuid: string };
  };
  const { uuid } = await post('/experiment', { name: run.name, project_uuid: run.projectUuid, run_name: run.runName });
  const start = Date.now() - 60_000;
  const traceIds = Array.from({ length: run.cases }, () => randomUUID());
  await writeSpans(
    base,
    key,
    traceIds.map((trace_id, i) => ({
      trace_id,
      project_uuid: run.projectUuid,
      experiment_uuid: uuid,
      start_timestamp: iso(start + i * 1000),
      ...run.caseOf(i),
    })),
  );
  await post(`/experiment/${uuid}/finished`, {});
  return { uuid, traceIds };
}

/** A sum question answered right (correct(i) = 1) or wrong, with its score: the experiments' test cases. */
export const sumCase = (correct: (i: number) => number) => (i: number) => ({
  trace_name: 'qa-case',
  latency: 1 + (i % 5) / 10,
  inputs: { question: `What is ${i} + ${i}?` },
  target: String(2 * i),
  output: correct(i) ? `The answer is ${2 * i}.` : `The answer is ${2 * i + 1}, I think.`,
  scores: [{ name: 'correct', score: correct(i) }],
});
