-- name: TenantCreate :one
INSERT INTO tenants (name, plan, requests_per_minute, burst, max_concurrent)
VALUES (@name, @plan, sqlc.narg('requests_per_minute'), sqlc.narg('burst'), sqlc.narg('max_concurrent'))
RETURNING *;

-- name: TenantGet :one
SELECT * FROM tenants WHERE id = @id;

-- name: TenantList :many
SELECT * FROM tenants ORDER BY created_at, id;
