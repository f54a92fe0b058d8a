-- +goose Up

-- The realised-value rollup (issue 10, performance): Σ and count of the actuals of each
-- (initiative, benefit category, currency, month), over the benefits that count in the
-- analytics — money benefits (unit currency, a currency set) that are not cancelled. It is
-- exact, not a cache: triggers keep it in the transaction of every write to benefit_actuals
-- (INSERT, UPDATE, DELETE, COPY: the API, bulk imports and integration syncs alike) and of every
-- change of a benefit that moves its actuals in or out of a row (initiative, category,
-- currency, unit, status; a benefit's deletion). Sums are numeric, so order of writes never
-- changes a total. Portfolio realisation and trends read it instead of the 360,000 actuals of
-- a large tenant; they convert each row at its month's FX rate as they converted each actual.
--
-- The triggers on benefit_actuals and the update trigger on benefits are STATEMENT-level with
-- transition tables: one statement's rows are summed per rollup key first and applied as one
-- INSERT ... ON CONFLICT DO UPDATE (total = total + delta: two transactions adding to the same
-- row serialise on its row lock and neither loses its delta), in key order, so two statements
-- touching the same rows lock them in the same order and cannot deadlock each other. A 200-row
-- page costs one upsert of its few (initiative, category, currency, month) rows instead of 200.
CREATE TABLE benefit_actual_months (
    tenant_id     uuid    NOT NULL,
    initiative_id uuid    NOT NULL,
    category      text    NOT NULL,
    currency      text    NOT NULL,
    period        date    NOT NULL,
    total         numeric NOT NULL,
    -- > 0 once a statement's triggers are done; no CHECK: PostgreSQL checks the candidate row of
    -- INSERT ... ON CONFLICT (a negative delta) before it finds the conflict, and a row reaches 0
    -- inside the statement that takes its last actual out, which then deletes it
    actuals       integer NOT NULL,
    PRIMARY KEY (tenant_id, initiative_id, category, currency, period)
) WITH (fillfactor = 70); -- room on each page for HOT updates: every write updates rows in place
CREATE INDEX benefit_actual_months_period ON benefit_actual_months (tenant_id, period);

-- benefit_actual_months_apply adds a statement's deltas (one element per rollup key: total and
-- actuals are the change of Σ and count) to the rollup: one upsert in key order, then the rows
-- whose count reached 0 are deleted.
-- +goose StatementBegin
CREATE FUNCTION benefit_actual_months_apply(d benefit_actual_months[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    zero benefit_actual_months[];
BEGIN
    IF d IS NULL THEN
        RETURN;
    END IF;
    WITH up AS (
        INSERT INTO benefit_actual_months AS m (tenant_id, initiative_id, category, currency, period, total, actuals)
        SELECT x.tenant_id, x.initiative_id, x.category, x.currency, x.period, x.total, x.actuals
        FROM unnest(d) x ORDER BY x.tenant_id, x.initiative_id, x.category, x.currency, x.period
        ON CONFLICT (tenant_id, initiative_id, category, currency, period)
        DO UPDATE SET total = m.total + excluded.total, actuals = m.actuals + excluded.actuals
        RETURNING m.*
    )
    SELECT array_agg(ROW(up.*)::benefit_actual_months) FILTER (WHERE up.actuals = 0) INTO zero FROM up;
    IF zero IS NOT NULL THEN
        DELETE FROM benefit_actual_months m USING unnest(zero) z
        WHERE m.tenant_id = z.tenant_id AND m.initiative_id = z.initiative_id AND m.category = z.category
          AND m.currency = z.currency AND m.period = z.period AND m.actuals = 0;
    END IF;
END $$;
-- +goose StatementEnd

-- A statement wrote actuals: its new rows go in, its old rows come out (an UPDATE: both, so a
-- correction or a period move nets to the change), summed per rollup key. A benefit already
-- deleted (its actuals cascade after it) was taken out as a whole by benefits_rollup_delete, so
-- its actuals join no benefit here. The three events need three triggers (a trigger with
-- transition tables has one event and no column list); an UPDATE that changes none of
-- benefit_id, period, value nets to no delta.
-- +goose StatementBegin
CREATE FUNCTION benefit_actuals_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d benefit_actual_months[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH delta AS (SELECT tenant_id, benefit_id, period, value, 1 AS n FROM rollup_new)
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT x.tenant_id, b.initiative_id, b.category, b.currency, x.period, sum(x.value), sum(x.n)::integer
            FROM delta x JOIN benefits b ON b.tenant_id = x.tenant_id AND b.id = x.benefit_id
            WHERE b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
            GROUP BY 1, 2, 3, 4, 5) g;
    ELSIF TG_OP = 'UPDATE' THEN
        WITH delta AS (SELECT tenant_id, benefit_id, period, value, 1 AS n FROM rollup_new
                       UNION ALL SELECT tenant_id, benefit_id, period, -value, -1 FROM rollup_old)
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT x.tenant_id, b.initiative_id, b.category, b.currency, x.period, sum(x.value), sum(x.n)::integer
            FROM delta x JOIN benefits b ON b.tenant_id = x.tenant_id AND b.id = x.benefit_id
            WHERE b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
            GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.n) <> 0 OR sum(x.value) <> 0) g;
    ELSE
        WITH delta AS (SELECT tenant_id, benefit_id, period, -value AS value, -1 AS n FROM rollup_old)
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT x.tenant_id, b.initiative_id, b.category, b.currency, x.period, sum(x.value), sum(x.n)::integer
            FROM delta x JOIN benefits b ON b.tenant_id = x.tenant_id AND b.id = x.benefit_id
            WHERE b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
            GROUP BY 1, 2, 3, 4, 5) g;
    END IF;
    PERFORM benefit_actual_months_apply(d);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER benefit_actuals_rollup_insert AFTER INSERT ON benefit_actuals
    REFERENCING NEW TABLE AS rollup_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_actuals_rollup();
CREATE TRIGGER benefit_actuals_rollup_update AFTER UPDATE ON benefit_actuals
    REFERENCING OLD TABLE AS rollup_old NEW TABLE AS rollup_new FOR EACH STATEMENT EXECUTE FUNCTION benefit_actuals_rollup();
CREATE TRIGGER benefit_actuals_rollup_delete AFTER DELETE ON benefit_actuals
    REFERENCING OLD TABLE AS rollup_old FOR EACH STATEMENT EXECUTE FUNCTION benefit_actuals_rollup();

-- A statement changed benefits: of each benefit whose initiative, category, currency, unit or
-- cancellation changed, all actuals come out of the old rows when it counted before and go
-- into the new ones when it counts after, summed per rollup key.
-- +goose StatementBegin
CREATE FUNCTION benefits_rollup_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d benefit_actual_months[];
BEGIN
    WITH changed AS (
        SELECT o.tenant_id, o.id,
               o.initiative_id AS o_ini, o.category AS o_cat, o.currency AS o_cur,
               (o.unit = 'currency' AND o.currency IS NOT NULL AND o.status <> 'cancelled') AS o_counts,
               n.initiative_id AS n_ini, n.category AS n_cat, n.currency AS n_cur,
               (n.unit = 'currency' AND n.currency IS NOT NULL AND n.status <> 'cancelled') AS n_counts
        FROM rollup_old o JOIN rollup_new n ON n.tenant_id = o.tenant_id AND n.id = o.id
        WHERE o.initiative_id IS DISTINCT FROM n.initiative_id OR o.category IS DISTINCT FROM n.category
           OR o.currency IS DISTINCT FROM n.currency OR o.unit IS DISTINCT FROM n.unit
           OR (o.status = 'cancelled') <> (n.status = 'cancelled')
    ), delta AS (
        SELECT c.tenant_id, c.o_ini AS ini, c.o_cat AS cat, c.o_cur AS cur, a.period, -a.value AS value, -1 AS n
        FROM changed c JOIN benefit_actuals a ON a.tenant_id = c.tenant_id AND a.benefit_id = c.id WHERE c.o_counts
        UNION ALL
        SELECT c.tenant_id, c.n_ini, c.n_cat, c.n_cur, a.period, a.value, 1
        FROM changed c JOIN benefit_actuals a ON a.tenant_id = c.tenant_id AND a.benefit_id = c.id WHERE c.n_counts
    )
    SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
        SELECT tenant_id, ini, cat, cur, period, sum(value), sum(n)::integer FROM delta
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(value) <> 0) g;
    PERFORM benefit_actual_months_apply(d);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER benefits_rollup_update AFTER UPDATE ON benefits
    REFERENCING OLD TABLE AS rollup_old NEW TABLE AS rollup_new FOR EACH STATEMENT EXECUTE FUNCTION benefits_rollup_update();

-- A benefit deleted: take its actuals out before they cascade (their own trigger then finds
-- no benefit and does nothing). Per row and BEFORE: after the statement its actuals are gone.
-- +goose StatementBegin
CREATE FUNCTION benefits_rollup_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d benefit_actual_months[];
BEGIN
    IF OLD.unit = 'currency' AND OLD.currency IS NOT NULL AND OLD.status <> 'cancelled' THEN
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT OLD.tenant_id, OLD.initiative_id, OLD.category, OLD.currency, a.period, -sum(a.value), -count(*)::integer
            FROM benefit_actuals a WHERE a.tenant_id = OLD.tenant_id AND a.benefit_id = OLD.id GROUP BY a.period) g;
        PERFORM benefit_actual_months_apply(d);
    END IF;
    RETURN OLD;
END $$;
-- +goose StatementEnd
CREATE TRIGGER benefits_rollup_delete BEFORE DELETE ON benefits
    FOR EACH ROW EXECUTE FUNCTION benefits_rollup_delete();

ALTER TABLE benefit_actual_months ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_actual_months FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_actual_months USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- The rollup of the actuals recorded before this migration, tenant by tenant (RLS is forced,
-- so each tenant's rows are read and written under its own setting).
-- +goose StatementBegin
DO $$
DECLARE
    t uuid;
BEGIN
    FOR t IN SELECT id FROM tenants LOOP
        PERFORM set_config('app.tenant_id', t::text, true);
        INSERT INTO benefit_actual_months (tenant_id, initiative_id, category, currency, period, total, actuals)
        SELECT a.tenant_id, b.initiative_id, b.category, b.currency, a.period, sum(a.value), count(*)
        FROM benefit_actuals a
        JOIN benefits b ON b.tenant_id = a.tenant_id AND b.id = a.benefit_id
        WHERE a.tenant_id = t AND b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
        GROUP BY 1, 2, 3, 4, 5;
    END LOOP;
    PERFORM set_config('app.tenant_id', '', true);
END $$;
-- +goose StatementEnd

-- Dashboards (issue 10): saved sets of analytics widgets. A personal dashboard is its owner's
-- (owner_id: the subject that created it) and invisible to anyone else; a shared one is seen by
-- every analytics:read holder of the tenant and written by admin:config holders. widgets is a
-- JSON array of {type, title, params}, validated by internal/dashboard before it is stored.
CREATE TABLE dashboards (
    tenant_id   uuid        NOT NULL REFERENCES tenants (id),
    id          uuid        NOT NULL DEFAULT gen_random_uuid(),
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description text        NOT NULL DEFAULT '',
    visibility  text        NOT NULL CHECK (visibility IN ('personal', 'shared')),
    owner_id    text        NOT NULL,
    widgets     jsonb       NOT NULL CHECK (jsonb_typeof(widgets) = 'array'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX dashboards_tenant_created ON dashboards (tenant_id, created_at DESC, id);

ALTER TABLE dashboards ENABLE ROW LEVEL SECURITY;
ALTER TABLE dashboards FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON dashboards USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE dashboards;
DROP TRIGGER benefits_rollup_delete ON benefits;
DROP TRIGGER benefits_rollup_update ON benefits;
DROP TRIGGER benefit_actuals_rollup_insert ON benefit_actuals;
DROP TRIGGER benefit_actuals_rollup_update ON benefit_actuals;
DROP TRIGGER benefit_actuals_rollup_delete ON benefit_actuals;
DROP FUNCTION benefits_rollup_delete(), benefits_rollup_update(), benefit_actuals_rollup(),
    benefit_actual_months_apply(benefit_actual_months[]);
DROP TABLE benefit_actual_months;
