import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  cancelBackfill,
  createBackfill,
  createEvalRule,
  findBackfill,
  type Backfill,
  deleteEvalRule,
  findAnnotationQueue,
  findEvalMetrics,
  findEvalRule,
  invalidRuleFilter,
  listEvalRules,
  previewRule,
  ruleSettings,
  transaction,
  updateEvalRule,
  type Sql,
  type StoredEvalRule,
} from '@sightline/db';
import {
  DeletedSchema,
  DetailSchema,
  EvalBackfillCreateSchema,
  EvalBackfillParams,
  EvalBackfillSchema,
  errorResponses,
  EvalRuleCreateSchema,
  type EvalRuleFilter,
  type RuleQueueFeed,
  EvalRuleParams,
  EvalRulePatchSchema,
  EvalRulePreviewRequestSchema,
  EvalRulePreviewSchema,
  EvalRuleSchema,
  OptionalUuid,
  ProjectName,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';

const backfillToWire = (b: Backfill) => ({
  id: b.id,
  status: b.status,
  from: formatTimestamp(b.from_ts),
  to: formatTimestamp(b.to_ts),
  total: b.total,
  done: b.done,
  cost: b.cost,
  created_at: formatTimestamp(b.created_at),
  finished_at: formatTimestamp(b.finished_at),
});

const ruleToWire = ({
  organization_id: _org,
  project_id,
  created_at,
  updated_at,
  paused_until,
  backfills,
  ...r
}: StoredEvalRule) => ({
  ...r,
  project_uuid: project_id,
  created_at: formatTimestamp(created_at),
  updated_at: formatTimestamp(updated_at),
  paused_until: formatTimestamp(paused_until),
  backfills: backfills.map(backfillToWire),
});

// A rule and a backfill as the audit log records them: their settings, not their running figures.
const recordedRule = ({
  runs: _r,
  backfills: _b,
  cost_today: _c,
  paused_until: _p,
  created_at: _ca,
  updated_at: _u,
  ...r
}: ReturnType<typeof ruleToWire>) => r;
const recordedBackfill = (b: Backfill) => ({
  id: b.id,
  status: b.status,
  from: formatTimestamp(b.from_ts),
  to: formatTimestamp(b.to_ts),
  total: b.total,
  done: b.done,
});
const ruleTarget = (r: { id: string; name: string }) => ({ kind: 'eval_rule' as const, id: r.id, name: r.name });

const ListQuery = z.object({ project_name: ProjectName.nullish(), project_uuid: OptionalUuid });

/**
 * Evaluation rules: deployed metrics run on a project's live traces once each has settled (online
 * evaluation). Members and admins write them; viewers read them.
 */
export default async function evalRuleRoutes(base: FastifyInstance) {
  backfillRoutes(base);
  const app = base.withTypeProvider<ZodTypeProvider>();
  const rule = { response: { 200: EvalRuleSchema, 404: DetailSchema, ...errorResponses }, tags: ['evals'] };

  app.get(
    '/eval-rules',
    {
      schema: {
        querystring: ListQuery,
        response: { 200: z.array(EvalRuleSchema), ...errorResponses },
        summary: "List evaluation rules, all of them or a project's",
        tags: ['evals'],
      },
    },
    async (req) => {
      const { project_name, project_uuid } = req.query;
      let projectId: string | undefined;
      if (project_uuid || project_name) {
        const found = project_uuid ?? (await app.findProjectId(req.organizationId, project_name!));
        if (!found) return [];
        projectId = found;
      }
      return (await listEvalRules(app.sql, req.organizationId, projectId)).map(ruleToWire);
    },
  );

  app.post(
    '/eval-rules',
    {
      schema: {
        body: EvalRuleCreateSchema,
        response: { ...rule.response, 409: DetailSchema },
        summary: 'Create an evaluation rule: its metrics run on the project’s new traces once each has settled',
        tags: rule.tags,
      },
    },
    async (req) => {
      const { project_name, project_uuid, ...fields } = req.body;
      // Checked before the project is made, so that a refused rule leaves none behind.
      const existing =
        project_uuid ?? (project_name ? await app.findProjectId(req.organizationId, project_name) : null);
      await checkRule(app.sql, req.organizationId, fields, { ...fields, project_id: existing });
      const projectId = await app.resolveProjectId(req.organizationId, { project_name, project_uuid });
      return transaction(app.sql, async (tx) => {
        const id = await createEvalRule(tx, req.organizationId, projectId, fields);
        if (!id) throw new AppError(409, `the project already has an eval rule named '${fields.name}'`);
        const after = ruleToWire((await findEvalRule(tx, req.organizationId, id))!);
        await recordChange(tx, req, { action: 'create', target: ruleTarget(after), after: recordedRule(after) });
        return after;
      });
    },
  );

  app.post(
    '/eval-rules/preview',
    {
      config: { access: 'read' },
      schema: {
        body: EvalRulePreviewRequestSchema,
        response: { 200: EvalRulePreviewSchema, ...errorResponses },
        summary:
          "What a rule would evaluate at the last day's traffic, and what its judges would cost a day, before it is saved",
        tags: ['evals'],
      },
    },
    async (req) => {
      const { project_name, project_uuid, ...rule } = req.body;
      const projectId =
        project_uuid ?? (project_name ? await app.findProjectId(req.organizationId, project_name) : null);
      await checkRule(app.sql, req.organizationId, rule, { ...rule, project_id: projectId });
      if (!projectId) throw notFound('project');
      const judges = (await findEvalMetrics(app.sql, req.organizationId, { names: rule.metric_names }))
        .filter((m) => m.type === 'llm_judge')
        .map((m) => m.name);
      const seen = await app.lagTolerant((sql) =>
        previewRule(sql, req.organizationId, projectId, { ...rule, metric_names: judges }),
      );
      const sampled = Math.round(seen.matching * rule.sample_rate);
      return {
        matching_24h: seen.matching,
        sampled_24h: sampled,
        example_trace_id: seen.newest,
        judge_metrics: judges,
        estimated_daily_cost: judges.length
          ? seen.judge_call_cost === null
            ? null
            : seen.judge_call_cost * sampled * judges.length
          : 0,
      };
    },
  );

  app.get(
    '/eval-rules/:id',
    {
      schema: {
        params: EvalRuleParams,
        ...rule,
        summary: 'Read an evaluation rule, with its spend of the day and its runs',
      },
    },
    async (req) => ruleToWire(await found(app.sql, req.organizationId, req.params.id)),
  );

  app.patch(
    '/eval-rules/:id',
    {
      schema: {
        params: EvalRuleParams,
        body: EvalRulePatchSchema,
        response: { ...rule.response, 409: DetailSchema },
        summary: 'Change an evaluation rule (enable or disable it, its metrics, sampling, filters, target, limit)',
        tags: rule.tags,
      },
    },
    async (req) =>
      transaction(app.sql, async (tx) => {
        const stored = await found(tx, req.organizationId, req.params.id);
        await checkRule(tx, req.organizationId, req.body, {
          project_id: stored.project_id,
          metric_names: req.body.metric_names ?? stored.metric_names,
          annotation_queue:
            req.body.annotation_queue === undefined ? stored.annotation_queue : req.body.annotation_queue,
        });
        try {
          if (!(await updateEvalRule(tx, req.organizationId, req.params.id, req.body))) throw notFound('eval rule');
        } catch (err) {
          if ((err as { code?: string }).code === '23505')
            throw new AppError(409, `the project already has an eval rule named '${req.body.name}'`);
          throw err;
        }
        const [before, after] = [ruleToWire(stored), ruleToWire(await found(tx, req.organizationId, req.params.id))];
        await recordChange(tx, req, {
          action: 'update',
          target: ruleTarget(after),
          before: recordedRule(before),
          after: recordedRule(after),
        });
        return after;
      }),
  );

  app.delete(
    '/eval-rules/:id',
    {
      schema: {
        params: EvalRuleParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete an evaluation rule (the scores it made stay on their spans)',
        tags: rule.tags,
      },
    },
    async (req) => {
      await transaction(app.sql, async (tx) => {
        const before = ruleToWire(await found(tx, req.organizationId, req.params.id));
        if (!(await deleteEvalRule(tx, req.organizationId, req.params.id))) throw notFound('eval rule');
        await recordChange(tx, req, { action: 'delete', target: ruleTarget(before), before: recordedRule(before) });
      });
      return { id: req.params.id, deleted: true };
    },
  );
}

/** Backfills: a rule run over stored traces, whether it is enabled for live traffic or not. */
function backfillRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/eval-rules/:id/backfill',
    {
      schema: {
        params: EvalRuleParams,
        body: EvalBackfillCreateSchema,
        response: { 202: EvalBackfillSchema, 404: DetailSchema, ...errorResponses },
        summary:
          'Run an evaluation rule over the stored traces that started in [from, to), newest first; its progress shows on the rule',
        tags: ['evals'],
      },
    },
    async (req, reply) => {
      const stored = await found(app.sql, req.organizationId, req.params.id);
      const target = ruleTarget(stored);
      // Recorded as it is made; queued once committed, so that the worker finds it.
      const backfill = await transaction(app.sql, async (tx) => {
        const made = await createBackfill(tx, stored, req.body.from, req.body.to);
        await recordChange(tx, req, { action: 'backfill', target, after: recordedBackfill(made) });
        return made;
      });
      try {
        await app.evalBackfills.add(
          { organization_id: req.organizationId, backfill_id: backfill.id },
          { jobId: backfill.id },
        );
      } catch (err) {
        // Not queued (Redis away): no backfill is left showing as running that nothing runs, and the log
        // says it was cancelled.
        await transaction(app.sql, async (tx) => {
          if (!(await cancelBackfill(tx, req.organizationId, backfill.id))) return;
          const after = { ...recordedBackfill(backfill), status: 'cancelled' };
          await recordChange(tx, req, { action: 'cancel_backfill', target, before: recordedBackfill(backfill), after });
        }).catch(() => {});
        throw err;
      }
      return reply.code(202).send(backfillToWire(backfill));
    },
  );

  app.post(
    '/eval-rules/:id/backfills/:backfill_id/cancel',
    {
      schema: {
        params: EvalBackfillParams,
        response: { 200: EvalBackfillSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Stop a running backfill after the page it is on (the evaluations it made stay)',
        tags: ['evals'],
      },
    },
    async (req) =>
      transaction(app.sql, async (tx) => {
        const backfill = await findBackfill(tx, req.organizationId, req.params.backfill_id);
        if (!backfill || backfill.rule_id !== req.params.id) throw notFound('backfill');
        if (!(await cancelBackfill(tx, req.organizationId, backfill.id)))
          throw new AppError(409, `the backfill is already ${backfill.status}`);
        const after = (await findBackfill(tx, req.organizationId, backfill.id))!;
        const [rule] = await ruleSettings(tx, req.organizationId, backfill.rule_id);
        await recordChange(tx, req, {
          action: 'cancel_backfill',
          target: ruleTarget(rule!),
          before: recordedBackfill(backfill),
          after: recordedBackfill(after),
        });
        return backfillToWire(after);
      }),
  );
}

async function found(sql: Sql, organizationId: string, id: string): Promise<StoredEvalRule> {
  const stored = await findEvalRule(sql, organizationId, id);
  if (!stored) throw notFound('eval rule');
  return stored;
}

/**
 * 422 naming the first unknown metric, the first filter that does not compile, and a queue the rule cannot
 * feed: unknown, of another project, or fed on the result of a metric the rule does not run. `rule` is what
 * the request sends; `after` the rule as it would be (a PATCH keeps what it does not send; a rule being made
 * has no project while its project_name is new).
 */
async function checkRule(
  sql: Sql,
  organizationId: string,
  rule: { metric_names?: string[]; filters?: EvalRuleFilter[]; annotation_queue?: RuleQueueFeed | null },
  after: { project_id: string | null; metric_names: string[]; annotation_queue?: RuleQueueFeed | null },
): Promise<void> {
  const problems = [];
  const sent = rule.annotation_queue;
  const queue = sent && (await findAnnotationQueue(sql, organizationId, sent.queue_id));
  if (sent && !queue)
    problems.push({
      loc: ['body', 'annotation_queue', 'queue_id'],
      msg: 'no such annotation queue',
      type: 'value_error',
    });
  if (queue && queue.project_id !== after.project_id)
    problems.push({
      loc: ['body', 'annotation_queue', 'queue_id'],
      msg: 'the queue belongs to another project: a rule feeds a queue of its own project',
      type: 'value_error',
    });
  const metric = after.annotation_queue?.on_result?.metric_name;
  if (metric && !after.metric_names.includes(metric))
    problems.push({
      loc: sent ? ['body', 'annotation_queue', 'on_result', 'metric_name'] : ['body', 'metric_names'],
      msg: `the rule's queue is fed on the metric '${metric}', which the rule would no longer run: keep it in metric_names, or change annotation_queue`,
      type: 'value_error',
    });
  if (rule.metric_names) {
    const known = new Set(
      (await findEvalMetrics(sql, organizationId, { names: rule.metric_names })).map((m) => m.name),
    );
    const i = rule.metric_names.findIndex((n) => !known.has(n));
    if (i >= 0)
      problems.push({
        loc: ['body', 'metric_names', i],
        msg: `no eval metric named '${rule.metric_names[i]}': create it with POST /api/svc/v1/eval-metrics`,
        type: 'value_error',
      });
  }
  const bad = rule.filters && invalidRuleFilter(rule.filters);
  if (bad) problems.push({ loc: ['body', 'filters', bad[0], bad[1]], msg: bad[2], type: 'value_error' });
  if (problems.length) throw new RequestValidationError(problems);
}
