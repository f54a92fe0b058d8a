-- +goose Up

-- benefit_actual_stats_refresh and benefit_measured_refresh update the rows they lock by their
-- tids (migrations 00048, 00049), so that no plan chosen from statistics walks a tenant's rows.
-- Row security adds "tenant_id = app_tenant_id()" to each of those updates, which the primary key
-- answers, and the planner sizes a tenant from the statistics: taken before a large tenant came
-- (its first sync), a tenant is about one row, and the planner scanned the tenant's rows and
-- filtered them by tid instead of taking the tids. Each page of a 100,000-record sync read all the
-- rows its tenant had so far in both tables (8,334 each by its end), and the sync cost more per
-- record than one of 10,000. The updates by tid now run in functions of their own that read no
-- other table and allow the planner no scan of the table but the tid scan (index, bitmap and
-- sequential scans off, for the function's statement alone); what each row becomes is read before,
-- by primary key, as the updates read it. The figures, the locks and their order are unchanged.
-- +goose StatementBegin
CREATE FUNCTION benefit_actual_stats_add(tids tid[], counts integer[], totals numeric[], latest_periods date[],
                                         latest_values numeric[], previous_periods date[], previous_values numeric[])
RETURNS void LANGUAGE plpgsql
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_seqscan = off AS $$
DECLARE
    emptied tid[]; -- rows left without an actual
BEGIN
    WITH changed AS (
        UPDATE benefit_actual_stats s
        SET actuals = s.actuals + t.n, total = s.total + t.total,
            latest_period = coalesce(t.latest_period, 'epoch'), latest_value = coalesce(t.latest_value, 0),
            previous_period = t.previous_period, previous_value = t.previous_value
        FROM unnest(tids, counts, totals, latest_periods, latest_values, previous_periods, previous_values)
             AS t (row, n, total, latest_period, latest_value, previous_period, previous_value)
        WHERE s.ctid = ANY (tids) AND s.ctid = t.row
        RETURNING s.ctid AS row, s.actuals
    )
    SELECT array_agg(changed.row) FILTER (WHERE changed.actuals = 0) INTO emptied FROM changed;
    IF emptied IS NOT NULL THEN
        DELETE FROM benefit_actual_stats s WHERE s.ctid = ANY (emptied);
    END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_actual_stats_refresh() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    -- The statement's change per touched (tenant, benefit), in key order: Σ new − Σ old values
    -- and the change of the count.
    tenants  uuid[];
    benefits uuid[];
    totals   numeric[];
    counts   integer[];
    locked   tid[]; -- the touched rows, locked by this transaction until it ends
    -- The two latest actuals of each locked row's benefit.
    latest_periods   date[];
    latest_values    numeric[];
    previous_periods date[];
    previous_values  numeric[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id),
               array_agg(total ORDER BY tenant_id, benefit_id), array_agg(n ORDER BY tenant_id, benefit_id)
        INTO tenants, benefits, totals, counts
        FROM (SELECT tenant_id, benefit_id, sum(value) AS total, count(*)::integer AS n FROM stats_new GROUP BY 1, 2) x;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id),
               array_agg(total ORDER BY tenant_id, benefit_id), array_agg(n ORDER BY tenant_id, benefit_id)
        INTO tenants, benefits, totals, counts
        FROM (SELECT tenant_id, benefit_id, sum(value) AS total, sum(n)::integer AS n
              FROM (SELECT tenant_id, benefit_id, value, 1 AS n FROM stats_new
                    UNION ALL SELECT tenant_id, benefit_id, -value, -1 FROM stats_old) d GROUP BY 1, 2) x;
    ELSE
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id),
               array_agg(total ORDER BY tenant_id, benefit_id), array_agg(n ORDER BY tenant_id, benefit_id)
        INTO tenants, benefits, totals, counts
        FROM (SELECT tenant_id, benefit_id, -sum(value) AS total, -count(*)::integer AS n FROM stats_old GROUP BY 1, 2) x;
    END IF;
    IF benefits IS NULL THEN
        RETURN NULL;
    END IF;
    -- Lock every touched benefit's row in key order (a zero placeholder for a new one; a benefit
    -- being deleted gets none: its row is taken to 0 actuals below and removed).
    INSERT INTO benefit_actual_stats (tenant_id, benefit_id, actuals, total, latest_period, latest_value)
    SELECT t.tenant_id, t.benefit_id, 0, 0, 'epoch', 0
    FROM unnest(tenants, benefits) AS t (tenant_id, benefit_id)
    WHERE EXISTS (SELECT 1 FROM benefits b WHERE b.tenant_id = t.tenant_id AND b.id = t.benefit_id OFFSET 0)
    ORDER BY t.tenant_id, t.benefit_id
    ON CONFLICT (tenant_id, benefit_id) DO NOTHING;
    SELECT array_agg(s.ctid), array_agg(t.tenant_id), array_agg(t.benefit_id), array_agg(t.total), array_agg(t.n)
    INTO locked, tenants, benefits, totals, counts
    FROM (SELECT * FROM unnest(tenants, benefits, totals, counts) AS u (tenant_id, benefit_id, total, n) ORDER BY 1, 2 OFFSET 0) t
    CROSS JOIN LATERAL (SELECT s.ctid FROM benefit_actual_stats s
                        WHERE s.tenant_id = t.tenant_id AND s.benefit_id = t.benefit_id FOR UPDATE) s;
    IF locked IS NULL THEN
        RETURN NULL;
    END IF;
    -- Under the locks (a new snapshot: other writers of these benefits have committed): read the
    -- two latest actuals of each benefit again (two index steps), then add the change by tid.
    SELECT array_agg(l.periods[1] ORDER BY t.i), array_agg(l.vals[1] ORDER BY t.i),
           array_agg(l.periods[2] ORDER BY t.i), array_agg(l.vals[2] ORDER BY t.i)
    INTO latest_periods, latest_values, previous_periods, previous_values
    FROM unnest(tenants, benefits) WITH ORDINALITY AS t (tenant_id, benefit_id, i)
    CROSS JOIN LATERAL (SELECT array_agg(x.period ORDER BY x.period DESC) AS periods, array_agg(x.value ORDER BY x.period DESC) AS vals
                        FROM (SELECT a.period, a.value FROM benefit_actuals a WHERE a.tenant_id = t.tenant_id AND a.benefit_id = t.benefit_id
                              ORDER BY a.period DESC LIMIT 2) x) l;
    PERFORM benefit_actual_stats_add(locked, counts, totals, latest_periods, latest_values, previous_periods, previous_values);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION benefit_measured_expectations_set(tids tid[], figures benefit_measured_expectations[]) RETURNS void LANGUAGE sql
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_seqscan = off AS $$
    UPDATE benefit_measured_expectations m
    SET (first_month, last_month, step, spread, planned, actuals, latest_month, latest_value, measured, inside, expected, actual) =
        (f.first_month, f.last_month, f.step, f.spread, f.planned, f.actuals, f.latest_month, f.latest_value, f.measured, f.inside, f.expected, f.actual)
    FROM unnest(tids, figures) AS f (row, tenant_id, benefit_id, first_month, last_month, step, spread, planned, actuals,
                                     latest_month, latest_value, measured, inside, expected, actual)
    WHERE m.ctid = ANY (tids) AND m.ctid = f.row
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_measured_refresh(tenants uuid[], benefits uuid[]) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    locked          tid[];  -- the touched rows, locked by this transaction until it ends
    locked_tenants  uuid[]; -- and their keys
    locked_benefits uuid[];
    tids            tid[];  -- the rows whose benefit still exists
    figures         benefit_measured_expectations[]; -- and what each becomes
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
    SELECT array_agg(m.ctid), array_agg(t.tenant_id), array_agg(t.benefit_id) INTO locked, locked_tenants, locked_benefits
    FROM (SELECT * FROM unnest(tenants, benefits) AS u (tenant_id, benefit_id) ORDER BY 1, 2 OFFSET 0) t
    CROSS JOIN LATERAL (SELECT m.ctid FROM benefit_measured_expectations m
                        WHERE m.tenant_id = t.tenant_id AND m.benefit_id = t.benefit_id FOR UPDATE) m;
    IF locked IS NULL THEN
        RETURN;
    END IF;
    -- Under the locks, in a new snapshot: each benefit's figures from its definition, plan and
    -- actuals, each read by its key (a benefit deleted meanwhile has none), then set by tid.
    SELECT array_agg(u.row ORDER BY u.i),
           array_agg(ROW(u.tenant_id, u.benefit_id, d.first_month, d.last_month, d.step, d.spread, d.planned, c.actuals,
                         l.latest_month, l.latest_value, f.measured, f.inside, f.expected, f.actual)::benefit_measured_expectations ORDER BY u.i)
    INTO tids, figures
    FROM unnest(locked, locked_tenants, locked_benefits) WITH ORDINALITY AS u (row, tenant_id, benefit_id, i)
    CROSS JOIN LATERAL (
        SELECT b.measurement_frequency AS frequency,
               benefit_period(b.expected_start_date, b.measurement_frequency) AS first_period,
               benefit_period(b.expected_end_date, b.measurement_frequency) AS last_period,
               benefit_month(benefit_period(b.expected_start_date, b.measurement_frequency)) AS first_month,
               benefit_month(benefit_period(b.expected_end_date, b.measurement_frequency)) AS last_month,
               CASE b.measurement_frequency WHEN 'quarterly' THEN 3 ELSE 1 END AS step,
               benefit_spread(b.expected_value, b.measurement_frequency) AS spread,
               EXISTS (SELECT 1 FROM benefit_plan_entries p WHERE p.tenant_id = b.tenant_id AND p.benefit_id = b.id) AS planned
        FROM benefits b WHERE b.tenant_id = u.tenant_id AND b.id = u.benefit_id OFFSET 0
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
            WHERE a.tenant_id = u.tenant_id AND a.benefit_id = u.benefit_id AND benefit_period(a.period, d.frequency) = a.period
        ) x
    ) f
    CROSS JOIN LATERAL (SELECT count(*)::integer AS actuals FROM benefit_actuals a WHERE a.tenant_id = u.tenant_id AND a.benefit_id = u.benefit_id) c
    LEFT JOIN LATERAL (SELECT benefit_month(a.period) AS latest_month, a.value AS latest_value FROM benefit_actuals a
                       WHERE a.tenant_id = u.tenant_id AND a.benefit_id = u.benefit_id ORDER BY a.period DESC LIMIT 1) l ON true;
    IF tids IS NOT NULL THEN
        PERFORM benefit_measured_expectations_set(tids, figures);
    END IF;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION public.benefit_actual_stats_refresh()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_custom_plan'
AS $$
DECLARE
    -- The statement's change per touched (tenant, benefit), in key order: Σ new − Σ old values
    -- and the change of the count.
    tenants  uuid[];
    benefits uuid[];
    totals   numeric[];
    counts   integer[];
    locked   tid[]; -- the touched rows, locked by this transaction until it ends
    emptied  tid[]; -- those left without an actual
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id),
               array_agg(total ORDER BY tenant_id, benefit_id), array_agg(n ORDER BY tenant_id, benefit_id)
        INTO tenants, benefits, totals, counts
        FROM (SELECT tenant_id, benefit_id, sum(value) AS total, count(*)::integer AS n FROM stats_new GROUP BY 1, 2) x;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id),
               array_agg(total ORDER BY tenant_id, benefit_id), array_agg(n ORDER BY tenant_id, benefit_id)
        INTO tenants, benefits, totals, counts
        FROM (SELECT tenant_id, benefit_id, sum(value) AS total, sum(n)::integer AS n
              FROM (SELECT tenant_id, benefit_id, value, 1 AS n FROM stats_new
                    UNION ALL SELECT tenant_id, benefit_id, -value, -1 FROM stats_old) d GROUP BY 1, 2) x;
    ELSE
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id),
               array_agg(total ORDER BY tenant_id, benefit_id), array_agg(n ORDER BY tenant_id, benefit_id)
        INTO tenants, benefits, totals, counts
        FROM (SELECT tenant_id, benefit_id, -sum(value) AS total, -count(*)::integer AS n FROM stats_old GROUP BY 1, 2) x;
    END IF;
    IF benefits IS NULL THEN
        RETURN NULL;
    END IF;
    -- Lock every touched benefit's row in key order (a zero placeholder for a new one; a benefit
    -- being deleted gets none: its row is taken to 0 actuals below and removed).
    INSERT INTO benefit_actual_stats (tenant_id, benefit_id, actuals, total, latest_period, latest_value)
    SELECT t.tenant_id, t.benefit_id, 0, 0, 'epoch', 0
    FROM unnest(tenants, benefits) AS t (tenant_id, benefit_id)
    WHERE EXISTS (SELECT 1 FROM benefits b WHERE b.tenant_id = t.tenant_id AND b.id = t.benefit_id OFFSET 0)
    ORDER BY t.tenant_id, t.benefit_id
    ON CONFLICT (tenant_id, benefit_id) DO NOTHING;
    SELECT array_agg(s.ctid), array_agg(t.tenant_id), array_agg(t.benefit_id), array_agg(t.total), array_agg(t.n)
    INTO locked, tenants, benefits, totals, counts
    FROM (SELECT * FROM unnest(tenants, benefits, totals, counts) AS u (tenant_id, benefit_id, total, n) ORDER BY 1, 2 OFFSET 0) t
    CROSS JOIN LATERAL (SELECT s.ctid FROM benefit_actual_stats s
                        WHERE s.tenant_id = t.tenant_id AND s.benefit_id = t.benefit_id FOR UPDATE) s;
    IF locked IS NULL THEN
        RETURN NULL;
    END IF;
    -- Under the locks (a new snapshot: other writers of these benefits have committed): add the
    -- change to the count and Σ, and read the two latest actuals again (two index steps). The
    -- rows by their tids: no join left for the planner to choose from statistics.
    WITH changed AS (
        UPDATE benefit_actual_stats s
        SET actuals = s.actuals + t.n, total = s.total + t.total,
            latest_period = coalesce(l.periods[1], 'epoch'), latest_value = coalesce(l.vals[1], 0),
            previous_period = l.periods[2], previous_value = l.vals[2]
        FROM unnest(locked, tenants, benefits, totals, counts) AS t (row, tenant_id, benefit_id, total, n)
        CROSS JOIN LATERAL (SELECT array_agg(x.period ORDER BY x.period DESC) AS periods, array_agg(x.value ORDER BY x.period DESC) AS vals
                            FROM (SELECT a.period, a.value FROM benefit_actuals a WHERE a.tenant_id = t.tenant_id AND a.benefit_id = t.benefit_id
                                  ORDER BY a.period DESC LIMIT 2) x) l
        WHERE s.ctid = t.row
        RETURNING s.ctid AS row, s.actuals
    )
    SELECT array_agg(row) FILTER (WHERE actuals = 0) INTO emptied FROM changed;
    IF emptied IS NOT NULL THEN
        DELETE FROM benefit_actual_stats s WHERE s.ctid = ANY(emptied);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION public.benefit_measured_refresh(tenants uuid[], benefits uuid[])
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_custom_plan'
AS $$
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

DROP FUNCTION benefit_actual_stats_add(tid[], integer[], numeric[], date[], numeric[], date[], numeric[]);
DROP FUNCTION benefit_measured_expectations_set(tid[], benefit_measured_expectations[]);
