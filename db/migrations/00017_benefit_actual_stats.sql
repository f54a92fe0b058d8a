-- +goose Up

-- Per-benefit figures of its actuals (issue 10, performance): how many, their Σ, and the two
-- latest (period, value). Exact, not a cache: statement-level triggers on benefit_actuals keep
-- it in the transaction of every write (INSERT, UPDATE, DELETE, COPY; the API, bulk imports and
-- integration syncs alike), so portfolio realisation reads 10,000 small rows for the at-risk
-- rule and the realised Σ of base-currency benefits instead of two index probes per benefit and
-- the 108,000 month rows of benefit_actual_months.
--
-- It is keyed by benefit only and holds nothing of the benefit itself: the readers join
-- benefits for the initiative, category, currency, unit and status, so a change of a benefit
-- needs no trigger here. A deleted benefit's actuals cascade and their delete trigger removes
-- its row.
--
-- The triggers add each statement's change to the count and Σ of its benefits (numeric: the
-- order of writes never changes a total) and read their two latest actuals again from
-- benefit_actuals (two backward steps on its (tenant_id, benefit_id, period) index: a deleted
-- or moved latest actual needs the one before it). Both are exact under concurrent writers
-- because each statement first locks its benefits' rows (creating a missing one) in key order
-- and only then reads: a later statement of the function takes a new snapshot (READ
-- COMMITTED), so a writer that waited for another's lock sees that one's committed actuals.
--
-- Not audited (db/audit_catalog_test.go): a derived copy of the audited benefit_actuals, like
-- benefit_actual_months.
CREATE TABLE benefit_actual_stats (
    tenant_id       uuid    NOT NULL,
    benefit_id      uuid    NOT NULL,
    actuals         integer NOT NULL,
    total           numeric NOT NULL,
    latest_period   date    NOT NULL,
    latest_value    numeric NOT NULL,
    previous_period date, -- null with a single actual
    previous_value  numeric,
    PRIMARY KEY (tenant_id, benefit_id)
) WITH (fillfactor = 80); -- room for HOT updates: every write rewrites its benefits' rows

-- Trends and realisation look up month rows of other currencies than the base (FX per month):
-- currency < base OR currency > base is two ranges of this index instead of a scan of all rows.
CREATE INDEX benefit_actual_months_currency ON benefit_actual_months (tenant_id, currency, period);

-- +goose StatementBegin
CREATE FUNCTION benefit_actual_stats_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER benefit_actual_stats_insert AFTER INSERT ON benefit_actuals
    REFERENCING NEW TABLE AS stats_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_actual_stats_refresh();
CREATE TRIGGER benefit_actual_stats_update AFTER UPDATE ON benefit_actuals
    REFERENCING OLD TABLE AS stats_old NEW TABLE AS stats_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_actual_stats_refresh();
CREATE TRIGGER benefit_actual_stats_delete AFTER DELETE ON benefit_actuals
    REFERENCING OLD TABLE AS stats_old FOR EACH STATEMENT EXECUTE FUNCTION benefit_actual_stats_refresh();

ALTER TABLE benefit_actual_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_actual_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_actual_stats USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- The figures of the actuals recorded before this migration, tenant by tenant (RLS is forced).
-- +goose StatementBegin
DO $$
DECLARE
    t uuid;
BEGIN
    FOR t IN SELECT id FROM tenants LOOP
        PERFORM set_config('app.tenant_id', t::text, true);
        INSERT INTO benefit_actual_stats (tenant_id, benefit_id, actuals, total, latest_period, latest_value, previous_period, previous_value)
        SELECT a.tenant_id, a.benefit_id, count(*), sum(a.value),
               (array_agg(a.period ORDER BY a.period DESC))[1], (array_agg(a.value ORDER BY a.period DESC))[1],
               (array_agg(a.period ORDER BY a.period DESC))[2], (array_agg(a.value ORDER BY a.period DESC))[2]
        FROM benefit_actuals a WHERE a.tenant_id = t
        GROUP BY a.tenant_id, a.benefit_id;
    END LOOP;
    PERFORM set_config('app.tenant_id', '', true);
END $$;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER benefit_actual_stats_insert ON benefit_actuals;
DROP TRIGGER benefit_actual_stats_update ON benefit_actuals;
DROP TRIGGER benefit_actual_stats_delete ON benefit_actuals;
DROP FUNCTION benefit_actual_stats_refresh();
DROP INDEX benefit_actual_months_currency;
DROP TABLE benefit_actual_stats;
