-- name: ExportCreate :one
INSERT INTO business_case_exports (tenant_id, business_case_id, format, include_appendices, watermark, requested_by)
VALUES (@tenant_id, @business_case_id, @format, @include_appendices, sqlc.narg('watermark'), @requested_by)
RETURNING id, business_case_id, format, include_appendices, watermark, status, progress, size, sha256, error, created_at, started_at, finished_at, expires_at;

-- name: ExportGet :one
SELECT id, business_case_id, format, include_appendices, watermark, status, progress, size, sha256, error, created_at, started_at, finished_at, expires_at
FROM business_case_exports WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id AND id = @id;

-- name: ExportList :many
SELECT id, business_case_id, format, include_appendices, watermark, status, progress, size, sha256, error, created_at, started_at, finished_at, expires_at,
       count(*) OVER () AS total
FROM business_case_exports
WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id
ORDER BY created_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: ExportContent :one
SELECT format, status, sha256, content, expires_at
FROM business_case_exports WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id AND id = @id;

-- name: ExportStart :execrows
-- Moves a queued (or, after a worker restart, running) export to running; a finished one stays.
UPDATE business_case_exports SET status = 'running', started_at = coalesce(started_at, now())
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: ExportSpec :one
-- The choices of an export still to render: what the render activity reads by the export's id.
SELECT business_case_id, format, include_appendices, watermark, requested_by
FROM business_case_exports WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: ExportProgress :exec
UPDATE business_case_exports SET progress = greatest(progress, @progress)
WHERE tenant_id = @tenant_id AND id = @id AND status = 'running';

-- name: ExportStore :execrows
UPDATE business_case_exports
SET status = 'succeeded', progress = 100, content = @content, size = @size, sha256 = @sha256, error = NULL,
    finished_at = now(), expires_at = now() + make_interval(secs => @retention_seconds::double precision)
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: ExportFail :execrows
UPDATE business_case_exports SET status = 'failed', error = @error, finished_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: ExportPurgeExpired :execrows
-- Drops up to @batch_size files past their retention (the row stays, as a record of the
-- export); the retention activity repeats it until fewer are dropped. The batch is picked once
-- and written by row address, as the retention's deletes (db/queries/retention.sql).
UPDATE business_case_exports d SET content = NULL, status = 'failed', error = 'expired'
WHERE d.ctid = ANY (ARRAY(
    SELECT o.ctid FROM business_case_exports o
    WHERE o.tenant_id = @tenant_id AND o.content IS NOT NULL AND o.expires_at < now()
    LIMIT @batch_size));

-- name: BusinessCaseDocumentFreeze :exec
-- Written once, in the approval's transaction; an approved case is locked, so it never changes.
INSERT INTO business_case_documents (tenant_id, business_case_id, document)
VALUES (@tenant_id, @business_case_id, @document)
ON CONFLICT (tenant_id, business_case_id) DO NOTHING;

-- name: BusinessCaseDocumentGet :one
SELECT document FROM business_case_documents WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id;

-- name: ExportCancel :execrows
-- Marks a queued or running export canceled (its run was canceled); a finished one keeps its outcome.
UPDATE business_case_exports SET status = 'canceled', error = @error, finished_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: ExportCount :one
SELECT count(*) FROM business_case_exports WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id;
