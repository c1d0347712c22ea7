import { z } from 'zod';
import { Count, Uuid } from './common';

const RUNS = {
  experiment_uuids: z.array(Uuid).min(2).max(5).describe('2 to 5 distinct experiments'),
  baseline_uuid: Uuid.describe('one of experiment_uuids: the others are compared with it'),
};
type Runs = { experiment_uuids: string[]; baseline_uuid: string };

function checkRuns<T extends Runs>(body: T, ctx: z.RefinementCtx<T>) {
  if (new Set(body.experiment_uuids).size !== body.experiment_uuids.length)
    ctx.addIssue({ code: 'custom', message: 'experiments must be distinct', path: ['experiment_uuids'] });
  if (!body.experiment_uuids.includes(body.baseline_uuid))
    ctx.addIssue({ code: 'custom', message: 'the baseline must be one of experiment_uuids', path: ['baseline_uuid'] });
}

export const CompareRequestSchema = z.object(RUNS).superRefine(checkRuns);

const OutcomeSchema = z
  .object({
    run_uuid: Uuid.describe('one of experiment_uuids but the baseline'),
    kind: z.enum(['score', 'latency', 'cost']),
    metric: z.string().min(1).max(255).nullish().describe("the score's name; only for kind 'score'"),
    change: z.enum(['improved', 'regressed', 'unchanged']),
  })
  .describe(
    "only the cases where this run's value of the metric improved on the baseline's, regressed, or stayed the same: those counted by POST /experiments/compare",
  );

export const CompareRowsRequestSchema = z
  .object({
    ...RUNS,
    page: z.number().int().min(1).max(1_000_000).default(1),
    page_size: z.number().int().min(1).max(200).default(50),
    outcome: OutcomeSchema.nullish(),
    trace_id: Uuid.nullish().describe('only the case of this sample (a root trace of one of the runs)'),
  })
  .superRefine((body, ctx) => {
    checkRuns(body, ctx);
    const outcome = body.outcome;
    if (!outcome) return;
    if (!body.experiment_uuids.includes(outcome.run_uuid) || outcome.run_uuid === body.baseline_uuid)
      ctx.addIssue({
        code: 'custom',
        message: 'must be one of experiment_uuids but the baseline',
        path: ['outcome', 'run_uuid'],
      });
    if ((outcome.kind === 'score') !== (outcome.metric != null))
      ctx.addIssue({
        code: 'custom',
        message: "a score's name is needed for kind 'score', and only for it",
        path: ['outcome', 'metric'],
      });
  });

export const CompareSchema = z.object({
  baseline_uuid: z.string(),
  test: z.literal('wilcoxon_signed_rank'),
  alpha: z.number(),
  experiments: z
    .array(
      z.object({
        uuid: z.string(),
        name: z.string(),
        run_name: z.string().nullable(),
        status: z.string(),
        samples: Count,
      }),
    )
    .describe('in the order asked for'),
  cases: z.object({
    total: Count.describe('test cases (same inputs and target) over all runs'),
    in_all: Count,
    repeated: Count.describe('cases some run holds more than once (its value is then the mean)'),
    missing: z.array(z.object({ uuid: z.string(), count: Count })).describe('how many cases each run lacks'),
  }),
  metrics: z
    .array(
      z.object({
        name: z.string().describe("a score's name, or 'latency' or 'cost'"),
        kind: z.enum(['score', 'latency', 'cost']),
        better: z.enum(['higher', 'lower']),
        runs: z.array(z.object({ uuid: z.string(), mean: z.number().nullable(), n: Count })),
        comparisons: z
          .array(
            z.object({
              uuid: z.string(),
              pairs: Count.describe('cases both this run and the baseline have a value for'),
              mean_difference: z.number().nullable().describe('this run minus the baseline'),
              ci_low: z.number().nullable(),
              ci_high: z.number().nullable(),
              p_value: z.number().nullable().describe('null without a non-zero difference'),
              significant: z.boolean(),
              improved: Count,
              regressed: Count,
              unchanged: Count,
            }),
          )
          .describe('each run but the baseline, against the baseline'),
      }),
    )
    .describe('score names in order, then latency, then cost'),
});

const RowRun = z
  .object({
    trace_id: z.string(),
    output: z.string().nullable(),
    output_truncated: z.boolean(),
    scores: z.record(z.string(), z.number().nullable()),
    latency: z.number().nullable(),
    cost: z.number().nullable(),
    status: z.string().nullable(),
  })
  .nullable()
  .describe("the run's earliest sample of the case; null when the run lacks it");

export const CompareRowsSchema = z.object({
  total: Count.describe('cases'),
  page: Count,
  page_size: Count,
  rows: z
    .array(z.object({ key: z.string(), inputs: z.unknown(), target: z.string().nullable(), runs: z.array(RowRun) }))
    .describe("by the case's earliest start in any run"),
});
