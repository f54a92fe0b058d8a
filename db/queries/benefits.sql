-- name: BenefitCreate :one
INSERT INTO benefits (tenant_id, initiative_id, name, description, category, expected_value, currency, unit,
                      measurement_frequency, expected_start_date, expected_end_date, status, owner_id, external_key)
VALUES (@tenant_id, @initiative_id, @name, @description, @category, @expected_value, sqlc.narg('currency'), @unit,
        @measurement_frequency, @expected_start_date, sqlc.narg('expected_end_date'), @status, @owner_id, sqlc.narg('external_key'))
RETURNING *;

-- name: BenefitGet :one
SELECT * FROM benefits WHERE tenant_id = @tenant_id AND id = @id;

-- name: BenefitGetLocked :one
-- A benefit, locked for update, with its initiative's name and status, locked for share: writes
-- to one benefit and its actuals serialise, writes to different benefits of an initiative do not,
-- and archiving the initiative (FOR UPDATE) waits for them all, as they wait for it.
SELECT sqlc.embed(b), i.name AS initiative_name, i.status AS initiative_status
FROM benefits b
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
WHERE b.tenant_id = @tenant_id AND b.id = @id
FOR UPDATE OF b FOR SHARE OF i;

-- name: BenefitList :many
SELECT sqlc.embed(benefits), count(*) OVER () AS total
FROM benefits
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL OR initiative_id = sqlc.narg('initiative_id')::uuid)
  AND (sqlc.narg('category')::text IS NULL OR category = sqlc.narg('category')::text)
  AND (sqlc.narg('owner_id')::text IS NULL OR owner_id = sqlc.narg('owner_id')::text)
  AND (sqlc.narg('currency')::text IS NULL OR currency = sqlc.narg('currency')::text)
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
ORDER BY
  CASE WHEN @sort::text = 'name' AND NOT @sort_desc::boolean THEN lower(name) END ASC,
  CASE WHEN @sort::text = 'name' AND @sort_desc::boolean THEN lower(name) END DESC,
  CASE WHEN @sort::text = 'expected_value' AND NOT @sort_desc::boolean THEN expected_value END ASC,
  CASE WHEN @sort::text = 'expected_value' AND @sort_desc::boolean THEN expected_value END DESC,
  CASE WHEN @sort::text = 'expected_start_date' AND NOT @sort_desc::boolean THEN expected_start_date END ASC,
  CASE WHEN @sort::text = 'expected_start_date' AND @sort_desc::boolean THEN expected_start_date END DESC,
  CASE WHEN @sort::text = 'created_at' AND NOT @sort_desc::boolean THEN created_at END ASC,
  CASE WHEN @sort::text = 'created_at' AND @sort_desc::boolean THEN created_at END DESC,
  CASE WHEN @sort::text = 'updated_at' AND NOT @sort_desc::boolean THEN updated_at END ASC,
  CASE WHEN @sort::text = 'updated_at' AND @sort_desc::boolean THEN updated_at END DESC,
  id
LIMIT @page_limit OFFSET @page_offset;

-- name: BenefitCount :one
SELECT count(*)
FROM benefits
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL OR initiative_id = sqlc.narg('initiative_id')::uuid)
  AND (sqlc.narg('category')::text IS NULL OR category = sqlc.narg('category')::text)
  AND (sqlc.narg('owner_id')::text IS NULL OR owner_id = sqlc.narg('owner_id')::text)
  AND (sqlc.narg('currency')::text IS NULL OR currency = sqlc.narg('currency')::text)
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text);

-- name: BenefitListByInitiative :many
SELECT * FROM benefits WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id ORDER BY created_at, id;

-- name: BenefitDelete :exec
DELETE FROM benefits WHERE tenant_id = @tenant_id AND id = @id;

-- name: BenefitPlanList :many
SELECT * FROM benefit_plan_entries
WHERE tenant_id = @tenant_id AND benefit_id = ANY (@benefit_ids::uuid[])
ORDER BY benefit_id, period;

-- name: ActualCreate :one
INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, notes, evidence_url, recorded_by)
VALUES (@tenant_id, @benefit_id, @period, @value, @notes, sqlc.narg('evidence_url'), @recorded_by)
RETURNING *;

-- name: ActualRevisionAdd :exec
INSERT INTO benefit_actual_revisions (tenant_id, actual_id, old_value, new_value, old_notes, old_evidence_url, changed_by)
VALUES (@tenant_id, @actual_id, @old_value, @new_value, @old_notes, sqlc.narg('old_evidence_url'), @changed_by);

-- name: ActualList :many
SELECT sqlc.embed(benefit_actuals), count(*) OVER () AS total
FROM benefit_actuals
WHERE tenant_id = @tenant_id AND benefit_id = @benefit_id
ORDER BY
  CASE WHEN @sort_desc::boolean THEN period END DESC,
  CASE WHEN NOT @sort_desc::boolean THEN period END ASC
LIMIT @page_limit OFFSET @page_offset;

-- name: ActualCount :one
SELECT count(*) FROM benefit_actuals WHERE tenant_id = @tenant_id AND benefit_id = @benefit_id;

-- name: ActualValuesInRange :many
-- The period and value of a benefit's actuals between two periods inclusive: all a variance
-- report reads of them (the other columns cost the reader a scan each and are not shown).
SELECT period, value FROM benefit_actuals
WHERE tenant_id = @tenant_id AND benefit_id = @benefit_id AND period BETWEEN @from_period AND @to_period
ORDER BY period;

-- name: ActualListByInitiative :many
SELECT a.* FROM benefit_actuals a
JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
WHERE a.tenant_id = @tenant_id AND b.initiative_id = @initiative_id
ORDER BY a.benefit_id, a.period;

-- name: ActualRevisionList :many
SELECT * FROM benefit_actual_revisions
WHERE tenant_id = @tenant_id AND actual_id = ANY (@actual_ids::uuid[])
ORDER BY actual_id, id;

-- name: ActualFirstPeriods :many
-- The earliest period with an actual of each of a batch's benefits (none: no row).
SELECT benefit_id, min(period)::date AS first_period
FROM benefit_actuals
WHERE tenant_id = @tenant_id AND benefit_id = ANY (@benefit_ids::uuid[])
GROUP BY benefit_id;
