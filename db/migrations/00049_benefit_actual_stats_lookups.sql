-- +goose Up

-- benefit_actual_stats_refresh (migration 00017) joined the touched benefits (unnested arrays) to
-- benefit_actual_stats in plans chosen from the table statistics; under row security, with
-- statistics (or a cached generic plan) that saw few rows, the lock and the update scanned all the
-- tenant's rows once per touched benefit (Rows Removed by Join Filter: 8,026,000 for 4,000
-- actuals of 4,000 new benefits in one statement). As migration 00048 does for the measured
-- expectations: the rows are locked through a LATERAL lookup by primary key driven by the array,
-- and updated and deleted by their tids. The figures and the lock order are unchanged.
-- plan_cache_mode = force_custom_plan: a generic plan (plpgsql's cached one after five calls)
-- sees neither the tid array's size (it filtered a tenant scan by it, O(n²) again) nor which
-- index finds one benefit (it took benefits_tenant_created and filtered on id); a custom plan
-- costs far less than these statements' work.
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_actual_stats_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- The statement's change per touched (tenant, benefit), in key order: Σ new − Σ old values
    -- and the change of the count.
    tenants  uuid[];
    benefits uuid[];
    totals   numeric[];
    counts   integer[];
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
    WHERE EXISTS (SELECT 1 FROM benefits b WHERE b.tenant_id = t.tenant_id AND b.id = t.benefit_id)
    ORDER BY t.tenant_id, t.benefit_id
    ON CONFLICT (tenant_id, benefit_id) DO NOTHING;
    PERFORM 1 FROM benefit_actual_stats s JOIN unnest(tenants, benefits) AS t (tenant_id, benefit_id)
      ON s.tenant_id = t.tenant_id AND s.benefit_id = t.benefit_id
    ORDER BY s.tenant_id, s.benefit_id FOR UPDATE OF s;
    -- Under the locks (a new snapshot: other writers of these benefits have committed): add the
    -- change to the count and Σ, and read the two latest actuals again (two index steps).
    UPDATE benefit_actual_stats s
    SET actuals = s.actuals + t.n, total = s.total + t.total,
        latest_period = coalesce(l.periods[1], 'epoch'), latest_value = coalesce(l.vals[1], 0),
        previous_period = l.periods[2], previous_value = l.vals[2]
    FROM unnest(tenants, benefits, totals, counts) AS t (tenant_id, benefit_id, total, n)
    CROSS JOIN LATERAL (SELECT array_agg(x.period ORDER BY x.period DESC) AS periods, array_agg(x.value ORDER BY x.period DESC) AS vals
                        FROM (SELECT a.period, a.value FROM benefit_actuals a WHERE a.tenant_id = t.tenant_id AND a.benefit_id = t.benefit_id
                              ORDER BY a.period DESC LIMIT 2) x) l
    WHERE s.tenant_id = t.tenant_id AND s.benefit_id = t.benefit_id;
    DELETE FROM benefit_actual_stats s USING unnest(tenants, benefits) AS t (tenant_id, benefit_id)
    WHERE s.tenant_id = t.tenant_id AND s.benefit_id = t.benefit_id AND s.actuals = 0;
    RETURN NULL;
END $$;
-- +goose StatementEnd
