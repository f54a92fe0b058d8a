-- name: StakeholderCreate :one
INSERT INTO stakeholders (tenant_id, initiative_id, name, email, role, department, influence, interest, notes)
VALUES (@tenant_id, @initiative_id, @name, @email, sqlc.narg('role'), sqlc.narg('department'), @influence, @interest, @notes)
RETURNING *;

-- name: StakeholderGet :one
SELECT * FROM stakeholders WHERE tenant_id = @tenant_id AND id = @id;

-- name: StakeholderGetLocked :one
-- A stakeholder, locked for update, with its initiative's status, locked for share: writes to one
-- stakeholder (edits, engagements) serialise, writes to different stakeholders of an initiative do
-- not, and archiving the initiative (FOR UPDATE) waits for them all, as they wait for it.
SELECT sqlc.embed(s), i.status AS initiative_status
FROM stakeholders s
JOIN initiatives i ON i.tenant_id = s.tenant_id AND i.id = s.initiative_id
WHERE s.tenant_id = @tenant_id AND s.id = @id
FOR UPDATE OF s FOR SHARE OF i;

-- name: StakeholderList :many
-- Quadrant filters arrive as the influence and interest values that make the quadrant; at_risk
-- compares at_risk_from with today's UTC date; q is a LIKE pattern body with % _ \ escaped.
SELECT sqlc.embed(stakeholders), count(*) OVER () AS total
FROM stakeholders
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL OR initiative_id = sqlc.narg('initiative_id')::uuid)
  AND (sqlc.narg('influences')::text[] IS NULL OR influence = ANY (sqlc.narg('influences')::text[]))
  AND (sqlc.narg('interests')::text[] IS NULL OR interest = ANY (sqlc.narg('interests')::text[]))
  AND (sqlc.narg('at_risk')::boolean IS NULL
       OR (at_risk_from IS NOT NULL AND at_risk_from <= @today::date) = sqlc.narg('at_risk')::boolean)
  AND (sqlc.narg('q')::text IS NULL
       OR name ILIKE '%' || sqlc.narg('q')::text || '%' OR email ILIKE '%' || sqlc.narg('q')::text || '%'
       OR role ILIKE '%' || sqlc.narg('q')::text || '%' OR department ILIKE '%' || sqlc.narg('q')::text || '%')
ORDER BY
  CASE WHEN @sort::text = 'name' AND NOT @sort_desc::boolean THEN lower(name) END ASC,
  CASE WHEN @sort::text = 'name' AND @sort_desc::boolean THEN lower(name) END DESC,
  CASE WHEN @sort::text = 'created_at' AND NOT @sort_desc::boolean THEN created_at END ASC,
  CASE WHEN @sort::text = 'created_at' AND @sort_desc::boolean THEN created_at END DESC,
  CASE WHEN @sort::text = 'updated_at' AND NOT @sort_desc::boolean THEN updated_at END ASC,
  CASE WHEN @sort::text = 'updated_at' AND @sort_desc::boolean THEN updated_at END DESC,
  CASE WHEN @sort::text = 'last_engagement_at' AND NOT @sort_desc::boolean THEN last_engagement_on END ASC NULLS FIRST,
  CASE WHEN @sort::text = 'last_engagement_at' AND @sort_desc::boolean THEN last_engagement_on END DESC NULLS LAST,
  id
LIMIT @page_limit OFFSET @page_offset;

-- name: StakeholderCount :one
-- The total of StakeholderList past its last page (same filters).
SELECT count(*) FROM stakeholders
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL OR initiative_id = sqlc.narg('initiative_id')::uuid)
  AND (sqlc.narg('influences')::text[] IS NULL OR influence = ANY (sqlc.narg('influences')::text[]))
  AND (sqlc.narg('interests')::text[] IS NULL OR interest = ANY (sqlc.narg('interests')::text[]))
  AND (sqlc.narg('at_risk')::boolean IS NULL
       OR (at_risk_from IS NOT NULL AND at_risk_from <= @today::date) = sqlc.narg('at_risk')::boolean)
  AND (sqlc.narg('q')::text IS NULL
       OR name ILIKE '%' || sqlc.narg('q')::text || '%' OR email ILIKE '%' || sqlc.narg('q')::text || '%'
       OR role ILIKE '%' || sqlc.narg('q')::text || '%' OR department ILIKE '%' || sqlc.narg('q')::text || '%');

-- name: StakeholderListByInitiative :many
SELECT * FROM stakeholders WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id ORDER BY lower(name), id;

-- name: StakeholderSetAtRiskFrom :one
UPDATE stakeholders SET at_risk_from = sqlc.narg('at_risk_from') WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: StakeholderDelete :exec
DELETE FROM stakeholders WHERE tenant_id = @tenant_id AND id = @id;

-- name: EngagementCreate :one
INSERT INTO stakeholder_engagements (tenant_id, stakeholder_id, type, date, sentiment, notes, recorded_by)
VALUES (@tenant_id, @stakeholder_id, @type, @date, @sentiment, @notes, @recorded_by)
RETURNING *;

-- name: StakeholdersRefreshEngagementSummary :many
-- Recomputed from the engagements themselves, so a back-dated engagement lands in order; one
-- stakeholder for the single route, every stakeholder a bulk import logged engagements for.
UPDATE stakeholders s
SET engagement_count   = e.n,
    last_engagement_on = e.last_on,
    recent_sentiments  = e.recent,
    updated_at         = now()
FROM unnest(@ids::uuid[]) k(id)
CROSS JOIN LATERAL (
    SELECT count(*)::integer AS n, max(date) AS last_on,
           coalesce((SELECT array_agg(sentiment ORDER BY date DESC, created_at DESC)
                     FROM (SELECT sentiment, date, created_at FROM stakeholder_engagements
                           WHERE tenant_id = @tenant_id AND stakeholder_id = k.id
                           ORDER BY date DESC, created_at DESC LIMIT 3) r), '{}')::text[] AS recent
    FROM stakeholder_engagements
    WHERE tenant_id = @tenant_id AND stakeholder_id = k.id
) e
WHERE s.tenant_id = @tenant_id AND s.id = k.id
RETURNING s.*;

-- name: EngagementList :many
SELECT sqlc.embed(stakeholder_engagements), count(*) OVER () AS total
FROM stakeholder_engagements
WHERE tenant_id = @tenant_id AND stakeholder_id = @stakeholder_id
ORDER BY date DESC, created_at DESC, id
LIMIT @page_limit OFFSET @page_offset;

-- name: EngagementCount :one
SELECT count(*) FROM stakeholder_engagements WHERE tenant_id = @tenant_id AND stakeholder_id = @stakeholder_id;

-- name: StakeholdersInsert :many
-- Creates stakeholders in one statement (ids chosen by the caller; '' role, department or
-- at_risk_from is none).
INSERT INTO stakeholders (tenant_id, id, initiative_id, name, email, role, department, influence, interest, notes, at_risk_from)
SELECT @tenant_id, unnest(@ids::uuid[]), unnest(@initiative_ids::uuid[]), unnest(@names::text[]), unnest(@emails::text[]),
       NULLIF(unnest(@roles::text[]), ''), NULLIF(unnest(@departments::text[]), ''), unnest(@influences::text[]),
       unnest(@interests::text[]), unnest(@notes::text[]), NULLIF(unnest(@at_risk_froms::text[]), '')::date
RETURNING *;

-- name: StakeholdersUpdate :many
-- Replaces the fields of stakeholders in one statement.
UPDATE stakeholders s
SET name = k.name, email = k.email, role = k.role, department = k.department, influence = k.influence,
    interest = k.interest, notes = k.notes, at_risk_from = k.at_risk_from, updated_at = now()
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@names::text[]) AS name, unnest(@emails::text[]) AS email,
             NULLIF(unnest(@roles::text[]), '') AS role, NULLIF(unnest(@departments::text[]), '') AS department,
             unnest(@influences::text[]) AS influence, unnest(@interests::text[]) AS interest, unnest(@notes::text[]) AS notes,
             NULLIF(unnest(@at_risk_froms::text[]), '')::date AS at_risk_from) k
WHERE s.tenant_id = @tenant_id AND s.id = k.id
RETURNING s.*;
