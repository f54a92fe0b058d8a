-- +goose Up

-- Integrations (issue 12): connections to a provider (internal/integration/provider) that sync
-- records into the tenant. config holds the provider's validated mapping options and never a
-- secret: the token is sealed with secretbox (associated data "integration:<tenant>:<id>") in
-- token_sealed, token_hint keeps its last 4 characters. The schedule is the row's truth; the
-- worker keeps one Temporal Schedule per non-manual, active integration in step with it.
-- watermark is the provider's high-water mark reached by the last finished sync (the next
-- sync's `since`). A DELETE keeps the row as disconnected (sync history stays readable) with
-- the secret erased.
CREATE TABLE integrations (
    tenant_id        uuid        NOT NULL REFERENCES tenants (id),
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    provider         text        NOT NULL CHECK (provider IN ('salesforce', 'hubspot', 'jira', 'http_feed')),
    name             text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    config           jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(config) = 'object'),
    token_sealed     bytea,
    token_hint       text,
    frequency        text        NOT NULL DEFAULT 'manual'
        CHECK (frequency IN ('manual', 'every_15_minutes', 'hourly', 'daily', 'weekly')),
    schedule_at      text        CHECK (schedule_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
    day_of_week      text        CHECK (day_of_week IN ('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday')),
    timezone         text        NOT NULL DEFAULT 'UTC' CHECK (char_length(timezone) BETWEEN 1 AND 64),
    state            text        NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'error', 'disconnected')),
    last_error       text,
    watermark        text        NOT NULL DEFAULT '',
    last_sync_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    disconnected_at  timestamptz,
    PRIMARY KEY (tenant_id, id),
    CHECK ((token_sealed IS NULL) = (token_hint IS NULL)),
    CHECK (state <> 'disconnected' OR token_sealed IS NULL)
);
-- Names are unique among the tenant's connected integrations, regardless of case.
CREATE UNIQUE INDEX integrations_tenant_name ON integrations (tenant_id, lower(name)) WHERE state <> 'disconnected';
CREATE INDEX integrations_tenant_created ON integrations (tenant_id, created_at DESC, id);

-- One row per sync. The workflow moves it queued → running → succeeded | partial | failed.
-- errors keeps the first 20 item errors ({external_id, message}); cursor is the provider's page
-- cursor reached (heartbeated by the fetch activity, so a retried attempt resumes there).
CREATE TABLE integration_syncs (
    tenant_id       uuid        NOT NULL,
    id              uuid        NOT NULL DEFAULT gen_random_uuid(),
    integration_id  uuid        NOT NULL,
    trigger         text        NOT NULL CHECK (trigger IN ('schedule', 'manual')),
    status          text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed')),
    requested_by    text        NOT NULL,
    since           text        NOT NULL DEFAULT '',
    cursor          text        NOT NULL DEFAULT '',
    watermark       text        NOT NULL DEFAULT '',
    pages           integer     NOT NULL DEFAULT 0,
    fetched         integer     NOT NULL DEFAULT 0,
    created         integer     NOT NULL DEFAULT 0,
    updated         integer     NOT NULL DEFAULT 0,
    unchanged       integer     NOT NULL DEFAULT 0,
    failed          integer     NOT NULL DEFAULT 0,
    errors          jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(errors) = 'array'),
    error           text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, integration_id) REFERENCES integrations (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX integration_syncs_integration ON integration_syncs (tenant_id, integration_id, created_at DESC, id);
-- At most one queued or running sync per integration: a second trigger is a 409 naming the first.
CREATE UNIQUE INDEX integration_syncs_one_open ON integration_syncs (tenant_id, integration_id) WHERE status IN ('queued', 'running');

ALTER TABLE integrations ENABLE ROW LEVEL SECURITY;
ALTER TABLE integrations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON integrations USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE integration_syncs ENABLE ROW LEVEL SECURITY;
ALTER TABLE integration_syncs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON integration_syncs USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- Benefits may carry a key of the tenant's own (a finance or BI system's id), so a feed can name
-- a benefit without knowing Valuecase's id.
ALTER TABLE benefits ADD COLUMN external_key text CHECK (char_length(external_key) BETWEEN 1 AND 100);
CREATE UNIQUE INDEX benefits_tenant_external_key ON benefits (tenant_id, external_key) WHERE external_key IS NOT NULL;

-- Records a sync writes say so: source = 'integration/<id>'; NULL for records written through
-- the API. Initiatives and projects keep the provider's id for idempotent upserts.
ALTER TABLE initiatives ADD COLUMN source text, ADD COLUMN external_id text,
    ADD CONSTRAINT initiatives_external CHECK ((external_id IS NULL) OR (source IS NOT NULL));
CREATE UNIQUE INDEX initiatives_tenant_external ON initiatives (tenant_id, source, external_id) WHERE external_id IS NOT NULL;
ALTER TABLE projects ADD COLUMN source text, ADD COLUMN external_id text,
    ADD CONSTRAINT projects_external CHECK ((external_id IS NULL) OR (source IS NOT NULL));
CREATE UNIQUE INDEX projects_tenant_external ON projects (tenant_id, source, external_id) WHERE external_id IS NOT NULL;
ALTER TABLE benefit_actuals ADD COLUMN source text;

-- +goose Down
ALTER TABLE benefit_actuals DROP COLUMN source;
ALTER TABLE projects DROP CONSTRAINT projects_external, DROP COLUMN external_id, DROP COLUMN source;
ALTER TABLE initiatives DROP CONSTRAINT initiatives_external, DROP COLUMN external_id, DROP COLUMN source;
ALTER TABLE benefits DROP COLUMN external_key;
DROP TABLE integration_syncs, integrations;
