-- The costliest and most-tokens pages under filters that trace_roots answers (a name, a metadata value, a score):
-- with no index in either order, every matching root was read and sorted, about 16,700 of 2,000,000 traces in
-- 1.0-1.2 s. Walked in its index's order, a page stops at its 50th match: about 9 ms and 3 ms on the same
-- roots. The orders by least cost and fewest tokens still sort the matches (traces without a cost come last both
-- ways, so the backward walk of these indexes is not their order): two more indexes were not worth their writes.
-- The price: an update of a root that changes its totals can no longer be HOT, so it writes every index of the table.
create index trace_roots_by_cost on trace_roots (organization_id, project_id, trace_cost desc nulls last, trace_id desc);
create index trace_roots_by_tokens on trace_roots (organization_id, project_id, trace_tokens desc nulls last, trace_id desc);
