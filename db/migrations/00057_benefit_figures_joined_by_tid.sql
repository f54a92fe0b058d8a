-- +goose Up

-- The updates by tid of the figures (migration 00055) named the rows twice: "ctid = ANY (tids)",
-- one scan of every row, and "ctid = t.row", the join to what each row becomes. The planner sizes
-- the scan from the tenant's statistics (a new tenant looks like one row) and joined each of the
-- rows it found to every element of the list: 10,000 benefits filed in one statement compared
-- 10,000 x 10,000 tids, 21 s of one core; where it took the join the other way round, each row was
-- still checked against the whole list. With the join alone, the only plan left (scans other than
-- by tid are off for these statements) fetches each row by its own tid, once.
-- Those settings hold for whatever runs inside the update too: the foreign key's check of each
-- row that the transaction created (every new benefit's row is created, then updated), whose
-- only plans are then scans turned off, priced past jit_above_cost. A session with JIT on (the
-- server's default; the service's own sessions run without) compiled each check, 12 ms a row.
-- These statements run without JIT whatever the session says.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_actual_stats_add(tids tid[], counts integer[], totals numeric[], latest_periods date[],
                                         latest_values numeric[], previous_periods date[], previous_values numeric[])
RETURNS void LANGUAGE plpgsql
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_seqscan = off SET jit = off AS $$
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
        WHERE s.ctid = t.row
        RETURNING s.ctid AS row, s.actuals
    )
    SELECT array_agg(changed.row) FILTER (WHERE changed.actuals = 0) INTO emptied FROM changed;
    IF emptied IS NOT NULL THEN
        DELETE FROM benefit_actual_stats s WHERE s.ctid = ANY (emptied);
    END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_measured_expectations_set(tids tid[], figures benefit_measured_expectations[]) RETURNS void LANGUAGE sql
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_seqscan = off SET jit = off AS $$
    UPDATE benefit_measured_expectations m
    SET (first_month, last_month, step, spread, planned, actuals, latest_month, latest_value, measured, inside, expected, actual) =
        (f.first_month, f.last_month, f.step, f.spread, f.planned, f.actuals, f.latest_month, f.latest_value, f.measured, f.inside, f.expected, f.actual)
    FROM unnest(tids, figures) AS f (row, tenant_id, benefit_id, first_month, last_month, step, spread, planned, actuals,
                                     latest_month, latest_value, measured, inside, expected, actual)
    WHERE m.ctid = f.row
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION benefit_actual_stats_add(tids tid[], counts integer[], totals numeric[], latest_periods date[],
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
CREATE OR REPLACE FUNCTION benefit_measured_expectations_set(tids tid[], figures benefit_measured_expectations[]) RETURNS void LANGUAGE sql
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_seqscan = off AS $$
    UPDATE benefit_measured_expectations m
    SET (first_month, last_month, step, spread, planned, actuals, latest_month, latest_value, measured, inside, expected, actual) =
        (f.first_month, f.last_month, f.step, f.spread, f.planned, f.actuals, f.latest_month, f.latest_value, f.measured, f.inside, f.expected, f.actual)
    FROM unnest(tids, figures) AS f (row, tenant_id, benefit_id, first_month, last_month, step, spread, planned, actuals,
                                     latest_month, latest_value, measured, inside, expected, actual)
    WHERE m.ctid = ANY (tids) AND m.ctid = f.row
$$;
-- +goose StatementEnd
