-- +goose Up

-- The tenant a transaction acts for, set transaction-locally by db.InTenant.
-- NULLIF: after a transaction-local set ends the setting reads '' (not NULL).
CREATE FUNCTION app_tenant_id() RETURNS uuid
    LANGUAGE sql STABLE AS $$ SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid $$;

-- System scope lets the outbox relay see every tenant's pending events; set only by db.InSystem.
CREATE FUNCTION app_system_scope() RETURNS boolean
    LANGUAGE sql STABLE AS $$ SELECT coalesce(current_setting('app.scope', true), '') = 'system' $$;

-- The tenant registry itself is not tenant-scoped: it is read to authenticate a tenant.
CREATE TABLE tenants (
    id                  uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    name                text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    plan                text        NOT NULL CHECK (plan IN ('starter', 'professional', 'enterprise', 'enterprise_plus')),
    -- Negotiated limits, set only (and always) for enterprise_plus.
    requests_per_minute integer     CHECK (requests_per_minute > 0),
    burst               integer     CHECK (burst > 0),
    max_concurrent      integer     CHECK (max_concurrent > 0),
    created_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((plan = 'enterprise_plus') = (requests_per_minute IS NOT NULL AND burst IS NOT NULL AND max_concurrent IS NOT NULL))
);

CREATE TABLE users (
    tenant_id  uuid        NOT NULL REFERENCES tenants (id),
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    subject    text,
    email      text,
    name       text,
    status     text        NOT NULL DEFAULT 'active' CHECK (status IN ('invited', 'active', 'deactivated')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX users_tenant_subject ON users (tenant_id, subject) WHERE subject IS NOT NULL;

CREATE TABLE initiatives (
    tenant_id           uuid        NOT NULL REFERENCES tenants (id),
    id                  uuid        NOT NULL DEFAULT gen_random_uuid(),
    name                text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description         text        NOT NULL DEFAULT '',
    status              text        NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'in_review', 'approved', 'rejected', 'active', 'completed', 'archived')),
    industry            text,
    segment             text,
    owner_id            text,
    expected_start_date date,
    expected_end_date   date,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CHECK (expected_end_date IS NULL OR expected_start_date IS NULL OR expected_end_date >= expected_start_date)
);
-- Names are unique per tenant regardless of case, archived initiatives included.
CREATE UNIQUE INDEX initiatives_tenant_name ON initiatives (tenant_id, lower(name));
CREATE INDEX initiatives_tenant_created ON initiatives (tenant_id, created_at DESC, id);
CREATE INDEX initiatives_tenant_live ON initiatives (tenant_id, status) WHERE status <> 'archived';

CREATE TABLE initiative_status_history (
    tenant_id     uuid        NOT NULL,
    id            bigint      GENERATED ALWAYS AS IDENTITY,
    initiative_id uuid        NOT NULL,
    from_status   text,
    to_status     text        NOT NULL,
    reason        text        NOT NULL DEFAULT '',
    actor         text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id)
);
CREATE INDEX initiative_status_history_initiative ON initiative_status_history (tenant_id, initiative_id, id);

CREATE TABLE projects (
    tenant_id     uuid        NOT NULL,
    id            uuid        NOT NULL DEFAULT gen_random_uuid(),
    initiative_id uuid        NOT NULL,
    name          text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description   text        NOT NULL DEFAULT '',
    status        text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id)
);
CREATE INDEX projects_initiative ON projects (tenant_id, initiative_id, created_at);

-- Review rounds of initiatives, driven by the initiative-review workflow.
CREATE TABLE initiative_reviews (
    tenant_id        uuid        NOT NULL,
    initiative_id    uuid        NOT NULL,
    workflow_id      text        NOT NULL,
    run_id           text        NOT NULL, -- the review workflow's first run id: one row per review round
    started_at       timestamptz NOT NULL DEFAULT now(),
    reminders_sent   integer     NOT NULL DEFAULT 0,
    last_reminder_at timestamptz,
    decided_at       timestamptz,
    decision         text,
    PRIMARY KEY (tenant_id, initiative_id, run_id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id)
);
CREATE INDEX initiative_reviews_latest ON initiative_reviews (tenant_id, initiative_id, started_at DESC);

-- Transactional outbox: each row commits with the change it describes; the relay publishes it.
CREATE TABLE outbox_events (
    seq             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              uuid        NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    tenant_id       uuid        NOT NULL REFERENCES tenants (id),
    type            text        NOT NULL,
    data            jsonb       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Relay bookkeeping: which handlers are done, the lease of the relay holding it, retries.
    handled_by      text[]      NOT NULL DEFAULT '{}',
    published_at    timestamptz,
    locked_until    timestamptz,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text
);
CREATE INDEX outbox_events_pending ON outbox_events (next_attempt_at, seq) WHERE published_at IS NULL;
CREATE INDEX outbox_events_tenant ON outbox_events (tenant_id, seq);

-- Wake the relay as soon as an event commits (NOTIFY is delivered at commit).
-- +goose StatementBegin
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox_events', '');
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

-- Row-level security: every tenant-scoped table sees only the transaction's tenant.
-- FORCE applies it to the owning role too; the service's role is neither superuser nor BYPASSRLS.
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE users FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON users USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE initiatives ENABLE ROW LEVEL SECURITY;
ALTER TABLE initiatives FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON initiatives USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE initiative_status_history ENABLE ROW LEVEL SECURITY;
ALTER TABLE initiative_status_history FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON initiative_status_history USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE projects FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON projects USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE initiative_reviews ENABLE ROW LEVEL SECURITY;
ALTER TABLE initiative_reviews FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON initiative_reviews USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE outbox_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON outbox_events USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
CREATE POLICY relay_access ON outbox_events USING (app_system_scope()) WITH CHECK (app_system_scope());

-- +goose Down
DROP TABLE outbox_events, initiative_reviews, projects, initiative_status_history, initiatives, users, tenants;
DROP FUNCTION outbox_notify(), app_system_scope(), app_tenant_id();
