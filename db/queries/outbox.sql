-- name: OutboxInsert :one
INSERT INTO outbox_events (tenant_id, type, data) VALUES (@tenant_id, @type, @data)
RETURNING id, created_at;

-- name: OutboxClaim :many
-- Leases a batch of due events to one relay (system scope). SKIP LOCKED lets relays run side by side;
-- the lease makes an event come back if its relay dies before finishing it.
UPDATE outbox_events SET locked_until = now() + make_interval(secs => @lease_seconds::float8)
WHERE seq IN (
    SELECT seq FROM outbox_events
    WHERE published_at IS NULL AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
    ORDER BY seq
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED)
RETURNING seq, id, tenant_id, type, data, created_at, handled_by, attempts;

-- name: OutboxHandled :exec
-- Records handlers that finished; publishes the event when all have.
UPDATE outbox_events
SET handled_by = @handled_by, published_at = CASE WHEN @done::boolean THEN now() END, locked_until = NULL
WHERE seq = @seq;

-- name: OutboxRetryLater :exec
UPDATE outbox_events
SET handled_by = @handled_by, attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => @delay_seconds::float8),
    last_error = sqlc.arg('last_error')::text, locked_until = NULL
WHERE seq = @seq;

-- name: OutboxListByTenant :many
SELECT * FROM outbox_events WHERE tenant_id = @tenant_id ORDER BY seq;

-- name: OutboxInsertBatch :exec
-- Many events of one type as one batch row (bulk import; migration 00020): @events is the JSON
-- array of their data, expanded by the relay after commit (OutboxExpandBatch).
INSERT INTO outbox_events (tenant_id, type, data, batch)
VALUES (@tenant_id, 'outbox.batch', jsonb_build_object('type', @event_type::text, 'count', @count::int), @events::json);

-- name: OutboxExpandBatch :execrows
-- Replaces a batch row by one row per event, in array order, with the batch's tenant and time,
-- and publishes the batch in the same statement (system scope). A batch already published
-- (another relay got there first: the UPDATE re-checks after waiting for its lock) expands to
-- nothing, so no event is written twice.
WITH b AS (
    UPDATE outbox_events SET published_at = now(), locked_until = NULL
    WHERE outbox_events.seq = @seq AND outbox_events.published_at IS NULL AND outbox_events.batch IS NOT NULL
    RETURNING tenant_id, data->>'type' AS type, batch, created_at)
INSERT INTO outbox_events (tenant_id, type, data, created_at)
SELECT b.tenant_id, b.type, e.value::jsonb, b.created_at
FROM b, json_array_elements(b.batch) WITH ORDINALITY AS e (value, n)
ORDER BY e.n;
