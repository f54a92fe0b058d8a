-- +goose Up

-- Exports of business cases (issue 11): one row per requested document. The API writes the row
-- (queued) and an outbox event in one transaction; the export workflow moves it to running,
-- reports progress, and stores the rendered file in content (the PostgreSQL implementation of
-- the blob store, so every API instance can serve it) with its size and sha256, or marks it
-- failed with a reason a person understands. A file is served until expires_at.
CREATE TABLE business_case_exports (
    tenant_id          uuid        NOT NULL,
    id                 uuid        NOT NULL DEFAULT gen_random_uuid(),
    business_case_id   uuid        NOT NULL,
    format             text        NOT NULL CHECK (format IN ('pdf', 'docx', 'pptx')),
    include_appendices boolean     NOT NULL DEFAULT false,
    watermark          text        CHECK (char_length(watermark) <= 64),
    status             text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    progress           integer     NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    size               bigint      CHECK (size >= 0),
    sha256             text,
    error              text,
    content            bytea,
    requested_by       text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    started_at         timestamptz,
    finished_at        timestamptz,
    expires_at         timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, business_case_id) REFERENCES business_cases (tenant_id, id) ON DELETE CASCADE,
    CHECK ((status = 'succeeded') = (content IS NOT NULL AND sha256 IS NOT NULL AND size IS NOT NULL))
);
CREATE INDEX business_case_exports_case ON business_case_exports (tenant_id, business_case_id, created_at DESC, id);
CREATE INDEX business_case_exports_expiry ON business_case_exports (expires_at) WHERE content IS NOT NULL;

ALTER TABLE business_case_exports ENABLE ROW LEVEL SECURITY;
ALTER TABLE business_case_exports FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON business_case_exports USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE business_case_exports;
