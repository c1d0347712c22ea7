import { compileFilter, FilterError, type FilterInput } from '@sightline/core';

export const filter = (
  filter_field: string,
  filter_operator?: string,
  filter_value?: string,
  filter_key?: string,
): FilterInput => ({ filter_field, filter_operator, filter_value, filter_key });

/** The input field a FilterError names, or 'no error'. */
export function filterFailure(input: FilterInput): string {
  try {
    compileFilter(input, 1);
    return 'no error';
  } catch (e) {
    if (e instanceof FilterError) return e.field;
    throw e;
  }
}
