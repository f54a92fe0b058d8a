-- +goose Up

-- Writers of events no longer NOTIFY. PostgreSQL serialises the commits of all notifying
-- transactions of the cluster on one lock, held through each commit's WAL flush: with the
-- per-insert NOTIFY, creates of different tenants committed one flush at a time (150-550/s on the
-- 2-core bench machine, one fdatasync each) instead of sharing flushes (group commit). The relay
-- polls instead (internal/outbox/relay.go, docs/outbox-relay.md).
DROP TRIGGER outbox_events_notify ON outbox_events;
DROP FUNCTION outbox_notify();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox_events', '');
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
