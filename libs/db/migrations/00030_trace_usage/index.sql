-- What the dashboard sums of a trace, stored on its root beside trace_cost and trace_tokens (00026) and kept by
-- the span writer under the trace's lock (libs/db/src/trace-total.ts): its input and output tokens as the
-- traces table counts them (the root's own when the client set them, else the sum over the trace's created
-- spans), and its calls and cost by model, `[{"model": m, "calls": n, "cost": x}, ...]` by model (an array of
-- records: jsonb_to_recordset reads it about 3 times as fast as jsonb_each an object). The dashboard then reads
-- the window's roots alone, once: summing each root's spans through `spans_by_root`, 46k probes for 7 days
-- of a 200k-trace project, took 1.2-1.7 s of its 1.2-1.7 s.
alter table spans
  add column trace_input_tokens bigint,
  add column trace_output_tokens bigint,
  add column trace_models jsonb;

-- Every trace summed in one pass over the spans, not root by root.
update spans r
set trace_input_tokens = coalesce(r.input_tokens, t.input_tokens),
    trace_output_tokens = coalesce(r.output_tokens, t.output_tokens),
    trace_models = t.models
from (
  select organization_id, root_trace_id, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
    jsonb_agg(jsonb_build_object('model', model, 'calls', calls, 'cost', cost) order by model)
      filter (where model is not null) as models
  from (
    select organization_id, root_trace_id, model, count(*) as calls, sum(cost) as cost,
      sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens
    from spans where created group by organization_id, root_trace_id, model
  ) by_model
  group by organization_id, root_trace_id
) t
where r.organization_id = t.organization_id and r.trace_id = t.root_trace_id
  and (coalesce(r.input_tokens, t.input_tokens) is not null or coalesce(r.output_tokens, t.output_tokens) is not null
       or t.models is not null);
