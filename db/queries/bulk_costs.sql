-- name: BulkCostCounts :many
-- How many costs each initiative of an import has (the per-initiative limit), read after
-- BulkInitiativesLocked locked them as the single create's count is. Each initiative's costs are
-- counted as BulkInitiativesLocked counts its children, as a range of one in the order that only
-- initiative_costs_initiative gives: counted by equality, a tenant estimated at one row made the
-- primary key look as cheap, and every cost of the tenant was read for each initiative
-- (TestSavingCountsOnlyTheCostsOfItsInitiatives).
SELECT k.id::uuid AS initiative_id, n.n
FROM (SELECT DISTINCT u.id FROM unnest(@initiative_ids::uuid[]) AS u (id)) k
CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM (
        SELECT FROM initiative_costs c
        WHERE c.tenant_id = @tenant_id AND c.initiative_id >= k.id AND c.initiative_id <= k.id
        ORDER BY c.initiative_id) c) n;

-- name: BulkCostsExisting :many
-- The stored costs an upsert names by id, locked for update in id order as CostGetForUpdate locks
-- one. Each cost is found by its id in a subquery run per id (one that locks is never merged into
-- a join), whatever the statistics: found by the tenant and the ids, the costs were read through the
-- tenant (every cost it has, filtered by id) whenever the statistics put a tenant at a few rows.
-- The probe is BulkBenefitsLocked's: a range of one, in id order, first row only
-- (TestSavingLocksOnlyTheCostsItNames).
SELECT c.tenant_id, c.id, c.initiative_id, c.name, c.category, c.amount, c.currency, c.period, c.recurrence, c.end_period,
       c.created_at, c.updated_at
FROM (SELECT DISTINCT u.id FROM unnest(@ids::uuid[]) AS u (id) ORDER BY u.id) k
CROSS JOIN LATERAL (
    SELECT * FROM initiative_costs
    WHERE initiative_costs.tenant_id = @tenant_id AND initiative_costs.id >= k.id AND initiative_costs.id <= k.id
    ORDER BY initiative_costs.id LIMIT 1 FOR UPDATE) c
ORDER BY c.id;

-- name: BulkCostsInsert :exec
-- Creates many costs in one statement (ids chosen by the caller; '' end_period is none).
INSERT INTO initiative_costs (tenant_id, id, initiative_id, name, category, amount, currency, period, recurrence, end_period)
SELECT @tenant_id, unnest(@ids::uuid[]), unnest(@initiative_ids::uuid[]), unnest(@names::text[]), unnest(@categories::text[]),
       unnest(@amounts::numeric[]), unnest(@currencies::text[]), unnest(@periods::date[]), unnest(@recurrences::text[]),
       NULLIF(unnest(@end_periods::text[]), '')::date;

-- name: BulkCostsUpdate :exec
-- Replaces many costs in one statement, as PUT /v1/initiatives/{id}/costs/{cost_id} does.
UPDATE initiative_costs c
SET name = k.name, category = k.category, amount = k.amount, currency = k.currency, period = k.period,
    recurrence = k.recurrence, end_period = k.end_period, updated_at = now()
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@names::text[]) AS name, unnest(@categories::text[]) AS category,
             unnest(@amounts::numeric[]) AS amount, unnest(@currencies::text[]) AS currency, unnest(@periods::date[]) AS period,
             unnest(@recurrences::text[]) AS recurrence, NULLIF(unnest(@end_periods::text[]), '')::date AS end_period) k
WHERE c.tenant_id = @tenant_id AND c.id = k.id;

-- name: BulkCostsExport :many
-- Every cost of the tenant, in a stable order, a page at a time (keyset on initiative and id).
SELECT * FROM initiative_costs
WHERE tenant_id = @tenant_id AND (initiative_id, id) > (@after_initiative::uuid, @after_id::uuid)
ORDER BY initiative_id, id
LIMIT @page_limit;
