import { describe, expect, it } from 'vitest';
import { SpanWriteJobSchema } from './span-event';

const event = (over: Record<string, unknown> = {}) => ({
  kind: 'create',
  organization_id: '0b5d9c3e-4f1a-4c1e-9d5e-8a7b6c5d4e3f',
  trace_id: '1C2D3E4F-5A6B-4C7D-8E9F-0A1B2C3D4E5F',
  seq: 1,
  fields: { trace_name: 'root', input_tokens: 3 },
  ...over,
});

describe('SpanWriteJobSchema', () => {
  it('reads the envelope strictly and the fields as their producer made them, without names it does not know', () => {
    const { events } = SpanWriteJobSchema.parse({
      events: [event({ fields: { trace_name: 'root', made_up: 1, start_timestamp: '2026-11-26T08:00:00.000Z' } })],
    });
    expect(events[0].trace_id).toBe('1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f');
    expect(events[0].fields).toEqual({ trace_name: 'root', start_timestamp: '2026-11-26T08:00:00.000Z' });
  });

  it('refuses a job it cannot route: no events, a bad id or sequence, fields that are not an object', () => {
    for (const job of [
      { events: [] },
      { events: [event({ trace_id: 'nope' })] },
      { events: [event({ seq: 0 })] },
      { events: [event({ kind: 'delete' })] },
      { events: [event({ fields: 'text' })] },
      { events: [event({ fields: ['a'] })] },
      { events: [event({ fields: null })] },
    ])
      expect(SpanWriteJobSchema.safeParse(job).success, JSON.stringify(job)).toBe(false);
  });
});
