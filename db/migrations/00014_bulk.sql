-- +goose Up

-- Bulk import jobs (issue 13): an import larger than the synchronous row limit is stored here and
-- run by the bulk-import workflow. The records live in bulk_job_rows (not in workflow history,
-- whose payloads are limited), one row per record in the order sent; the workflow processes them
-- in chunks and writes each row's outcome beside it, so GET /v1/bulk/jobs/{id}/results pages
-- through them. Counters on the job are the summary and the progress.
CREATE TABLE bulk_jobs (
    tenant_id    uuid        NOT NULL,
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    resource     text        NOT NULL CHECK (resource IN ('initiatives', 'benefits', 'actuals', 'costs', 'stakeholders', 'engagements')),
    mode         text        NOT NULL CHECK (mode IN ('create', 'upsert')),
    dry_run      boolean     NOT NULL DEFAULT false,
    atomic       boolean     NOT NULL DEFAULT false,
    status       text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    total        integer     NOT NULL CHECK (total >= 0),
    processed    integer     NOT NULL DEFAULT 0 CHECK (processed >= 0 AND processed <= total),
    created      integer     NOT NULL DEFAULT 0,
    updated      integer     NOT NULL DEFAULT 0,
    unchanged    integer     NOT NULL DEFAULT 0,
    failed       integer     NOT NULL DEFAULT 0,
    error        text,
    requested_by text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz,
    finished_at  timestamptz,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX bulk_jobs_tenant_created ON bulk_jobs (tenant_id, created_at DESC, id);

CREATE TABLE bulk_job_rows (
    tenant_id   uuid    NOT NULL,
    job_id      uuid    NOT NULL,
    idx         integer NOT NULL CHECK (idx >= 0),
    record      jsonb   NOT NULL,
    status      text    CHECK (status IN ('created', 'updated', 'unchanged', 'error')),
    resource_id uuid,
    errors      jsonb,
    PRIMARY KEY (tenant_id, job_id, idx),
    FOREIGN KEY (tenant_id, job_id) REFERENCES bulk_jobs (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE bulk_jobs ENABLE ROW LEVEL SECURITY;
ALTER TABLE bulk_jobs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON bulk_jobs USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE bulk_job_rows ENABLE ROW LEVEL SECURITY;
ALTER TABLE bulk_job_rows FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON bulk_job_rows USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE bulk_job_rows, bulk_jobs;
