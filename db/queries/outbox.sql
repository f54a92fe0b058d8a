-- name: OutboxInsert :one
INSERT INTO outbox_events (tenant_id, type, data) VALUES (@tenant_id, @type, @data)
RETURNING id, created_at;

-- name: OutboxClaim :many
-- Leases a batch of due events of the delivery lane (every type but @start_types) to one relay
-- (system scope), fairly: each tenant with pending events (found by a skip scan over the pending
-- index, one probe per tenant) offers its oldest @batch_size, and the batch takes them in turns,
-- every tenant's first, then every tenant's second, ... so one tenant's backlog never holds up
-- another's events. SKIP LOCKED lets relays run side by side; the lease makes an event come back
-- if its relay dies before finishing it.
WITH RECURSIVE tenants AS (
    (SELECT o.tenant_id FROM outbox_events o WHERE o.published_at IS NULL ORDER BY o.tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT o.tenant_id FROM outbox_events o WHERE o.published_at IS NULL AND o.tenant_id > t.tenant_id
            ORDER BY o.tenant_id LIMIT 1)
    FROM tenants t WHERE t.tenant_id IS NOT NULL
), offered AS (
    SELECT c.seq, row_number() OVER (PARTITION BY t.tenant_id ORDER BY c.seq) AS turn
    FROM tenants t, LATERAL (
        -- The tenant as a range of one, in (tenant_id, seq) order: only the pending index gives
        -- that order, so the walk stops at the batch. With "tenant_id = t" the order is seq alone,
        -- which the primary key gives too: a plan that walked every event from the first, the
        -- published ones and other tenants' included, looked as cheap to the planner.
        SELECT o.seq FROM outbox_events o
        WHERE o.tenant_id >= t.tenant_id AND o.tenant_id <= t.tenant_id AND o.published_at IS NULL
          AND o.next_attempt_at <= now() AND (o.locked_until IS NULL OR o.locked_until < now())
          AND o.type <> ALL (@start_types::text[])
        ORDER BY o.tenant_id, o.seq
        LIMIT @batch_size) c
    WHERE t.tenant_id IS NOT NULL
), picked AS (
    -- The batch, before locking: a LIMIT the planner sees keeps the lock step a nested loop
    -- over the primary key. Joined to every offered event it became a scan of every pending
    -- one (70-90 ms for a 3,000-event backlog when outbox_events had no statistics yet).
    -- Events another relay is claiming at this instant are skipped, not replaced.
    SELECT f.seq, f.turn FROM offered f ORDER BY f.turn, f.seq LIMIT @batch_size
)
UPDATE outbox_events SET locked_until = now() + make_interval(secs => @lease_seconds::float8)
WHERE seq IN (
    SELECT o.seq FROM outbox_events o JOIN picked f ON f.seq = o.seq
    WHERE o.published_at IS NULL AND (o.locked_until IS NULL OR o.locked_until < now())
    ORDER BY f.turn, f.seq
    FOR UPDATE OF o SKIP LOCKED)
RETURNING seq, id, tenant_id, type, data, created_at, handled_by, attempts;

-- name: OutboxClaimStarts :many
-- Leases a batch of due events of the start lane (@start_types: the events that start or signal
-- workflows), read by type from their own index so that no backlog of deliveries is scanned,
-- in turns across tenants as OutboxClaim does.
WITH offered AS (
    SELECT o.seq, row_number() OVER (PARTITION BY o.tenant_id ORDER BY o.seq) AS turn
    FROM outbox_events o
    WHERE o.type = ANY (@start_types::text[]) AND o.published_at IS NULL AND o.next_attempt_at <= now()
      AND (o.locked_until IS NULL OR o.locked_until < now())
), picked AS ( -- as in OutboxClaim
    SELECT f.seq, f.turn FROM offered f ORDER BY f.turn, f.seq LIMIT @batch_size
)
UPDATE outbox_events SET locked_until = now() + make_interval(secs => @lease_seconds::float8)
WHERE seq IN (
    SELECT o.seq FROM outbox_events o JOIN picked f ON f.seq = o.seq
    WHERE o.published_at IS NULL AND (o.locked_until IS NULL OR o.locked_until < now())
    ORDER BY f.turn, f.seq
    FOR UPDATE OF o SKIP LOCKED)
RETURNING seq, id, tenant_id, type, data, created_at, handled_by, attempts;

-- name: OutboxPublish :exec
-- Publishes events every handler finished, many in one statement (the relay gathers them): each
-- records the handlers @handler_names it had not recorded yet, after the ones it had. The rows are
-- locked in seq order, as every statement that updates many events does, so two of them never
-- wait on each other in a cycle (a deadlock). The events are found by seq alone and those another
-- relay published meanwhile are skipped after the lock (which reads their latest version): with
-- published_at IS NULL among the scan's conditions the planner may walk a pending index instead,
-- every pending event of every tenant, when its statistics were taken with none pending.
WITH target AS (
    SELECT seq, published_at FROM outbox_events WHERE seq = ANY (@seqs::bigint[]) ORDER BY seq FOR UPDATE
)
UPDATE outbox_events o
SET handled_by = o.handled_by || ARRAY(SELECT h FROM unnest(@handler_names::text[]) WITH ORDINALITY AS n (h, i)
                                       WHERE h <> ALL (o.handled_by) ORDER BY n.i),
    published_at = now(), locked_until = NULL
FROM target
WHERE o.seq = target.seq AND target.published_at IS NULL;

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
-- and publishes the batch in the same statement (system scope). Each event starts with
-- @handled_by, the handlers that have nothing to do for it; when that is every handler
-- (@published), it is written published and never enters the pending indexes. A batch already
-- published (another relay got there first: the UPDATE re-checks after waiting for its lock)
-- expands to nothing, so no event is written twice.
WITH b AS (
    UPDATE outbox_events SET published_at = now(), locked_until = NULL
    WHERE outbox_events.seq = @seq AND outbox_events.published_at IS NULL AND outbox_events.batch IS NOT NULL
    RETURNING tenant_id, data->>'type' AS type, batch, created_at)
INSERT INTO outbox_events (tenant_id, type, data, created_at, handled_by, published_at)
SELECT b.tenant_id, b.type, e.value::jsonb, b.created_at, @handled_by::text[], CASE WHEN @published::bool THEN now() END
FROM b, json_array_elements(b.batch) WITH ORDINALITY AS e (value, n)
ORDER BY e.n;
