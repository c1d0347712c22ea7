import { z } from 'zod';

/** One run of the retention job: removes the traces first stored more than `retention_days` ago. */
export const RetentionJobSchema = z.object({
  retention_days: z.number().positive(),
  /** Spans removed per statement. */
  batch_size: z.number().int().min(1).max(100_000),
});
export type RetentionJob = z.infer<typeof RetentionJobSchema>;
