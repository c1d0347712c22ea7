import { afterAll, describe, expect, it } from 'vitest';
import { createPool } from './index';

const pool = createPool({ threads: 1 });
afterAll(() => pool.close());

describe('pool', () => {
  it('assembles trees on a worker thread', async () => {
    const rows = [
      { trace_id: 'r', parent_trace_id: 'r', execution_order: 0 },
      { trace_id: 'c', parent_trace_id: 'r', execution_order: 1 },
    ];
    const [tree] = await pool.buildTrees(rows, ['r']);
    expect(tree.children_ids).toEqual(['c']);
    expect(tree.children[0].trace_id).toBe('c');
  });
});
