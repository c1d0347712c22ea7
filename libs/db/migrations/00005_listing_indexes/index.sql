-- get_trace_logs answers an exact total with every page, so each filter on an indexed field must be
-- countable from an index alone (an index-only scan) and pageable newest first without a sort. Roots only:
-- every listing filters on depth = 0, so these stay a fifth of the size of an index over all spans.
create index spans_roots_by_name on spans (organization_id, project_id, trace_name, start_ts desc nulls last, trace_id desc) where created and depth = 0;
create index spans_roots_by_status on spans (organization_id, project_id, status, start_ts desc nulls last, trace_id desc) where created and depth = 0;
-- Served by spans_roots_by_name; no read looks up non-root spans by name.
drop index spans_trace_name;
