import { describe, expect, it } from 'vitest';
import type { EvalRule } from '../../../api/types';
import { evalRule } from '../../../test/fixtures';
import { draftOf, exampleSpan, fieldsOf, fromLocalInput, missing, NEW_RULE, toLocalInput } from './rules';

describe('a rule in the form', () => {
  it('reads a rule into the form and back into the fields the API takes', () => {
    const rule = evalRule({
      sample_rate: 0.07,
      filters: [
        { field: 'metadata', key: 'environment', operator: 'equals', value: 'production' },
        { field: 'error', key: null, operator: 'is_null', value: null },
      ],
      target: { kind: 'span', span_name: 'call-model' },
      daily_cost_limit: 2.5,
    }) as EvalRule;
    const draft = draftOf(rule);
    expect(draft.samplePercent).toBe(7);
    expect(fieldsOf(draft)).toEqual({
      name: 'answers-exact',
      metric_names: ['exact-answer'],
      sample_rate: 0.07,
      filters: [
        { field: 'metadata', key: 'environment', operator: 'equals', value: 'production' },
        { field: 'error', operator: 'is_null' },
      ],
      target: { kind: 'span', span_name: 'call-model' },
      settle_seconds: 10,
      daily_cost_limit: 2.5,
      reevaluate_on_update: false,
      enabled: true,
      annotation_queue: null,
    });
    // A queue fed on failures only keeps no bound; one fed on a score reads back as it was.
    const fed = draftOf({ ...rule, annotation_queue: { queue_id: 'q', on_result: null, on_error: true } });
    expect(fieldsOf(fed).annotation_queue).toEqual({ queue_id: 'q', on_result: null, on_error: true });
    const low = { queue_id: 'q', on_result: { metric_name: 'exact-answer', below: 0.4 }, on_error: false };
    expect(fieldsOf(draftOf({ ...rule, annotation_queue: low })).annotation_queue).toEqual(low);
  });

  it('says what is missing before saving', () => {
    expect(missing(NEW_RULE)).toBe('name the rule');
    const named = { ...NEW_RULE, name: 'r', metricNames: ['m'] };
    expect(missing(named)).toBeNull();
    expect(missing({ ...named, filters: [{ field: 'metadata', operator: 'equals', value: 'x' }] })).toBe(
      'complete filter 1 (give the key)',
    );
    expect(missing({ ...named, targetKind: 'span' })).toBe('name the span to evaluate');
    expect(missing({ ...named, queueId: 'q' })).toMatch(/which traces go to the queue/);
    expect(missing({ ...named, queueId: 'q', queueMetric: 'm', queueBelow: 0.5 })).toBeNull();
  });
});

describe('the example span', () => {
  const tree = {
    trace_name: 'root',
    output: 'r',
    children: [
      { trace_name: 'tool', children: [{ trace_name: 'call-model', output: 'deep' }] },
      { trace_name: 'call-model', output: 'near' },
    ],
  };

  it('is the root, or the first span of the target name breadth first', () => {
    expect(exampleSpan(tree, null)?.output).toBe('r');
    expect(exampleSpan(tree, 'call-model')?.output).toBe('near');
    expect(exampleSpan(tree, 'absent')).toBeNull();
  });
});

describe('datetime-local values', () => {
  it('round-trip a time to the minute in the browser zone', () => {
    const date = new Date(2026, 2, 2, 9, 30);
    expect(toLocalInput(date)).toBe('2026-03-02T09:30');
    expect(fromLocalInput(toLocalInput(date))).toBe(date.toISOString());
    expect(fromLocalInput('')).toBeNull();
  });
});
