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

-- name: UserAuthenticate :one
-- The one query of an authenticated request (tenantTx): the caller's row, whether the session
-- its access token came from is still live, and the permissions of its roles (the user's
-- stored roles plus the token's) as the tenant's custom roles define them.
SELECT u.id, u.status, u.roles, u.tokens_valid_after,
       EXISTS (SELECT 1 FROM auth_sessions s
               WHERE s.tenant_id = u.tenant_id AND s.id = sqlc.narg('session_id')::uuid
                 AND s.user_id = u.id AND s.ended_at IS NULL)::boolean AS session_live,
       coalesce((SELECT array_agg(perm)
                 FROM roles r CROSS JOIN LATERAL unnest(r.permissions) AS perm
                 WHERE r.tenant_id = u.tenant_id AND r.name = ANY (u.roles || @token_roles::text[])), '{}')::text[] AS role_permissions
FROM users u
WHERE u.tenant_id = @tenant_id AND u.subject = @subject;

-- name: UserClaimInvitation :one
-- First sign-in of an invited address: the row without a subject takes the token's subject;
-- an invitation becomes active, a deactivated row stays deactivated.
UPDATE users
SET subject = @subject, status = CASE WHEN status = 'invited' THEN 'active' ELSE status END,
    name = coalesce(name, sqlc.narg('name')), updated_at = now()
WHERE tenant_id = @tenant_id AND subject IS NULL AND email IS NOT NULL AND lower(email) = lower(@email::text)
RETURNING *;

-- name: UserGet :one
SELECT * FROM users WHERE tenant_id = @tenant_id AND id = @id;

-- name: UserGetForUpdate :one
SELECT * FROM users WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: UserEmailTaken :one
SELECT EXISTS (SELECT 1 FROM users WHERE tenant_id = @tenant_id AND email IS NOT NULL AND lower(email) = lower(@email::text));

-- name: UserInvite :one
INSERT INTO users (tenant_id, email, name, roles, status, invited_by)
VALUES (@tenant_id, @email, sqlc.narg('name'), @roles, 'invited', @invited_by)
RETURNING *;

-- name: UserList :many
SELECT sqlc.embed(users), count(*) OVER () AS total
FROM users
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('role')::text IS NULL OR sqlc.narg('role')::text = ANY (roles))
ORDER BY created_at DESC, id
LIMIT @page_limit OFFSET @page_offset;

-- name: UserCount :one
SELECT count(*)
FROM users
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('role')::text IS NULL OR sqlc.narg('role')::text = ANY (roles));

-- name: UserUpdate :one
UPDATE users SET name = sqlc.narg('name'), roles = @roles, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: UserDeactivate :one
-- Also ends every access token issued so far (tokens_valid_after).
UPDATE users SET status = 'deactivated', deactivated_at = now(), tokens_valid_after = now(), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: UserReactivate :one
-- Back to active, or to invited when nobody has signed in as the user yet.
UPDATE users SET status = CASE WHEN subject IS NULL THEN 'invited' ELSE 'active' END, deactivated_at = NULL, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: UserEndTokens :exec
UPDATE users SET tokens_valid_after = now() WHERE tenant_id = @tenant_id AND id = @id;

-- name: UserLockAdmins :exec
-- Serialises changes that could leave the tenant without an active Admin.
SELECT pg_advisory_xact_lock(hashtextextended('user-admins:' || (@tenant_id::uuid)::text, 0));

-- name: UserCountActiveWithRole :one
SELECT count(*) FROM users
WHERE tenant_id = @tenant_id AND status = 'active' AND @role::text = ANY (roles) AND id <> @except_id;

-- name: UserCountWithRole :one
SELECT count(*) FROM users WHERE tenant_id = @tenant_id AND @role::text = ANY (roles);

-- name: UserRenameRole :exec
UPDATE users SET roles = array_replace(roles, @old_name::text, @new_name::text), updated_at = now()
WHERE tenant_id = @tenant_id AND @old_name::text = ANY (roles);
