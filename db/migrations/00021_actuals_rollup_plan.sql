-- +goose Up

-- The actuals rollup trigger (migration 00013) joined a statement's transition table to benefits
-- in a plan chosen from the table statistics. With stale ones (a tenant's benefits added since the
-- last ANALYZE) the planner saw one benefit and scanned the whole transition table once per
-- benefit of the tenant: the rollup of a 10,000-actual import took 0.13 s with 40 benefits and 1 s with 320 (make
-- bench, bulk suite, under row security). Here each changed row looks its benefit up by primary key
-- (a LATERAL subquery that OFFSET 0 keeps from being flattened into a join the planner may
-- reorder): work in proportion to the rows changed, whatever the statistics say.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_actuals_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d benefit_actual_months[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH delta AS (SELECT tenant_id, benefit_id, period, value, 1 AS n FROM rollup_new)
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT x.tenant_id, b.initiative_id, b.category, b.currency, x.period, sum(x.value), sum(x.n)::integer
            FROM delta x CROSS JOIN LATERAL (
                SELECT b.initiative_id, b.category, b.currency FROM benefits b
                WHERE b.tenant_id = x.tenant_id AND b.id = x.benefit_id
                  AND b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
                OFFSET 0) b
            GROUP BY 1, 2, 3, 4, 5) g;
    ELSIF TG_OP = 'UPDATE' THEN
        WITH delta AS (SELECT tenant_id, benefit_id, period, value, 1 AS n FROM rollup_new
                       UNION ALL SELECT tenant_id, benefit_id, period, -value, -1 FROM rollup_old)
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT x.tenant_id, b.initiative_id, b.category, b.currency, x.period, sum(x.value), sum(x.n)::integer
            FROM delta x CROSS JOIN LATERAL (
                SELECT b.initiative_id, b.category, b.currency FROM benefits b
                WHERE b.tenant_id = x.tenant_id AND b.id = x.benefit_id
                  AND b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
                OFFSET 0) b
            GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.n) <> 0 OR sum(x.value) <> 0) g;
    ELSE
        WITH delta AS (SELECT tenant_id, benefit_id, period, -value AS value, -1 AS n FROM rollup_old)
        SELECT array_agg(ROW(g.*)::benefit_actual_months) INTO d FROM (
            SELECT x.tenant_id, b.initiative_id, b.category, b.currency, x.period, sum(x.value), sum(x.n)::integer
            FROM delta x CROSS JOIN LATERAL (
                SELECT b.initiative_id, b.category, b.currency FROM benefits b
                WHERE b.tenant_id = x.tenant_id AND b.id = x.benefit_id
                  AND b.unit = 'currency' AND b.currency IS NOT NULL AND b.status <> 'cancelled'
                OFFSET 0) b
            GROUP BY 1, 2, 3, 4, 5) g;
    END IF;
    PERFORM benefit_actual_months_apply(d);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_actuals_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
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
