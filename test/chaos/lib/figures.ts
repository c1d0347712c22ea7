import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../support/processes';

const FILE = join(ROOT, 'bench/results/reliability.json');

/** Prints a fault's figures and keeps them, under its name, in bench/results/reliability.json (docs/reliability.md quotes them). */
export function recordFigures(fault: string, figures: Record<string, unknown>): void {
  console.log(`[chaos] ${fault}: ${JSON.stringify(figures, null, 2)}`);
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const all = existsSync(FILE) ? (JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>) : {};
  all[fault] = { recorded_at: new Date().toISOString(), ...figures };
  writeFileSync(FILE, `${JSON.stringify(all, null, 2)}\n`);
}

export const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The messages of the errors a process logged as unexpected (answered 500), by count: what a 500 was. */
export function unexpectedErrors(output: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of output.split('\n')) {
    if (!line.includes('"unexpected error"')) continue;
    const { err } = JSON.parse(line) as { err?: { type?: string; message?: string } };
    const what = `${err?.type ?? 'Error'}: ${err?.message ?? '(no message)'}`;
    counts[what] = (counts[what] ?? 0) + 1;
  }
  return counts;
}
