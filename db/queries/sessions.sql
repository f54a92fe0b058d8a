-- name: SessionCreate :one
INSERT INTO auth_sessions (tenant_id, user_id, roles, permissions, email, name, expires_at)
VALUES (@tenant_id, @user_id, @roles, @permissions, sqlc.narg('email'), sqlc.narg('name'), @expires_at)
RETURNING *;

-- name: SessionEndOldest :execrows
-- Ends the user's live sessions beyond the newest @keep, oldest first (the session cap).
UPDATE auth_sessions AS s SET ended_at = now(), end_reason = 'session_limit'
WHERE s.tenant_id = @tenant_id AND s.id IN (
    SELECT o.id FROM auth_sessions o
    WHERE o.tenant_id = @tenant_id AND o.user_id = @user_id AND o.ended_at IS NULL AND o.expires_at > now()
    ORDER BY o.created_at DESC, o.id DESC
    OFFSET @keep);

-- name: SessionEnd :exec
UPDATE auth_sessions SET ended_at = now(), end_reason = @reason
WHERE tenant_id = @tenant_id AND id = @id AND ended_at IS NULL;

-- name: SessionEndAllForUser :execrows
UPDATE auth_sessions SET ended_at = now(), end_reason = @reason
WHERE tenant_id = @tenant_id AND user_id = @user_id AND ended_at IS NULL;

-- name: SessionListLive :many
SELECT * FROM auth_sessions
WHERE tenant_id = @tenant_id AND user_id = @user_id AND ended_at IS NULL AND expires_at > now()
ORDER BY created_at DESC, id DESC;

-- name: SessionExtend :exec
UPDATE auth_sessions SET last_used_at = now(), expires_at = @expires_at
WHERE tenant_id = @tenant_id AND id = @id;

-- name: RefreshTokenCreate :exec
INSERT INTO refresh_tokens (tenant_id, session_id, public_id, token_hash, expires_at)
VALUES (@tenant_id, @session_id, @public_id, @token_hash, @expires_at);

-- name: RefreshTokenGetForUpdate :one
-- Locks the token so two uses of it cannot both succeed: the second sees used_at.
SELECT t.id, t.session_id, t.token_hash, t.expires_at, t.used_at,
       s.user_id, s.roles, s.permissions, s.email, s.name, s.ended_at AS session_ended_at,
       u.subject, u.status AS user_status
FROM refresh_tokens t
JOIN auth_sessions s ON s.tenant_id = t.tenant_id AND s.id = t.session_id
JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id
WHERE t.tenant_id = @tenant_id AND t.public_id = @public_id
FOR UPDATE OF t;

-- name: RefreshTokenMarkUsed :exec
UPDATE refresh_tokens SET used_at = now() WHERE tenant_id = @tenant_id AND id = @id;

-- name: RefreshTokenPrune :exec
-- Expired tokens of a session can no longer be presented usefully (expired is 401 either way).
DELETE FROM refresh_tokens WHERE tenant_id = @tenant_id AND session_id = @session_id AND expires_at < now();
