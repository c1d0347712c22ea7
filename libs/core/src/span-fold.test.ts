import { describe, expect, it } from 'vitest';
import { deriveFields, foldEvents, type FoldEvent } from './span-fold';

const create: FoldEvent = { kind: 'create', seq: 10, fields: { status: 'success', output: 'a', trace_name: 'root' } };
const update: FoldEvent = { kind: 'update', seq: 20, fields: { status: 'error', error: 'boom' } };
const feedback: FoldEvent = { kind: 'feedback', seq: 30, fields: { feedback_score: 0.5, target: 't' } };

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('foldEvents', () => {
  it('gives the in-order result for every arrival order, in one batch or one event at a time', () => {
    const expected = foldEvents(undefined, [create, update, feedback]);
    expect(expected.fields).toEqual({
      status: 'error',
      output: 'a',
      trace_name: 'root',
      error: 'boom',
      feedback_score: 0.5,
      target: 't',
    });
    for (const order of permutations([create, update, feedback])) {
      expect(foldEvents(undefined, order)).toEqual(expected);
      const stepwise = order.reduce((state, e) => foldEvents(state, [e]), foldEvents(undefined, []));
      expect(stepwise).toEqual(expected);
    }
  });
  it('is idempotent: a redelivered event changes nothing', () => {
    const once = foldEvents(undefined, [create, update]);
    expect(foldEvents(once, [create, update, update])).toEqual(once);
  });
  it('marks a span created only when a create arrives', () => {
    expect(foldEvents(undefined, [update]).created).toBe(false);
    expect(foldEvents(foldEvents(undefined, [update]), [create]).created).toBe(true);
  });
  it('never lets a create, however late, undo an update or feedback', () => {
    const retriedCreate: FoldEvent = {
      kind: 'create',
      seq: 40,
      fields: { status: 'success', output: 'b', feedback_score: null },
    };
    const folded = foldEvents(undefined, [create, update, feedback, retriedCreate]);
    expect(folded.fields).toMatchObject({ status: 'error', error: 'boom', feedback_score: 0.5, output: 'b' });
    for (const order of permutations([create, update, feedback, retriedCreate]))
      expect(foldEvents(undefined, order)).toEqual(folded);
  });
  it('lets an explicit null clear a field', () => {
    const cleared = foldEvents(undefined, [create, { kind: 'update', seq: 11, fields: { output: null } }]);
    expect(cleared.fields.output).toBeNull();
  });
});

describe('evaluation results', () => {
  const evalEvent = (seq: number, results: object): FoldEvent => ({
    kind: 'eval',
    seq,
    fields: { eval_scores: results },
  });
  it('merge by metric name into scores, idempotently and in any order, and survive a client rewriting its scores', () => {
    const a = evalEvent(50, { acc: { score: 1, reason: 'ok' } });
    const b = evalEvent(60, { len: { score: 0.5 } });
    const retriedA = evalEvent(55, { acc: { score: 1, reason: 'ok' } });
    const folded = foldEvents(undefined, [create, a, b, a, retriedA]);
    expect(foldEvents(undefined, [b, retriedA, a, create])).toEqual(folded);
    const id = '00000000-0000-4000-8000-000000000001';
    expect(deriveFields(id, folded.fields).scores).toEqual([
      { name: 'acc', score: 1, reason: 'ok' },
      { name: 'len', score: 0.5 },
    ]);
    const rewritten = foldEvents(folded, [
      { kind: 'update', seq: 70, fields: { scores: [{ name: 'mine', score: 0 }] } },
    ]);
    expect(deriveFields(id, rewritten.fields).scores).toEqual([
      { name: 'mine', score: 0 },
      { name: 'acc', score: 1, reason: 'ok' },
      { name: 'len', score: 0.5 },
    ]);
  });
  it('show errors in metadata under their key, and drop them once the metric succeeds', () => {
    const id = '00000000-0000-4000-8000-000000000001';
    const failed = foldEvents(undefined, [
      { kind: 'create', seq: 1, fields: { metadata: { team: 'a' } } },
      evalEvent(2, { judge: { error: 'unparseable answer' } }),
    ]);
    expect(deriveFields(id, failed.fields)).toMatchObject({
      metadata: { team: 'a', sightline_eval_errors: { judge: 'unparseable answer' } },
      scores: [],
    });
    const fixed = foldEvents(failed, [evalEvent(3, { judge: { score: 0.8 } })]);
    const derived = deriveFields(id, fixed.fields);
    expect(derived).toMatchObject({ metadata: { team: 'a' }, scores: [{ name: 'judge', score: 0.8 }] });
    // The stored scores (read back as the span's own) hold the old judge score; a later error removes it.
    const readBack = { ...fixed, fields: { ...fixed.fields, scores: derived.scores, metadata: derived.metadata } };
    const broken = foldEvents(readBack, [evalEvent(4, { judge: { error: 'provider down' } })]);
    expect(deriveFields(id, broken.fields)).toMatchObject({
      scores: [],
      metadata: { sightline_eval_errors: { judge: 'provider down' } },
    });
  });
});

describe('console remarks', () => {
  const comment = (seq: number, id: string, text: string | null, at = `2026-01-01 00:00:0${seq % 10}`): FoldEvent => ({
    kind: 'remark',
    seq,
    fields: {},
    remarks: { comments: { [id]: text === null ? null : { id, comment: text, user_id: 'ada', created_at: at } } },
  });
  const annotate = (seq: number, user: string, score: number | null): FoldEvent => ({
    kind: 'remark',
    seq,
    fields: {},
    remarks: {
      annotations: { crit: { [user]: score === null ? null : { created_at: '2026-01-01', user_id: user, score } } },
    },
  });
  it('merge comments by id and annotations by criterion and user, in any arrival order', () => {
    const clientComment = { comment: 'from a client', user_id: 'sdk', created_at: '2025-12-31 00:00:00' };
    const created: FoldEvent = { kind: 'create', seq: 1, fields: { comments: [clientComment] } };
    const events = [
      created,
      comment(2, 'c1', 'first'),
      comment(3, 'c2', 'second'),
      comment(4, 'c1', null),
      annotate(5, 'ada', 1),
      annotate(6, 'bob', 0.5),
      annotate(7, 'bob', null),
    ];
    const id = '00000000-0000-4000-8000-000000000001';
    const folded = foldEvents(undefined, events);
    const derived = deriveFields(id, folded.fields);
    expect(derived.comments).toEqual([
      clientComment,
      { id: 'c2', comment: 'second', user_id: 'ada', created_at: '2026-01-01 00:00:03' },
    ]);
    expect(derived.annotations).toEqual({
      crit: { ada: { created_at: '2026-01-01', user_id: 'ada', score: 1, source: 'console' } },
    });
    for (const order of [[...events].reverse(), [events[3], events[6], ...events.slice(0, 3), events[4], events[5]]])
      expect(foldEvents(undefined, order)).toEqual(folded);
    // Redelivered, they change nothing.
    expect(foldEvents(folded, events)).toEqual(folded);
    // Derived again from what was stored (merged), with a remark removed since: it does not linger.
    const stored = { ...folded.fields, ...derived };
    const removed = foldEvents({ ...folded, fields: stored }, [comment(8, 'c2', null), annotate(9, 'ada', null)]);
    expect(deriveFields(id, removed.fields)).toMatchObject({ comments: [clientComment], annotations: {} });
    // A client's later write of its comments replaces its own, not the console's.
    const rewritten = foldEvents({ ...folded, fields: stored }, [
      { kind: 'update', seq: 10, fields: { comments: [] } },
    ]);
    expect(deriveFields(id, rewritten.fields).comments).toEqual([
      { id: 'c2', comment: 'second', user_id: 'ada', created_at: '2026-01-01 00:00:03' },
    ]);
  });
});

describe('deriveFields', () => {
  const id = '00000000-0000-4000-8000-000000000001';
  it('defaults root and parent to the span itself and makes it a root', () => {
    expect(deriveFields(id, {})).toMatchObject({
      root_trace_id: id,
      parent_trace_id: id,
      depth: 0,
      execution_order: 0,
    });
  });
  it('computes latency and total tokens when absent', () => {
    const d = deriveFields(id, {
      start_timestamp: '2026-01-01T00:00:00.000000Z',
      end_timestamp: '2026-01-01T00:00:01.250000Z',
      input_tokens: 3,
      output_tokens: 4,
    });
    expect(d.latency).toBe(1.25);
    expect(d.total_tokens).toBe(7);
  });
  it('keeps what the client sent', () => {
    const d = deriveFields(id, { latency: 9, total_tokens: 100, input_tokens: 1, depth: 2, parent_trace_id: 'p' });
    expect(d).toMatchObject({ latency: 9, total_tokens: 100, depth: 2, parent_trace_id: 'p', execution_order: null });
  });
});
