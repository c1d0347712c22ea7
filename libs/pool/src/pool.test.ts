import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_TREES } from '@sightline/core';
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
});
