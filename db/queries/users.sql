-- name: UserGetBySubject :one
SELECT * FROM users WHERE tenant_id = @tenant_id AND subject = @subject;

-- name: UserProvision :one
-- Just-in-time provisioning on a subject's first valid request. ON CONFLICT makes
-- two first requests racing each other both succeed.
INSERT INTO users (tenant_id, subject, email, name, status)
VALUES (@tenant_id, @subject, sqlc.narg('email'), sqlc.narg('name'), 'active')
ON CONFLICT (tenant_id, subject) WHERE subject IS NOT NULL
DO UPDATE SET updated_at = users.updated_at
RETURNING *;
