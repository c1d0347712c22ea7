-- A span whose tokens and cost were counted from its text rather than reported (libs/llm/src/usage-estimate.ts),
-- and on a trace's root whether its totals count such a span (kept by libs/db/src/trace-total.ts): the console
-- shows them as "≈". Null is false; no default, so adding them rewrites no partition.
alter table spans
  add column usage_estimated boolean,
  add column trace_usage_estimated boolean;
