-- +goose Up

-- The portfolio month rollup (issue 10, performance): Σ total and Σ actuals of benefit_actual_months
-- per (category, currency, month) over ALL initiatives, archived ones included (108 rows for the
-- bench's large tenant instead of 108,000). Trends read it and subtract the month rows of the
-- archived initiatives (few; read from benefit_actual_months by its primary key), so a change of
-- an initiative's status needs no trigger here.
--
-- Exact, not a cache: statement-level triggers on benefit_actual_months itself (INSERT, UPDATE,
-- DELETE with transition tables; its apply's INSERT ... ON CONFLICT DO UPDATE fires both the
-- insert and the update trigger, each with its own rows) add each statement's change (new rows
-- +, old rows −) summed per key, in numeric, as one upsert in key order (the pattern of
-- benefit_actual_months_apply: no lost delta between concurrent writers, no deadlock between two
-- statements); a row whose count reaches 0 is deleted. Every writer of the month rows (actuals,
-- benefit changes and deletions, backfills) goes through them.
--
-- Not audited (db/audit_catalog_test.go): a derived copy of the audited benefit_actuals, like
-- benefit_actual_months.
CREATE TABLE benefit_actual_portfolio_months (
    tenant_id uuid    NOT NULL,
    category  text    NOT NULL,
    currency  text    NOT NULL,
    period    date    NOT NULL,
    total     numeric NOT NULL,
    -- Σ actuals; no CHECK, for the reason given on benefit_actual_months.actuals
    actuals   integer NOT NULL,
    PRIMARY KEY (tenant_id, category, currency, period)
) WITH (fillfactor = 70); -- room on each page for HOT updates: every write of actuals updates rows in place

-- +goose StatementBegin
CREATE FUNCTION benefit_actual_portfolio_months_apply(d benefit_actual_portfolio_months[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    zero benefit_actual_portfolio_months[];
BEGIN
    IF d IS NULL THEN
        RETURN;
    END IF;
    WITH up AS (
        INSERT INTO benefit_actual_portfolio_months AS m (tenant_id, category, currency, period, total, actuals)
        SELECT x.tenant_id, x.category, x.currency, x.period, x.total, x.actuals
        FROM unnest(d) x ORDER BY x.tenant_id, x.category, x.currency, x.period
        ON CONFLICT (tenant_id, category, currency, period)
        DO UPDATE SET total = m.total + excluded.total, actuals = m.actuals + excluded.actuals
        RETURNING m.*
    )
    SELECT array_agg(ROW(up.*)::benefit_actual_portfolio_months) FILTER (WHERE up.actuals = 0) INTO zero FROM up;
    IF zero IS NOT NULL THEN
        DELETE FROM benefit_actual_portfolio_months m USING unnest(zero) z
        WHERE m.tenant_id = z.tenant_id AND m.category = z.category AND m.currency = z.currency
          AND m.period = z.period AND m.actuals = 0;
    END IF;
END $$;
-- +goose StatementEnd

-- A statement wrote month rows: its new rows go in, its old rows come out, summed per key. An
-- UPDATE that only moves a delta within one key nets to its change; one that nets to nothing is
-- skipped.
-- +goose StatementBegin
CREATE FUNCTION benefit_actual_months_portfolio() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d benefit_actual_portfolio_months[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(ROW(g.*)::benefit_actual_portfolio_months) INTO d FROM (
            SELECT tenant_id, category, currency, period, sum(total), sum(actuals)::integer
            FROM portfolio_new GROUP BY 1, 2, 3, 4) g;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(ROW(g.*)::benefit_actual_portfolio_months) INTO d FROM (
            SELECT tenant_id, category, currency, period, sum(total), sum(actuals)::integer
            FROM (SELECT tenant_id, category, currency, period, total, actuals FROM portfolio_new
                  UNION ALL SELECT tenant_id, category, currency, period, -total, -actuals FROM portfolio_old) x
            GROUP BY 1, 2, 3, 4 HAVING sum(actuals) <> 0 OR sum(total) <> 0) g;
    ELSE
        SELECT array_agg(ROW(g.*)::benefit_actual_portfolio_months) INTO d FROM (
            SELECT tenant_id, category, currency, period, -sum(total), -sum(actuals)::integer
            FROM portfolio_old GROUP BY 1, 2, 3, 4 HAVING sum(actuals) <> 0 OR sum(total) <> 0) g;
    END IF;
    PERFORM benefit_actual_portfolio_months_apply(d);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER benefit_actual_months_portfolio_insert AFTER INSERT ON benefit_actual_months
    REFERENCING NEW TABLE AS portfolio_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_actual_months_portfolio();
CREATE TRIGGER benefit_actual_months_portfolio_update AFTER UPDATE ON benefit_actual_months
    REFERENCING OLD TABLE AS portfolio_old NEW TABLE AS portfolio_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_actual_months_portfolio();
CREATE TRIGGER benefit_actual_months_portfolio_delete AFTER DELETE ON benefit_actual_months
    REFERENCING OLD TABLE AS portfolio_old FOR EACH STATEMENT EXECUTE FUNCTION benefit_actual_months_portfolio();

ALTER TABLE benefit_actual_portfolio_months ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_actual_portfolio_months FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_actual_portfolio_months USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- The rollup of the month rows recorded before this migration, tenant by tenant (RLS is forced).
-- +goose StatementBegin
DO $$
DECLARE
    t uuid;
BEGIN
    FOR t IN SELECT id FROM tenants LOOP
        PERFORM set_config('app.tenant_id', t::text, true);
        INSERT INTO benefit_actual_portfolio_months (tenant_id, category, currency, period, total, actuals)
        SELECT tenant_id, category, currency, period, sum(total), sum(actuals)
        FROM benefit_actual_months WHERE tenant_id = t
        GROUP BY 1, 2, 3, 4;
    END LOOP;
    PERFORM set_config('app.tenant_id', '', true);
END $$;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER benefit_actual_months_portfolio_insert ON benefit_actual_months;
DROP TRIGGER benefit_actual_months_portfolio_update ON benefit_actual_months;
DROP TRIGGER benefit_actual_months_portfolio_delete ON benefit_actual_months;
DROP FUNCTION benefit_actual_months_portfolio(), benefit_actual_portfolio_months_apply(benefit_actual_portfolio_months[]);
DROP TABLE benefit_actual_portfolio_months;
