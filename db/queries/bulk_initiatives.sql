-- name: BulkInitiativesExisting :many
-- The stored initiatives at the name keys of an import, locked as the single PUT locks one, each
-- with the position of its key (1-based). Names compare with lower() as the unique index does.
SELECT sqlc.embed(i), k.n::integer AS key_n
FROM initiatives i
JOIN (SELECT unnest(@names::text[]) AS name, generate_series(1, cardinality(@names::text[])) AS n) k
  ON lower(i.name) = lower(k.name)
WHERE i.tenant_id = @tenant_id
ORDER BY i.id
FOR UPDATE OF i;

-- name: BulkInitiativesInsert :many
-- Creates many initiatives in one statement (as draft, the only state a create starts in; ''
-- industry, segment, owner, date, source or external id is none). The caller pairs the rows
-- returned by lower(name).
INSERT INTO initiatives (tenant_id, name, description, industry, segment, owner_id, expected_start_date, expected_end_date, source, external_id)
SELECT @tenant_id, k.name, k.description, NULLIF(k.industry, ''), NULLIF(k.segment, ''), NULLIF(k.owner_id, ''),
       NULLIF(k.start_date, '')::date, NULLIF(k.end_date, '')::date, NULLIF(@source::text, ''), NULLIF(k.external_id, '')
FROM (SELECT unnest(@names::text[]) AS name, unnest(@descriptions::text[]) AS description, unnest(@industries::text[]) AS industry,
             unnest(@segments::text[]) AS segment, unnest(@owner_ids::text[]) AS owner_id,
             unnest(@start_dates::text[]) AS start_date, unnest(@end_dates::text[]) AS end_date,
             unnest(@external_ids::text[]) AS external_id) k
RETURNING *;

-- name: BulkInitiativesUpdate :many
-- Replaces the fields of many initiatives in one statement, as PUT /v1/initiatives/{id} does.
UPDATE initiatives i
SET name = k.name, description = k.description, status = k.status, industry = NULLIF(k.industry, ''),
    segment = NULLIF(k.segment, ''), owner_id = NULLIF(k.owner_id, ''),
    expected_start_date = NULLIF(k.start_date, '')::date, expected_end_date = NULLIF(k.end_date, '')::date,
    updated_at = now()
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@names::text[]) AS name, unnest(@descriptions::text[]) AS description,
             unnest(@statuses::text[]) AS status, unnest(@industries::text[]) AS industry, unnest(@segments::text[]) AS segment,
             unnest(@owner_ids::text[]) AS owner_id, unnest(@start_dates::text[]) AS start_date,
             unnest(@end_dates::text[]) AS end_date) k
WHERE i.tenant_id = @tenant_id AND i.id = k.id
RETURNING i.*;

-- name: BulkInitiativesHistoryAdd :exec
-- Many status-history entries in one statement, in the order given: kind status (from '' is
-- none: a create) or owner (from and to status are the status kept; '' owner is none).
-- The arrays' positions come from WITH ORDINALITY, which the planner estimates as it does the
-- arrays, so PostgreSQL keeps one generic plan for every create; an ordinal from
-- generate_series(1, cardinality(...)) was estimated at 1,000 rows to sort, and the statement was
-- planned again on each of them (about 130 µs, more than the insert).
INSERT INTO initiative_status_history (tenant_id, initiative_id, kind, from_status, to_status, from_owner, to_owner, reason, actor)
SELECT @tenant_id, k.initiative_id, k.kind, NULLIF(k.from_status, ''), k.to_status, NULLIF(k.from_owner, ''),
       NULLIF(k.to_owner, ''), k.reason, @actor
FROM ROWS FROM (unnest(@initiative_ids::uuid[]), unnest(@kinds::text[]), unnest(@from_statuses::text[]),
                unnest(@to_statuses::text[]), unnest(@from_owners::text[]), unnest(@to_owners::text[]),
                unnest(@reasons::text[]))
     WITH ORDINALITY AS k (initiative_id, kind, from_status, to_status, from_owner, to_owner, reason, n)
ORDER BY k.n;

-- name: BulkInitiativesArchiveProjects :exec
-- Archives the projects of many initiatives moved to archived (ProjectArchiveByInitiative for each).
UPDATE projects SET status = 'archived', updated_at = now()
WHERE tenant_id = @tenant_id AND initiative_id = ANY (@initiative_ids::uuid[]) AND status <> 'archived';

-- name: BulkInitiativesExport :many
-- Every initiative of the tenant, archived included, in a stable order, a page at a time (keyset
-- on the lower-case name, unique per tenant).
SELECT i.id, i.name, i.description, i.status, i.industry, i.segment, i.owner_id, i.expected_start_date, i.expected_end_date,
       lower(i.name)::text AS name_key
FROM initiatives i
WHERE i.tenant_id = @tenant_id AND lower(i.name) > @after_name::text
ORDER BY lower(i.name)
LIMIT @page_limit;
