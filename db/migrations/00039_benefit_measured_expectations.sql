-- +goose Up

-- Each benefit's measured expectation: what the periods that have an actual expect (the like-for-
-- like comparison of finance.Benefit.CompareToDate), so realisation sums it per initiative and
-- category in SQL instead of comparing 10,000 benefits one by one in Go.
--
-- One row per benefit (deleted with it), with its expectation's shape and its actuals on its grid
-- (a month, or a quarter's first month):
--   first_month, last_month  its first and last period as months since year 0 (year × 12 + month
--             − 1, finance.Month); last_month null when open-ended
--   step      the months of a period (1 or 3)
--   spread    what a period expects under the even spread (benefit_spread)
--   planned   whether it has a plan (which then replaces the even spread)
--   actuals, latest_month, latest_value  how many actuals it has (on its grid or not), the month
--             of its latest and that actual's value (null without one): which benefits the sums
--             may take (all actuals through the current month) and which the at-risk rule may
--             hold for, without a join to benefit_actual_stats
--   measured  the count of its actuals on its grid
--   inside    those within the benefit's periods (first period through last; all when open-ended)
--   expected  Σ of what their periods expect in the benefit's own unit: 0 outside its periods; the
--             plan's first entry of the period when it has a plan (0 for a period the plan does not
--             list); else the even spread (benefit_spread: expected_value / 12 or / 4, 16 places,
--             half away from zero, as finance.divSmall divides)
--   actual    Σ of those actuals
-- None of it depends on the current month or an FX rate: readers take only benefits whose actuals
-- all lie through the current month and in the base currency from it, and add the expectation of
-- the periods to date without an actual (the plan to date less expected).
--
-- Exact, not a cache: statement-level triggers on every input (benefit_actuals, benefit_plan_entries,
-- and benefits when one is created or its expected value, frequency or dates change) recompute the
-- touched benefits' rows from scratch (tens of actuals each); a deleted benefit's row cascades. Concurrent writers of one benefit: each statement
-- first locks the benefits' rows in key order (creating a missing one) and only then recomputes,
-- in a new snapshot (READ COMMITTED) that sees what the writer it waited for committed, as
-- benefit_actual_stats (migration 00017) does.
--
-- Not audited (db/audit_catalog_test.go): derived from audited tables, like benefit_actual_stats.

-- The period a date falls in under a measurement frequency (finance.Frequency.PeriodOf).
CREATE FUNCTION benefit_period(d date, frequency text) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT date_trunc(CASE frequency WHEN 'quarterly' THEN 'quarter' ELSE 'month' END, d)::date $$;

-- A month as months since year 0 (finance.Month).
CREATE FUNCTION benefit_month(d date) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (date_part('year', d) * 12 + date_part('month', d) - 1)::integer $$;

-- The even spread of a yearly value over a frequency's periods: value / 12 or / 4 to 16 decimal
-- places, rounded half away from zero (decimal.DivisionPrecision, finance.divSmall), in exact
-- integer division (numeric division rounds at a scale that depends on the quotient's size).
CREATE FUNCTION benefit_spread(expected_value numeric, frequency text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT sign(expected_value) * div(2 * abs(expected_value) * 10000000000000000 + n, 2 * n) * 0.0000000000000001
   FROM (SELECT CASE frequency WHEN 'quarterly' THEN 4 ELSE 12 END::numeric AS n) x $$;

CREATE TABLE benefit_measured_expectations (
    tenant_id   uuid    NOT NULL,
    benefit_id  uuid    NOT NULL,
    first_month integer NOT NULL,
    last_month  integer,
    step        integer NOT NULL,
    spread      numeric NOT NULL,
    planned     boolean NOT NULL,
    actuals     integer NOT NULL,
    latest_month integer,
    latest_value numeric,
    measured    integer NOT NULL,
    inside     integer NOT NULL,
    expected   numeric NOT NULL,
    actual     numeric NOT NULL,
    PRIMARY KEY (tenant_id, benefit_id),
    FOREIGN KEY (tenant_id, benefit_id) REFERENCES benefits (tenant_id, id) ON DELETE CASCADE
) WITH (fillfactor = 80); -- room for HOT updates: every write rewrites its benefits' rows

-- +goose StatementBegin
CREATE FUNCTION benefit_measured_refresh(tenants uuid[], benefits uuid[]) RETURNS void LANGUAGE plpgsql AS $$
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

-- A statement wrote actuals or plan entries: refresh their benefits, in key order.
-- +goose StatementBegin
CREATE FUNCTION benefit_measured_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenants  uuid[];
    benefits uuid[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id) INTO tenants, benefits
        FROM (SELECT DISTINCT tenant_id, benefit_id FROM measured_new) x;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id) INTO tenants, benefits
        FROM (SELECT tenant_id, benefit_id FROM measured_new UNION SELECT tenant_id, benefit_id FROM measured_old) x;
    ELSE
        SELECT array_agg(tenant_id ORDER BY tenant_id, benefit_id), array_agg(benefit_id ORDER BY tenant_id, benefit_id) INTO tenants, benefits
        FROM (SELECT DISTINCT tenant_id, benefit_id FROM measured_old) x;
    END IF;
    PERFORM benefit_measured_refresh(tenants, benefits);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER benefit_measured_actuals_insert AFTER INSERT ON benefit_actuals
    REFERENCING NEW TABLE AS measured_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_rows_changed();
CREATE TRIGGER benefit_measured_actuals_update AFTER UPDATE ON benefit_actuals
    REFERENCING OLD TABLE AS measured_old NEW TABLE AS measured_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_rows_changed();
CREATE TRIGGER benefit_measured_actuals_delete AFTER DELETE ON benefit_actuals
    REFERENCING OLD TABLE AS measured_old FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_rows_changed();
CREATE TRIGGER benefit_measured_plans_insert AFTER INSERT ON benefit_plan_entries
    REFERENCING NEW TABLE AS measured_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_rows_changed();
CREATE TRIGGER benefit_measured_plans_update AFTER UPDATE ON benefit_plan_entries
    REFERENCING OLD TABLE AS measured_old NEW TABLE AS measured_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_rows_changed();
CREATE TRIGGER benefit_measured_plans_delete AFTER DELETE ON benefit_plan_entries
    REFERENCING OLD TABLE AS measured_old FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_rows_changed();

-- A statement created benefits (their rows) or changed them: refresh those whose expectation
-- changed (value, frequency, dates).
-- +goose StatementBegin
CREATE FUNCTION benefit_measured_benefits_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenants  uuid[];
    benefits uuid[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(n.tenant_id ORDER BY n.tenant_id, n.id), array_agg(n.id ORDER BY n.tenant_id, n.id) INTO tenants, benefits
        FROM measured_new n;
    ELSE
        SELECT array_agg(n.tenant_id ORDER BY n.tenant_id, n.id), array_agg(n.id ORDER BY n.tenant_id, n.id) INTO tenants, benefits
        FROM measured_new n JOIN measured_old o ON o.tenant_id = n.tenant_id AND o.id = n.id
        WHERE (n.expected_value, n.measurement_frequency, n.expected_start_date, n.expected_end_date)
              IS DISTINCT FROM (o.expected_value, o.measurement_frequency, o.expected_start_date, o.expected_end_date);
    END IF;
    PERFORM benefit_measured_refresh(tenants, benefits);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER benefit_measured_benefits_insert AFTER INSERT ON benefits
    REFERENCING NEW TABLE AS measured_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_benefits_changed();
CREATE TRIGGER benefit_measured_benefits_update AFTER UPDATE ON benefits
    REFERENCING OLD TABLE AS measured_old NEW TABLE AS measured_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_measured_benefits_changed();

ALTER TABLE benefit_measured_expectations ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_measured_expectations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_measured_expectations USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- The rows of the benefits created before this migration, tenant by tenant (RLS is forced).
-- +goose StatementBegin
DO $$
DECLARE
    tenant uuid;
    ids    uuid[];
BEGIN
    FOR tenant IN SELECT id FROM tenants LOOP
        PERFORM set_config('app.tenant_id', tenant::text, true);
        SELECT array_agg(benefit_id ORDER BY benefit_id) INTO ids FROM (SELECT id AS benefit_id FROM benefits WHERE tenant_id = tenant) x;
        PERFORM benefit_measured_refresh(array_fill(tenant, ARRAY[coalesce(cardinality(ids), 0)]), ids);
    END LOOP;
    PERFORM set_config('app.tenant_id', '', true);
END $$;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER benefit_measured_actuals_insert ON benefit_actuals;
DROP TRIGGER benefit_measured_actuals_update ON benefit_actuals;
DROP TRIGGER benefit_measured_actuals_delete ON benefit_actuals;
DROP TRIGGER benefit_measured_plans_insert ON benefit_plan_entries;
DROP TRIGGER benefit_measured_plans_update ON benefit_plan_entries;
DROP TRIGGER benefit_measured_plans_delete ON benefit_plan_entries;
DROP TRIGGER benefit_measured_benefits_insert ON benefits;
DROP TRIGGER benefit_measured_benefits_update ON benefits;
DROP FUNCTION benefit_measured_benefits_changed(), benefit_measured_rows_changed(), benefit_measured_refresh(uuid[], uuid[]);
DROP TABLE benefit_measured_expectations;
DROP FUNCTION benefit_spread(numeric, text), benefit_month(date), benefit_period(date, text);
