import { z } from 'zod';

/** One run of the retention job: removes the traces first stored more than `retention_days` ago. */
export const RetentionJobSchema = z.object({
  retention_days: z.number().positive(),
  /** Spans removed per statement. */
  batch_size: z.number().int().min(1).max(100_000),
});
export type RetentionJob = z.infer<typeof RetentionJobSchema>;

/** One run of the statistics job: analyzes the span tables that changed enough since their last analysis. */
export const StatisticsJobSchema = z.object({
  /** Rows inserted, updated or deleted since a table's last analysis past which it is analyzed again. */
  min_changed_rows: z.number().int().min(1),
});

/**
 * One run of the trace-hours job: folds up to `chunk` changes of the roots per transaction into the sums the
 * console reads (the dashboard's hours, the sessions' and users').
 */
export const TraceHoursJobSchema = z.object({ chunk: z.number().int().min(1) });
