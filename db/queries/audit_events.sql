-- name: AuditEventList :many
-- Newest first; every filter optional; from inclusive, to exclusive.
SELECT sqlc.embed(audit_events), count(*) OVER () AS total
FROM audit_events
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('resource_type')::text IS NULL OR resource_type = sqlc.narg('resource_type')::text)
  AND (sqlc.narg('resource_id')::text IS NULL OR resource_id = sqlc.narg('resource_id')::text)
  AND (sqlc.narg('actor')::text IS NULL OR actor = sqlc.narg('actor')::text)
  AND (sqlc.narg('action')::text IS NULL OR action = sqlc.narg('action')::text)
  AND (sqlc.narg('occurred_from')::timestamptz IS NULL OR occurred_at >= sqlc.narg('occurred_from')::timestamptz)
  AND (sqlc.narg('occurred_to')::timestamptz IS NULL OR occurred_at < sqlc.narg('occurred_to')::timestamptz)
ORDER BY occurred_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: AuditEventCount :one
-- The total of AuditEventList past its last page (same filters).
SELECT count(*) FROM audit_events
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('resource_type')::text IS NULL OR resource_type = sqlc.narg('resource_type')::text)
  AND (sqlc.narg('resource_id')::text IS NULL OR resource_id = sqlc.narg('resource_id')::text)
  AND (sqlc.narg('actor')::text IS NULL OR actor = sqlc.narg('actor')::text)
  AND (sqlc.narg('action')::text IS NULL OR action = sqlc.narg('action')::text)
  AND (sqlc.narg('occurred_from')::timestamptz IS NULL OR occurred_at >= sqlc.narg('occurred_from')::timestamptz)
  AND (sqlc.narg('occurred_to')::timestamptz IS NULL OR occurred_at < sqlc.narg('occurred_to')::timestamptz);
