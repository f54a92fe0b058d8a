-- +goose Up

-- A bulk job's records are stored one row per chunk instead of one row per record (issue 26): the
-- request stores each chunk of 10,000 records (bulk.ChunkRows) as one JSON array, and the worker
-- writes the chunk's outcomes as one JSON array beside it when the chunk commits. Per record this
-- was an index entry and a row written by the request, then the whole row written again (an
-- UPDATE) with its outcome; now it is one element of two arrays. GET /v1/bulk/jobs/{id}/results
-- pages through the outcomes' elements. outcomes IS NULL: the chunk is not processed yet.
CREATE TABLE bulk_job_chunks (
    tenant_id uuid    NOT NULL,
    job_id    uuid    NOT NULL,
    first_idx integer NOT NULL CHECK (first_idx >= 0), -- the index of the chunk's first record
    size      integer NOT NULL CHECK (size > 0), -- its records
    records   jsonb   NOT NULL CHECK (jsonb_typeof(records) = 'array'),
    outcomes  jsonb   CHECK (jsonb_typeof(outcomes) = 'array'), -- [{index, status, id, errors}]
    PRIMARY KEY (tenant_id, job_id, first_idx),
    FOREIGN KEY (tenant_id, job_id) REFERENCES bulk_jobs (tenant_id, id) ON DELETE CASCADE
);
ALTER TABLE bulk_job_chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE bulk_job_chunks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON bulk_job_chunks USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- Jobs stored before: their rows grouped by the chunks the worker processes them in (every chunk
-- of a job commits its outcomes at once, so a chunk's rows all have one or none).
INSERT INTO bulk_job_chunks (tenant_id, job_id, first_idx, size, records, outcomes)
SELECT tenant_id, job_id, min(idx), count(*), jsonb_agg(record ORDER BY idx),
       CASE WHEN bool_and(status IS NOT NULL) THEN
           jsonb_agg(jsonb_build_object('index', idx, 'status', status, 'id', resource_id,
                                        'errors', coalesce(errors, '[]'::jsonb)) ORDER BY idx) END
FROM bulk_job_rows
GROUP BY tenant_id, job_id, idx / 10000;

DROP TABLE bulk_job_rows;

-- +goose Down
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
ALTER TABLE bulk_job_rows ENABLE ROW LEVEL SECURITY;
ALTER TABLE bulk_job_rows FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON bulk_job_rows USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
INSERT INTO bulk_job_rows (tenant_id, job_id, idx, record, status, resource_id, errors)
SELECT c.tenant_id, c.job_id, c.first_idx + r.n - 1, r.record, o.v ->> 'status', (o.v ->> 'id')::uuid, o.v -> 'errors'
FROM bulk_job_chunks c
CROSS JOIN LATERAL jsonb_array_elements(c.records) WITH ORDINALITY r(record, n)
LEFT JOIN LATERAL (SELECT c.outcomes -> (r.n::int - 1) AS v) o ON true;
DROP TABLE bulk_job_chunks;
