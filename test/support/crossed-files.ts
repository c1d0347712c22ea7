import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OWN_CODE = /^(apps|libs)\/[^/]+\/src\//;

/**
 * Starts V8's precise coverage in this process. Await it before importing the service's modules: the
 * functions of a script compiled before coverage started are not reported.
 */
export async function coverage() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  return {
    /**
     * The project's own source files whose functions `work` runs in this process (the API and the worker run
     * in the test's process, see buildStack). What runs on its own in the background (samplers, upkeep
     * timers, BullMQ's polling) is taken out: a function counts only when it ran in both of two runs of the
     * work and in neither of two quiet spells (each as long as a run, and at least 2 s).
     */
    async crossedFiles(work: () => Promise<void>): Promise<{ always: string[]; sometimes: string[] }> {
      await work(); // the first run loads modules and fills caches: not what a request usually crosses
      await ran(session);
      const runs: Set<string>[] = [];
      const quiet = new Set<string>();
      for (let i = 0; i < 2; i++) {
        const begun = performance.now();
        await work();
        const spell = performance.now() - begun;
        runs.push(await ran(session));
        // At least two seconds: a timer of the background (an upkeep sweep) must fall inside a quiet spell.
        await sleep(Math.max(spell, 2000));
        for (const fn of await ran(session)) quiet.add(fn);
      }
      const filesOf = (fns: string[]) => [...new Set(fns.map((fn) => fn.slice(0, fn.indexOf('#'))))].sort();
      return {
        always: filesOf([...runs[0]].filter((fn) => runs[1].has(fn) && !quiet.has(fn))),
        // A file one run crosses and the other not (a script loaded into Redis once, a cache refilled).
        // A listed file may also run in the background (a commit's publish landing in a quiet spell).
        sometimes: filesOf([...runs[0], ...runs[1], ...quiet]),
      };
    },
    async stop() {
      await session.post('Profiler.stopPreciseCoverage').catch(() => {});
      session.disconnect();
    },
  };
}

/** Functions (file#offset) run since the last call; taking the coverage resets its counts. */
async function ran(session: Session): Promise<Set<string>> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const fns = new Set<string>();
  for (const script of result) {
    const path = script.url.startsWith('file://') ? fileURLToPath(script.url.split('?')[0]) : script.url;
    const file = relative(ROOT, path);
    if (!OWN_CODE.test(file)) continue;
    for (const { ranges } of script.functions) if (ranges[0].count > 0) fns.add(`${file}#${ranges[0].startOffset}`);
  }
  return fns;
}
