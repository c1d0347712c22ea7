import { ApiError, errorMessage } from '../api/client';

/**
 * The API's refusals by field path (`metric_names.1`, `filters.0.value`), for a form to show each beside its
 * input: a 422's list, and a 409's name already taken.
 */
export function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) return {};
  if (err.status === 409 && typeof err.detail === 'string') return { name: err.detail };
  if (err.status !== 422 || !Array.isArray(err.detail)) return {};
  const out: Record<string, string> = {};
  for (const d of err.detail as { loc?: (string | number)[]; msg?: string }[]) {
    const path = (d.loc ?? []).filter((l) => l !== 'body').join('.');
    out[path] ??= d.msg ?? '';
  }
  return out;
}

/** The first error at `path` or under it (`metric_names` for `metric_names.1`). */
export function errorAt(errors: Record<string, string>, path: string): string | undefined {
  const key = Object.keys(errors).find((k) => k === path || k.startsWith(`${path}.`));
  return key === undefined ? undefined : errors[key];
}

/** The refusals of a list field (`criterion_ids`, `trace_ids`) with the item each names: "tone: no such…". */
export function listErrors(errors: Record<string, string>, field: string, name: (i: number) => string) {
  const found = Object.entries(errors).flatMap(([path, msg]) => {
    if (path === field) return [msg];
    const i = path.startsWith(`${field}.`) ? Number(path.slice(field.length + 1)) : NaN;
    return Number.isInteger(i) ? [`${name(i)}: ${msg}`] : [];
  });
  return found.length ? found.join('; ') : undefined;
}

/**
 * The refusals a form has no input for (their paths do not match `placed`), as one line; undefined when each
 * is beside its input. Any other failure (a 503, the network) is its message.
 */
export function otherErrors(err: unknown, placed: RegExp): string | undefined {
  if (!err) return undefined;
  const errors = fieldErrors(err);
  if (!Object.keys(errors).length) return errorMessage(err);
  const rest = Object.entries(errors).filter(([path]) => !placed.test(path));
  return rest.length ? rest.map(([path, msg]) => `${path}: ${msg}`).join('; ') : undefined;
}
