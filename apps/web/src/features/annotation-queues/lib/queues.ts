import type { Criterion } from '../../../api/types';
import type { AnnotationQueue, AnnotationQueueCreate } from '../../../api/annotation-queues';

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

/** Trace ids pasted one a line, or separated by commas or spaces. */
export const traceIdsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

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
