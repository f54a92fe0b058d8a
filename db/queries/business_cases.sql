-- name: BusinessCaseCreate :one
-- lineage_id: the new case's own id unless it continues a lineage.
INSERT INTO business_cases (tenant_id, id, initiative_id, lineage_id, version, previous_version_id, name, template, sections, content, decision_request, created_by)
VALUES (@tenant_id, @id, @initiative_id, @lineage_id, @version, sqlc.narg('previous_version_id'), @name, @template, @sections, @content, sqlc.narg('decision_request'), @created_by)
RETURNING *;

-- name: BusinessCaseGet :one
SELECT * FROM business_cases WHERE tenant_id = @tenant_id AND id = @id;

-- name: BusinessCaseGetForUpdate :one
SELECT * FROM business_cases WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: BusinessCaseList :many
SELECT sqlc.embed(business_cases), count(*) OVER () AS total
FROM business_cases
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL OR initiative_id = sqlc.narg('initiative_id'))
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status'))
ORDER BY created_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: BusinessCaseCount :one
SELECT count(*) FROM business_cases
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL OR initiative_id = sqlc.narg('initiative_id'))
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status'));

-- name: BusinessCaseCountByInitiative :one
SELECT count(*) FROM business_cases WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id;

-- name: BusinessCaseVersions :many
SELECT * FROM business_cases WHERE tenant_id = @tenant_id AND lineage_id = @lineage_id ORDER BY version;

-- name: BusinessCaseLatestVersion :one
SELECT max(version)::integer FROM business_cases WHERE tenant_id = @tenant_id AND lineage_id = @lineage_id;

-- name: BusinessCaseUpdate :one
UPDATE business_cases
SET name = @name, template = @template, sections = @sections, content = @content, decision_request = sqlc.narg('decision_request'), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: BusinessCaseSubmit :one
UPDATE business_cases
SET status = 'pending_approval', submitted_by = @submitted_by, submitted_at = now(), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: BusinessCaseApprove :one
UPDATE business_cases
SET status = 'approved', decision = 'approved', approval_level = @approval_level, decision_notes = sqlc.narg('notes'),
    decided_by = @decided_by, decided_at = now(), snapshot = @snapshot, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: BusinessCaseReject :one
UPDATE business_cases
SET status = 'rejected', decision = 'rejected', approval_level = sqlc.narg('approval_level'), decision_notes = @notes,
    decided_by = @decided_by, decided_at = now(), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: BusinessCaseDelete :exec
DELETE FROM business_cases WHERE tenant_id = @tenant_id AND id = @id;

-- name: BusinessCaseRoundStart :exec
-- A replayed start of the same round is a no-op.
INSERT INTO business_case_approval_rounds (tenant_id, business_case_id, workflow_id, run_id)
VALUES (@tenant_id, @business_case_id, @workflow_id, @run_id)
ON CONFLICT DO NOTHING;

-- name: BusinessCaseRoundReminded :execrows
UPDATE business_case_approval_rounds
SET reminders_sent = reminders_sent + 1, last_reminder_at = now()
WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id AND run_id = @run_id AND decided_at IS NULL;

-- name: BusinessCaseRoundEscalated :execrows
UPDATE business_case_approval_rounds
SET escalated_at = now()
WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id AND run_id = @run_id AND decided_at IS NULL AND escalated_at IS NULL;

-- name: BusinessCaseRoundDecide :exec
UPDATE business_case_approval_rounds SET decided_at = now(), decision = @decision
WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id AND run_id = @run_id AND decided_at IS NULL;

-- name: BusinessCaseRoundLatest :one
SELECT * FROM business_case_approval_rounds
WHERE tenant_id = @tenant_id AND business_case_id = @business_case_id
ORDER BY started_at DESC LIMIT 1;
