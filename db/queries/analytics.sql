-- name: AnalyticsInitiativeNames :many
-- The initiatives an analysis covers: the portfolio (not archived), or the one named.
SELECT id, name FROM initiatives
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('initiative_id')::uuid IS NULL AND status <> 'archived' OR id = sqlc.narg('initiative_id')::uuid)
ORDER BY lower(name), id;

-- name: AnalyticsBenefits :many
-- The benefits that count in totals (not cancelled) of the initiatives a realization covers.
-- The analyses' statements name their scope's initiatives as one array computed once, not a
-- join: statistics taken before a tenant grew put it at one initiative, and the planner then
-- compared every row with every initiative of the tenant (1 s for 10,000 benefits).
SELECT b.* FROM benefits b
WHERE b.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND b.initiative_id = ANY (ARRAY(
    SELECT i.id FROM initiatives i
    WHERE i.tenant_id = @tenant_id
      AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)))
ORDER BY b.initiative_id, b.id;

-- name: AnalyticsTrendBenefits :many
-- The money benefits that count in totals (not cancelled) of the portfolio's initiatives (not
-- archived): only the columns a trend's expected series and its groups use.
SELECT b.id, b.initiative_id, b.category, b.expected_value, b.currency::text AS currency, b.measurement_frequency,
       b.expected_start_date, b.expected_end_date
FROM benefits b
WHERE b.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND b.initiative_id = ANY (ARRAY(SELECT i.id FROM initiatives i WHERE i.tenant_id = @tenant_id AND i.status <> 'archived'))
  AND b.unit = 'currency' AND b.currency IS NOT NULL
ORDER BY b.initiative_id, b.id;

-- name: AnalyticsMissingActualRates :many
-- The (currency, period) other than @base of the live initiatives' actuals in [@from_period
-- (none: no lower bound), @through] that have no FX rate. The candidates are the portfolio
-- rollup's few rows; only those without a rate are looked for among the live initiatives' month
-- rows, by the array of those initiatives. Each candidate is tested by probes, the rate first;
-- OFFSET 0 keeps either test from being turned into a join (planned with statistics taken before
-- the tenant grew, such a join compared every month row of the tenant with each candidate, and
-- the join to initiatives before it every month row with every initiative: 10 s for 1,000).
SELECT p.currency::text AS currency, p.period
FROM benefit_actual_portfolio_months p
WHERE p.tenant_id = @tenant_id AND p.period <= @through::date
  AND (sqlc.narg('from_period')::date IS NULL OR p.period >= sqlc.narg('from_period')::date)
  AND (p.currency < @base::text OR p.currency > @base::text)
  AND NOT EXISTS (SELECT 1 FROM fx_rates r WHERE r.tenant_id = p.tenant_id AND r.currency = p.currency AND r.period = p.period OFFSET 0)
  AND EXISTS (
    SELECT 1 FROM benefit_actual_months m
    WHERE m.tenant_id = p.tenant_id AND m.category = p.category AND m.currency = p.currency AND m.period = p.period
      AND m.initiative_id = ANY (ARRAY(SELECT i.id FROM initiatives i WHERE i.tenant_id = @tenant_id AND i.status <> 'archived'))
    OFFSET 0)
GROUP BY 1, 2
ORDER BY 1, 2;

-- name: AnalyticsActualsByMonth :many
-- Σ of the actuals of money benefits that count (not cancelled) of the portfolio's initiatives
-- (not archived) per month in [@from, @through] and per group: the benefit's category
-- (@group_by 'category'), its initiative ('initiative') or none (''). By category or none: the
-- portfolio rollup benefit_actual_portfolio_months (all initiatives) less the month rows of the
-- archived initiatives (few, each read by benefit_actual_months' primary key); a (group, currency,
-- month) whose count nets to 0 had only archived actuals and is dropped, as the join used to drop
-- them. By initiative: the month rows of the live initiatives. Sums stay numeric until the
-- end, so the subtraction is exact. Each month's sum at its period's rate (1 for the base
-- currency); missing counts the (group, currency, month) sums without a rate.
WITH parts AS (
  SELECT m.initiative_id::text AS group_key, m.currency, m.period, m.total, m.actuals
  FROM benefit_actual_months m
  WHERE @group_by::text = 'initiative' AND m.tenant_id = @tenant_id
    AND m.period BETWEEN @from_period::date AND @through::date
    AND m.initiative_id = ANY (ARRAY(SELECT i.id FROM initiatives i WHERE i.tenant_id = @tenant_id AND i.status <> 'archived'))
  UNION ALL
  SELECT CASE WHEN @group_by::text = 'category' THEN p.category ELSE '' END, p.currency, p.period, p.total, p.actuals
  FROM benefit_actual_portfolio_months p
  WHERE @group_by::text <> 'initiative' AND p.tenant_id = @tenant_id
    AND p.period BETWEEN @from_period::date AND @through::date
  UNION ALL
  SELECT CASE WHEN @group_by::text = 'category' THEN m.category ELSE '' END, m.currency, m.period, -m.total, -m.actuals
  FROM initiatives i
  CROSS JOIN LATERAL (
    SELECT m.category, m.currency, m.period, m.total, m.actuals FROM benefit_actual_months m
    WHERE m.tenant_id = i.tenant_id AND m.initiative_id = i.id AND m.period BETWEEN @from_period::date AND @through::date
    OFFSET 0
  ) m
  WHERE @group_by::text <> 'initiative' AND i.tenant_id = @tenant_id AND i.status = 'archived'
), net AS (
  SELECT x.group_key, x.currency, x.period, sum(x.total) AS total
  FROM parts x GROUP BY 1, 2, 3 HAVING sum(x.actuals) > 0
)
SELECT n.group_key::text AS group_key,
       n.period,
       coalesce(sum(n.total * CASE WHEN n.currency = @base::text THEN 1 ELSE r.rate END), 0)::numeric AS actual,
       count(*) FILTER (WHERE n.currency <> @base::text AND r.rate IS NULL) AS missing
FROM net n
LEFT JOIN fx_rates r ON r.tenant_id = @tenant_id AND r.currency = n.currency AND r.period = n.period
GROUP BY 1, 2
ORDER BY 1, 2;

-- name: AnalyticsRollupCheck :many
-- The rollup next to a fresh GROUP BY of benefit_actuals over the benefits that count: every row
-- where the two differ (empty when the rollup is exact). Used by tests and the benchmark's check.
SELECT coalesce(m.initiative_id, f.initiative_id) AS initiative_id, coalesce(m.category, f.category)::text AS category,
       coalesce(m.currency, f.currency)::text AS currency, coalesce(m.period, f.period)::date AS period,
       coalesce(m.total::text, 'none')::text AS rollup_total, coalesce(f.total::text, 'none')::text AS fresh_total,
       coalesce(m.actuals, 0)::integer AS rollup_actuals, coalesce(f.actuals, 0)::integer AS fresh_actuals
FROM (SELECT x.* FROM benefit_actual_months x WHERE x.tenant_id = @tenant_id) m
FULL JOIN (
  SELECT b.initiative_id, b.category, b.currency, a.period, sum(a.value) AS total, count(*)::integer AS actuals
  FROM benefit_actuals a
  JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
  WHERE a.tenant_id = @tenant_id AND b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
  GROUP BY 1, 2, 3, 4
) f ON f.initiative_id = m.initiative_id AND f.category = m.category AND f.currency = m.currency AND f.period = m.period
WHERE m.total IS DISTINCT FROM f.total OR m.actuals IS DISTINCT FROM f.actuals
ORDER BY 1, 2, 3, 4;

-- name: AnalyticsPortfolioRollupCheck :many
-- benefit_actual_portfolio_months next to a fresh GROUP BY of benefit_actuals over the benefits
-- that count (all initiatives): every row where the two differ (empty when it is exact). Used by
-- tests and the benchmark's check.
SELECT coalesce(p.category, f.category)::text AS category, coalesce(p.currency, f.currency)::text AS currency,
       coalesce(p.period, f.period)::date AS period,
       coalesce(p.total::text, 'none')::text AS rollup_total, coalesce(f.total::text, 'none')::text AS fresh_total,
       coalesce(p.actuals, 0)::integer AS rollup_actuals, coalesce(f.actuals, 0)::integer AS fresh_actuals
FROM (SELECT x.* FROM benefit_actual_portfolio_months x WHERE x.tenant_id = @tenant_id) p
FULL JOIN (
  SELECT b.category, b.currency, a.period, sum(a.value) AS total, count(*)::integer AS actuals
  FROM benefit_actuals a
  JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
  WHERE a.tenant_id = @tenant_id AND b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
  GROUP BY 1, 2, 3
) f ON f.category = p.category AND f.currency = p.currency AND f.period = p.period
WHERE p.total IS DISTINCT FROM f.total OR p.actuals IS DISTINCT FROM f.actuals
ORDER BY 1, 2, 3;

-- name: AnalyticsActualStatsCheck :many
-- benefit_actual_stats next to a fresh recomputation from benefit_actuals: every benefit where
-- the two differ (empty when the stats are exact). Used by tests and the benchmark's check.
SELECT coalesce(s.benefit_id, f.benefit_id) AS benefit_id,
       coalesce(s.actuals, 0)::integer AS stats_actuals, coalesce(f.actuals, 0)::integer AS fresh_actuals,
       coalesce(s.total::text || ' ' || s.latest_period || '=' || s.latest_value || ' ' || coalesce(s.previous_period || '=' || s.previous_value, '-'), 'none')::text AS stats,
       coalesce(f.total::text || ' ' || f.latest_period || '=' || f.latest_value || ' ' || coalesce(f.previous_period || '=' || f.previous_value, '-'), 'none')::text AS fresh
FROM (SELECT x.* FROM benefit_actual_stats x WHERE x.tenant_id = @tenant_id) s
FULL JOIN (
  SELECT a.benefit_id, count(*)::integer AS actuals, sum(a.value) AS total,
         (array_agg(a.period ORDER BY a.period DESC))[1] AS latest_period, (array_agg(a.value ORDER BY a.period DESC))[1] AS latest_value,
         (array_agg(a.period ORDER BY a.period DESC))[2] AS previous_period, (array_agg(a.value ORDER BY a.period DESC))[2] AS previous_value
  FROM benefit_actuals a WHERE a.tenant_id = @tenant_id
  GROUP BY a.benefit_id
) f ON f.benefit_id = s.benefit_id
WHERE s.actuals IS DISTINCT FROM f.actuals OR s.total IS DISTINCT FROM f.total
   OR s.latest_period IS DISTINCT FROM f.latest_period OR s.latest_value IS DISTINCT FROM f.latest_value
   OR s.previous_period IS DISTINCT FROM f.previous_period OR s.previous_value IS DISTINCT FROM f.previous_value
ORDER BY 1;

-- name: AnalyticsCosts :many
-- The costs of the initiatives an analysis covers: the portfolio (not archived), or the one named.
SELECT c.* FROM initiative_costs c
WHERE c.tenant_id = @tenant_id
  AND c.initiative_id = ANY (ARRAY(
    SELECT i.id FROM initiatives i
    WHERE i.tenant_id = @tenant_id
      AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)))
ORDER BY c.initiative_id, c.period, c.id;

-- name: AnalyticsActuals :many
-- Every actual of the benefits AnalyticsBenefits lists (only what the figures use): the ROI's
-- series and the realisation's like-for-like comparison (each benefit's measured periods).
-- No join is left for the planner to order by the tenant's size, which statistics taken before
-- a tenant grew put at one row (it then read every actual of the tenant first and filtered it
-- against the scope's benefits: 0.9 s for one initiative, minutes for the portfolio): the scope's
-- initiatives are one array computed once, and each benefit's actuals one index range (a LATERAL
-- subquery kept apart by OFFSET 0, so that it is not turned round).
SELECT a.benefit_id, a.period, a.value
FROM benefits b
CROSS JOIN LATERAL (
  SELECT a.benefit_id, a.period, a.value FROM benefit_actuals a
  WHERE a.tenant_id = b.tenant_id AND a.benefit_id = b.id
  OFFSET 0
) a
WHERE b.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND b.initiative_id = ANY (ARRAY(
    SELECT i.id FROM initiatives i
    WHERE i.tenant_id = @tenant_id
      AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)));

-- name: AnalyticsPlans :many
-- The plan entries of the benefits AnalyticsBenefits lists.
SELECT p.* FROM benefit_plan_entries p
JOIN benefits b ON b.tenant_id = p.tenant_id AND b.id = p.benefit_id
WHERE p.tenant_id = @tenant_id AND b.status <> 'cancelled'
  AND b.initiative_id = ANY (ARRAY(
    SELECT i.id FROM initiatives i
    WHERE i.tenant_id = @tenant_id
      AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)))
ORDER BY p.benefit_id, p.period;

-- name: AnalyticsForecastAccuracy :many
-- Forecast accuracy of the money benefits that count (not cancelled) of the portfolio (initiatives
-- not archived) or the initiative named, over every (benefit, period) with an actual in
-- [@from_period (none: no lower bound), @through], per group: the benefit ('benefit'), its
-- initiative ('initiative'), its owner ('owner'), its category ('category') or none (''). The
-- expected value of each period is the finance core's (finance.Benefit.ExpectedFor): 0 outside
-- the benefit's periods; the plan entry of the period when the benefit has a plan (0 for a period
-- the plan does not list); else expected_value / 12 a month or / 4 a quarter. Actual and expected
-- of a period are in the benefit's currency, converted at the period's rate (1 for the base);
-- missing counts the periods without a rate (their amounts are left out of the sums).
-- As AnalyticsActuals, no join is left for the planner to order by the tenant's size (statistics
-- taken before a tenant grew made it read every actual of the tenant and compare each with every
-- benefit of the scope): bens is computed once (its EXISTS once a benefit), each benefit's actuals
-- are one index range, and a planned benefit's entry of a period one probe of the plan's key.
-- The rates meet the sums of each (group, currency, period), not every actual (joined to every
-- actual under those statistics, the rates were scanned once an actual). Rows are summed in no
-- defined order, before as now.
WITH bens AS MATERIALIZED (
  -- Per benefit once: its group, its first and last period, its even spread and whether a plan replaces it.
  SELECT b.id, b.currency,
         (CASE @group_by::text WHEN 'benefit' THEN b.id::text WHEN 'initiative' THEN b.initiative_id::text
                               WHEN 'owner' THEN b.owner_id WHEN 'category' THEN b.category ELSE '' END)::text AS group_key,
         b.measurement_frequency AS frequency,
         benefit_period(b.expected_start_date, b.measurement_frequency) AS first_period,
         benefit_period(b.expected_end_date, b.measurement_frequency) AS last_period,
         (b.expected_value / CASE b.measurement_frequency WHEN 'quarterly' THEN 4 ELSE 12 END)::float8 AS spread,
         -- OFFSET 0: a probe a benefit, never a hash of every tenant's plan entries.
         EXISTS (SELECT 1 FROM benefit_plan_entries p WHERE p.tenant_id = b.tenant_id AND p.benefit_id = b.id OFFSET 0) AS planned
  FROM benefits b
  WHERE b.tenant_id = @tenant_id AND b.unit = 'currency' AND b.status <> 'cancelled'
    AND b.initiative_id = ANY (ARRAY(
      SELECT i.id FROM initiatives i
      WHERE i.tenant_id = @tenant_id
        AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)))
), pairs AS (
  SELECT b.group_key, b.currency, a.period,
         count(*) AS periods,
         count(*) FILTER (WHERE a.expected <> 0) AS mape_periods,
         sum(abs(a.actual - a.expected) / abs(a.expected)) FILTER (WHERE a.expected <> 0) AS mape_sum,
         sum(abs(a.actual - a.expected)) AS abs_error, sum(abs(a.expected)) AS abs_expected,
         sum(a.expected) AS expected, sum(a.actual) AS actual
  FROM bens b
  CROSS JOIN LATERAL (
    -- Expected is worked out here, once a row: the sums name it again and again.
    SELECT a.period, a.value::float8 AS actual,
           CASE
             WHEN a.period < b.first_period OR a.period > b.last_period THEN 0
             -- The first entry of the period, as finance.Benefit.ExpectedFor takes it (a range of
             -- the plan's key as long as a quarter, for the index; benefit_period picks the period's).
             WHEN b.planned THEN coalesce((
               SELECT p.expected FROM benefit_plan_entries p
               WHERE p.tenant_id = @tenant_id AND p.benefit_id = b.id
                 AND p.period >= a.period AND p.period < a.period + interval '3 months'
                 AND benefit_period(p.period, b.frequency) = a.period
               ORDER BY p.period LIMIT 1), 0)::float8
             ELSE b.spread
           END AS expected
    FROM benefit_actuals a
    WHERE a.tenant_id = @tenant_id AND a.benefit_id = b.id AND a.period <= @through::date
      AND (sqlc.narg('from_period')::date IS NULL OR a.period >= sqlc.narg('from_period')::date)
    OFFSET 0
  ) a
  GROUP BY 1, 2, 3
), converted AS (
  SELECT s.*, CASE WHEN s.currency = @base::text THEN 1 ELSE r.rate::float8 END AS rate
  FROM pairs s
  LEFT JOIN fx_rates r ON r.tenant_id = @tenant_id AND r.currency = s.currency AND r.period = s.period
)
SELECT group_key,
       sum(periods)::bigint AS periods,
       coalesce(sum(periods) FILTER (WHERE rate IS NULL), 0)::bigint AS missing,
       sum(mape_periods)::bigint AS mape_periods,
       coalesce(sum(mape_sum) / nullif(sum(mape_periods), 0), 0)::float8 AS mape,
       coalesce(sum(abs_error * rate), 0)::float8 AS abs_error,
       coalesce(sum(abs_expected * rate), 0)::float8 AS abs_expected,
       coalesce(sum(expected * rate), 0)::float8 AS expected,
       coalesce(sum(actual * rate), 0)::float8 AS actual
FROM converted
GROUP BY group_key
ORDER BY group_key;

-- name: AnalyticsInitiativeIndustries :many
-- The industry (trimmed, lower case) of each initiative of the portfolio (not archived) that has one.
SELECT id, lower(btrim(industry))::text AS industry FROM initiatives
WHERE tenant_id = @tenant_id AND status <> 'archived' AND btrim(coalesce(industry, '')) <> ''
ORDER BY id;

-- name: PeerSnapshotPut :exec
-- The tenant's own figure of a metric in an industry, for other tenants' peer percentiles.
INSERT INTO peer_metric_snapshots (tenant_id, industry, metric, value)
VALUES (@tenant_id, @industry, @metric, @value)
ON CONFLICT (tenant_id, industry, metric) DO UPDATE SET value = EXCLUDED.value, computed_at = now();

-- name: PeerSnapshotDelete :exec
-- The tenant has no figure (any more): it no longer counts as a peer.
DELETE FROM peer_metric_snapshots WHERE tenant_id = @tenant_id AND industry = @industry AND metric = @metric;

-- name: PeerBenchmark :one
-- Percentiles of the other tenants' figures (null unless at least 5 of them): peer_benchmark() in 00012.
-- shown is false (and the figures 0) below 5 other tenants; ranked is false when there is no @value.
SELECT (b.tenants IS NOT NULL)::boolean AS shown, coalesce(b.tenants, 0)::bigint AS tenants, coalesce(b.p25, 0)::float8 AS p25,
       coalesce(b.median, 0)::float8 AS median, coalesce(b.p75, 0)::float8 AS p75,
       (b.percentile_rank IS NOT NULL)::boolean AS ranked, coalesce(b.percentile_rank, 0)::float8 AS percentile_rank
FROM peer_benchmark(@industry::text, @metric::text, sqlc.narg('value')::float8) AS b (tenants, p25, median, p75, percentile_rank);

-- name: PeerDatasetBenchmarks :many
-- Percentiles of each operator-loaded source's values of a metric in an industry, and the rank
-- (% below, ties half) of @value among them.
SELECT source, max(year)::int AS year, count(*) AS sample_size,
       percentile_cont(0.25) WITHIN GROUP (ORDER BY value)::float8 AS p25,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY value)::float8 AS median,
       percentile_cont(0.75) WITHIN GROUP (ORDER BY value)::float8 AS p75,
       ((count(*) FILTER (WHERE value < sqlc.narg('value')::float8) + 0.5 * count(*) FILTER (WHERE value = sqlc.narg('value')::float8)) * 100.0 / count(*))::float8 AS percentile_rank
FROM peer_benchmark_datasets
WHERE industry = @industry AND metric = @metric
GROUP BY source
ORDER BY source;

-- name: PeerDatasetDeleteSources :execrows
-- An import replaces every row of the sources it names.
DELETE FROM peer_benchmark_datasets WHERE source = ANY(@sources::text[]);

-- name: PeerDatasetInsert :execrows
INSERT INTO peer_benchmark_datasets (industry, metric, value, source, year)
SELECT unnest(@industries::text[]), unnest(@metrics::text[]), unnest(@peer_values::float8[]), unnest(@sources::text[]), unnest(@years::int[]);

-- name: AnalyticsActualsOf :many
-- Every actual of the benefits named (those AnalyticsActualSummaries cannot stand for).
SELECT a.benefit_id, a.period, a.value FROM benefit_actuals a
WHERE a.tenant_id = @tenant_id AND a.benefit_id = ANY(@benefit_ids::uuid[]);

-- name: AnalyticsRealizationSums :many
-- One pass over the benefits that count (not cancelled) of the initiatives a realisation covers,
-- per (initiative, category): the like-for-like comparison of its money benefits in the base
-- currency whose actuals all lie through the current month (@through, its first day;
-- @current_month, the same as months since year 0), summed from each one's
-- benefit_measured_expectations row (migration 00039, kept exact by triggers; summed counts
-- them), and read_ids: the benefits to read one by one (AnalyticsRealizationBenefits; NULL, not
-- an empty array, when none: cheaper to send and to scan, thousands of groups a request): the other
-- money benefits (another currency, or an actual after @through: compared in Go from their
-- actuals) and those the at-risk rule may hold for: two actuals or more, and a latest actual
-- under 0.8 × the even spread (what its period expects when it lies inside the benefit's
-- periods; outside it expects 0 and the rule never holds), or a plan, or a latest actual after
-- @through; the rule itself is applied in Go.
-- Per benefit, as finance.Benefit.CompareToDate: its periods to date are those of its grid from
-- its first through its last or the current one, whichever is earlier, plus its actuals outside
-- its periods (expecting 0); expected and actual over the periods with an actual; unmeasured =
-- the plan to date (the even spread times the periods, or the plan's first entry of each period)
-- less expected.
-- Each benefit's conditions are computed once, in a subquery kept apart by OFFSET 0: pulled up
-- into the aggregate, each FILTER would evaluate its condition's expression again. The sums
-- carry no trailing zeros (trim_scale, the same values): a rollup's 16 decimals would make every
-- amount a big integer in Go.
SELECT r.initiative_id, r.category,
       count(*) FILTER (WHERE r.summed)::integer AS summed,
       trim_scale(coalesce(sum(r.expected) FILTER (WHERE r.summed), 0))::numeric AS expected,
       trim_scale(coalesce(sum(r.actual) FILTER (WHERE r.summed), 0))::numeric AS actual,
       trim_scale(coalesce(sum(CASE WHEN r.planned THEN (
             SELECT coalesce(sum(e.expected), 0) FROM (
               SELECT DISTINCT ON (z.period) z.period, p.expected
               FROM benefit_plan_entries p CROSS JOIN LATERAL (SELECT benefit_month(p.period) / r.step * r.step AS period) z
               WHERE p.tenant_id = @tenant_id AND p.benefit_id = r.id
               ORDER BY z.period, p.period) e
             WHERE e.period BETWEEN r.first_month AND least(r.last_month, @current_month::integer))
           ELSE r.spread * r.periods END - r.expected) FILTER (WHERE r.summed), 0))::numeric AS unmeasured,
       coalesce(sum(r.measured) FILTER (WHERE r.summed), 0)::integer AS measured,
       coalesce(sum(r.periods + r.measured - r.inside) FILTER (WHERE r.summed), 0)::integer AS periods,
       array_agg(r.id) FILTER (WHERE NOT r.summed AND r.money OR r.at_risk)::uuid[] AS read_ids
FROM (
  SELECT b.initiative_id, b.category, b.id, m.expected, m.actual, m.planned, m.spread, m.step, m.first_month, m.last_month,
         m.measured, m.inside,
         b.unit = 'currency' AND b.currency IS NOT NULL AS money,
         b.unit = 'currency' AND b.currency = @base::text AND (m.latest_month IS NULL OR m.latest_month <= @current_month::integer) AS summed,
         m.actuals >= 2 AND (m.latest_month > @current_month::integer OR m.planned OR m.latest_value < 0.8 * m.spread) AS at_risk,
         CASE WHEN least(m.last_month, @current_month::integer) < m.first_month THEN 0
              ELSE (least(m.last_month, @current_month::integer) - m.first_month) / m.step + 1 END AS periods
  FROM benefits b
  JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
  JOIN benefit_measured_expectations m ON m.tenant_id = b.tenant_id AND m.benefit_id = b.id
  WHERE b.tenant_id = @tenant_id AND b.status <> 'cancelled'
    AND (sqlc.narg('initiative_id')::uuid IS NULL AND i.status <> 'archived' OR i.id = sqlc.narg('initiative_id')::uuid)
  OFFSET 0
) r
GROUP BY 1, 2
ORDER BY 1, 2;

-- name: AnalyticsRealizationBenefits :many
-- The benefits named (AnalyticsRealizationSums' read_ids), only the columns realisation uses, each
-- with summed (already in the sums: the at-risk rule only; else compared in Go from its actuals,
-- AnalyticsActualsOf) and its benefit_actual_stats row (migration 00017): the count and its two
-- latest (period, value): the latest when it has an actual, the previous when it has two (not
-- null); the latest pair is the at-risk rule's when the latest actual is through the current
-- month (else AnalyticsLatestActualsOf).
SELECT b.id, b.initiative_id, b.name, b.category, b.expected_value, b.currency, b.unit, b.measurement_frequency,
       b.expected_start_date, b.expected_end_date,
       (b.unit = 'currency' AND b.currency IS NOT NULL AND b.currency = @base::text
        AND (s.latest_period IS NULL OR s.latest_period <= @through::date))::boolean AS summed,
       coalesce(s.actuals, 0)::int AS actuals,
       coalesce(s.latest_period, b.expected_start_date)::date AS latest_period, coalesce(s.latest_value, 0)::numeric AS latest_value,
       coalesce(s.previous_period, b.expected_start_date)::date AS previous_period, coalesce(s.previous_value, 0)::numeric AS previous_value
FROM benefits b
LEFT JOIN benefit_actual_stats s ON s.tenant_id = b.tenant_id AND s.benefit_id = b.id
WHERE b.tenant_id = @tenant_id AND b.id = ANY(@benefit_ids::uuid[])
ORDER BY b.initiative_id, b.id;

-- name: AnalyticsPlansOf :many
-- The plan entries of the benefits named (those realisation reads one by one).
SELECT p.* FROM benefit_plan_entries p
WHERE p.tenant_id = @tenant_id AND p.benefit_id = ANY(@benefit_ids::uuid[])
ORDER BY p.benefit_id, p.period;

-- name: AnalyticsMeasuredCheck :many
-- benefit_measured_expectations next to a fresh recomputation from benefits, their plans and
-- actuals, written apart from the triggers' (a plan's first entry per period by GROUP BY): every
-- benefit where the two differ (empty when the rollup is exact). Used by tests and the benchmark's check.
WITH plans AS (
  SELECT p.benefit_id, benefit_period(p.period, b.measurement_frequency) AS period, (array_agg(p.expected ORDER BY p.period))[1] AS expected
  FROM benefit_plan_entries p JOIN benefits b ON b.tenant_id = p.tenant_id AND b.id = p.benefit_id
  WHERE p.tenant_id = @tenant_id
  GROUP BY 1, 2
), bens AS (
  SELECT b.id, b.tenant_id, b.measurement_frequency AS frequency,
         benefit_period(b.expected_start_date, b.measurement_frequency) AS first_period,
         coalesce(benefit_period(b.expected_end_date, b.measurement_frequency), 'infinity') AS last_period,
         (date_part('year', b.expected_start_date) * 12 + date_part('month', b.expected_start_date) - 1)::integer
           / CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END * CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END AS first_month,
         ((date_part('year', b.expected_end_date) * 12 + date_part('month', b.expected_end_date) - 1)::integer
           / CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END * CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END) AS last_month,
         CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END AS step,
         round(b.expected_value / CASE b.measurement_frequency WHEN 'quarterly' THEN 4 ELSE 12 END::numeric(40, 38), 16) AS spread,
         b.id IN (SELECT q.benefit_id FROM benefit_plan_entries q WHERE q.tenant_id = @tenant_id) AS planned,
         (SELECT count(*)::integer FROM benefit_actuals q WHERE q.tenant_id = b.tenant_id AND q.benefit_id = b.id) AS actuals,
         (SELECT (date_part('year', max(q.period)) * 12 + date_part('month', max(q.period)) - 1)::integer
          FROM benefit_actuals q WHERE q.tenant_id = b.tenant_id AND q.benefit_id = b.id) AS latest_month,
         (SELECT (array_agg(q.value ORDER BY q.period DESC))[1] FROM benefit_actuals q WHERE q.tenant_id = b.tenant_id AND q.benefit_id = b.id) AS latest_value
  FROM benefits b WHERE b.tenant_id = @tenant_id
), fresh AS (
  SELECT x.id AS benefit_id, x.first_month, x.last_month, x.step, x.spread, x.planned, x.actuals, x.latest_month, x.latest_value,
         count(a.period)::integer AS measured,
         count(a.period) FILTER (WHERE a.period BETWEEN x.first_period AND x.last_period)::integer AS inside,
         coalesce(sum(CASE
               WHEN a.period IS NULL THEN 0
               WHEN a.period NOT BETWEEN x.first_period AND x.last_period THEN 0
               WHEN x.planned THEN coalesce(pl.expected, 0)
               ELSE x.spread
             END), 0) AS expected,
         coalesce(sum(a.value), 0) AS actual
  FROM bens x
  LEFT JOIN benefit_actuals a ON a.tenant_id = x.tenant_id AND a.benefit_id = x.id AND benefit_period(a.period, x.frequency) = a.period
  LEFT JOIN plans pl ON pl.benefit_id = a.benefit_id AND pl.period = a.period
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
)
SELECT coalesce(m.benefit_id, f.benefit_id) AS benefit_id,
       (CASE WHEN m.benefit_id IS NULL THEN 'none'
             ELSE concat_ws(' ', m.first_month, m.last_month, m.step, m.spread, m.planned, m.actuals, m.latest_month, m.latest_value, m.measured, m.inside, m.expected, m.actual) END)::text AS rollup,
       (CASE WHEN f.benefit_id IS NULL THEN 'none'
             ELSE concat_ws(' ', f.first_month, f.last_month, f.step, f.spread, f.planned, f.actuals, f.latest_month, f.latest_value, f.measured, f.inside, f.expected, f.actual) END)::text AS fresh
FROM (SELECT x.* FROM benefit_measured_expectations x WHERE x.tenant_id = @tenant_id) m
FULL JOIN fresh f ON f.benefit_id = m.benefit_id
WHERE (m.first_month, m.last_month, m.step, m.spread, m.planned, m.actuals, m.latest_month, m.latest_value, m.measured, m.inside, m.expected, m.actual)
      IS DISTINCT FROM (f.first_month, f.last_month, f.step, f.spread, f.planned, f.actuals, f.latest_month, f.latest_value, f.measured, f.inside, f.expected, f.actual)
ORDER BY 1;

-- name: AnalyticsLatestActualsOf :many
-- The two latest actuals through @through of each benefit named (those with an actual recorded
-- for a later month, whose benefit_actual_stats pair is not the at-risk rule's): two backward
-- steps on the (tenant_id, benefit_id, period) index each, oldest first per benefit.
SELECT l.benefit_id, l.period, l.value
FROM unnest(@benefit_ids::uuid[]) AS ids (id)
CROSS JOIN LATERAL (
  SELECT a.benefit_id, a.period, a.value FROM benefit_actuals a
  WHERE a.tenant_id = @tenant_id AND a.benefit_id = ids.id AND a.period <= @through::date
  ORDER BY a.period DESC
  LIMIT 2
) l
ORDER BY 1, 2;

-- name: AnalyticsTransactionSettings :exec
-- For every later statement of the analysis's transaction (transaction-local): the analysis's
-- deadline, past which PostgreSQL cancels a statement (57014), and a plan made for the
-- statement's values each time. A cached generic plan is costed for a tenant of average size
-- and reads a large tenant's rows one index probe at a time; planning a statement costs
-- a few milliseconds beside an analysis's tens (docs/benchmarks.md, The cold realisation).
SELECT set_config('statement_timeout', (@timeout_ms::bigint)::text, true),
       set_config('plan_cache_mode', 'force_custom_plan', true);

-- name: AnalyticsDataVersion :one
-- The tenant's analytics data version (0 before its first write; migration 00040) and whether
-- this transaction itself wrote an input the version does not count until it commits.
SELECT coalesce((SELECT v.version FROM analytics_data_versions v WHERE v.tenant_id = @tenant_id), 0)::bigint AS version,
       coalesce(current_setting('vc.analytics_pending', true), '') <> '' AS pending;
