-- +goose Up

-- benefit_period and benefit_spread, written so that PostgreSQL inlines them into the statements
-- that call them (the expected-value refresh calls them for every actual a write touches). An SQL
-- function is inlined only when its body is one expression without FROM and no more volatile than
-- the function is declared:
-- - benefit_period truncated a date through timestamptz, which depends on the session's time zone
--   (stable), so each call ran as a function call of its own. It now truncates the date as a
--   timestamp (immutable); the period is the same for every date.
-- - benefit_spread read its divisor from a FROM subquery. The divisor is now written in place; the
--   arithmetic and the rounding are unchanged.
-- Measured: refreshing 40 benefits of 250 actuals each took 256 ms before, 26-37 ms after.
CREATE OR REPLACE FUNCTION benefit_period(d date, frequency text) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT date_trunc(CASE frequency WHEN 'quarterly' THEN 'quarter' ELSE 'month' END, d::timestamp)::date $$;

CREATE OR REPLACE FUNCTION benefit_spread(expected_value numeric, frequency text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT sign(expected_value) * div(2 * abs(expected_value) * 10000000000000000 + CASE frequency WHEN 'quarterly' THEN 4 ELSE 12 END::numeric,
                                     2 * CASE frequency WHEN 'quarterly' THEN 4 ELSE 12 END::numeric) * 0.0000000000000001 $$;

-- +goose Down
CREATE OR REPLACE FUNCTION benefit_period(d date, frequency text) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT date_trunc(CASE frequency WHEN 'quarterly' THEN 'quarter' ELSE 'month' END, d)::date $$;

CREATE OR REPLACE FUNCTION benefit_spread(expected_value numeric, frequency text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT sign(expected_value) * div(2 * abs(expected_value) * 10000000000000000 + n, 2 * n) * 0.0000000000000001
   FROM (SELECT CASE frequency WHEN 'quarterly' THEN 4 ELSE 12 END::numeric AS n) x $$;
