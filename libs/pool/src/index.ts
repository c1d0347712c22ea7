import os from 'node:os';
import Piscina from 'piscina';
import type { RunsComparison, ScoreSummaries, SpanTexts } from '@sightline/core';
import { packMembers } from './packed-spans';
import type { AgreementInput, AgreementOutput } from './tasks/agreement.task';

// The one thread pool for CPU-heavy work (tree assembly, statistics), so that it never blocks an event
// loop. Built (scripts/build-server.ts, as `npm start` runs), the tasks are JavaScript beside the bundle, which
// names its own place; from the sources (tests, tsx), they are TypeScript that the threads load through tsx.
declare const __SIGHTLINE_BUILT_DIR__: string | undefined;
const BUILT = typeof __SIGHTLINE_BUILT_DIR__ === 'string' ? __SIGHTLINE_BUILT_DIR__ : undefined;
const task = (name: string) =>
  BUILT ? new URL(`tasks/${name}.task.js`, BUILT).href : new URL(`./tasks/${name}.task.ts`, import.meta.url).href;
const TSX = ['--import', 'tsx'];

export function createPool(options: { threads?: number } = {}) {
  const threads = options.threads ?? Math.max(1, Math.min(4, os.availableParallelism() - 1));
  const piscina = new Piscina({
    filename: task('render-trees'),
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: 30_000,
    execArgv: BUILT ? process.execArgv : [...process.execArgv.filter((a) => !TSX.includes(a)), ...TSX],
  });
  return {
    /**
     * The spans' bytes go to the thread packed in one buffer, moved rather than cloned, and the answer's bytes come
     * back moved: cloning each span's bytes as an object of its own cost more than the rendering.
     */
    renderTrees: async (spans: SpanTexts, rootIds: string[]): Promise<Buffer> => {
      const packed = packMembers(spans);
      const out: Uint8Array = await piscina.run(
        { spans: packed, rootIds },
        { filename: task('render-trees'), transferList: [packed.bytes.buffer, packed.ends.buffer] },
      );
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    },
    summarizeScores: (scoreLists: unknown[][]): Promise<ScoreSummaries> =>
      piscina.run({ scoreLists }, { filename: task('score-stats') }),
    /** Experiment runs compared case by case; `samples` is compareSamples' JSON text, parsed on the thread. */
    compareExperiments: (samples: string, runs: string[], baseline: string): Promise<RunsComparison> =>
      piscina.run({ samples, runs, baseline }, { filename: task('compare') }),
    /** How far a judge agrees with people, and people with each other, with bootstrap intervals. */
    agreement: (input: AgreementInput): Promise<AgreementOutput> => piscina.run(input, { filename: task('agreement') }),
    /** Tasks the threads have finished: lets tests and metrics see that work went to the pool. */
    completedTasks: () => piscina.completed,
    close: () => piscina.destroy(),
  };
}
export type Pool = ReturnType<typeof createPool>;
