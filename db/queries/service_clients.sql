-- name: ServiceClientLockTenantCreates :exec
SELECT pg_advisory_xact_lock(hashtextextended('service-client-create:' || (@tenant_id::uuid)::text, 0));

-- name: ServiceClientCountLive :one
SELECT count(*) FROM service_clients WHERE tenant_id = @tenant_id AND revoked_at IS NULL;

-- name: ServiceClientCreate :one
INSERT INTO service_clients (tenant_id, client_id, name, secret_hash, roles, permissions, created_by)
VALUES (@tenant_id, @client_id, @name, @secret_hash, @roles, @permissions, @created_by)
RETURNING *;

-- name: ServiceClientList :many
SELECT sqlc.embed(service_clients), count(*) OVER () AS total
FROM service_clients
WHERE tenant_id = @tenant_id AND revoked_at IS NULL
ORDER BY created_at DESC, id
LIMIT @page_limit OFFSET @page_offset;

-- name: ServiceClientCount :one
SELECT count(*) FROM service_clients WHERE tenant_id = @tenant_id AND revoked_at IS NULL;

-- name: ServiceClientGet :one
SELECT * FROM service_clients WHERE tenant_id = @tenant_id AND id = @id AND revoked_at IS NULL;

-- name: ServiceClientRevoke :execrows
UPDATE service_clients SET revoked_at = now() WHERE tenant_id = @tenant_id AND id = @id AND revoked_at IS NULL;

-- name: ServiceClientGetByClientID :one
SELECT * FROM service_clients WHERE tenant_id = @tenant_id AND client_id = @client_id;

-- name: ServiceClientTouch :exec
UPDATE service_clients SET last_used_at = now() WHERE tenant_id = @tenant_id AND id = @id;

-- name: ServiceClientAuthenticate :one
-- The one query of a request with a service client's access token: is the client still live,
-- and what do the token's roles grant in the tenant.
SELECT c.id, c.revoked_at,
       coalesce((SELECT array_agg(perm)
                 FROM roles r CROSS JOIN LATERAL unnest(r.permissions) AS perm
                 WHERE r.tenant_id = c.tenant_id AND r.name = ANY (@token_roles::text[])), '{}')::text[] AS role_permissions
FROM service_clients c
WHERE c.tenant_id = @tenant_id AND c.client_id = @client_id;

-- name: ServiceClientCountWithRole :one
SELECT count(*) FROM service_clients WHERE tenant_id = @tenant_id AND revoked_at IS NULL AND @role::text = ANY (roles);

-- name: ServiceClientRenameRole :exec
UPDATE service_clients SET roles = array_replace(roles, @old_name::text, @new_name::text)
WHERE tenant_id = @tenant_id AND @old_name::text = ANY (roles);
