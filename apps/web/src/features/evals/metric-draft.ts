import { ApiError } from '../../api/client';
import type { EvalMetric, EvalMetricCreate, EvalMetricUpdate } from '../../api/types';

export const TYPES: { value: EvalMetricCreate['type']; label: string; help: string }[] = [
  { value: 'exact_match', label: 'Exact match', help: '1 when the output equals the target (trimmed), else 0.' },
  { value: 'contains', label: 'Contains', help: '1 when the output contains the value (or the target), else 0.' },
  { value: 'regex_match', label: 'Regex match', help: '1 when the output matches the pattern, else 0.' },
  { value: 'levenshtein', label: 'Levenshtein', help: '1 minus the edit distance over the longer length.' },
  { value: 'json_valid', label: 'Valid JSON', help: '1 when the output parses as JSON, else 0.' },
  { value: 'json_schema', label: 'JSON schema', help: '1 when the output is JSON that the schema accepts.' },
  { value: 'llm_judge', label: 'LLM judge', help: 'A model scores the output from a prompt you write.' },
];

export const typeLabel = (type: string) => TYPES.find((t) => t.value === type)?.label ?? type;

/** What the metric form edits. `rest`: the saved config's settings the form has no field for, kept as they are. */
export type Draft = {
  name: string;
  type: EvalMetricCreate['type'];
  caseSensitive: boolean;
  value: string;
  pattern: string;
  flags: string;
  schema: string;
  judge: { prompt_template: string; provider: string; model: string };
  rest: Record<string, unknown>;
};

export const EMPTY: Draft = {
  name: '',
  type: 'exact_match',
  caseSensitive: true,
  value: '',
  pattern: '',
  flags: '',
  schema: '{\n  "type": "object"\n}',
  judge: {
    prompt_template:
      'How well does this answer the question, from 0 to 1?\nQuestion: {{inputs.question}}\nAnswer: {{output}}\nReply as {"score": x, "reason": "..."}.',
    provider: 'openai',
    model: 'gpt-4o-mini',
  },
  rest: {},
};

const text = (v: unknown, fallback = '') => (typeof v === 'string' ? v : fallback);

/** The form's fields filled from a saved metric; the settings it has no field for are kept in `rest`. */
export function draftOf(metric: EvalMetric): Draft {
  const { case_sensitive, value, pattern, flags, schema, prompt_template, provider, model, ...rest } =
    metric.config as Record<string, unknown>;
  return {
    name: metric.name,
    type: TYPES.some((t) => t.value === metric.type) ? (metric.type as Draft['type']) : EMPTY.type,
    // Unset is case sensitive, as the worker reads it.
    caseSensitive: case_sensitive !== false,
    value: text(value),
    pattern: text(pattern),
    flags: text(flags),
    schema: schema === undefined ? EMPTY.schema : JSON.stringify(schema, null, 2),
    judge: {
      prompt_template: text(prompt_template, EMPTY.judge.prompt_template),
      provider: text(provider, EMPTY.judge.provider),
      model: text(model, EMPTY.judge.model),
    },
    rest,
  };
}

/** The metric the form describes, as POST /eval-metrics takes it; a schema that is not JSON is sent as null. */
export function metricOf(d: Draft): EvalMetricCreate {
  const name = d.name.trim();
  switch (d.type) {
    case 'exact_match':
      return { name, type: d.type, config: { ...d.rest, case_sensitive: d.caseSensitive } };
    case 'contains':
      return { name, type: d.type, config: { ...d.rest, value: d.value || null, case_sensitive: d.caseSensitive } };
    case 'regex_match':
      return { name, type: d.type, config: { ...d.rest, pattern: d.pattern, flags: d.flags || null } };
    case 'json_schema':
      return { name, type: d.type, config: { ...d.rest, schema: parseJson(d.schema) as Record<string, unknown> } };
    case 'llm_judge':
      return { name, type: d.type, config: { ...d.rest, ...d.judge } };
    default:
      // No settings: whatever a saved config held besides is kept as it was.
      return { name, type: d.type, config: { ...d.rest } as Record<string, never> };
  }
}

/** A saved metric's new configuration, as PATCH /eval-metrics/{id} takes it (its name is not sent). */
export function updateOf(d: Draft): EvalMetricUpdate {
  const { name: _name, ...update } = metricOf(d);
  return update as EvalMetricUpdate;
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return null;
  }
}

/** The API's 422 problems by field (the part of `loc` after `config`), for the form to show beside each. */
export function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError) || !Array.isArray(err.detail)) return {};
  const out: Record<string, string> = {};
  for (const d of err.detail as { loc?: (string | number)[]; msg?: string }[]) {
    const loc = (d.loc ?? []).filter((l) => l !== 'body' && l !== 'metric');
    out[String(loc.at(-1) ?? '')] = d.msg ?? '';
  }
  return out;
}
