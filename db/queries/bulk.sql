-- name: BulkBenefitsLocked :many
-- The benefits a batch names (benefit.FileActuals, benefit.SaveBenefits), locked as BenefitGetLocked locks one (the
-- benefit for update, its initiative for share), in id order (one lock order for every path that files actuals: no
-- deadlock between a sync and an import), with the transaction's time, which stamps every row written. Each benefit is
-- found by its id and its initiative by its own, in subqueries run per id (one that locks is never merged into a
-- join), whatever the statistics: joined, the initiatives came first whenever the statistics put an initiative's
-- benefits at about one row, and every benefit of the initiative was read and filtered by id.
-- Each probe asks for its id as a range of one, in id order, first row only: with a tenant estimated at one row, any
-- index led by tenant_id looked as cheap as the primary key, and one ending in id ((tenant_id, created_at, id)) was
-- walked through the whole tenant for every id; only the primary key gives the id order without a sort
-- (TestFilingLocksOnlyTheBenefitsItNames).
SELECT b.tenant_id, b.id, b.initiative_id, b.name, b.description, b.category, b.expected_value, b.currency, b.unit,
       b.measurement_frequency, b.expected_start_date, b.expected_end_date, b.status, b.owner_id, b.created_at, b.updated_at,
       b.external_key, i.name AS initiative_name, i.status AS initiative_status, transaction_timestamp()::timestamptz AS stamped_at
FROM (SELECT DISTINCT u.id FROM unnest(@ids::uuid[]) AS u (id) ORDER BY u.id) k
CROSS JOIN LATERAL (
    SELECT * FROM benefits WHERE benefits.tenant_id = @tenant_id AND benefits.id >= k.id AND benefits.id <= k.id
    ORDER BY benefits.id LIMIT 1 FOR UPDATE) b
CROSS JOIN LATERAL (
    SELECT initiatives.name, initiatives.status FROM initiatives
    WHERE initiatives.tenant_id = b.tenant_id AND initiatives.id >= b.initiative_id AND initiatives.id <= b.initiative_id
    ORDER BY initiatives.id LIMIT 1 FOR SHARE) i
ORDER BY b.id;

-- name: BulkActualsExisting :many
-- The stored actuals at the (benefit, period) keys of an import, locked, with their revision counts.
-- Each key is a probe of benefit_actuals_tenant_id_benefit_id_period_key that locks what it finds (a
-- subquery run per key, in key order: one that locks is never merged into a join). Found any other
-- way, the keys' actuals cost a read of the tenant's actuals whenever the statistics, taken before
-- the tenant existed, made a tenant look small: a hash join of the keys with every actual of the
-- tenant, or a scan of them to lock those the probes had found, on every page of a 100,000-record
-- sync (TestFilingReadsOnlyTheActualsAtItsKeys).
SELECT a.tenant_id, a.id, a.benefit_id, a.period, a.value, a.notes, a.evidence_url, a.recorded_by, a.created_at, a.updated_at,
       a.source, (SELECT count(*) FROM benefit_actual_revisions r WHERE r.tenant_id = a.tenant_id AND r.actual_id = a.id) AS revisions
FROM (SELECT DISTINCT u.benefit_id, u.period
      FROM (SELECT unnest(@benefit_ids::uuid[]) AS benefit_id, unnest(@periods::date[]) AS period) u
      ORDER BY u.benefit_id, u.period) k
CROSS JOIN LATERAL (
    SELECT * FROM benefit_actuals x
    WHERE x.tenant_id = @tenant_id AND x.benefit_id = k.benefit_id AND x.period = k.period
    FOR UPDATE) a;

-- name: BulkActualsInsert :exec
-- Creates many actuals in one statement (ids chosen by the caller; '' evidence is none; source:
-- the integration that filed them, null for a person).
INSERT INTO benefit_actuals (tenant_id, id, benefit_id, period, value, notes, evidence_url, recorded_by, source)
SELECT @tenant_id, unnest(@ids::uuid[]), unnest(@benefit_ids::uuid[]), unnest(@periods::date[]), unnest(@values::numeric[]),
       unnest(@notes::text[]), NULLIF(unnest(@evidence_urls::text[]), ''), @recorded_by, sqlc.narg('source');

-- name: BulkActualsCorrect :exec
-- Corrects many actuals in one statement, keeping each old value as a revision; source is who
-- filed the new value (an integration, or null for a person).
WITH k AS (
    SELECT unnest(@ids::uuid[]) AS id, unnest(@values::numeric[]) AS value, unnest(@notes::text[]) AS notes,
           NULLIF(unnest(@evidence_urls::text[]), '') AS evidence_url
), rev AS (
    INSERT INTO benefit_actual_revisions (tenant_id, actual_id, old_value, new_value, old_notes, old_evidence_url, changed_by)
    SELECT a.tenant_id, a.id, a.value, k.value, a.notes, a.evidence_url, @changed_by
    FROM benefit_actuals a JOIN k ON a.id = k.id
    WHERE a.tenant_id = @tenant_id
)
UPDATE benefit_actuals a
SET value = k.value, notes = k.notes, evidence_url = k.evidence_url, recorded_by = @changed_by, source = sqlc.narg('source'), updated_at = now()
FROM k
WHERE a.tenant_id = @tenant_id AND a.id = k.id;

-- name: BulkActualsExport :many
-- Every actual of the tenant, in a stable order, a page at a time (keyset on benefit and period).
SELECT a.id, a.benefit_id, a.period, a.value, a.notes, a.evidence_url
FROM benefit_actuals a
WHERE a.tenant_id = @tenant_id AND (a.benefit_id, a.period) > (@after_benefit::uuid, @after_period::date)
ORDER BY a.benefit_id, a.period
LIMIT @page_limit;

-- name: BulkJobCreate :one
INSERT INTO bulk_jobs (tenant_id, resource, mode, dry_run, atomic, total, requested_by, requested_roles)
VALUES (@tenant_id, @resource, @mode, @dry_run, @atomic, @total, @requested_by, coalesce(@requested_roles::text[], '{}'))
RETURNING *;

-- name: BulkJobSetTotal :one
-- The record count of a job whose records were stored as they were read.
UPDATE bulk_jobs SET total = @total WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: BulkJobGet :one
SELECT * FROM bulk_jobs WHERE tenant_id = @tenant_id AND id = @id;

-- name: BulkJobList :many
SELECT sqlc.embed(bulk_jobs), count(*) OVER () AS total_count
FROM bulk_jobs
WHERE tenant_id = @tenant_id AND resource = ANY (@resources::text[])
ORDER BY created_at DESC, id DESC
LIMIT @page_limit OFFSET @page_offset;

-- name: BulkJobCount :one
SELECT count(*) FROM bulk_jobs WHERE tenant_id = @tenant_id AND resource = ANY (@resources::text[]);

-- name: BulkJobChunkInsert :exec
-- Stores a chunk of a job's records (a JSON array, in the order sent) from its first index on.
INSERT INTO bulk_job_chunks (tenant_id, job_id, first_idx, size, records)
VALUES (@tenant_id, @job_id, @first_idx, jsonb_array_length(@records::jsonb), @records::jsonb);

-- name: BulkJobStart :one
-- Moves a queued (or, after a worker restart, running) job to running; a finished one stays.
UPDATE bulk_jobs SET status = 'running', started_at = coalesce(started_at, now())
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running')
RETURNING *;

-- name: BulkJobChunkPending :one
-- The first chunk of a job without outcomes from index from_idx on.
SELECT first_idx, records FROM bulk_job_chunks
WHERE tenant_id = @tenant_id AND job_id = @job_id AND outcomes IS NULL AND first_idx >= @from_idx
ORDER BY first_idx
LIMIT 1;

-- name: BulkJobChunkRecord :execrows
-- Stores the outcomes of a chunk's records (a JSON array in the records' order).
UPDATE bulk_job_chunks SET outcomes = @outcomes::jsonb
WHERE tenant_id = @tenant_id AND job_id = @job_id AND first_idx = @first_idx AND size = jsonb_array_length(@outcomes::jsonb);

-- name: BulkJobProgress :exec
UPDATE bulk_jobs
SET processed = processed + @processed, created = created + @created, updated = updated + @updated,
    unchanged = unchanged + @unchanged, failed = failed + @failed
WHERE tenant_id = @tenant_id AND id = @id;

-- name: BulkJobFinish :exec
UPDATE bulk_jobs SET status = @status, error = sqlc.narg('error'), finished_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('queued', 'running');

-- name: BulkJobResults :many
-- A page of a job's outcomes by index. Chunks get their outcomes in index order (or all at once),
-- so the outcomes stored are those of the first records, and an outcome's position is its index.
SELECT o.value::jsonb AS result,
       (SELECT coalesce(sum(t.size), 0) FROM bulk_job_chunks t
        WHERE t.tenant_id = @tenant_id AND t.job_id = @job_id AND t.outcomes IS NOT NULL)::bigint AS total
FROM bulk_job_chunks c
CROSS JOIN LATERAL jsonb_array_elements(c.outcomes) WITH ORDINALITY o(value, pos)
WHERE c.tenant_id = @tenant_id AND c.job_id = @job_id AND c.outcomes IS NOT NULL
  AND c.first_idx + c.size > sqlc.arg(page_offset)::integer AND c.first_idx < sqlc.arg(page_offset)::integer + sqlc.arg(page_limit)::integer
  AND c.first_idx + o.pos > sqlc.arg(page_offset)::integer AND c.first_idx + o.pos <= sqlc.arg(page_offset)::integer + sqlc.arg(page_limit)::integer
ORDER BY c.first_idx, o.pos;

-- name: BulkJobResultCount :one
SELECT coalesce(sum(size), 0)::bigint FROM bulk_job_chunks
WHERE tenant_id = @tenant_id AND job_id = @job_id AND outcomes IS NOT NULL;

-- name: BulkInitiativesLocked :many
-- The initiatives a stakeholders, benefits or costs batch names, locked for update in id order as the
-- single creates lock one (InitiativeGetForUpdate), with how many stakeholders and benefits each
-- has (the per-initiative limits) and the transaction's time, which stamps every row written. Each
-- initiative is found by its id in a subquery run per id (one that locks is never merged into a
-- join), whatever the statistics: found by the tenant and the ids, the initiatives were read through
-- the tenant (every initiative it has, filtered by id) whenever the statistics put a tenant at a
-- few rows. The probe is BulkBenefitsLocked's: a range of one, in id order, first row only. The
-- counts ask for the initiative as a range of one in its order, which only benefits_initiative_name
-- and stakeholders_initiative_email give: counted by equality, a tenant estimated at one row made
-- the primary key look as cheap, and every benefit and stakeholder of the tenant was read for each
-- initiative (TestImportLocksOnlyTheInitiativesItNames).
SELECT i.id, i.status,
       (SELECT count(*) FROM (
            SELECT FROM stakeholders s WHERE s.tenant_id = i.tenant_id AND s.initiative_id >= i.id AND s.initiative_id <= i.id
            ORDER BY s.initiative_id) s) AS stakeholders,
       (SELECT count(*) FROM (
            SELECT FROM benefits b WHERE b.tenant_id = i.tenant_id AND b.initiative_id >= i.id AND b.initiative_id <= i.id
            ORDER BY b.initiative_id) b) AS benefits,
       transaction_timestamp()::timestamptz AS stamped_at
FROM (SELECT DISTINCT u.id FROM unnest(@ids::uuid[]) AS u (id) ORDER BY u.id) k
CROSS JOIN LATERAL (
    SELECT initiatives.tenant_id, initiatives.id, initiatives.status FROM initiatives
    WHERE initiatives.tenant_id = @tenant_id AND initiatives.id >= k.id AND initiatives.id <= k.id
    ORDER BY initiatives.id LIMIT 1 FOR UPDATE) i
ORDER BY i.id;

-- name: BulkStakeholdersExisting :many
-- The stored stakeholders at the (initiative, e-mail) keys of an import, locked, each with the
-- position of its key (1-based). E-mails compare with lower() as the unique index does.
SELECT sqlc.embed(s), k.n::integer AS key_n
FROM stakeholders s
JOIN (SELECT unnest(@initiative_ids::uuid[]) AS initiative_id, unnest(@emails::text[]) AS email,
             generate_series(1, cardinality(@emails::text[])) AS n) k
  ON s.initiative_id = k.initiative_id AND lower(s.email) = lower(k.email)
WHERE s.tenant_id = @tenant_id
FOR UPDATE OF s;

-- name: BulkStakeholdersExport :many
-- Every stakeholder of the tenant, in a stable order, a page at a time (keyset on initiative and id).
SELECT s.id, s.initiative_id, s.name, s.email, s.role, s.department, s.influence, s.interest, s.notes
FROM stakeholders s
WHERE s.tenant_id = @tenant_id AND (s.initiative_id, s.id) > (@after_initiative::uuid, @after_id::uuid)
ORDER BY s.initiative_id, s.id
LIMIT @page_limit;

-- name: BulkBenefitsExisting :many
-- The stored benefits at the (initiative, name) keys of an import, locked, each with the position
-- of its key (1-based). Names compare with lower() as the unique index does.
SELECT sqlc.embed(b), k.n::integer AS key_n
FROM benefits b
JOIN (SELECT unnest(@initiative_ids::uuid[]) AS initiative_id, unnest(@names::text[]) AS name,
             generate_series(1, cardinality(@names::text[])) AS n) k
  ON b.initiative_id = k.initiative_id AND lower(b.name) = lower(k.name)
WHERE b.tenant_id = @tenant_id
FOR UPDATE OF b;

-- name: BulkBenefitsByExternalKey :many
-- The benefits of the tenant that hold one of the external keys of an import.
SELECT id, external_key::text AS external_key
FROM benefits
WHERE tenant_id = @tenant_id AND external_key = ANY (@external_keys::text[]);

-- name: BulkBenefitsInsert :exec
-- Creates many benefits in one statement (ids chosen by the caller; '' currency, end date or
-- external key is none).
INSERT INTO benefits (tenant_id, id, initiative_id, name, description, category, expected_value, currency, unit,
                      measurement_frequency, expected_start_date, expected_end_date, status, owner_id, external_key)
SELECT @tenant_id, unnest(@ids::uuid[]), unnest(@initiative_ids::uuid[]), unnest(@names::text[]), unnest(@descriptions::text[]),
       unnest(@categories::text[]), unnest(@expected_values::numeric[]), NULLIF(unnest(@currencies::text[]), ''), unnest(@units::text[]),
       unnest(@frequencies::text[]), unnest(@starts::date[]), NULLIF(unnest(@ends::text[]), '')::date, unnest(@statuses::text[]),
       unnest(@owner_ids::text[]), NULLIF(unnest(@external_keys::text[]), '');

-- name: BulkBenefitsUpdate :exec
-- Replaces the fields of many benefits in one statement, as PUT /v1/benefits/{id} does.
UPDATE benefits b
SET name = k.name, description = k.description, category = k.category, expected_value = k.expected_value, currency = k.currency,
    unit = k.unit, measurement_frequency = k.frequency, expected_start_date = k.start, expected_end_date = k.end_date,
    status = k.status, owner_id = k.owner_id, external_key = k.external_key, updated_at = now()
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@names::text[]) AS name, unnest(@descriptions::text[]) AS description,
             unnest(@categories::text[]) AS category, unnest(@expected_values::numeric[]) AS expected_value,
             NULLIF(unnest(@currencies::text[]), '') AS currency, unnest(@units::text[]) AS unit, unnest(@frequencies::text[]) AS frequency,
             unnest(@starts::date[]) AS start, NULLIF(unnest(@ends::text[]), '')::date AS end_date, unnest(@statuses::text[]) AS status,
             unnest(@owner_ids::text[]) AS owner_id, NULLIF(unnest(@external_keys::text[]), '') AS external_key) k
WHERE b.tenant_id = @tenant_id AND b.id = k.id;

-- name: BulkBenefitPlansReplace :exec
-- Replaces the explicit plans of many benefits in one statement (a benefit without entries: the
-- even spread applies). The entries a new plan drops are deleted and its entries upserted: the
-- two sets are disjoint, since a row deleted and inserted again in one statement would still
-- hold its key.
WITH k AS (
    SELECT unnest(@benefit_ids::uuid[]) AS benefit_id, unnest(@periods::date[]) AS period, unnest(@expected::numeric[]) AS expected
), gone AS (
    DELETE FROM benefit_plan_entries e
    WHERE e.tenant_id = @tenant_id AND e.benefit_id = ANY (@replaced::uuid[])
      AND NOT EXISTS (SELECT 1 FROM k WHERE k.benefit_id = e.benefit_id AND k.period = e.period)
)
INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected)
SELECT @tenant_id, k.benefit_id, k.period, k.expected FROM k
ON CONFLICT (tenant_id, benefit_id, period) DO UPDATE SET expected = EXCLUDED.expected;

-- name: BulkBenefitsExport :many
-- Every benefit of the tenant, in a stable order, a page at a time (keyset on initiative and id).
SELECT sqlc.embed(b)
FROM benefits b
WHERE b.tenant_id = @tenant_id AND (b.initiative_id, b.id) > (@after_initiative::uuid, @after_id::uuid)
ORDER BY b.initiative_id, b.id
LIMIT @page_limit;
