import type { ExperimentSummary } from '../../../api/types';

/** The compare route takes 2 to 5 experiments. */
export const MAX_COMPARED = 5;

export const STATUS_COLOR: Record<ExperimentSummary['status'], string> = {
  pending: 'gray',
  running: 'blue',
  completed: 'teal',
  failed: 'red',
};

export const SORT_KEYS = ['name', 'run_name', 'status', 'samples', 'created_at'] as const;
export type ExperimentSort = { key: (typeof SORT_KEYS)[number]; desc: boolean };

export function sortExperiments(rows: ExperimentSummary[], { key, desc }: ExperimentSort): ExperimentSummary[] {
  const sign = desc ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = a[key],
      y = b[key];
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return sign * order || a.uuid.localeCompare(b.uuid);
  });
}

type Parsed = { ok: true; value: Record<string, unknown> | null } | { ok: false; error: string };

/**
 * The metadata filter as typed: a JSON object, or `key=value` pairs separated by commas, where a value that
 * reads as JSON (a number, true, null, "a string") is taken as such and anything else as a string.
 */
export function parseMetadataFilter(text: string): Parsed {
  const trimmed = text.trim();
  if (!trimmed) return { ok: true, value: null };
  if (trimmed.startsWith('{')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (value && typeof value === 'object' && !Array.isArray(value))
        return { ok: true, value: value as Record<string, unknown> };
    } catch {
      // reported below
    }
    return { ok: false, error: 'Not a JSON object' };
  }
  const value: Record<string, unknown> = {};
  for (const pair of trimmed.split(',')) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at < 0 || !key) return { ok: false, error: `Write key=value, not "${pair.trim()}"` };
    value[key] = jsonOrString(pair.slice(at + 1).trim());
  }
  return { ok: true, value };
}

function jsonOrString(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
