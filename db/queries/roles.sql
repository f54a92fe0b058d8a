-- name: RoleList :many
SELECT * FROM roles WHERE tenant_id = @tenant_id ORDER BY lower(name), id;

-- name: RoleGet :one
SELECT * FROM roles WHERE tenant_id = @tenant_id AND id = @id;

-- name: RoleGetForUpdate :one
SELECT * FROM roles WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: RoleCreate :one
INSERT INTO roles (tenant_id, name, description, permissions)
VALUES (@tenant_id, @name, @description, @permissions)
RETURNING *;

-- name: RoleUpdate :one
UPDATE roles SET name = @name, description = @description, permissions = @permissions, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: RoleDelete :execrows
DELETE FROM roles WHERE tenant_id = @tenant_id AND id = @id;

-- name: RoleNamesExisting :many
-- Which of the names are custom roles of the tenant.
SELECT name FROM roles WHERE tenant_id = @tenant_id AND name = ANY (@names::text[]);

-- name: RolePermissions :many
-- The permissions the tenant's custom roles of these names grant.
SELECT DISTINCT perm::text
FROM roles r CROSS JOIN LATERAL unnest(r.permissions) AS perm
WHERE r.tenant_id = @tenant_id AND r.name = ANY (@names::text[]);
