import { columnMismatch } from '@sightline/core';
import { RequestValidationError, type ValidationDetail } from '../../errors';

/** Where a case's inputs are in a request body that lists test cases. */
export const caseLoc = (i: number) => ['body', 'test_cases', i, 'inputs'];

/** Every case's input keys must be the dataset's columns (all of them, unless `exact` is false). */
export function checkColumns(
  columns: string[],
  cases: { inputs: Record<string, unknown> }[],
  at: (i: number) => (string | number)[],
  exact = true,
) {
  const problems: ValidationDetail[] = [];
  cases.forEach((c, i) => {
    const msg = columnMismatch(columns, c.inputs, exact);
    if (msg) problems.push({ loc: at(i), msg, type: 'value_error' });
  });
  if (problems.length) throw new RequestValidationError(problems);
}
