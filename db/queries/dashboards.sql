-- name: DashboardCreate :one
INSERT INTO dashboards (tenant_id, name, description, visibility, owner_id, widgets)
VALUES (@tenant_id, @name, @description, @visibility, @owner_id, @widgets)
RETURNING *;

-- name: DashboardGet :one
-- A dashboard the caller may see: shared, or personal and the caller's own (anything else is not found).
SELECT * FROM dashboards
WHERE tenant_id = @tenant_id AND id = @id AND (visibility = 'shared' OR owner_id = @subject::text);

-- name: DashboardGetLocked :one
SELECT * FROM dashboards
WHERE tenant_id = @tenant_id AND id = @id AND (visibility = 'shared' OR owner_id = @subject::text)
FOR UPDATE;

-- name: DashboardList :many
-- The dashboards the caller may see, newest first; @visibility filters ('' for both).
SELECT sqlc.embed(dashboards), count(*) OVER () AS total
FROM dashboards
WHERE tenant_id = @tenant_id AND (visibility = 'shared' OR owner_id = @subject::text)
  AND (@visibility::text = '' OR visibility = @visibility::text)
ORDER BY created_at DESC, id
LIMIT @page_limit OFFSET @page_offset;

-- name: DashboardCount :one
SELECT count(*) FROM dashboards
WHERE tenant_id = @tenant_id AND (visibility = 'shared' OR owner_id = @subject::text)
  AND (@visibility::text = '' OR visibility = @visibility::text);

-- name: DashboardCountByOwner :one
-- The caller's own dashboards (personal and shared ones it created), for the per-user limit.
SELECT count(*) FROM dashboards WHERE tenant_id = @tenant_id AND owner_id = @owner_id;

-- name: DashboardUpdate :one
UPDATE dashboards SET name = @name, description = @description, visibility = @visibility, owner_id = @owner_id,
    widgets = @widgets, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: DashboardDelete :exec
DELETE FROM dashboards WHERE tenant_id = @tenant_id AND id = @id;

-- name: PortfolioInitiativesByStatus :many
-- The initiatives of the portfolio by status (archived ones are not in it, spec rule 3.1).
SELECT status, count(*) AS initiatives FROM initiatives
WHERE tenant_id = @tenant_id AND status <> 'archived'
GROUP BY status
ORDER BY status;

-- name: PortfolioAtRiskStakeholders :many
-- Stakeholders at risk today of initiatives that are not archived: the earliest at risk first.
SELECT s.id, s.name, s.initiative_id, i.name AS initiative_name, s.influence, s.at_risk_from, count(*) OVER () AS total
FROM stakeholders s
JOIN initiatives i ON i.tenant_id = s.tenant_id AND i.id = s.initiative_id
WHERE s.tenant_id = @tenant_id AND i.status <> 'archived'
  AND s.at_risk_from IS NOT NULL AND s.at_risk_from <= @today::date
ORDER BY s.at_risk_from, s.id
LIMIT @top;

-- name: DashboardOwnerLock :exec
-- Serialises the creates of one owner's dashboards until the transaction ends, so the count
-- DashboardCountByOwner reads under it is exact.
SELECT pg_advisory_xact_lock(hashtextextended(format('dashboards/%s/%s', @tenant_id::uuid, @owner_id::text), 0));
