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
