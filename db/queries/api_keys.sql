-- name: APIKeyLockTenantCreates :exec
-- Serialises key creation per tenant so the live-key cap holds under concurrency.
SELECT pg_advisory_xact_lock(hashtextextended('api-key-create:' || (@tenant_id::uuid)::text, 0));

-- name: APIKeyCountLive :one
SELECT count(*) FROM api_keys WHERE tenant_id = @tenant_id AND revoked_at IS NULL AND expires_at > now();

-- name: APIKeyCreate :one
INSERT INTO api_keys (tenant_id, public_id, name, key_hash, scopes, created_by, expires_at)
VALUES (@tenant_id, @public_id, @name, @key_hash, @scopes, @created_by, @expires_at)
RETURNING *;

-- name: APIKeyList :many
-- Keys not revoked, expired ones included (their status says so).
SELECT sqlc.embed(api_keys), count(*) OVER () AS total
FROM api_keys
WHERE tenant_id = @tenant_id AND revoked_at IS NULL
ORDER BY created_at DESC, id
LIMIT @page_limit OFFSET @page_offset;

-- name: APIKeyCount :one
SELECT count(*) FROM api_keys WHERE tenant_id = @tenant_id AND revoked_at IS NULL;

-- name: APIKeyGet :one
SELECT * FROM api_keys WHERE tenant_id = @tenant_id AND id = @id AND revoked_at IS NULL;

-- name: APIKeyRevoke :execrows
UPDATE api_keys SET revoked_at = now() WHERE tenant_id = @tenant_id AND id = @id AND revoked_at IS NULL;

-- name: APIKeyGetByPublicID :one
SELECT * FROM api_keys WHERE tenant_id = @tenant_id AND public_id = @public_id;

-- name: APIKeyTouch :exec
UPDATE api_keys SET last_used_at = now() WHERE tenant_id = @tenant_id AND id = @id;
