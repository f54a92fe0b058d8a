-- +goose Up

-- Stakeholders of an initiative. The engagement summary columns are kept in the transaction that
-- logs an engagement, so lists need no join; quadrant, sentiment trend and at-risk are derived
-- from them by internal/stakeholder. at_risk_from is the first UTC date on which the stakeholder
-- counts as at risk (stakeholder.AtRiskFrom, kept with every write; NULL: not until the record
-- changes), so the list filters on at-risk in SQL with the rules defined once, in Go.
CREATE TABLE stakeholders (
    tenant_id          uuid        NOT NULL,
    id                 uuid        NOT NULL DEFAULT gen_random_uuid(),
    initiative_id      uuid        NOT NULL,
    name               text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    email              text        NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
    role               text,
    department         text,
    influence          text        NOT NULL CHECK (influence IN ('low', 'medium', 'high', 'critical')),
    interest           text        NOT NULL CHECK (interest IN ('low', 'medium', 'high')),
    notes              text        NOT NULL DEFAULT '',
    engagement_count   integer     NOT NULL DEFAULT 0,
    last_engagement_on date,
    -- Sentiments of the latest engagements by date, newest first (at most 3).
    recent_sentiments  text[]      NOT NULL DEFAULT '{}',
    at_risk_from       date,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id)
);
-- One stakeholder per e-mail address within an initiative, regardless of case.
CREATE UNIQUE INDEX stakeholders_initiative_email ON stakeholders (tenant_id, initiative_id, lower(email));
CREATE INDEX stakeholders_tenant_created ON stakeholders (tenant_id, created_at DESC, id);

CREATE TABLE stakeholder_engagements (
    tenant_id      uuid        NOT NULL,
    id             uuid        NOT NULL DEFAULT gen_random_uuid(),
    stakeholder_id uuid        NOT NULL,
    type           text        NOT NULL CHECK (type IN ('meeting', 'email', 'call', 'presentation', 'survey', 'other')),
    date           date        NOT NULL,
    sentiment      text        NOT NULL CHECK (sentiment IN ('positive', 'neutral', 'cautious', 'negative')),
    notes          text        NOT NULL DEFAULT '',
    recorded_by    text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, stakeholder_id) REFERENCES stakeholders (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX stakeholder_engagements_by_date ON stakeholder_engagements (tenant_id, stakeholder_id, date DESC, created_at DESC);

ALTER TABLE stakeholders ENABLE ROW LEVEL SECURITY;
ALTER TABLE stakeholders FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON stakeholders USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE stakeholder_engagements ENABLE ROW LEVEL SECURITY;
ALTER TABLE stakeholder_engagements FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON stakeholder_engagements USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE stakeholder_engagements, stakeholders;
