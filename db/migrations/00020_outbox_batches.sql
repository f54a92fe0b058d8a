-- +goose Up

-- Outbox batches (issue 13, bulk speed): a bulk import's events are written as ONE outbox row in
-- the import's transaction instead of one row per event. The row has type 'outbox.batch', data
-- {"type": <the events' type>, "count": n} and the events' data in `batch`, a JSON array; the
-- relay expands it after commit into one ordinary row per event (same tenant, type and
-- created_at, in array order) and marks it published in the same statement, so every handler
-- and reader still sees one row per event, and a crash either keeps the batch pending or has
-- expanded it whole.
--
-- json, not jsonb, with lz4: the array is our own json.Marshal output, read once; storing it as
-- jsonb parsed and pglz-compressed 10,000 events' 5 MB in ~250–600 ms, as lz4 json in ~35 ms.
ALTER TABLE outbox_events ADD COLUMN batch json COMPRESSION lz4;

-- +goose Down
ALTER TABLE outbox_events DROP COLUMN batch;
