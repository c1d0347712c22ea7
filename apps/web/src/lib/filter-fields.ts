import { FILTER_OPERATORS } from '@sightline/core/filters';
import type { FilterOperator } from '../api/types';

// The fields get_trace_logs filters on, with the operators the API's filter compiler takes for each kind
// (libs/core/src/filters.ts): offering only those keeps the builder from composing a filter the API refuses.

export type FieldKind =
  'uuid' | 'text' | 'integer' | 'number' | 'boolean' | 'timestamp' | 'tags' | 'map' | 'score' | 'annotation';
export type FieldOption = { value: string; label: string; kind: FieldKind; group: string };

const field = (group: string, kind: FieldKind, ...pairs: [string, string][]): FieldOption[] =>
  pairs.map(([value, label]) => ({ value, label, kind, group }));

export const FILTER_FIELDS: FieldOption[] = [
  ...field(
    'Span',
    'text',
    ['trace_name', 'Name'],
    ['status', 'Status'],
    ['error', 'Error'],
    ['output', 'Output'],
    ['target', 'Target'],
  ),
  ...field('Span', 'tags', ['tags', 'Tags']),
  ...field('Span', 'map', ['metadata', 'Metadata'], ['inputs', 'Inputs'], ['configuration', 'Configuration']),
  ...field(
    'Who',
    'text',
    ['end_user_identifier', 'User'],
    ['session_id', 'Session'],
    ['deployment_id', 'Deployment id'],
  ),
  ...field(
    'Measures',
    'number',
    ['latency', 'Latency (s)'],
    ['cost', 'Cost (USD)'],
    ['time_to_first_token', 'Time to first token (s)'],
    ['feedback_score', 'Feedback score'],
  ),
  ...field(
    'Measures',
    'integer',
    ['input_tokens', 'Input tokens'],
    ['output_tokens', 'Output tokens'],
    ['total_tokens', 'Total tokens'],
  ),
  ...field('Measures', 'boolean', ['cache_hit', 'Cache hit']),
  ...field('Time', 'timestamp', ['start_timestamp', 'Start'], ['end_timestamp', 'End']),
  ...field('Evaluation', 'score', ['score', 'Score…']),
  ...field('Evaluation', 'annotation', ['annotation', 'Annotation…']),
  ...field('Evaluation', 'text', ['output_for_eval_metrics', 'Output for evals']),
  ...field(
    'Ids',
    'uuid',
    ['trace_id', 'Trace id'],
    ['root_trace_id', 'Root trace id'],
    ['parent_trace_id', 'Parent trace id'],
    ['experiment_uuid', 'Experiment'],
  ),
  ...field('Ids', 'integer', ['depth', 'Depth'], ['execution_order', 'Execution order']),
  ...field('Ids', 'number', ['apply_eval_frac', 'Eval fraction'], ['log_sample_rate', 'Sample rate']),
];

export const ANNOTATION_TYPES = [
  { value: 'score', label: 'score', kind: 'number' as const },
  { value: 'value', label: 'value', kind: 'text' as const },
  { value: 'annotation_name', label: 'name', kind: 'text' as const },
  { value: 'user_id', label: 'user', kind: 'text' as const },
];

export const OPERATOR_LABELS: Record<FilterOperator, string> = {
  equals: 'equals',
  not_equals: 'does not equal',
  like: 'contains',
  greater_than_or_equal: '≥',
  less_than_or_equal: '≤',
  greater_than: '>',
  less_than: '<',
  is_null: 'is empty',
  exists: 'is set',
  in: 'is one of',
  between: 'is between',
};

const ALL = FILTER_OPERATORS;
const NO_LIKE = ALL.filter((o) => o !== 'like');
const OPERATORS: Record<Exclude<FieldKind, 'annotation'>, readonly FilterOperator[]> = {
  uuid: ['equals', 'not_equals', 'in', 'is_null', 'exists'],
  text: ALL,
  integer: NO_LIKE,
  number: NO_LIKE,
  timestamp: NO_LIKE,
  boolean: ['equals', 'not_equals', 'is_null', 'exists'],
  tags: ['equals', 'not_equals', 'like', 'in', 'is_null', 'exists'],
  map: ALL,
  score: NO_LIKE,
};

/** A filter as the URL and the API carry it: `filter_field` may be `score:{name}` or `annotation:{type}:{id}`. */
export type FilterCondition = { field: string; key?: string; operator: FilterOperator; value?: string };

/** A filter_field taken apart for the builder's inputs. */
export type FieldParts = { base: string; scoreName?: string; annotationType?: string; annotationId?: string };

export function parseField(wire: string): FieldParts {
  if (wire.startsWith('score:')) return { base: 'score', scoreName: wire.slice('score:'.length) };
  if (wire.startsWith('annotation:')) {
    const rest = wire.slice('annotation:'.length);
    const colon = rest.indexOf(':');
    return colon < 0
      ? { base: 'annotation', annotationType: rest, annotationId: '' }
      : { base: 'annotation', annotationType: rest.slice(0, colon), annotationId: rest.slice(colon + 1) };
  }
  return { base: wire };
}

export function composeField(parts: FieldParts): string {
  if (parts.base === 'score') return `score:${parts.scoreName ?? ''}`;
  if (parts.base === 'annotation') return `annotation:${parts.annotationType ?? 'score'}:${parts.annotationId ?? ''}`;
  return parts.base;
}

/** The kind of value a field compares (an annotation's depends on which of its attributes). */
function valueKind(parts: FieldParts): Exclude<FieldKind, 'annotation'> {
  if (parts.base === 'annotation')
    return ANNOTATION_TYPES.find((t) => t.value === parts.annotationType)?.kind ?? 'text';
  return (FILTER_FIELDS.find((f) => f.value === parts.base)?.kind ?? 'text') as Exclude<FieldKind, 'annotation'>;
}

export const operatorsFor = (parts: FieldParts): readonly FilterOperator[] => OPERATORS[valueKind(parts)];
export const needsValue = (op: FilterOperator) => op !== 'is_null' && op !== 'exists';
export const needsKey = (parts: FieldParts) => FILTER_FIELDS.find((f) => f.value === parts.base)?.kind === 'map';
export const isOperator = (s: string | null): s is FilterOperator =>
  !!s && (FILTER_OPERATORS as readonly string[]).includes(s);

/** What is missing before the condition can be sent, or null when it is complete. */
export function incomplete(c: FilterCondition): string | null {
  const parts = parseField(c.field);
  if (parts.base === 'score' && !parts.scoreName) return 'name the score';
  if (parts.base === 'annotation' && !parts.annotationId) return 'give the annotation criterion id';
  if (needsKey(parts) && !c.key) return 'give the key';
  if (needsValue(c.operator) && !c.value)
    return c.operator === 'between' ? 'give two bounds, comma-separated' : 'give a value';
  return null;
}

/** The filter as one line of text: the applied-filter chip, a rule's filters in its list. */
export function describeFilter(c: FilterCondition): string {
  const parts = parseField(c.field);
  const label =
    parts.base === 'score'
      ? `score "${parts.scoreName}"`
      : parts.base === 'annotation'
        ? `annotation ${parts.annotationId} ${ANNOTATION_TYPES.find((t) => t.value === parts.annotationType)?.label ?? parts.annotationType}`
        : (FILTER_FIELDS.find((f) => f.value === parts.base)?.label ?? parts.base).toLowerCase();
  const key = c.key ? `.${c.key}` : '';
  return `${label}${key} ${OPERATOR_LABELS[c.operator]}${needsValue(c.operator) ? ` ${c.value ?? ''}` : ''}`;
}

export function valuePlaceholder(c: FilterCondition): string {
  const kind = valueKind(parseField(c.field));
  if (c.operator === 'in') return 'a, b, c';
  if (c.operator === 'between') return kind === 'timestamp' ? '2026-01-01, 2026-01-31' : 'low, high';
  return {
    uuid: 'a UUID',
    text: 'text',
    integer: 'a whole number',
    number: 'a number',
    timestamp: 'YYYY-MM-DD HH:MM:SS (UTC)',
    boolean: 'true or false',
    tags: 'a tag',
    map: 'a value',
    score: 'a number',
  }[kind];
}

/** The condition a new filter row starts with. */
export const NEW_FILTER: FilterCondition = { field: 'trace_name', operator: 'equals', value: '' };

/** A filter as the API's lists of filters take it: a key only for map fields, a value only where it compares one. */
export const filterOf = (c: FilterCondition) => ({
  field: c.field,
  operator: c.operator,
  ...(needsKey(parseField(c.field)) && { key: c.key }),
  ...(needsValue(c.operator) && { value: c.value }),
});

/** The filters complete enough to send, as the API takes them (a preview counts with them while one is written). */
export const completeFilters = (filters: FilterCondition[]) => filters.filter((c) => !incomplete(c)).map(filterOf);

/** A stored filter (a rule's, a monitor's) as the filter inputs hold it: the API answers null for a key or value not given. */
export const conditionOf = (f: {
  field: string;
  key?: string | null;
  operator: FilterOperator;
  value?: string | null;
}): FilterCondition => ({
  field: f.field,
  operator: f.operator,
  ...(f.key != null && { key: f.key }),
  ...(f.value != null && { value: f.value }),
});
