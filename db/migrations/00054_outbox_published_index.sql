-- +goose Up

-- The relay's claim walks each tenant's pending events in seq order through
-- outbox_events_pending_tenant. The full (tenant_id, seq) index offered the planner a second
-- way to that order: with statistics taken while a backlog was pending, the claim's generic plan
-- read every event the tenant ever had through it (about 1,100 heap pages a claim in the
-- webhooks benchmark, after the initiatives suite). Nothing else needs that order: the event
-- look-up goes by id (outbox_events_id_key), and retention, the only other reader by tenant,
-- reads published events by publication time, which this index serves exactly.
CREATE INDEX outbox_events_published ON outbox_events (tenant_id, published_at) WHERE published_at IS NOT NULL;
DROP INDEX outbox_events_tenant;

-- +goose Down
CREATE INDEX outbox_events_tenant ON outbox_events (tenant_id, seq);
DROP INDEX outbox_events_published;
