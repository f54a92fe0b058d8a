-- name: BulkEngagementStakeholdersLocked :many
-- The stakeholders an engagements batch names, locked in id order as StakeholderGetLocked locks
-- one (the stakeholder for update, its initiative for share). Each stakeholder is found by its id
-- and its initiative by its own, in subqueries run per id (one that locks is never merged into a
-- join), whatever the statistics: found by the tenant and the ids, the stakeholders were read
-- through the tenant (every stakeholder it has, filtered by id) whenever the statistics put a
-- tenant at a few rows. The probes are BulkBenefitsLocked's: a range of one, in id order, first
-- row only (TestLoggingLocksOnlyTheStakeholdersItNames).
SELECT s.tenant_id, s.id, s.initiative_id, s.name, s.email, s.role, s.department, s.influence, s.interest, s.notes,
       s.engagement_count, s.last_engagement_on, s.recent_sentiments, s.at_risk_from, s.created_at, s.updated_at,
       i.status AS initiative_status
FROM (SELECT DISTINCT u.id FROM unnest(@ids::uuid[]) AS u (id) ORDER BY u.id) k
CROSS JOIN LATERAL (
    SELECT * FROM stakeholders WHERE stakeholders.tenant_id = @tenant_id AND stakeholders.id >= k.id AND stakeholders.id <= k.id
    ORDER BY stakeholders.id LIMIT 1 FOR UPDATE) s
CROSS JOIN LATERAL (
    SELECT initiatives.status FROM initiatives
    WHERE initiatives.tenant_id = s.tenant_id AND initiatives.id >= s.initiative_id AND initiatives.id <= s.initiative_id
    ORDER BY initiatives.id LIMIT 1 FOR SHARE) i
ORDER BY s.id;

-- name: BulkEngagementsExisting :many
-- The stored engagements an upsert names by id.
SELECT * FROM stakeholder_engagements
WHERE tenant_id = @tenant_id AND id = ANY (@ids::uuid[]);

-- name: BulkEngagementsInsert :many
-- Logs many engagements in one statement. created_at steps one microsecond per row so that
-- engagements of the same date order (recent sentiments) as rows logged one by one would.
INSERT INTO stakeholder_engagements (tenant_id, id, stakeholder_id, type, date, sentiment, notes, recorded_by, created_at)
SELECT @tenant_id, unnest(@ids::uuid[]), unnest(@stakeholder_ids::uuid[]), unnest(@types::text[]), unnest(@dates::date[]),
       unnest(@sentiments::text[]), unnest(@notes::text[]), @recorded_by,
       transaction_timestamp() + generate_series(1, cardinality(@ids::uuid[])) * interval '1 microsecond'
RETURNING *;

-- name: BulkStakeholdersSetAtRiskFrom :many
-- Sets at_risk_from of many stakeholders ('' is none), as StakeholderSetAtRiskFrom sets one.
UPDATE stakeholders s
SET at_risk_from = NULLIF(k.at_risk_from, '')::date
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@at_risk_froms::text[]) AS at_risk_from) k
WHERE s.tenant_id = @tenant_id AND s.id = k.id
RETURNING s.*;

-- name: BulkEngagementsExport :many
-- Every engagement of the tenant, in a stable order, a page at a time (keyset on stakeholder and id).
SELECT * FROM stakeholder_engagements
WHERE tenant_id = @tenant_id AND (stakeholder_id, id) > (@after_stakeholder::uuid, @after_id::uuid)
ORDER BY stakeholder_id, id
LIMIT @page_limit;
