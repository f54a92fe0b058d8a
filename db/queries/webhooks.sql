-- name: WebhookLockTenantCreates :exec
-- Serialises webhook creation per tenant so the 20-webhook cap holds under concurrency.
SELECT pg_advisory_xact_lock(hashtextextended('webhook-create:' || (@tenant_id::uuid)::text, 0));

-- name: WebhookCount :one
SELECT count(*) FROM webhooks
WHERE tenant_id = @tenant_id AND (sqlc.narg('active')::boolean IS NULL OR active = sqlc.narg('active')::boolean);

-- name: WebhookCreate :one
INSERT INTO webhooks (tenant_id, id, url, events, secret_sealed, secret_hint, active, disabled_at, disabled_reason)
VALUES (@tenant_id, @id, @url, @events, @secret_sealed, @secret_hint, @active, sqlc.narg('disabled_at'), sqlc.narg('disabled_reason'))
RETURNING *;

-- name: WebhookGet :one
SELECT * FROM webhooks WHERE tenant_id = @tenant_id AND id = @id;

-- name: WebhookGetForUpdate :one
SELECT * FROM webhooks WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: WebhookList :many
SELECT sqlc.embed(webhooks), count(*) OVER () AS total
FROM webhooks
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('active')::boolean IS NULL OR active = sqlc.narg('active')::boolean)
ORDER BY created_at, id
LIMIT @page_limit OFFSET @page_offset;

-- name: WebhookLastDeliveries :many
-- The most recent delivery of each given webhook, for the last_delivery field.
SELECT DISTINCT ON (webhook_id) webhook_id, status, last_attempt_at, last_status_code, created_at
FROM webhook_deliveries
WHERE tenant_id = @tenant_id AND webhook_id = ANY (@webhook_ids::uuid[])
ORDER BY webhook_id, created_at DESC, id DESC;

-- name: WebhookUpdate :one
UPDATE webhooks
SET url = @url, events = @events, secret_sealed = @secret_sealed, secret_hint = @secret_hint, active = @active,
    disabled_at = sqlc.narg('disabled_at'), disabled_reason = sqlc.narg('disabled_reason'), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: WebhookDelete :execrows
DELETE FROM webhooks WHERE tenant_id = @tenant_id AND id = @id;

-- name: WebhookDisable :execrows
-- Automatic disabling; a webhook already switched off keeps its first reason.
UPDATE webhooks
SET active = false, disabled_at = now(), disabled_reason = @reason, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND active;

-- name: WebhookDeliveryFanOut :many
-- The relay's step for one event: create a pending delivery, claimed for @lease_seconds, for each
-- active webhook of the tenant that lists the event type; reclaim pending deliveries whose claim
-- ran out (their relay died mid-attempt); and return failed deliveries whose retry workflow was
-- not started yet. Idempotent: a redelivered event finds its rows instead of adding more.
WITH created AS (
    INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, locked_until)
    SELECT w.tenant_id, w.id, @event_id, @event_type, now() + make_interval(secs => @lease_seconds::float8)
    FROM webhooks w
    WHERE w.tenant_id = @tenant_id AND w.active AND @event_type::text = ANY (w.events)
    ON CONFLICT (tenant_id, webhook_id, event_id) DO NOTHING
    RETURNING id, webhook_id, status, last_attempt_at
), reclaimed AS (
    UPDATE webhook_deliveries d
    SET locked_until = now() + make_interval(secs => @lease_seconds::float8), updated_at = now()
    WHERE d.tenant_id = @tenant_id AND d.event_id = @event_id AND d.status = 'pending' AND d.locked_until < now()
    RETURNING id, webhook_id, status, last_attempt_at
), todo AS (
    SELECT * FROM created
    UNION ALL
    SELECT * FROM reclaimed
    UNION ALL
    SELECT d.id, d.webhook_id, d.status, d.last_attempt_at
    FROM webhook_deliveries d
    WHERE d.tenant_id = @tenant_id AND d.event_id = @event_id AND d.status = 'retrying' AND NOT d.retry_scheduled
)
SELECT todo.id, todo.webhook_id, todo.status, todo.last_attempt_at, w.url, w.secret_sealed, w.active
FROM todo JOIN webhooks w ON w.tenant_id = @tenant_id AND w.id = todo.webhook_id;

-- name: WebhookSubscribed :one
-- Whether an active webhook of the tenant lists the event type: the relay's fan-out would find
-- a subscription (WebhookDeliveryFanOut creates deliveries for exactly these).
SELECT EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = @tenant_id AND w.active AND @event_type::text = ANY (w.events));

-- name: WebhookDeliveryRecordAttempts :many
-- Stores attempts of deliveries of the tenant (one per delivery: the relay's attempts 1 of an
-- event's deliveries together, or one attempt of the other paths) and each delivery's resulting
-- state, in one statement; returns each delivery's attempt number. A status code 0 and an error ''
-- are none; a delivery's next_attempt_at is set only where has_next. Each delivery takes the
-- values at its id's place in the arrays. The deliveries are all of one event, named too, so
-- that whichever index the planner takes reads only them: by (tenant_id, id = ANY) alone, a plan
-- made while the tenant was new to the statistics (about one row) scanned every delivery of the
-- tenant by its tenant_id and filtered on id; joined to the unnested arrays, likewise.
WITH k AS (
    SELECT @ids::uuid[] AS ids
), d AS (
    UPDATE webhook_deliveries wd
    SET attempts = wd.attempts + 1, status = (@statuses::text[])[array_position(k.ids, wd.id)], locked_until = NULL,
        retry_scheduled = (@retry_scheduled::bool[])[array_position(k.ids, wd.id)],
        last_attempt_at = (@started_ats::timestamptz[])[array_position(k.ids, wd.id)],
        next_attempt_at = CASE WHEN (@has_next::bool[])[array_position(k.ids, wd.id)]
                               THEN (@next_attempt_ats::timestamptz[])[array_position(k.ids, wd.id)] END,
        last_status_code = NULLIF((@status_codes::int[])[array_position(k.ids, wd.id)], 0),
        last_error = NULLIF((@errors::text[])[array_position(k.ids, wd.id)], ''), updated_at = now()
    FROM k
    WHERE wd.tenant_id = @tenant_id AND wd.event_id = @event_id AND wd.id = ANY (@ids::uuid[])
    RETURNING wd.tenant_id, wd.id, wd.attempts, wd.last_attempt_at, wd.last_status_code, wd.last_error, array_position(k.ids, wd.id) AS i
)
INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, trigger, outcome, started_at, latency_ms, status_code, error, response_snippet)
SELECT d.tenant_id, d.id, d.attempts, (@triggers::text[])[d.i], (@outcomes::text[])[d.i], d.last_attempt_at,
       (@latencies_ms::float8[])[d.i], d.last_status_code, d.last_error, (@response_snippets::text[])[d.i]
FROM d
RETURNING delivery_id, attempt;

-- name: WebhookDeliveryRetryScheduled :exec
UPDATE webhook_deliveries SET retry_scheduled = true, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status = 'retrying';

-- name: WebhookDeliveryFinish :exec
-- Ends a delivery without an attempt (its webhook went away or was switched off).
UPDATE webhook_deliveries
SET status = 'failed', locked_until = NULL, next_attempt_at = NULL, last_error = @reason, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('pending', 'retrying');

-- name: WebhookDeliveryGet :one
SELECT * FROM webhook_deliveries WHERE tenant_id = @tenant_id AND webhook_id = @webhook_id AND id = @id;

-- name: WebhookDeliveryGetForUpdate :one
SELECT * FROM webhook_deliveries WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: WebhookDeliveryGetByEvent :one
SELECT * FROM webhook_deliveries WHERE tenant_id = @tenant_id AND webhook_id = @webhook_id AND event_id = @event_id;

-- name: WebhookDeliveryCreate :one
-- A delivery made outside the relay (webhook.test), carrying its own envelope.
INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, payload)
VALUES (@tenant_id, @webhook_id, @event_id, @event_type, @payload)
RETURNING *;

-- name: WebhookDeliveryList :many
-- payload is NULL but for webhook.test deliveries (a small envelope): the whole row is cheap.
SELECT sqlc.embed(webhook_deliveries), count(*) OVER () AS total
FROM webhook_deliveries
WHERE tenant_id = @tenant_id AND webhook_id = @webhook_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('event_type')::text IS NULL OR event_type = sqlc.narg('event_type')::text)
ORDER BY created_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: WebhookDeliveryCount :one
SELECT count(*) FROM webhook_deliveries
WHERE tenant_id = @tenant_id AND webhook_id = @webhook_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('event_type')::text IS NULL OR event_type = sqlc.narg('event_type')::text);

-- name: WebhookDeliveryAttemptList :many
SELECT * FROM webhook_delivery_attempts
WHERE tenant_id = @tenant_id AND delivery_id = ANY (@delivery_ids::uuid[])
ORDER BY delivery_id, attempt;

-- name: WebhookEventGet :one
-- The outbox event a delivery carries, read in the tenant's scope.
SELECT id, tenant_id, type, data, created_at FROM outbox_events WHERE tenant_id = @tenant_id AND id = @id;
