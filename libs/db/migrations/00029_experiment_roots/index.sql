-- The roots of experiment runs' traces, by project: few beside production's. The console counts production's
-- roots (its default view leaves experiment runs out) as all the roots its conditions match less these, each
-- count read from an index; "experiment_uuid is null", in no roots index, had every root of the project read
-- from the table (1.5 s at 200k roots, against 0.1 s).
create index spans_experiment_roots on spans (organization_id, project_id, start_ts desc nulls last, trace_id desc)
  where created and depth = 0 and experiment_uuid is not null;
