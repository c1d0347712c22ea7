import { afterAll, describe, expect, it } from 'vitest';
import { API_TREES, CLIENT_TREES, renderTrees } from '@sightline/core';
import { createPool } from './index';

const pool = createPool({ threads: 1 });
afterAll(() => pool.close());

describe('pool', () => {
  it('renders trees on a worker thread, in the dialect asked for', async () => {
    const spans = {
      dialect: CLIENT_TREES,
      trace_id: ['r', 'c'],
      parent_trace_id: ['r', 'r'],
      execution_order: [0, 1],
      start_timestamp: [null, null],
      children_ids: [null, null],
      members: [Buffer.from('"trace_id":"r"'), Buffer.from('"trace_id":"c"')],
    };
    const [tree] = JSON.parse(`[${(await pool.renderTrees(spans, ['r'])).toString()}]`);
    expect(tree).toEqual({
      trace_id: 'r',
      children: ['c'],
      children_logs: [{ trace_id: 'c', children: [], children_logs: [] }],
    });
  });

  it('renders a large trace exactly as the event loop would, every span’s bytes where they belong', async () => {
    // A root, 30 steps and 100 calls under each: members of different lengths, some empty, some not ASCII.
    const ids = ['root'];
    const parents = ['root'];
    for (let s = 0; s < 30; s++) {
      ids.push(`s${s}`);
      parents.push('root');
      for (let c = 0; c < 100; c++) {
        ids.push(`s${s}c${c}`);
        parents.push(`s${s}`);
      }
    }
    const spans = {
      dialect: API_TREES,
      trace_id: ids,
      parent_trace_id: parents,
      execution_order: ids.map((_, i) => (i % 7 ? i % 13 : null)),
      start_timestamp: ids.map((_, i) => (i % 5 ? `2026-12-06 10:00:${String(i % 60).padStart(2, '0')}` : null)),
      children_ids: ids.map((id) => (id === 's3' ? ['promised'] : null)),
      members: ids.map((id, i) =>
        Buffer.from(i % 11 ? `"trace_id":"${id}","output":"${'é€'.repeat(i % 17)}${'x'.repeat(i % 29)}"` : ''),
      ),
    };
    const pooled = pool.completedTasks();
    const out = await pool.renderTrees(spans, ['root']);
    expect(pool.completedTasks()).toBe(pooled + 1);
    expect(out.equals(renderTrees(spans, ['root']))).toBe(true);
    // The caller's spans are its own still: nothing it holds was moved away.
    expect(spans.members[1]!.toString()).toBe('"trace_id":"s0","output":"é€x"');
  });
});
