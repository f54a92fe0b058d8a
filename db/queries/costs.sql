-- name: CostCountByInitiative :one
SELECT count(*) FROM initiative_costs WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id;

-- name: CostCreate :one
INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence, end_period)
VALUES (@tenant_id, @initiative_id, @name, @category, @amount, @currency, @period, @recurrence, sqlc.narg('end_period'))
RETURNING *;

-- name: CostGetForUpdate :one
SELECT * FROM initiative_costs WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id AND id = @id FOR UPDATE;

-- name: CostList :many
SELECT sqlc.embed(initiative_costs), count(*) OVER () AS total
FROM initiative_costs
WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id
ORDER BY period, created_at, id
LIMIT @page_limit OFFSET @page_offset;

-- name: CostListByInitiative :many
SELECT * FROM initiative_costs WHERE tenant_id = @tenant_id AND initiative_id = @initiative_id ORDER BY period, created_at, id;

-- name: CostDelete :exec
DELETE FROM initiative_costs WHERE tenant_id = @tenant_id AND id = @id;
