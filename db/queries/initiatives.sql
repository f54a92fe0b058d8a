-- name: InitiativeCreate :one
INSERT INTO initiatives (tenant_id, name, description, industry, segment, owner_id, expected_start_date, expected_end_date)
VALUES (@tenant_id, @name, @description, sqlc.narg('industry'), sqlc.narg('segment'), sqlc.narg('owner_id'),
        sqlc.narg('expected_start_date'), sqlc.narg('expected_end_date'))
RETURNING *;

-- name: InitiativeGet :one
SELECT * FROM initiatives WHERE tenant_id = @tenant_id AND id = @id;

-- name: InitiativeGetForUpdate :one
SELECT * FROM initiatives WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: InitiativeCountLive :one
SELECT count(*) FROM initiatives WHERE tenant_id = @tenant_id AND status <> 'archived';

-- name: InitiativeLockTenantCreates :exec
-- Serialises initiative creation per tenant so the live-initiative cap holds under concurrency.
SELECT pg_advisory_xact_lock(hashtextextended('initiative-create:' || (@tenant_id::uuid)::text, 0));

-- name: InitiativeList :many
-- Archived initiatives are listed only when asked for by the status filter.
SELECT sqlc.embed(initiatives), count(*) OVER () AS total
FROM initiatives
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL AND status <> 'archived' OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('industry')::text IS NULL OR industry = sqlc.narg('industry')::text)
ORDER BY
  CASE WHEN @sort::text = 'name' AND NOT @sort_desc::boolean THEN lower(name) END ASC,
  CASE WHEN @sort::text = 'name' AND @sort_desc::boolean THEN lower(name) END DESC,
  CASE WHEN @sort::text = 'status' AND NOT @sort_desc::boolean THEN status END ASC,
  CASE WHEN @sort::text = 'status' AND @sort_desc::boolean THEN status END DESC,
  CASE WHEN @sort::text = 'created_at' AND NOT @sort_desc::boolean THEN created_at END ASC,
  CASE WHEN @sort::text = 'created_at' AND @sort_desc::boolean THEN created_at END DESC,
  CASE WHEN @sort::text = 'updated_at' AND NOT @sort_desc::boolean THEN updated_at END ASC,
  CASE WHEN @sort::text = 'updated_at' AND @sort_desc::boolean THEN updated_at END DESC,
  CASE WHEN @sort::text = 'expected_start_date' AND NOT @sort_desc::boolean THEN expected_start_date END ASC NULLS LAST,
  CASE WHEN @sort::text = 'expected_start_date' AND @sort_desc::boolean THEN expected_start_date END DESC NULLS LAST,
  CASE WHEN @sort::text = 'expected_end_date' AND NOT @sort_desc::boolean THEN expected_end_date END ASC NULLS LAST,
  CASE WHEN @sort::text = 'expected_end_date' AND @sort_desc::boolean THEN expected_end_date END DESC NULLS LAST,
  id
LIMIT @page_limit OFFSET @page_offset;

-- name: InitiativeCount :one
SELECT count(*)
FROM initiatives
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL AND status <> 'archived' OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('industry')::text IS NULL OR industry = sqlc.narg('industry')::text);

-- name: InitiativeStatusHistoryList :many
SELECT * FROM initiative_status_history
WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id
ORDER BY id;

-- name: ProjectCreate :one
INSERT INTO projects (tenant_id, initiative_id, name, description)
VALUES (@tenant_id, @initiative_id, @name, @description)
RETURNING *;

-- name: ProjectListByInitiative :many
SELECT * FROM projects WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id ORDER BY created_at, id;

-- name: InitiativeReviewStart :exec
-- A replayed start of the same round is a no-op.
INSERT INTO initiative_reviews (tenant_id, initiative_id, workflow_id, run_id)
VALUES (@tenant_id, @initiative_id, @workflow_id, @run_id)
ON CONFLICT DO NOTHING;

-- name: InitiativeReviewReminded :execrows
UPDATE initiative_reviews
SET reminders_sent = reminders_sent + 1, last_reminder_at = now()
WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id AND run_id = @run_id AND decided_at IS NULL;

-- name: InitiativeReviewDecide :exec
UPDATE initiative_reviews SET decided_at = now(), decision = @decision
WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id AND run_id = @run_id AND decided_at IS NULL;

-- name: InitiativeReviewLatest :one
SELECT * FROM initiative_reviews
WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id
ORDER BY started_at DESC LIMIT 1;

-- name: InitiativesBySource :many
-- The initiatives an integration wrote, by the source's ids, locked as PUT locks one.
SELECT * FROM initiatives
WHERE tenant_id = @tenant_id AND source = @source AND external_id = ANY (@external_ids::text[])
ORDER BY id
FOR UPDATE;

-- name: InitiativeOwnersByEmail :many
-- The users of the tenant at lower-case e-mail addresses (the earliest when several share one):
-- the owners an integration names by address.
SELECT DISTINCT ON (lower(u.email)) lower(u.email)::text AS email, u.id
FROM users u
WHERE u.tenant_id = @tenant_id AND lower(u.email) = ANY (@emails::text[])
ORDER BY lower(u.email), u.created_at;

-- name: ProjectsUpsertBySource :many
-- Projects of one initiative an integration writes, by the source's ids, in one statement;
-- outcome: created, updated or unchanged.
WITH input AS (
    SELECT unnest(@external_ids::text[]) AS external_id, unnest(@names::text[]) AS name,
           unnest(@descriptions::text[]) AS description, unnest(@statuses::text[]) AS status
), existing AS (
    SELECT x.external_id FROM projects x
    WHERE x.tenant_id = @tenant_id AND x.source = @source AND x.external_id = ANY(@external_ids::text[])
), up AS (
    INSERT INTO projects AS t (tenant_id, initiative_id, name, description, status, source, external_id)
    SELECT @tenant_id, @initiative_id, i.name, i.description, i.status, @source, i.external_id FROM input i
    ON CONFLICT (tenant_id, source, external_id) WHERE external_id IS NOT NULL DO UPDATE
    SET initiative_id = excluded.initiative_id, name = excluded.name, description = excluded.description, status = excluded.status, updated_at = now()
    WHERE (t.initiative_id, t.name, t.description, t.status) IS DISTINCT FROM (excluded.initiative_id, excluded.name, excluded.description, excluded.status)
    RETURNING t.external_id
)
SELECT i.external_id::text AS external_id,
       (CASE WHEN i.external_id NOT IN (SELECT external_id FROM up) THEN 'unchanged'
             WHEN i.external_id IN (SELECT external_id FROM existing) THEN 'updated'
             ELSE 'created' END)::text AS outcome
FROM input i;
