-- +goose Up

-- Fair relay: the relay claims in two lanes, and round robin across tenants within each, so a
-- tenant's backlog of webhook deliveries (an import of 500,000 actuals to a refusing receiver)
-- delays neither another tenant's events nor any tenant's workflow starts (exports, syncs,
-- approvals). The lane of workflow starts reads its few pending events by type; the delivery
-- lane finds the tenants with pending events by a skip scan and takes each one's oldest.
CREATE INDEX outbox_events_pending_tenant ON outbox_events (tenant_id, seq) WHERE published_at IS NULL;
CREATE INDEX outbox_events_pending_type ON outbox_events (type, seq) WHERE published_at IS NULL;

-- +goose Down
DROP INDEX outbox_events_pending_type;
DROP INDEX outbox_events_pending_tenant;
