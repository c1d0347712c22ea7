import pino, { type Logger } from 'pino';

export function createLogger(name: string, level: string): Logger {
  return pino({ name, level });
}

/**
 * One ordered shutdown on SIGINT/SIGTERM that runs once, step by step, within a deadline; a step that
 * fails is logged and the next one still runs. A second signal does not start it again.
 */
export function onShutdown(
  steps: [name: string, run: () => Promise<unknown>][],
  { log, deadlineMs = 25_000 }: { log: Logger; deadlineMs?: number },
) {
  let started = false;
  const shutdown = async (signal: string) => {
    if (started) return;
    started = true;
    log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      log.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, deadlineMs);
    deadline.unref();
    for (const [name, run] of steps) {
      try {
        await run();
      } catch (err) {
        log.error({ err, step: name }, 'shutdown step failed');
      }
    }
    log.info('shut down');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
/**
 * Runs `task` every `everyMs`, one run at a time: a slow run (Redis away) delays the next one rather than
 * overlapping it. A failed run goes to `onError`, and the next one still comes. Answers a stop function.
 */
export function repeat(task: () => Promise<unknown>, everyMs: number, onError: (err: unknown) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout;
  const run = async () => {
    await task().catch(onError);
    if (!stopped) timer = setTimeout(run, everyMs).unref();
  };
  timer = setTimeout(run, everyMs).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export * from './metric-definitions';
export * from './metric-samplers';
export * from './metric-serving';
