import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { errorAt, fieldErrors, listErrors, otherErrors } from './field-errors';

describe("the API's refusals placed by field", () => {
  const refusal = new ApiError(422, [
    { loc: ['body', 'metric_names', 1], msg: 'no eval metric named x', type: 'value_error' },
    { loc: ['body', 'filters', 0, 'field'], msg: 'unknown field', type: 'value_error' },
    { loc: ['body', 'enabled'], msg: 'expected a boolean', type: 'type_error' },
  ]);

  it("reads a 422's problems and a 409 by path, and nothing of other failures", () => {
    expect(fieldErrors(refusal)).toEqual({
      'metric_names.1': 'no eval metric named x',
      'filters.0.field': 'unknown field',
      enabled: 'expected a boolean',
    });
    expect(fieldErrors(new ApiError(409, 'taken'))).toEqual({ name: 'taken' });
    expect(fieldErrors(new ApiError(503, 'down'))).toEqual({});
  });

  it('finds the first error at a path or under it', () => {
    const errors = fieldErrors(refusal);
    expect(errorAt(errors, 'metric_names')).toBe('no eval metric named x');
    expect(errorAt(errors, 'metric')).toBeUndefined();
  });

  it("names a list's item in its error", () => {
    const errors = fieldErrors(refusal);
    expect(listErrors(errors, 'metric_names', (i) => ['a', 'b'][i]!)).toBe('b: no eval metric named x');
    expect(listErrors(errors, 'trace_ids', String)).toBeUndefined();
  });

  it('says in one line what no input shows, and a failure without fields as its message', () => {
    expect(otherErrors(refusal, /^(metric_names|filters)(\.|$)/)).toBe('enabled: expected a boolean');
    expect(otherErrors(refusal, /^(metric_names|filters|enabled)(\.|$)/)).toBeUndefined();
    expect(otherErrors(new ApiError(503, 'PostgreSQL is unavailable'), /x/)).toMatch(/PostgreSQL/);
    expect(otherErrors(null, /x/)).toBeUndefined();
  });
});
