-- +goose Up

-- benefit_measured_refresh (migration 00039) joined the touched benefits (an unnested array) to
-- benefits in a plan chosen from the table statistics. Under row security, with statistics that
-- saw few of the tenant's benefits (a tenant's first import, benefits created in the same
-- transaction), the planner scanned all the tenant's benefits once per touched benefit: 1,000
-- benefits created in one statement took 7.6 s, 2,000 took 35.5 s, as superuser 8,334 took 5.9 s.
-- Here every statement is driven by the array and reaches each benefit's rows by primary key (a
-- LATERAL or EXISTS subquery that OFFSET 0 keeps from being flattened into a join the planner may
-- reorder, as migration 00021 did for the rollup) and the update takes the locked rows by tid:
-- work in proportion to the benefits touched, whatever the statistics say. The figures and the locking protocol are unchanged.
-- plan_cache_mode = force_custom_plan: a generic plan (plpgsql's cached one after five calls)
-- sees neither the tid array's size (it filtered a tenant scan by it, O(n²) again) nor which
-- index finds one benefit (it took benefits_tenant_created and filtered on id); a custom plan
-- costs far less than these statements' work.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_measured_refresh(tenants uuid[], benefits uuid[]) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    locked tid[]; -- the touched rows, locked by this transaction until it ends
BEGIN
    IF benefits IS NULL THEN
        RETURN;
    END IF;
    -- Lock every touched benefit's row in key order (a zero placeholder for a new one).
    INSERT INTO benefit_measured_expectations (tenant_id, benefit_id, first_month, step, spread, planned, actuals, measured, inside, expected, actual)
    SELECT t.tenant_id, t.benefit_id, 0, 1, 0, false, 0, 0, 0, 0, 0
    FROM unnest(tenants, benefits) AS t (tenant_id, benefit_id)
    WHERE EXISTS (SELECT 1 FROM benefits b WHERE b.tenant_id = t.tenant_id AND b.id = t.benefit_id OFFSET 0)
    ORDER BY t.tenant_id, t.benefit_id
    ON CONFLICT (tenant_id, benefit_id) DO NOTHING;
    SELECT array_agg(m.ctid) INTO locked
    FROM (SELECT * FROM unnest(tenants, benefits) AS u (tenant_id, benefit_id) ORDER BY 1, 2 OFFSET 0) t
    CROSS JOIN LATERAL (SELECT m.ctid FROM benefit_measured_expectations m
                        WHERE m.tenant_id = t.tenant_id AND m.benefit_id = t.benefit_id FOR UPDATE) m;
    -- Under the locks, in a new snapshot: each benefit's figures from its definition, plan and
    -- actuals (the rows by their tids: no join left for the planner to choose).
    UPDATE benefit_measured_expectations m
    SET (first_month, last_month, step, spread, planned, actuals, latest_month, latest_value, measured, inside, expected, actual) = (
        SELECT d.first_month, d.last_month, d.step, d.spread, d.planned, c.actuals, l.latest_month, l.latest_value, f.measured, f.inside, f.expected, f.actual
        FROM (
            SELECT b.measurement_frequency AS frequency,
                   benefit_period(b.expected_start_date, b.measurement_frequency) AS first_period,
                   benefit_period(b.expected_end_date, b.measurement_frequency) AS last_period,
                   benefit_month(benefit_period(b.expected_start_date, b.measurement_frequency)) AS first_month,
                   benefit_month(benefit_period(b.expected_end_date, b.measurement_frequency)) AS last_month,
                   CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END AS step,
                   benefit_spread(b.expected_value, b.measurement_frequency) AS spread,
                   EXISTS (SELECT 1 FROM benefit_plan_entries p WHERE p.tenant_id = b.tenant_id AND p.benefit_id = b.id) AS planned
            FROM benefits b WHERE b.tenant_id = m.tenant_id AND b.id = m.benefit_id
        ) d
        CROSS JOIN LATERAL (
            SELECT count(*)::integer AS measured, count(*) FILTER (WHERE x.inside)::integer AS inside,
                   coalesce(sum(x.expected), 0) AS expected, coalesce(sum(x.value), 0) AS actual
            FROM (
                SELECT a.value, a.period >= d.first_period AND (d.last_period IS NULL OR a.period <= d.last_period) AS inside,
                       CASE
                         WHEN a.period < d.first_period OR a.period > d.last_period THEN 0
                         WHEN d.planned THEN coalesce((SELECT p.expected FROM benefit_plan_entries p
                                                       WHERE p.tenant_id = a.tenant_id AND p.benefit_id = a.benefit_id
                                                         AND p.period >= a.period AND p.period < a.period + make_interval(months => d.step)
                                                       ORDER BY p.period LIMIT 1), 0)
                         ELSE d.spread
                       END AS expected
                FROM benefit_actuals a
                WHERE a.tenant_id = m.tenant_id AND a.benefit_id = m.benefit_id AND benefit_period(a.period, d.frequency) = a.period
            ) x
        ) f
        CROSS JOIN LATERAL (SELECT count(*)::integer AS actuals FROM benefit_actuals a WHERE a.tenant_id = m.tenant_id AND a.benefit_id = m.benefit_id) c
        LEFT JOIN LATERAL (SELECT benefit_month(a.period) AS latest_month, a.value AS latest_value FROM benefit_actuals a
                           WHERE a.tenant_id = m.tenant_id AND a.benefit_id = m.benefit_id ORDER BY a.period DESC LIMIT 1) l ON true)
    WHERE m.ctid = ANY(locked)
      AND EXISTS (SELECT 1 FROM benefits b WHERE b.tenant_id = m.tenant_id AND b.id = m.benefit_id OFFSET 0);
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_measured_refresh(tenants uuid[], benefits uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF benefits IS NULL THEN
        RETURN;
    END IF;
    -- Lock every touched benefit's row in key order (a zero placeholder for a new one).
    INSERT INTO benefit_measured_expectations (tenant_id, benefit_id, first_month, step, spread, planned, actuals, measured, inside, expected, actual)
    SELECT t.tenant_id, t.benefit_id, 0, 1, 0, false, 0, 0, 0, 0, 0
    FROM unnest(tenants, benefits) AS t (tenant_id, benefit_id)
    WHERE EXISTS (SELECT 1 FROM benefits b WHERE b.tenant_id = t.tenant_id AND b.id = t.benefit_id)
    ORDER BY t.tenant_id, t.benefit_id
    ON CONFLICT (tenant_id, benefit_id) DO NOTHING;
    PERFORM 1 FROM benefit_measured_expectations m JOIN unnest(tenants, benefits) AS t (tenant_id, benefit_id)
      ON m.tenant_id = t.tenant_id AND m.benefit_id = t.benefit_id
    ORDER BY m.tenant_id, m.benefit_id FOR UPDATE OF m;
    -- Under the locks, in a new snapshot: each benefit's figures from its definition, plan and actuals.
    UPDATE benefit_measured_expectations m
    SET first_month = d.first_month, last_month = d.last_month, step = d.step, spread = d.spread, planned = d.planned,
        actuals = c.actuals, latest_month = l.latest_month, latest_value = l.latest_value, measured = f.measured, inside = f.inside, expected = f.expected, actual = f.actual
    FROM unnest(tenants, benefits) AS t (tenant_id, benefit_id)
    CROSS JOIN LATERAL (
        SELECT b.measurement_frequency AS frequency,
               benefit_period(b.expected_start_date, b.measurement_frequency) AS first_period,
               benefit_period(b.expected_end_date, b.measurement_frequency) AS last_period,
               benefit_month(benefit_period(b.expected_start_date, b.measurement_frequency)) AS first_month,
               benefit_month(benefit_period(b.expected_end_date, b.measurement_frequency)) AS last_month,
               CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END AS step,
               benefit_spread(b.expected_value, b.measurement_frequency) AS spread,
               EXISTS (SELECT 1 FROM benefit_plan_entries p WHERE p.tenant_id = b.tenant_id AND p.benefit_id = b.id) AS planned
        FROM benefits b WHERE b.tenant_id = t.tenant_id AND b.id = t.benefit_id
    ) d
    CROSS JOIN LATERAL (
        SELECT count(*)::integer AS measured, count(*) FILTER (WHERE x.inside)::integer AS inside,
               coalesce(sum(x.expected), 0) AS expected, coalesce(sum(x.value), 0) AS actual
        FROM (
            SELECT a.value, a.period >= d.first_period AND (d.last_period IS NULL OR a.period <= d.last_period) AS inside,
                   CASE
                     WHEN a.period < d.first_period OR a.period > d.last_period THEN 0
                     WHEN d.planned THEN coalesce((SELECT p.expected FROM benefit_plan_entries p
                                                   WHERE p.tenant_id = a.tenant_id AND p.benefit_id = a.benefit_id
                                                     AND p.period >= a.period AND p.period < a.period + make_interval(months => d.step)
                                                   ORDER BY p.period LIMIT 1), 0)
                     ELSE d.spread
                   END AS expected
            FROM benefit_actuals a
            WHERE a.tenant_id = t.tenant_id AND a.benefit_id = t.benefit_id AND benefit_period(a.period, d.frequency) = a.period
        ) x
    ) f
    CROSS JOIN LATERAL (SELECT count(*)::integer AS actuals FROM benefit_actuals a WHERE a.tenant_id = t.tenant_id AND a.benefit_id = t.benefit_id) c
    LEFT JOIN LATERAL (SELECT benefit_month(a.period) AS latest_month, a.value AS latest_value FROM benefit_actuals a
                       WHERE a.tenant_id = t.tenant_id AND a.benefit_id = t.benefit_id ORDER BY a.period DESC LIMIT 1) l ON true
    WHERE m.tenant_id = t.tenant_id AND m.benefit_id = t.benefit_id;
END $$;
-- +goose StatementEnd
