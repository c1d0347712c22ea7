// Collects items from many concurrent jobs into one flush, so that the worker writes many jobs in one
// transaction. Each caller's promise settles only when the flush holding its items has committed, so a
// job is acknowledged only after its data is durable. When a flush of several groups fails, each group
// is retried on its own, so one bad job cannot fail its neighbours.

type Waiting<T> = { items: T[]; resolve: () => void; reject: (err: unknown) => void };

export function createBatcher<T>(flush: (items: T[]) => Promise<void>, options: { maxItems: number; lingerMs: number; maxConcurrent?: number }) {
  let queue: Waiting<T>[] = [];
  let queuedItems = 0;
  let timer: NodeJS.Timeout | null = null;
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
    if (timer) clearTimeout(timer);
    timer = null;
    if (running >= maxConcurrent) return; // the running flush schedules the next one when it ends
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
    else if (!timer) timer = setTimeout(take, options.lingerMs);
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
