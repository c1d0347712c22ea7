import { Queue } from 'bullmq';
import { journal, queues as registry } from '@sightline/queues';
import type { TestStack } from './app';
import { testRedis } from './services';

/**
 * Waits until no queue of the stack holds work (waiting, active, delayed) and no completion's log is left
 * to write (a job ends at its answer, and its log's write may queue more work), twice in a row since one job
 * may enqueue another, and answers the failed jobs with their reasons: work accepted with a 200 and then
 * lost on the worker's side shows up there.
 */
export async function drainQueues(
  stack: TestStack,
  timeoutMs = 60_000,
): Promise<{ queue: string; id?: string; reason: string }[]> {
  const connection = testRedis();
  const queues = Object.keys(registry).map((name) => new Queue(name, { connection, prefix: stack.keyPrefix }));
  try {
    const deadline = Date.now() + timeoutMs;
    let idleRounds = 0;
    while (idleRounds < 2) {
      // A job scheduler (retention, statistics) always holds its next run, delayed: that is not work.
      const counts = await Promise.all(
        queues.map(async (q) => {
          const c = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
          return { ...c, delayed: Math.max(0, c.delayed - (await q.getJobSchedulersCount())) };
        }),
      );
      const keptLogs = await Promise.all(
        stack.app.spanShards.all.map(
          async (shard) =>
            (await connection.hkeys(journal(shard.keys).events)).filter((f) => f.endsWith(':log')).length,
        ),
      );
      const busy =
        counts.reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0) +
        keptLogs.reduce((a, b) => a + b, 0);
      idleRounds = busy ? 0 : idleRounds + 1;
      if (busy && Date.now() > deadline)
        throw new Error(`queues still busy after ${timeoutMs} ms: ${JSON.stringify({ counts, keptLogs })}`);
      await new Promise((r) => setTimeout(r, busy ? 200 : 100));
    }
    const failed = await Promise.all(
      queues.map(async (q) =>
        (await q.getFailed(0, 50)).map((j) => ({ queue: q.name, id: j.id, reason: j.failedReason })),
      ),
    );
    return failed.flat();
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    await connection.quit();
  }
}
