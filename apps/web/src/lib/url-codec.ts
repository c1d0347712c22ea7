/**
 * A page's state as URL parameters, so that a link reproduces the view. `parse` takes whatever the address
 * bar holds (a missing or unknown value reads as the default); `write` sets what `parse` reads the value
 * back from, leaving empty fields out (and defaults, where the page always did) so that links stay short.
 */
export type UrlCodec<T> = { parse(params: URLSearchParams): T; write(value: T): URLSearchParams };

/** A page number: a whole number from 1, else 1. */
export function readPage(params: URLSearchParams, name = 'page'): number {
  const page = Number(params.get(name));
  return Number.isInteger(page) && page >= 1 ? page : 1;
}

/** `value` when it is one of `options`, else `fallback`. */
export function oneOf<T extends string>(options: readonly T[], value: string | null, fallback: NoInfer<T>): T {
  return options.find((o) => o === value) ?? fallback;
}

/** Whether `value` is a key of `record` (its own: not `toString`). */
export const isKey = <K extends string>(record: Record<K, unknown>, value: string): value is K =>
  Object.hasOwn(record, value);

/** `value` when it is a key of `record` (a table of labels), else `fallback`. */
export function keyOf<K extends string>(record: Record<K, unknown>, value: string | null, fallback: NoInfer<K>): K {
  return value !== null && isKey(record, value) ? value : fallback;
}
