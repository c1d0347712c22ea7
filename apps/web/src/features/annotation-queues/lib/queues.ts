import { ApiError, errorMessage } from '../../../api/client';
import type { Criterion } from '../../../api/types';
import { needsKey, needsValue, parseField, type FilterCondition } from '../../../lib/filter-fields';
import type { AnnotationQueue, AnnotationQueueCreate } from '../api';

/** A queue as the form edits it. */
export type QueueDraft = { name: string; criterionIds: string[]; instructions: string };

export const NEW_QUEUE: QueueDraft = { name: '', criterionIds: [], instructions: '' };

export const draftOf = (q: AnnotationQueue): QueueDraft => ({
  name: q.name,
  criterionIds: q.criterion_ids,
  instructions: q.instructions,
});

/** The queue's fields as POST and PATCH take them. */
export const fieldsOf = (d: QueueDraft): Omit<AnnotationQueueCreate, 'project_uuid' | 'project_name'> => ({
  name: d.name.trim(),
  criterion_ids: d.criterionIds,
  instructions: d.instructions.trim(),
});

export const NEW_FILTER: FilterCondition = { field: 'trace_name', operator: 'equals', value: '' };

/** A filter as the API takes it: a key only for map fields, a value only for operators that compare one. */
export const filterOf = (c: FilterCondition) => ({
  field: c.field,
  operator: c.operator,
  ...(needsKey(parseField(c.field)) && { key: c.key }),
  ...(needsValue(c.operator) && { value: c.value }),
});

/** Trace ids pasted one a line, or separated by commas or spaces. */
export const traceIdsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/**
 * The API's refusals by field path (`criterion_ids.1`, `filters.0.value`), for a form to show each beside its
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

/** The refusals of a list field (`criterion_ids`, `trace_ids`) with the item each names: "tone: no such…". */
export function listErrors(errors: Record<string, string>, field: string, name: (i: number) => string) {
  const found = Object.entries(errors).flatMap(([path, msg]) => {
    if (path === field) return [msg];
    const i = path.startsWith(`${field}.`) ? Number(path.slice(field.length + 1)) : NaN;
    return Number.isInteger(i) ? [`${name(i)}: ${msg}`] : [];
  });
  return found.length ? found.join('; ') : undefined;
}

/** The refusals a form has no input for, as one line; undefined when each is beside its input. */
export function otherErrors(err: unknown, placed: RegExp): string | undefined {
  if (!err) return undefined;
  const errors = fieldErrors(err);
  if (!Object.keys(errors).length) return errorMessage(err);
  const rest = Object.entries(errors).filter(([path]) => !placed.test(path));
  return rest.length ? rest.map(([path, msg]) => `${path}: ${msg}`).join('; ') : undefined;
}

/** How far reviewers are through a queue: done and skipped items of all of them. */
export function progressOf(counts: AnnotationQueue['counts']) {
  const total = counts.pending + counts.in_review + counts.done + counts.skipped;
  const finished = counts.done + counts.skipped;
  return { total, finished, percent: total ? (finished / total) * 100 : 0 };
}

/** The queue's criteria that still exist, in the queue's order. */
export const criteriaOf = (all: Criterion[], ids: readonly string[]) =>
  ids.flatMap((id) => all.find((c) => c.id === id) ?? []);

/**
 * What number key `n` (1 to 9) annotates a criterion with: the value criterion's n-th option, or the score
 * n when the criterion's range holds it; null when it does not apply (free text, out of range).
 */
export function choiceOf(c: Criterion, n: number): { score: number } | { value: string } | null {
  if (c.kind === 'score') return (c.min != null && n < c.min) || (c.max != null && n > c.max) ? null : { score: n };
  const option = c.options?.[n - 1];
  return option == null ? null : { value: option };
}

/** Where a key is text being written: the page's keys leave it alone. */
export const isTyping = (el: EventTarget | null) =>
  el instanceof HTMLElement &&
  (el.isContentEditable || !!el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]'));

/** Where Enter is a control's own (a button, a link, a tab): it does not complete the item. */
export const isControl = (el: EventTarget | null) =>
  el instanceof HTMLElement &&
  !!el.closest(
    'button, a[href], summary, [role="button"], [role="link"], [role="tab"], [role="option"], [role="menuitem"], [role="checkbox"], [role="radio"], [role="switch"], [role="treeitem"]',
  );
