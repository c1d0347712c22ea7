-- A trace whose root was stored without a start reads as starting when it was first stored (`created_at`),
-- and the console's listing, dashboard and project figures count it at that time. spans_roots serves the
-- roots by start; this small index serves the others by `created_at`, so that a window's roots are two
-- index ranges, not every root of the project.
create index spans_roots_unstarted on spans (organization_id, project_id, created_at) where created and depth = 0 and start_ts is null;
