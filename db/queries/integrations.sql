-- name: IntegrationLockTenantCreates :exec
-- Serialises creates and re-activations per tenant so the 10-active cap holds under concurrency.
SELECT pg_advisory_xact_lock(hashtextextended('integration-active:' || (@tenant_id::uuid)::text, 0));

-- name: IntegrationCountActive :one
SELECT count(*) FROM integrations WHERE tenant_id = @tenant_id AND state = 'active' AND id <> coalesce(sqlc.narg('except_id')::uuid, '00000000-0000-0000-0000-000000000000');

-- name: IntegrationCreate :one
INSERT INTO integrations (tenant_id, id, provider, name, config, token_sealed, token_hint, credentials_sealed, frequency, schedule_at, day_of_week, timezone, state)
VALUES (@tenant_id, @id, @provider, @name, @config, sqlc.narg('token_sealed'), sqlc.narg('token_hint'), sqlc.narg('credentials_sealed'), @frequency,
        sqlc.narg('schedule_at'), sqlc.narg('day_of_week'), @timezone, @state)
RETURNING *;

-- name: IntegrationGet :one
SELECT * FROM integrations WHERE tenant_id = @tenant_id AND id = @id;

-- name: IntegrationGetForUpdate :one
SELECT * FROM integrations WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: IntegrationList :many
SELECT sqlc.embed(integrations), count(*) OVER () AS total
FROM integrations
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('state')::text IS NULL OR state = sqlc.narg('state'))
  AND (sqlc.narg('provider')::text IS NULL OR provider = sqlc.narg('provider'))
ORDER BY created_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: IntegrationCount :one
SELECT count(*) FROM integrations
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('state')::text IS NULL OR state = sqlc.narg('state'))
  AND (sqlc.narg('provider')::text IS NULL OR provider = sqlc.narg('provider'));

-- name: IntegrationUpdate :one
UPDATE integrations
SET name = @name, config = @config, token_sealed = sqlc.narg('token_sealed'), token_hint = sqlc.narg('token_hint'),
    credentials_sealed = sqlc.narg('credentials_sealed'), token_expires_at = sqlc.narg('token_expires_at'),
    frequency = @frequency, schedule_at = sqlc.narg('schedule_at'), day_of_week = sqlc.narg('day_of_week'), timezone = @timezone,
    state = @state, last_error = sqlc.narg('last_error'), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: IntegrationDisconnect :one
UPDATE integrations
SET state = 'disconnected', token_sealed = NULL, token_hint = NULL, credentials_sealed = NULL, token_expires_at = NULL, last_error = NULL, disconnected_at = now(), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: IntegrationTokenLock :exec
-- Serialises the token refreshes of one integration across workers: the second refresher waits
-- and then finds the token the first one stored.
SELECT pg_advisory_xact_lock(hashtextextended('integration-token:' || (@id::uuid)::text, 0));

-- name: IntegrationTokenStore :exec
-- A refresh's result: the new access token, its expiry and the (possibly rotated) refresh token,
-- in one statement. A disconnected integration keeps no secret.
UPDATE integrations
SET token_sealed = @token_sealed, token_hint = @token_hint, credentials_sealed = @credentials_sealed,
    token_expires_at = sqlc.narg('token_expires_at')
WHERE tenant_id = @tenant_id AND id = @id AND state <> 'disconnected';

-- name: IntegrationSetError :exec
-- A sync found the integration cannot work (e.g. needs_reauth after a 401): it stops until a PUT fixes it.
UPDATE integrations SET state = 'error', last_error = @last_error, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND state = 'active';

-- name: IntegrationSyncDone :exec
-- A finished sync advances the watermark (only when it reached the end of the feed).
UPDATE integrations
SET watermark = CASE WHEN @advance::boolean THEN @watermark ELSE watermark END, last_sync_at = now()
WHERE tenant_id = @tenant_id AND id = @id;

-- name: IntegrationScheduleAll :many
-- The tenant's integrations that should own a Temporal Schedule (the reconcile reads every tenant's).
SELECT tenant_id, id, name, frequency, schedule_at, day_of_week, timezone, state
FROM integrations
WHERE tenant_id = @tenant_id AND state <> 'disconnected' AND frequency <> 'manual'
ORDER BY id;

-- name: SyncCreate :one
INSERT INTO integration_syncs (tenant_id, integration_id, trigger, requested_by, since)
VALUES (@tenant_id, @integration_id, @trigger, @requested_by, @since)
RETURNING *;

-- name: SyncOpen :one
SELECT * FROM integration_syncs
WHERE tenant_id = @tenant_id AND integration_id = @integration_id AND status IN ('queued', 'running');

-- name: SyncLatest :one
-- The integration's latest sync (once no sync is open: the last finished; a rate_limited one holds back the schedule
-- until next_try_at); by creation, on the history's index.
SELECT * FROM integration_syncs
WHERE tenant_id = @tenant_id AND integration_id = @integration_id
ORDER BY created_at DESC, id DESC LIMIT 1;

-- name: SyncGet :one
SELECT * FROM integration_syncs WHERE tenant_id = @tenant_id AND id = @id;

-- name: SyncList :many
SELECT sqlc.embed(integration_syncs), count(*) OVER () AS total
FROM integration_syncs
WHERE tenant_id = @tenant_id AND integration_id = @integration_id
ORDER BY created_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: SyncCount :one
SELECT count(*) FROM integration_syncs WHERE tenant_id = @tenant_id AND integration_id = @integration_id;

-- name: SyncStart :one
-- queued → running (a retried start finds it running and goes on).
UPDATE integration_syncs SET status = 'running', started_at = coalesce(started_at, now())
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running')
RETURNING *;

-- name: SyncPage :one
-- Records one upserted page: counts add up, the first 20 item errors are kept, the cursor moves on.
-- Guarded by the cursor the page was fetched at, so a page recorded twice (a retried activity
-- whose first attempt committed) counts once.
UPDATE integration_syncs
SET pages = pages + 1, fetched = fetched + @fetched, created = created + @created, updated = updated + @updated,
    unchanged = unchanged + @unchanged, failed = failed + @failed,
    errors = CASE WHEN jsonb_array_length(errors) >= 20 THEN errors
                  ELSE (SELECT coalesce(jsonb_agg(e), '[]') FROM (SELECT e FROM jsonb_array_elements(errors || @errors::jsonb) e LIMIT 20) x) END,
    cursor = @next_cursor, watermark = CASE WHEN @watermark::text = '' THEN watermark ELSE @watermark END
WHERE tenant_id = @tenant_id AND id = @id AND status = 'running' AND cursor = @at_cursor
RETURNING *;

-- name: SyncFinish :one
UPDATE integration_syncs SET status = @status, error = sqlc.narg('error'), next_try_at = sqlc.narg('next_try_at'), finished_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running')
RETURNING *;

-- name: SyncBenefitsByKey :many
-- The benefits a feed page names, by id (a key that is a uuid's canonical text, as id::text would
-- print it; any other key is no id and never fails a cast) or external_key: for each distinct key
-- a probe of benefits_tenant_external_key and one of benefits_pkey, each a subquery run per key.
-- The tenant is a subquery's value, unknown to the planner, so it plans for a tenant of average
-- size: statistics taken before a tenant existed put it at about one row, which made a scan of
-- its benefits by tenant_id alone, filtered on the key, look as cheap as the probe, and each page
-- of a large sync read all of them (TestBenefitKeyLookupReadsOnlyTheNamedBenefits). A key's id is
-- cast outside the probe: under row security a probe may use only leakproof conditions on its
-- index, and the cast and the pattern match are not.
SELECT b.id, b.external_key
FROM (SELECT DISTINCT k, CASE WHEN k ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN k::uuid END AS id
      FROM unnest(@keys::text[]) k) k
CROSS JOIN LATERAL (
    SELECT x.id, x.external_key FROM benefits x
    WHERE x.tenant_id = (SELECT @tenant_id::uuid) AND x.external_key = k.k
    UNION ALL
    SELECT x.id, x.external_key FROM benefits x
    WHERE x.tenant_id = (SELECT @tenant_id::uuid) AND x.id = k.id
) b;

-- name: SyncCancel :execrows
-- Marks a queued or running sync canceled (its run was canceled); a finished one keeps its outcome.
UPDATE integration_syncs SET status = 'canceled', error = @error, finished_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: IngestionHealth :many
-- Per provider: integrations active and in error, open syncs, the last finished sync's outcome
-- (aggregates over every tenant: migration 00036). last_status '' (and the epoch): no sync finished yet.
SELECT provider::text AS provider, active::bigint AS active, in_error::bigint AS in_error, open_syncs::bigint AS open_syncs,
       coalesce(last_status, '')::text AS last_status, coalesce(last_finished_at, 'epoch')::timestamptz AS last_finished_at
FROM ingestion_health();
