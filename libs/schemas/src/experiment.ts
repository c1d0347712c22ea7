import { z } from 'zod';
import { IndexedText, JsonObject, RequestId, Uuid } from './common';

const RUN_NAME = /^[A-Za-z0-9_-]+$/;

export const ExperimentCreateSchema = z.object({
  name: IndexedText.min(1),
  project_uuid: Uuid,
  run_name: z.string().max(255).regex(RUN_NAME, 'only letters, digits, hyphens and underscores').nullish(),
  is_public: z.boolean().nullish(),
  metadata: JsonObject.nullish(),
});

export const ExperimentParams = z.object({ experiment_uuid: Uuid });

export const ExperimentListSchema = z.object({
  project_name: z.string().nullish(),
  project_uuid: Uuid.nullish().describe("the project's experiments (an addition to api.md's filters)"),
  metadata_filter: z.record(z.string(), z.unknown()).nullish(),
  experiment_name_filter: z.string().nullish(),
  run_name_filter: z.string().nullish(),
  experiment_uuids: z.array(Uuid).nullish(),
});
export type ExperimentList = z.infer<typeof ExperimentListSchema>;

export const ExperimentStatus = z.enum(['pending', 'running', 'completed', 'failed']);

const DatasetLevelStat = z.object({ name: z.string(), score: z.number() });
// A finish ends an experiment: the spec's enum also lists pending and running, which a finish refuses.
const FinishStatus = z.enum(['completed', 'failed'], { message: 'a finish sets status completed or failed' });

/** The body of POST /experiment/{uuid}/finished; absent or null means `{status: "completed"}`. */
export const ExperimentFinishSchema = z
  .object({
    status: FinishStatus.nullish(),
    dataset_level_stats: z.array(DatasetLevelStat).nullish(),
    metadata: JsonObject.nullish(),
  })
  .nullish();

/** The operations a pinned statistic may name; the official clients read `operation` as this enum. */
const STATISTIC_OPERATIONS = [
  'mean',
  'median',
  'variance',
  'standard_deviation',
  'min',
  'max',
  'mse',
  'mae',
  'correlation',
  'spearman_correlation',
  'accuracy',
  'custom',
] as const;
export const PinnedStat = z.object({
  var1: z.string(),
  operation: z.enum(STATISTIC_OPERATIONS),
  value: z.number(),
  var2: z.string().nullish(),
});
export type PinnedStat = z.infer<typeof PinnedStat>;

export const ExperimentFinalizeJobSchema = z.object({
  reply_to: z.string().min(1),
  organization_id: Uuid,
  experiment_uuid: Uuid,
  status: FinishStatus,
  /** Absent: the dataset-level stats pinned by an earlier finish are kept. */
  dataset_level_stats: z.array(DatasetLevelStat).optional(),
  metadata: JsonObject,
  /**
   * A sequence number taken when the finish was accepted: every span write accepted before it is
   * counted, and of two finishes the later one's result is the one stored.
   */
  watermark: z.number().int().min(0),
  /** One a span-write shard, taken at once (the first is `watermark`); absent from older releases' jobs. */
  watermarks: z.array(z.number().int().min(0)).optional(),
  request_id: RequestId,
});
export type ExperimentFinalizeJob = z.infer<typeof ExperimentFinalizeJobSchema>;
