import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { mergeScoreSummaries, type ScoreSummaries } from '@sightline/core';
import { findExperiment, finishExperiment, rootStats, type Sql } from '@sightline/db';
import type { Pool } from '@sightline/pool';
import {
  createReplier,
  waitUntilAppliedEverywhere,
  type RedisKeys,
  type Reply,
  type SpanShards,
} from '@sightline/queues';
import type { ExperimentFinalizeJob, PinnedStat } from '@sightline/schemas';
import type { Processor } from '../register-worker';

// How long a finish waits for span writes accepted before it; past that it refuses rather than count
// partial data.
const PENDING_WRITES_WAIT_MS = 30_000;
const MAX_CHUNKS_IN_FLIGHT = 4;

type Deps = { sql: Sql; redis: Redis; keys: RedisKeys; shards: SpanShards; pool: Pool };

/**
 * Finishes an experiment over every trace log accepted before the finish: waits until they are written,
 * streams the roots' stats out of PostgreSQL in chunks (sums are done there), summarizes the scores of
 * each chunk on the thread pool, and stores status, sample count and pinned stats.
 */
export function experimentFinalizeProcessor(deps: Deps): Processor<'experiment-finalize'> {
  return async (job, _bullJob, log) => {
    const reply = createReplier(deps.redis, deps.keys, job.reply_to)<{ num_samples: number }>;
    try {
      await finalize(deps, job, reply, log);
    } catch (err) {
      // The API is waiting: tell it, rather than let it time out.
      await reply({ error: 'the experiment could not be finished; see the worker log', status: 500 }).catch(() => {});
      throw err;
    }
  };
}

/** The number of the experiment's roots and the summary of their scores. */
async function summarizeRoots(deps: Deps, org: string, experimentUuid: string) {
  let numSamples = 0;
  const summaries: Promise<ScoreSummaries>[] = [];
  for await (const chunk of rootStats(deps.sql, org, experimentUuid)) {
    numSamples += chunk.length;
    summaries.push(deps.pool.summarizeScores(chunk.map((r) => r.scores)));
    // A few chunks in flight keep the pool busy without queueing the whole experiment in memory.
    if (summaries.length % MAX_CHUNKS_IN_FLIGHT === 0) await Promise.all(summaries.slice(-MAX_CHUNKS_IN_FLIGHT));
  }
  return { numSamples, scores: mergeScoreSummaries(await Promise.all(summaries)) };
}

/** The dataset-level stats (the job's, else the stored custom ones), then the mean of each score. */
function pinnedStatsOf(job: ExperimentFinalizeJob, stored: PinnedStat[], scores: ScoreSummaries): PinnedStat[] {
  const datasetLevel: PinnedStat[] = job.dataset_level_stats
    ? job.dataset_level_stats.map((d) => ({ var1: d.name, operation: 'custom', value: d.score }))
    : stored.filter((p) => p.operation === 'custom');
  return [
    ...datasetLevel,
    ...Object.entries(scores).map(([name, s]): PinnedStat => ({
      var1: name,
      operation: 'mean',
      value: s.sum / s.count,
    })),
  ];
}

async function finalize(
  deps: Deps,
  job: ExperimentFinalizeJob,
  reply: (r: Reply<{ num_samples: number }>) => Promise<unknown>,
  log: Logger,
) {
  const org = job.organization_id;
  const watermarks = job.watermarks ?? [job.watermark];
  if (!(await waitUntilAppliedEverywhere(deps.redis, deps.shards, org, watermarks, PENDING_WRITES_WAIT_MS))) {
    await reply({
      error: 'trace logs accepted before the finish are still being written; retry shortly',
      status: 503,
    });
    return;
  }
  const experiment = await findExperiment(deps.sql, org, job.experiment_uuid);
  if (!experiment) {
    await reply({ error: 'experiment not found', status: 404 });
    return;
  }
  const { numSamples, scores } = await summarizeRoots(deps, org, job.experiment_uuid);
  await finishExperiment(deps.sql, org, job.experiment_uuid, {
    seq: job.watermark,
    status: job.status,
    pinnedStats: pinnedStatsOf(job, experiment.pinned_stats, scores),
    numSamples,
    metadata: job.metadata,
  });
  log.info({ experiment: job.experiment_uuid, numSamples }, 'experiment finished');
  await reply({ done: { num_samples: numSamples } });
}
