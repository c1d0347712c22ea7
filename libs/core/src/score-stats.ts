// Per-score-name running statistics over many traces, built in chunks (on the thread pool) and merged.

type ScoreSummary = { count: number; sum: number; min: number; max: number };
export type ScoreSummaries = Record<string, ScoreSummary>;

function add(out: ScoreSummaries, name: string, p: ScoreSummary): void {
  const s = (out[name] ??= { count: 0, sum: 0, min: Infinity, max: -Infinity });
  s.count += p.count;
  s.sum += p.sum;
  s.min = Math.min(s.min, p.min);
  s.max = Math.max(s.max, p.max);
}

/** Summarizes the scores of many traces; each trace's scores are `{name, score}` items. */
export function summarizeScores(scoreLists: readonly unknown[][]): ScoreSummaries {
  const out: ScoreSummaries = {};
  for (const scores of scoreLists) {
    for (const item of scores) {
      const { name, score } = (item ?? {}) as { name?: unknown; score?: unknown };
      if (typeof name === 'string' && typeof score === 'number' && Number.isFinite(score))
        add(out, name, { count: 1, sum: score, min: score, max: score });
    }
  }
  return out;
}

export function mergeScoreSummaries(parts: readonly ScoreSummaries[]): ScoreSummaries {
  const out: ScoreSummaries = {};
  for (const part of parts) for (const [name, p] of Object.entries(part)) add(out, name, p);
  return out;
}
