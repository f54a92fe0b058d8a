-- +goose Up

-- Identity and access (issue 4): tenant-assigned roles of users, custom roles, API keys,
-- service clients, and refresh-token sessions. Every table is tenant-scoped under RLS; the
-- endpoints without X-Tenant-ID (token, refresh) find the tenant in the credential itself.

-- Roles assigned to a user in the tenant (names of built-in or custom roles). They add to the
-- roles claim of the user's tokens (see README, identity).
ALTER TABLE users ADD COLUMN roles text[] NOT NULL DEFAULT '{}';
-- Access tokens issued (iat) before this instant are refused: set when an admin ends the
-- user's sessions and when the user is deactivated.
ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz;
ALTER TABLE users ADD COLUMN invited_by text;
ALTER TABLE users ADD COLUMN deactivated_at timestamptz;
-- One pending invitation per address; invite also refuses an address any user of the tenant has.
CREATE UNIQUE INDEX users_tenant_pending_email ON users (tenant_id, lower(email)) WHERE subject IS NULL AND email IS NOT NULL;
CREATE INDEX users_tenant_email ON users (tenant_id, lower(email)) WHERE email IS NOT NULL;
CREATE INDEX users_tenant_created ON users (tenant_id, created_at DESC, id);

-- Custom roles. Built-in roles (Admin, Executive, Manager, Analyst, Viewer) live in code
-- (internal/rbac) and their names are reserved.
CREATE TABLE roles (
    tenant_id   uuid        NOT NULL REFERENCES tenants (id),
    id          uuid        NOT NULL DEFAULT gen_random_uuid(),
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    description text        NOT NULL DEFAULT '',
    permissions text[]      NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX roles_tenant_name_ci ON roles (tenant_id, lower(name));
CREATE INDEX roles_tenant_name ON roles (tenant_id, name);

-- API keys (deprecated credentials). Only the SHA-256 of the key is stored.
CREATE TABLE api_keys (
    tenant_id    uuid        NOT NULL REFERENCES tenants (id),
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    public_id    text        NOT NULL, -- the id part of vck_<tenant>_<id>_<secret>
    name         text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    key_hash     bytea       NOT NULL,
    scopes       text[]      NOT NULL CHECK (cardinality(scopes) > 0),
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, public_id)
);
CREATE INDEX api_keys_tenant_live ON api_keys (tenant_id, created_at DESC) WHERE revoked_at IS NULL;

-- Service clients of the client_credentials grant. Only the SHA-256 of the secret is stored.
CREATE TABLE service_clients (
    tenant_id    uuid        NOT NULL REFERENCES tenants (id),
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    client_id    text        NOT NULL, -- vcc_<tenant>_<id>, public
    name         text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    secret_hash  bytea       NOT NULL,
    roles        text[]      NOT NULL DEFAULT '{}',
    permissions  text[]      NOT NULL DEFAULT '{}',
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, client_id)
);
CREATE INDEX service_clients_tenant_live ON service_clients (tenant_id, created_at DESC) WHERE revoked_at IS NULL;

-- A session is one refresh-token family, begun by a token exchange. It keeps the identity
-- of the sign-in token (roles, permissions, email, name) so refreshed access tokens carry it.
CREATE TABLE auth_sessions (
    tenant_id    uuid        NOT NULL,
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    user_id      uuid        NOT NULL,
    roles        text[]      NOT NULL DEFAULT '{}',
    permissions  text[]      NOT NULL DEFAULT '{}',
    email        text,
    name         text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL, -- that of its newest refresh token
    ended_at     timestamptz,
    end_reason   text CHECK (end_reason IN ('signed_out', 'session_limit', 'reuse_detected', 'admin_revoked', 'user_deactivated')),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id)
);
CREATE INDEX auth_sessions_user_live ON auth_sessions (tenant_id, user_id, created_at) WHERE ended_at IS NULL;

-- Refresh tokens; each is used once (used_at), then replaced by the next of its session.
CREATE TABLE refresh_tokens (
    tenant_id  uuid        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    session_id uuid        NOT NULL,
    public_id  text        NOT NULL, -- the id part of vcr_<tenant>_<id>_<secret>
    token_hash bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, public_id),
    FOREIGN KEY (tenant_id, session_id) REFERENCES auth_sessions (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (tenant_id, session_id);

ALTER TABLE roles ENABLE ROW LEVEL SECURITY;
ALTER TABLE roles FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON roles USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE service_clients ENABLE ROW LEVEL SECURITY;
ALTER TABLE service_clients FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON service_clients USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE auth_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON auth_sessions USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE refresh_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE refresh_tokens FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON refresh_tokens USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE refresh_tokens, auth_sessions, service_clients, api_keys, roles;
DROP INDEX users_tenant_created, users_tenant_email, users_tenant_pending_email;
ALTER TABLE users DROP COLUMN deactivated_at, DROP COLUMN invited_by, DROP COLUMN tokens_valid_after, DROP COLUMN roles;
