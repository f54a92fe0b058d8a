-- Housekeeping (the maintenance/retention workflow): each statement removes at most
-- @batch_size rows of one tenant past their retention; the activity repeats it until it
-- removes fewer, so no statement holds many locks or a long transaction.
--
-- Each picks its batch once, as an array of row addresses, and removes those rows by address (a
-- tid scan), whatever the statistics say of the tenant. Written as `key IN (SELECT ... LIMIT)`,
-- the planner could join the batch to every row of the table (7 old audit events among 100,000:
-- all read) or, for a tenant absent from the statistics, run the batch's query again for each of
-- the tenant's rows (a million audit events: 234 s for one batch).

-- name: RetentionTenants :many
SELECT id FROM tenants ORDER BY id;

-- name: RetentionPurgeOutbox :execrows
-- Published events only: a pending one is never lost.
DELETE FROM outbox_events d WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM outbox_events o
    WHERE o.tenant_id = @tenant_id AND o.published_at < @before
    LIMIT @batch_size));

-- name: RetentionPurgeWebhookDeliveries :execrows
-- Finished deliveries (delivered or failed for good) and, by cascade, their attempts.
DELETE FROM webhook_deliveries d WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM webhook_deliveries o
    WHERE o.tenant_id = @tenant_id AND o.status IN ('delivered', 'failed') AND o.updated_at < @before
    LIMIT @batch_size));

-- name: RetentionPurgeSessions :execrows
-- Sessions expired or ended before @before and, by cascade, their refresh tokens.
DELETE FROM auth_sessions d WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM auth_sessions o
    WHERE o.tenant_id = @tenant_id AND (o.expires_at < @before OR o.ended_at < @before)
    LIMIT @batch_size));

-- name: RetentionPurgeRefreshTokens :execrows
-- Refresh tokens of live sessions that expired before @before (a used token stays until then:
-- presenting it again is how reuse is detected).
DELETE FROM refresh_tokens d WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM refresh_tokens o
    WHERE o.tenant_id = @tenant_id AND o.expires_at < @before
    LIMIT @batch_size));

-- name: RetentionPurgeIdempotencyKeys :execrows
DELETE FROM idempotency_keys d WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM idempotency_keys o
    WHERE o.tenant_id = @tenant_id AND o.expires_at < @before
    LIMIT @batch_size));

-- name: RetentionPurgeAuditEvents :execrows
DELETE FROM audit_events d WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM audit_events o
    WHERE o.tenant_id = @tenant_id AND o.occurred_at < @before
    LIMIT @batch_size));
