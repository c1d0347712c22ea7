import { describe, it, expect } from 'vitest';
import { ChainlibError, runToSpans } from './chainlib';

const ROOT = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const LLM = '6f9619ff-8b86-d011-b42d-00c04fc964ff';
const TOOL = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function catchError(fn: () => unknown): ChainlibError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ChainlibError);
    return err as ChainlibError;
  }
  throw new Error('expected a ChainlibError');
}

function chain(depth: number): Record<string, unknown> {
  let run: Record<string, unknown> = { id: uuid(depth - 1), run_type: 'chain' };
  for (let i = depth - 2; i >= 0; i--) run = { id: uuid(i), run_type: 'chain', child_runs: [run] };
  return run;
}

const tree = {
  id: ROOT.toUpperCase(),
  name: 'RunnableSequence',
  run_type: 'chain',
  start_time: 1_700_000_000_000,
  end_time: 1_700_000_002_500,
  inputs: { question: 'What is 2+2?' },
  outputs: { output: 'Four' },
  error: null,
  extra: { metadata: { user: 'u1' } },
  tags: ['prod', 7, 'v2'],
  project_uuid: 'b7e4c1a2-0000-4000-8000-000000000001',
  child_runs: [
    {
      id: TOOL,
      name: 'calculator',
      run_type: 'tool',
      execution_order: 3,
      start_time: '2023-11-14T22:13:21.800Z',
      end_time: '2023-11-14T22:13:22.000Z',
      inputs: { input: '2+2' },
      outputs: { output: '4' },
    },
    {
      id: LLM,
      name: 'ChatOpenAI',
      run_type: 'llm',
      execution_order: 2,
      start_time: '2023-11-14T22:13:20.100000+00:00',
      end_time: '2023-11-14T22:13:21.600000+00:00',
      inputs: { messages: [[{ role: 'user', content: 'What is 2+2?' }]] },
      outputs: {
        generations: [[{ text: 'Use the calculator', message: { content: 'ignored' } }]],
        llm_output: { token_usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } },
      },
      extra: {
        invocation_params: {
          model: 'gpt-4o-mini',
          _type: 'openai-chat',
          temperature: 0.2,
          max_tokens: 256,
          top_p: 1,
          n: 1,
        },
        metadata: { ls_provider: 'openai' },
      },
      child_runs: [{ id: uuid(99), name: '', run_type: 'parser', outputs: { a: 1, b: 'x' } }],
    },
  ],
};

describe('runToSpans', () => {
  it('flattens a 3-level tree, parents first, in execution order', () => {
    const spans = runToSpans(tree);
    expect(spans.map((s) => [s.trace_id, s.parent_trace_id, s.depth, s.execution_order])).toEqual([
      [ROOT, ROOT, 0, 0],
      [LLM, ROOT, 1, 1],
      [uuid(99), LLM, 2, 2],
      [TOOL, ROOT, 1, 3],
    ]);
    for (const s of spans) {
      expect(s.root_trace_id).toBe(ROOT);
      expect(s.project_uuid).toBe(tree.project_uuid);
    }
  });

  it('maps the root chain run', () => {
    const [root] = runToSpans(tree);
    expect(root).toEqual({
      trace_id: ROOT,
      root_trace_id: ROOT,
      parent_trace_id: ROOT,
      trace_name: 'RunnableSequence',
      inputs: { question: 'What is 2+2?' },
      output: 'Four',
      start_timestamp: '2023-11-14T22:13:20.000Z',
      end_timestamp: '2023-11-14T22:13:22.500Z',
      latency: 2.5,
      status: 'success',
      tags: ['prod', 'v2'],
      metadata: { user: 'u1', run_type: 'chain' },
      execution_order: 0,
      depth: 0,
      project_uuid: tree.project_uuid,
    });
  });

  it('maps llm configuration, token usage and generation text', () => {
    const llm = runToSpans(tree)[1];
    expect(llm.trace_name).toBe('ChatOpenAI');
    expect(llm.output).toBe('Use the calculator');
    expect(llm.configuration).toEqual({
      model: 'gpt-4o-mini',
      provider: 'openai',
      model_params: { temp: 0.2, max_length: 256, top_p: 1 },
    });
    expect([llm.input_tokens, llm.output_tokens, llm.total_tokens]).toEqual([12, 5, 17]);
    expect(llm.start_timestamp).toBe('2023-11-14T22:13:20.100Z');
    expect(llm.latency).toBeCloseTo(1.5);
    expect(llm.metadata).toEqual({ ls_provider: 'openai', run_type: 'llm' });
  });

  it('only sets llm fields on llm runs', () => {
    const tool = runToSpans(tree)[3];
    expect(tool.configuration).toBeUndefined();
    expect(tool.input_tokens).toBeUndefined();
    expect(tool.output).toBe('4');
  });

  it('reads other llm config and usage shapes', () => {
    const [span] = runToSpans({
      id: ROOT,
      run_type: 'llm',
      outputs: {
        generations: [[{ text: '', message: { kwargs: { content: 'hi' } } }]],
        llm_output: { usage: { input_tokens: 3, output_tokens: 4 } },
      },
      extra: { invocation_params: { model_name: 'claude-3-haiku', _type: 'anthropic-chat', temperature: 'hot' } },
    });
    expect(span.output).toBe('hi');
    expect(span.configuration).toEqual({ model: 'claude-3-haiku', provider: 'anthropic' });
    expect([span.input_tokens, span.output_tokens, span.total_tokens]).toEqual([3, 4, 7]);

    const [other] = runToSpans({
      id: ROOT,
      run_type: 'llm',
      outputs: { generations: [[{ message: { content: 'yo' } }]] },
      extra: { invocation_params: { deployment_name: 'my-gpt', _type: 'azure-openai-chat' } },
    });
    expect(other.output).toBe('yo');
    expect(other.configuration).toEqual({ model: 'my-gpt', provider: 'azure-openai' });
    expect(other.total_tokens).toBeUndefined();
  });

  it('serializes outputs', () => {
    const output = (outputs: unknown, run_type = 'chain') => runToSpans({ id: ROOT, run_type, outputs })[0].output;
    expect(output({ text: 'only string' })).toBe('only string');
    expect(output({ n: 1 })).toBe('{"n":1}');
    expect(output({ a: 'x', b: 'y' })).toBe('{"a":"x","b":"y"}');
    expect(output({})).toBe('{}');
    expect(output(null)).toBeUndefined();
    expect(output(undefined)).toBeUndefined();
    expect(output('bare')).toBe('bare');
    // llm run without usable generation text falls back to the general rules
    expect(output({ generations: [[{ text: '', message: { content: [{ type: 'tool_use' }] } }]] }, 'llm')).toBe(
      '{"generations":[[{"text":"","message":{"content":[{"type":"tool_use"}]}}]]}',
    );
  });

  it('marks error runs', () => {
    const [span] = runToSpans({ id: ROOT, run_type: 'tool', error: 'ValueError: boom', outputs: null });
    expect(span.status).toBe('error');
    expect(span.error).toBe('ValueError: boom');
    expect(runToSpans({ id: ROOT, error: '' })[0]).toMatchObject({ status: 'success' });
    expect(runToSpans({ id: ROOT, error: { message: 'x' } })[0].error).toBeUndefined();
  });

  it('parses epoch-ms and ISO times, treating offset-less ISO as UTC', () => {
    const times = (start_time: unknown, end_time: unknown) => {
      const s = runToSpans({ id: ROOT, start_time, end_time })[0];
      return [s.start_timestamp, s.end_timestamp, s.latency];
    };
    expect(times(0, 1500)).toEqual(['1970-01-01T00:00:00.000Z', '1970-01-01T00:00:01.500Z', 1.5]);
    expect(times('2024-05-01T10:00:00.123456', '2024-05-01 10:00:01Z')).toEqual([
      '2024-05-01T10:00:00.123Z',
      '2024-05-01T10:00:01.000Z',
      0.877,
    ]);
    expect(times('2024-05-01T12:00:00+0200', null)).toEqual(['2024-05-01T10:00:00.000Z', undefined, undefined]);
    // end before start: timestamps kept, no latency
    expect(times(2000, 1000)).toEqual(['1970-01-01T00:00:02.000Z', '1970-01-01T00:00:01.000Z', undefined]);
  });

  it('rejects unparseable times with their path', () => {
    expect(catchError(() => runToSpans({ id: ROOT, start_time: 'yesterday' })).path).toEqual(['start_time']);
    expect(catchError(() => runToSpans({ id: ROOT, end_time: '42' })).path).toEqual(['end_time']);
    expect(catchError(() => runToSpans({ id: ROOT, end_time: 1e20 })).path).toEqual(['end_time']);
    const nested = { id: ROOT, child_runs: [{ id: LLM, start_time: true }] };
    expect(catchError(() => runToSpans(nested)).path).toEqual(['child_runs', 0, 'start_time']);
  });

  it('rejects bad ids with their path', () => {
    expect(catchError(() => runToSpans({ name: 'x' })).path).toEqual(['id']);
    expect(catchError(() => runToSpans({ id: 'not-a-uuid' })).path).toEqual(['id']);
    expect(catchError(() => runToSpans({ id: ROOT, child_runs: [{ id: 42 }] })).path).toEqual(['child_runs', 0, 'id']);
    const deep = { id: ROOT, child_runs: [{ id: LLM }, { id: TOOL, child_runs: [{ id: `${uuid(1)}x` }] }] };
    const err = catchError(() => runToSpans(deep));
    expect(err.path).toEqual(['child_runs', 1, 'child_runs', 0, 'id']);
    expect(err.message).toMatch(/UUID/);
    expect(catchError(() => runToSpans({ id: ROOT, child_runs: ['oops'] })).path).toEqual(['child_runs', 0]);
    expect(catchError(() => runToSpans({ id: ROOT, child_runs: [{ id: ROOT }] })).message).toMatch(/duplicate/);
    expect(catchError(() => runToSpans(null)).path).toEqual([]);
    expect(catchError(() => runToSpans([tree])).path).toEqual([]);
  });

  it('enforces maxSpans', () => {
    const wide = { id: ROOT, child_runs: Array.from({ length: 5 }, (_, i) => ({ id: uuid(i + 1) })) };
    expect(runToSpans(wide, { maxSpans: 6 })).toHaveLength(6);
    expect(catchError(() => runToSpans(wide, { maxSpans: 5 })).message).toMatch(/more than 5/);
    expect(runToSpans(chain(10), { maxSpans: 10 })).toHaveLength(10);
    expect(() => runToSpans(chain(10), { maxSpans: 9 })).toThrow(ChainlibError);
    const big = { id: ROOT, child_runs: Array.from({ length: 10_000 }, (_, i) => ({ id: uuid(i + 1) })) };
    expect(() => runToSpans(big)).toThrow(ChainlibError);
  });

  it('allows 1000 levels and rejects deeper nesting without a RangeError', () => {
    const spans = runToSpans(chain(1000));
    expect(spans).toHaveLength(1000);
    expect(spans[999]).toMatchObject({ depth: 999, parent_trace_id: uuid(998), root_trace_id: uuid(0) });
    const err = catchError(() => runToSpans(chain(1500)));
    expect(err.message).toMatch(/nested/);
  });

  it('rejects values nested too deeply inside inputs', () => {
    let inputs: unknown = 'leaf';
    for (let i = 0; i < 5000; i++) inputs = [inputs];
    const err = catchError(() => runToSpans({ id: ROOT, inputs: { x: inputs } }));
    expect(err.path.slice(0, 3)).toEqual(['inputs', 'x', 0]);
  });

  it('strips NUL characters everywhere', () => {
    const [span, child] = runToSpans({
      id: ROOT,
      name: 'na\u0000me',
      run_type: 'chain',
      inputs: { 'k\u0000ey': ['a\u0000b', { deep: 'c\u0000' }], n: 1, ok: true, nil: null },
      outputs: { out: 'x\u0000y' },
      error: 'bo\u0000om',
      tags: ['t\u0000ag'],
      extra: { metadata: { m: { n: '\u0000v' } } },
      project_uuid: 'p\u0000',
      child_runs: [
        {
          id: LLM,
          name: '\u0000',
          run_type: 'llm',
          outputs: { generations: [[{ text: 'g\u0000' }]], extra: '\u0000' },
        },
      ],
    });
    expect(span.trace_name).toBe('name');
    expect(span.inputs).toEqual({ key: ['ab', { deep: 'c' }], n: 1, ok: true, nil: null });
    expect(span.output).toBe('xy');
    expect(span.error).toBe('boom');
    expect(span.tags).toEqual(['tag']);
    expect(span.metadata).toEqual({ m: { n: 'v' }, run_type: 'chain' });
    expect(span.project_uuid).toBe('p');
    expect(child.trace_name).toBe('llm');
    expect(child.output).toBe('g');
    expect(JSON.stringify([span, child])).not.toContain('\\u0000');
  });

  it('replaces unpaired surrogates, which jsonb rejects', () => {
    const [span] = runToSpans({ id: ROOT, inputs: { s: 'a\ud800b', ok: '😀' } });
    expect(span.inputs).toEqual({ s: 'a\ufffdb', ok: '😀' });
  });

  it('keeps a "__proto__" input key as plain data', () => {
    const [span] = runToSpans({ id: ROOT, inputs: JSON.parse('{"__proto__": {"polluted": true}}') });
    expect(Object.getPrototypeOf(span.inputs)).toBe(Object.prototype);
    expect(Object.keys(span.inputs!)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('tolerates missing and wrongly typed fields', () => {
    expect(runToSpans({ id: ROOT })).toEqual([
      {
        trace_id: ROOT,
        root_trace_id: ROOT,
        parent_trace_id: ROOT,
        trace_name: 'run',
        status: 'success',
        execution_order: 0,
        depth: 0,
      },
    ]);
    const [span, child] = runToSpans({
      id: ROOT,
      name: 5,
      run_type: 'llm',
      inputs: 'text',
      outputs: {
        generations: 'nope',
        llm_output: { token_usage: { prompt_tokens: '3', completion_tokens: -1, total_tokens: 1.5 } },
      },
      extra: { metadata: [1], invocation_params: 'x' },
      tags: 'a,b',
      child_runs: { id: LLM },
      execution_order: 'first',
      project_uuid: 12,
    });
    expect(span).toEqual({
      trace_id: ROOT,
      root_trace_id: ROOT,
      parent_trace_id: ROOT,
      trace_name: 'llm',
      output:
        '{"generations":"nope","llm_output":{"token_usage":{"prompt_tokens":"3","completion_tokens":-1,"total_tokens":1.5}}}',
      status: 'success',
      metadata: { run_type: 'llm' },
      execution_order: 0,
      depth: 0,
    });
    expect(child).toBeUndefined();
  });

  it('orders children without execution_order after those with one, in array order', () => {
    const spans = runToSpans({
      id: ROOT,
      child_runs: [
        { id: uuid(1) },
        { id: uuid(2), execution_order: 9 },
        { id: uuid(3) },
        { id: uuid(4), execution_order: 1 },
      ],
    });
    expect(spans.map((s) => s.trace_id)).toEqual([ROOT, uuid(4), uuid(2), uuid(1), uuid(3)]);
  });
});
