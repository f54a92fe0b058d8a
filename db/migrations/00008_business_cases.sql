-- +goose Up

-- Business cases (issue 11): a packaged value argument built from one initiative. content holds
-- one entry per section ({"<section>": {"title": ..., "body": ...}}); the allowed sections,
-- templates, approval levels and states are internal/businesscase's. A revision is a new row
-- (version + 1) in the same lineage (lineage_id: the id of the lineage's first version),
-- pointing at the case it was copied from. snapshot is written once, at approval: the figures
-- of the initiative at that moment, so an approved version's numbers never move.
CREATE TABLE business_cases (
    tenant_id           uuid        NOT NULL,
    id                  uuid        NOT NULL DEFAULT gen_random_uuid(),
    initiative_id       uuid        NOT NULL,
    lineage_id          uuid        NOT NULL,
    version             integer     NOT NULL DEFAULT 1 CHECK (version >= 1),
    previous_version_id uuid,
    name                text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    template            text        NOT NULL CHECK (template IN ('executive_summary', 'cfo_view', 'technical_deep_dive', 'board_presentation')),
    sections            text[]      NOT NULL CHECK (cardinality(sections) >= 1),
    content             jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(content) = 'object'),
    status              text        NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'pending_approval', 'approved', 'rejected')),
    submitted_by        text,
    submitted_at        timestamptz,
    -- The latest decision (approval or rejection): level, notes, who and when.
    decision            text        CHECK (decision IN ('approved', 'rejected')),
    approval_level      text        CHECK (approval_level IN ('manager', 'director', 'executive', 'board')),
    decision_notes      text,
    decided_by          text,
    decided_at          timestamptz,
    snapshot            jsonb,
    created_by          text        NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id),
    UNIQUE (tenant_id, lineage_id, version),
    CHECK ((status = 'approved') = (snapshot IS NOT NULL))
);
-- previous_version_id: deleting a draft that was copied from leaves the copy's link empty.
ALTER TABLE business_cases ADD CONSTRAINT business_cases_previous_version
    FOREIGN KEY (tenant_id, previous_version_id) REFERENCES business_cases (tenant_id, id) ON DELETE SET NULL (previous_version_id);
CREATE INDEX business_cases_initiative ON business_cases (tenant_id, initiative_id);
CREATE INDEX business_cases_tenant_created ON business_cases (tenant_id, created_at DESC, id);

-- One row per approval round (a submit), kept by the approval workflow's activities: the
-- database is the truth about the case's status; the workflow only waits on it.
CREATE TABLE business_case_approval_rounds (
    tenant_id        uuid        NOT NULL,
    business_case_id uuid        NOT NULL,
    workflow_id      text        NOT NULL,
    run_id           text        NOT NULL, -- the workflow's first run id
    started_at       timestamptz NOT NULL DEFAULT now(),
    reminders_sent   integer     NOT NULL DEFAULT 0,
    last_reminder_at timestamptz,
    escalated_at     timestamptz,
    decided_at       timestamptz,
    decision         text,
    PRIMARY KEY (tenant_id, business_case_id, run_id),
    FOREIGN KEY (tenant_id, business_case_id) REFERENCES business_cases (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX business_case_approval_rounds_latest ON business_case_approval_rounds (tenant_id, business_case_id, started_at DESC);

ALTER TABLE business_cases ENABLE ROW LEVEL SECURITY;
ALTER TABLE business_cases FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON business_cases USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE business_case_approval_rounds ENABLE ROW LEVEL SECURITY;
ALTER TABLE business_case_approval_rounds FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON business_case_approval_rounds USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE business_case_approval_rounds, business_cases;
