import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, errorMessage } from '../../api/client';
import type {
  EvalBackfill,
  EvalMetric,
  EvalMetricTry,
  EvalResult,
  EvalRule,
  EvalRuleCreate,
  EvalRulePatch,
  EvalRulePreview,
  EvalRulePreviewRequest,
} from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';
import { exampleSpan, type TraceTree } from './lib/rules';

const evalRuleKeys = {
  all: ['eval-rules'] as const,
  lists: () => [...evalRuleKeys.all, 'list'] as const,
  list: (projectUuid: string) => [...evalRuleKeys.lists(), projectUuid] as const,
  preview: (request: EvalRulePreviewRequest) => [...evalRuleKeys.all, 'preview', request] as const,
  trace: (traceId: string) => [...evalRuleKeys.all, 'trace', traceId] as const,
};

/** While a backfill runs its progress is read every 2 s; otherwise the page asks nothing until it is used. */
const BACKFILL_POLL_MS = 2_000;

const evalRulesQueryOptions = (projectUuid: string) =>
  queryOptions({
    queryKey: evalRuleKeys.list(projectUuid),
    queryFn: ({ signal }) => api<EvalRule[]>(`/eval-rules?project_uuid=${encodeURIComponent(projectUuid)}`, { signal }),
    refetchInterval: (query) =>
      query.state.data?.some((r) => r.backfills.some((b) => b.status === 'running')) ? BACKFILL_POLL_MS : false,
  });

const previewQueryOptions = (request: EvalRulePreviewRequest) =>
  queryOptions({
    queryKey: evalRuleKeys.preview(request),
    queryFn: ({ signal }) => api<EvalRulePreview>('/eval-rules/preview', { method: 'POST', body: request, signal }),
    // The last figures stay while the next ones load, rather than the panel blinking at each change.
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

const traceQueryOptions = (traceId: string) =>
  queryOptions({
    queryKey: evalRuleKeys.trace(traceId),
    queryFn: ({ signal }) => api<TraceTree>(`/trace_log/${traceId}`, { signal }),
    staleTime: 60_000,
  });

/** A project's rules, with their runs, the day's judge spend and their latest backfills. */
export const useEvalRules = (projectUuid: string) => useQuery(evalRulesQueryOptions(projectUuid));

/** What a rule being written would evaluate at the last day's traffic; nothing is asked while `request` is null. */
export const useEvalRulePreview = (request: EvalRulePreviewRequest | null) =>
  useQuery({ ...previewQueryOptions(request!), enabled: !!request });

// Every write reads the lists again: a rule's runs, spend and backfills change with it.

export const useCreateEvalRule = () =>
  useInvalidatingMutation(evalRuleKeys.lists(), (body: EvalRuleCreate) =>
    api<EvalRule>('/eval-rules', { method: 'POST', body }),
  );

export const useUpdateEvalRule = () =>
  useInvalidatingMutation(evalRuleKeys.lists(), ({ id, ...body }: EvalRulePatch & { id: string }) =>
    api<EvalRule>(`/eval-rules/${id}`, { method: 'PATCH', body }),
  );

export const useDeleteEvalRule = () =>
  useInvalidatingMutation(evalRuleKeys.lists(), (id: string) => api(`/eval-rules/${id}`, { method: 'DELETE' }));

export const useStartBackfill = () =>
  useInvalidatingMutation(evalRuleKeys.lists(), ({ id, ...body }: { id: string; from: string; to: string }) =>
    api<EvalBackfill>(`/eval-rules/${id}/backfill`, { method: 'POST', body }),
  );

export const useCancelBackfill = () =>
  useInvalidatingMutation(evalRuleKeys.lists(), ({ ruleId, backfillId }: { ruleId: string; backfillId: string }) =>
    api<EvalBackfill>(`/eval-rules/${ruleId}/backfills/${backfillId}/cancel`, { method: 'POST' }),
  );

type TryResult = { metric: string; result: EvalResult };

/**
 * Scores the example trace (its root, or its first span of the rule's target name) with each metric, as
 * the worker would: nothing is saved, but a judge is called (and costed) like any completion. A metric
 * that fails gives its error, and the others still run.
 */
export function useTryOnTrace() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({
      traceId,
      spanName,
      metrics,
    }: {
      traceId: string;
      spanName: string | null;
      metrics: EvalMetric[];
    }): Promise<TryResult[]> => {
      const span = exampleSpan(await client.fetchQuery(traceQueryOptions(traceId)), spanName);
      return Promise.all(
        metrics.map(async (m): Promise<TryResult> => {
          if (!span) return { metric: m.name, result: { error: `the trace has no span named "${spanName}"` } };
          const body = {
            metric: { name: m.name, type: m.type, config: m.config } as EvalMetricTry['metric'],
            output: span.output_for_eval_metrics ?? span.output ?? '',
            target: span.target ?? null,
            inputs: span.inputs ?? null,
          };
          try {
            return { metric: m.name, result: await api<EvalResult>('/eval-metrics/try', { method: 'POST', body }) };
          } catch (err) {
            return { metric: m.name, result: { error: errorMessage(err) } };
          }
        }),
      );
    },
  });
}
