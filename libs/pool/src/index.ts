import os from 'node:os';
import Piscina from 'piscina';
import type { RunsComparison, ScoreSummaries, SpanTexts } from '@sightline/core';
import type { AgreementInput, AgreementOutput } from './tasks/agreement.task';

// The one thread pool for CPU-heavy work (tree assembly, statistics), so that it never blocks an event
// loop. Tasks are TypeScript modules; the threads load them through tsx like the main thread does.
const TASKS = new URL('./tasks/', import.meta.url);

export function createPool(options: { threads?: number } = {}) {
  const threads = options.threads ?? Math.max(1, Math.min(4, os.availableParallelism() - 1));
  const piscina = new Piscina({
    filename: new URL('render-trees.task.ts', TASKS).href,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: 30_000,
    execArgv: [...process.execArgv.filter((a) => a !== '--import' && a !== 'tsx'), '--import', 'tsx'],
  });
  return {
    /** The spans' bytes are copied to the thread and the answer's bytes back: a memory copy, no parsing. */
    renderTrees: async (spans: SpanTexts, rootIds: string[]): Promise<Buffer> => {
      const out: Uint8Array = await piscina.run(
        { spans, rootIds },
        { filename: new URL('render-trees.task.ts', TASKS).href },
      );
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    },
    summarizeScores: (scoreLists: unknown[][]): Promise<ScoreSummaries> =>
      piscina.run({ scoreLists }, { filename: new URL('score-stats.task.ts', TASKS).href }),
    /** Experiment runs compared case by case; `samples` is compareSamples' JSON text, parsed on the thread. */
    compareExperiments: (samples: string, runs: string[], baseline: string): Promise<RunsComparison> =>
      piscina.run({ samples, runs, baseline }, { filename: new URL('compare.task.ts', TASKS).href }),
    /** How far a judge agrees with people, and people with each other, with bootstrap intervals. */
    agreement: (input: AgreementInput): Promise<AgreementOutput> =>
      piscina.run(input, { filename: new URL('agreement.task.ts', TASKS).href }),
    /** Tasks the threads have finished: lets tests and metrics see that work went to the pool. */
    completedTasks: () => piscina.completed,
    close: () => piscina.destroy(),
  };
}
export type Pool = ReturnType<typeof createPool>;
