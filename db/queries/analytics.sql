-- name: AnalyticsInitiativeNames :many
-- The initiatives an analysis covers: the portfolio (not archived), or the one named.
SELECT id, name FROM initiatives
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND status <> 'archived' OR id = sqlc.narg('initiative_id')::uuid)
ORDER BY lower(name), id;

-- name: AnalyticsBenefits :many
-- The benefits that count in totals (not cancelled) of the initiatives a realization covers.
SELECT b.* FROM benefits b
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
WHERE b.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
ORDER BY b.initiative_id, b.id;

-- name: AnalyticsRealizedByBenefit :many
-- Realised to date per money benefit: Σ of its actuals through @through, each converted at its
-- period's rate (1 for the base currency). missing counts the actuals without a rate; their
-- values are left out of realized (the caller then shows the figure as null).
SELECT a.benefit_id,
       coalesce(sum(a.value * CASE WHEN b.currency = @base::text THEN 1 ELSE r.rate END), 0)::float8 AS realized,
       count(*) FILTER (WHERE b.currency <> @base::text AND r.rate IS NULL) AS missing
FROM benefit_actuals a
JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
LEFT JOIN fx_rates r ON r.tenant_id = a.tenant_id AND r.currency = b.currency AND r.period = a.period
WHERE a.tenant_id = @tenant_id AND a.period <= @through::date AND b.unit = 'currency' AND b.status <> 'cancelled'
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
GROUP BY a.benefit_id;

-- name: AnalyticsMissingActualRates :many
-- The (currency, period) of actuals through @through that have no FX rate.
SELECT DISTINCT b.currency::text AS currency, a.period
FROM benefit_actuals a
JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
LEFT JOIN fx_rates r ON r.tenant_id = a.tenant_id AND r.currency = b.currency AND r.period = a.period
WHERE a.tenant_id = @tenant_id AND a.period <= @through::date AND b.unit = 'currency' AND b.status <> 'cancelled'
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
  AND b.currency <> @base::text AND r.rate IS NULL
ORDER BY 1, 2;

-- name: AnalyticsLatestActuals :many
-- The two latest actuals through @through of each benefit (for the at-risk rule), of the benefits AnalyticsBenefits lists.
SELECT benefit_id, period, value FROM (
  SELECT a.benefit_id, a.period, a.value,
         row_number() OVER (PARTITION BY a.benefit_id ORDER BY a.period DESC) AS n
  FROM benefit_actuals a
  JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
  JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
  WHERE a.tenant_id = @tenant_id AND a.period <= @through::date AND b.status <> 'cancelled'
    AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
) latest
WHERE n <= 2
ORDER BY benefit_id, period;

-- name: AnalyticsActualsByMonth :many
-- Σ of the actuals of money benefits that count (not cancelled) of the portfolio's initiatives
-- (not archived) per month in [@from, @through] and per group: the benefit's category
-- (@group_by 'category'), its initiative ('initiative') or none (''). Each actual at its
-- period's rate (1 for the base currency); missing counts the actuals without a rate.
SELECT (CASE @group_by::text WHEN 'category' THEN b.category WHEN 'initiative' THEN b.initiative_id::text ELSE '' END)::text AS group_key,
       a.period,
       coalesce(sum(a.value * CASE WHEN b.currency = @base::text THEN 1 ELSE r.rate END), 0)::float8 AS actual,
       count(*) FILTER (WHERE b.currency <> @base::text AND r.rate IS NULL) AS missing
FROM benefit_actuals a
JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
LEFT JOIN fx_rates r ON r.tenant_id = a.tenant_id AND r.currency = b.currency AND r.period = a.period
WHERE a.tenant_id = @tenant_id AND a.period BETWEEN @from_period::date AND @through::date
  AND b.unit = 'currency' AND b.status <> 'cancelled' AND i.status <> 'archived'
GROUP BY 1, 2
ORDER BY 1, 2;

-- name: AnalyticsMissingActualRatesInRange :many
-- The (currency, period) of the actuals AnalyticsActualsByMonth sums that have no FX rate.
SELECT DISTINCT b.currency::text AS currency, a.period
FROM benefit_actuals a
JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
LEFT JOIN fx_rates r ON r.tenant_id = a.tenant_id AND r.currency = b.currency AND r.period = a.period
WHERE a.tenant_id = @tenant_id AND a.period BETWEEN @from_period::date AND @through::date
  AND b.unit = 'currency' AND b.status <> 'cancelled' AND i.status <> 'archived'
  AND b.currency <> @base::text AND r.rate IS NULL
ORDER BY 1, 2;

-- name: AnalyticsCosts :many
-- The costs of the initiatives an analysis covers: the portfolio (not archived), or the one named.
SELECT c.* FROM initiative_costs c
JOIN initiatives i ON i.tenant_id = c.tenant_id AND i.id = c.initiative_id
WHERE c.tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
ORDER BY c.initiative_id, c.period, c.id;

-- name: AnalyticsActuals :many
-- Every actual of the benefits AnalyticsBenefits lists (only what the figures use).
SELECT a.benefit_id, a.period, a.value FROM benefit_actuals a
JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
WHERE a.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid);

-- name: AnalyticsPlans :many
-- The plan entries of the benefits AnalyticsBenefits lists.
SELECT p.* FROM benefit_plan_entries p
JOIN benefits b ON b.tenant_id = p.tenant_id AND b.id = p.benefit_id
JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
WHERE p.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
ORDER BY p.benefit_id, p.period;
