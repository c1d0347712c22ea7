// Which spans a write makes due for (re)evaluation. Apart from span-writes.ts: it decides from a span's events
// and folded fields alone, without the store, and the worker's span-write processor imports its type.
import { unitHash } from '@sightline/core';
import type { SpanEvent } from '@sightline/schemas';

export type EvalTrigger = { organization_id: string; trace_id: string; metric_names: string[]; seq: number };

// Events that change what an evaluation sees; feedback or a tag change does not re-run the evaluations.
const EVALUATED_FIELDS = ['output', 'output_for_eval_metrics', 'end_timestamp', 'evaluation_metric_names', 'target'];

/**
 * The spans of this batch whose evaluations must (re)run: they name metrics, have ended (an output or an
 * end time), are sampled in by apply_eval_frac (per trace id, so retries decide alike), and this batch
 * created them or changed what is evaluated.
 */
export function evalTriggers(
  key: { organization_id: string; trace_id: string },
  list: readonly SpanEvent[],
  created: boolean,
  fields: Record<string, unknown>,
): EvalTrigger | null {
  const names = fields.evaluation_metric_names as string[] | null | undefined;
  if (!created || !names?.length || (fields.output == null && fields.end_timestamp == null)) return null;
  if (!list.some((e) => e.kind === 'create' || EVALUATED_FIELDS.some((f) => f in e.fields))) return null;
  const fraction = (fields.apply_eval_frac as number | null | undefined) ?? 1;
  if (fraction < 1 && !(fraction > 0 && unitHash(`eval:${key.trace_id}`) < fraction)) return null;
  return { ...key, metric_names: [...new Set(names)], seq: Math.max(...list.map((e) => e.seq)) };
}
