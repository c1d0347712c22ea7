-- Retention finds the oldest stored spans first, a bounded batch at a time, without reading the table.
-- created_at is set on a span's first write and never changes, so the index only grows at its right end.
create index spans_created_at on spans (created_at);
