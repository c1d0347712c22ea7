import { describe, expect, it } from 'vitest';
import { deriveFields, foldEvents, type FoldEvent } from './span-fold';

const create: FoldEvent = { kind: 'create', seq: 10, fields: { status: 'success', output: 'a', trace_name: 'root' } };
const update: FoldEvent = { kind: 'update', seq: 20, fields: { status: 'error', error: 'boom' } };
const feedback: FoldEvent = { kind: 'feedback', seq: 30, fields: { feedback_score: 0.5, target: 't' } };

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

describe('foldEvents', () => {
  it('gives the in-order result for every arrival order, in one batch or one event at a time', () => {
    const expected = foldEvents(undefined, [create, update, feedback]);
    expect(expected.fields).toEqual({ status: 'error', output: 'a', trace_name: 'root', error: 'boom', feedback_score: 0.5, target: 't' });
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
    const retriedCreate: FoldEvent = { kind: 'create', seq: 40, fields: { status: 'success', output: 'b', feedback_score: null } };
    const folded = foldEvents(undefined, [create, update, feedback, retriedCreate]);
    expect(folded.fields).toMatchObject({ status: 'error', error: 'boom', feedback_score: 0.5, output: 'b' });
    for (const order of permutations([create, update, feedback, retriedCreate])) expect(foldEvents(undefined, order)).toEqual(folded);
  });
  it('lets an explicit null clear a field', () => {
    const cleared = foldEvents(undefined, [create, { kind: 'update', seq: 11, fields: { output: null } }]);
    expect(cleared.fields.output).toBeNull();
  });
});

describe('deriveFields', () => {
  const id = '00000000-0000-4000-8000-000000000001';
  it('defaults root and parent to the span itself and makes it a root', () => {
    expect(deriveFields(id, {})).toMatchObject({ root_trace_id: id, parent_trace_id: id, depth: 0, execution_order: 0 });
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
