-- name: BulkEngagementStakeholdersLocked :many
-- The stakeholders an engagements import names, locked in id order as StakeholderGetLocked locks
-- one (the stakeholder for update, its initiative for share), with the transaction's time.
SELECT sqlc.embed(s), i.status AS initiative_status, transaction_timestamp()::timestamptz AS stamped_at
FROM stakeholders s
JOIN initiatives i ON i.tenant_id = s.tenant_id AND i.id = s.initiative_id
WHERE s.tenant_id = @tenant_id AND s.id = ANY (@ids::uuid[])
ORDER BY s.id
FOR UPDATE OF s FOR SHARE OF i;

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
