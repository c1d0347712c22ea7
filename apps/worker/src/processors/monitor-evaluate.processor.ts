import type { Queue } from 'bullmq';
import { judgeMonitor } from '@sightline/core';
import {
  enabledMonitors,
  metricSeries,
  pendingDeliveries,
  recordEvaluation,
  type Monitor,
  type Sql,
} from '@sightline/db';
import { scheduleEvery, type Producer } from '@sightline/queues';
import type { LagTolerant } from '@sightline/runtime';
import type { Processor } from '../register-worker';
import { notificationOf } from '../monitors/notification';

const DAY_SECONDS = 86_400;
/** The window now, and the same window on each of the previous 7 days (an anomaly's history). */
const NOW_AND_WEEK = [0, 1, 2, 3, 4, 5, 6, 7].map((d) => d * DAY_SECONDS);
/** Monitors read at once: each reading is one statement, on a connection of the pool. */
const CONCURRENCY = 4;
/** A delivery still pending this long after its change was recorded lost its job (a worker died between). */
const LOST_AFTER_SECONDS = 30;

type Deps = {
  sql: Sql;
  /** Where the metric is read: a replica caught up within its bound, else the primary. */
  lagTolerant: LagTolerant;
  deliveries: Producer<'monitor-delivery'>;
  publicUrl: string;
};

/** Reads one monitor's metric, judges it, and records the change of state with its deliveries. */
async function evaluate({ sql, lagTolerant, publicUrl }: Deps, m: Monitor): Promise<string[]> {
  const anomaly = 'anomaly' in m.condition;
  const series = await lagTolerant((db) => metricSeries(db, m, anomaly ? NOW_AND_WEEK : [0]));
  const [now, ...history] = series.reverse();
  const judged = judgeMonitor(m.condition, m.min_samples, now!, history);
  return recordEvaluation(sql, m.id, judged, (previous) => notificationOf(m, judged, previous, now!.at, publicUrl));
}

/**
 * One run of the scheduler: every enabled monitor, a few at a time; the deliveries of the changes are
 * queued under their own ids, and so are deliveries left pending by a run that died before queuing them.
 * A monitor whose reading fails is logged and read again at the next run.
 */
export function monitorEvaluateProcessor(deps: Deps): Processor<'monitor-evaluate'> {
  return async (_job, _bullJob, log) => {
    const monitors = await enabledMonitors(deps.sql);
    let changed = 0;
    let next = 0;
    const worker = async () => {
      for (let m = monitors[next++]; m; m = monitors[next++]) {
        try {
          const ids = await evaluate(deps, m);
          if (ids.length) changed++;
          await deps.deliveries.addBulk(ids.map((id) => ({ payload: { delivery_id: id }, options: { jobId: id } })));
        } catch (err) {
          log.warn({ monitorId: m.id, err: (err as Error).message }, 'monitor not evaluated');
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const lost = await pendingDeliveries(deps.sql, LOST_AFTER_SECONDS);
    await deps.deliveries.addBulk(lost.map((id) => ({ payload: { delivery_id: id }, options: { jobId: id } })));
    return { monitors: monitors.length, changed, requeued: lost.length };
  };
}

/** The scheduler: one run every `seconds` across all workers (each worker upserts the same one). */
export const scheduleMonitors = (queue: Queue, seconds: number) =>
  scheduleEvery(queue, 'monitor-evaluate', seconds * 1000, {});
