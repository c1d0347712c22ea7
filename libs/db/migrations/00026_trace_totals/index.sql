-- A trace's total cost and tokens, stored on its root (the trace's own span, trace_id = root_trace_id) as
-- traceTotal counts them: the root's own value when the client set one, else the sum over the trace's
-- created spans. The span writer keeps them under the trace's lock (libs/db/src/trace-total.ts), so that the
-- listing's orders by cost and tokens read a page from an index per partition, as by start and latency,
-- where they summed and sorted every root of the project (about 3 s at 200k roots).
alter table spans add column trace_cost double precision, add column trace_tokens bigint;

-- Every trace summed in one pass over the spans, not root by root.
update spans r set trace_cost = coalesce(r.cost, t.cost), trace_tokens = coalesce(r.total_tokens, t.tokens)
from (
  select organization_id, root_trace_id, sum(cost) as cost, sum(total_tokens) as tokens
  from spans where created group by organization_id, root_trace_id
) t
where r.organization_id = t.organization_id and r.trace_id = t.root_trace_id
  and (coalesce(r.cost, t.cost) is not null or coalesce(r.total_tokens, t.tokens) is not null);

-- Traces without a cost (or tokens) come last both ways, so each order has its own index: one index read
-- backwards would list them first on the way up, as "fastest" does those without a latency.
create index spans_roots_by_cost on spans (organization_id, project_id, trace_cost desc nulls last, trace_id desc)
  where created and depth = 0;
create index spans_roots_by_cost_asc on spans (organization_id, project_id, trace_cost asc nulls last, trace_id asc)
  where created and depth = 0;
create index spans_roots_by_tokens on spans (organization_id, project_id, trace_tokens desc nulls last, trace_id desc)
  where created and depth = 0;
create index spans_roots_by_tokens_asc on spans (organization_id, project_id, trace_tokens asc nulls last, trace_id asc)
  where created and depth = 0;
