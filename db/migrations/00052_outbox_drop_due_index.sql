-- +goose Up

-- The relay claims by lane since migration 00032 (its own indexes: pending by tenant, pending by
-- type), and no statement reads pending events by due time any more. The old index still cost
-- every event insert and publish its upkeep, and a generic plan of the start lane's claim chose
-- it over the type index: it read every due and every published-but-not-vacuumed entry to find
-- the few start events (about 6,000 index entries per claim in the webhooks benchmark).
DROP INDEX outbox_events_pending;

-- +goose Down
CREATE INDEX outbox_events_pending ON outbox_events (next_attempt_at, seq) WHERE published_at IS NULL;
