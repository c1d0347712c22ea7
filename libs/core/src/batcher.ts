// Collects items from many concurrent callers into one flush: the API enqueues the spans of many requests
// as one job, the worker writes many jobs in one transaction. Each caller's promise settles only when the
// flush holding its items has succeeded, so nobody is acknowledged before their data is durable. When a
// flush of several groups fails, each group is retried on its own, so one bad caller cannot fail its
// neighbours. While `maxConcurrent` flushes run, new items wait and join the next one: the busier the
// system, the bigger the batches, with no added delay when it is idle.

type Waiting<T> = { items: T[]; resolve: () => void; reject: (err: unknown) => void };

/** Runs `fn` after `ms`, or at the end of this turn of the event loop when `ms` is 0; answers a cancel. */
function later(fn: () => void, ms: number): () => void {
  if (ms === 0) {
    const immediate = setImmediate(fn);
    return () => clearImmediate(immediate);
  }
  const timeout = setTimeout(fn, ms);
  return () => clearTimeout(timeout);
}

export function createBatcher<T>(
  flush: (items: T[]) => Promise<void>,
  options: { maxItems: number; lingerMs: number; maxConcurrent?: number },
) {
  const queue: Waiting<T>[] = [];
  let queuedItems = 0;
  let cancelTimer: (() => void) | null = null;
  let running = 0;
  const maxConcurrent = options.maxConcurrent ?? 2;

  async function run(groups: Waiting<T>[]) {
    running++;
    try {
      await flush(groups.flatMap((g) => g.items));
      for (const g of groups) g.resolve();
    } catch (err) {
      if (groups.length === 1) groups[0].reject(err);
      else await Promise.all(groups.map((g) => flush(g.items).then(g.resolve, g.reject)));
    } finally {
      running--;
      schedule();
    }
  }

  function take() {
    cancelTimer?.();
    cancelTimer = null;
    if (!queue.length || running >= maxConcurrent) return; // the running flush schedules the next one when it ends
    const groups: Waiting<T>[] = [];
    let count = 0;
    while (queue.length && (count === 0 || count + queue[0].items.length <= options.maxItems)) {
      const g = queue.shift()!;
      groups.push(g);
      count += g.items.length;
    }
    queuedItems -= count;
    void run(groups);
  }

  function schedule() {
    if (!queue.length || running >= maxConcurrent) return;
    if (queuedItems >= options.maxItems) take();
    else if (!cancelTimer) cancelTimer = later(take, options.lingerMs);
  }

  return {
    add(items: T[]): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        queue.push({ items, resolve, reject });
        queuedItems += items.length;
        schedule();
      });
    },
  };
}
