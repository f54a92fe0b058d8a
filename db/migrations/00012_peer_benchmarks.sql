-- +goose Up
-- Peer benchmarks (issue 10, GET /v1/analytics/benchmarks).
--
-- (a) Other tenants' aggregates: one figure per tenant, industry and metric, written by the tenant's
-- own transaction when its benchmark is computed. The tenant_isolation policy lets a tenant read
-- and write only its own figures; other tenants' rows are reachable only inside peer_benchmark(),
-- which sets app.scope = 'peer_benchmark' (the peer_aggregate policy) for its one query and returns percentiles
-- of the OTHER tenants only when there are at least 5 of them: never a row, never a small group.
CREATE FUNCTION app_peer_scope() RETURNS boolean
    LANGUAGE sql STABLE AS $$ SELECT coalesce(current_setting('app.scope', true), '') = 'peer_benchmark' $$;

CREATE TABLE peer_metric_snapshots (
    tenant_id   uuid        NOT NULL REFERENCES tenants (id),
    industry    text        NOT NULL CHECK (char_length(industry) BETWEEN 1 AND 100 AND industry = lower(btrim(industry))),
    metric      text        NOT NULL CHECK (metric IN ('roi_percent', 'payback_months', 'realization_rate', 'npv_per_initiative')),
    value       float8      NOT NULL CHECK (value <> 'NaN' AND value > '-Infinity' AND value < 'Infinity'),
    computed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, industry, metric)
);
CREATE INDEX peer_metric_snapshots_peers ON peer_metric_snapshots (industry, metric);

ALTER TABLE peer_metric_snapshots ENABLE ROW LEVEL SECURITY;
ALTER TABLE peer_metric_snapshots FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON peer_metric_snapshots USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
CREATE POLICY peer_aggregate ON peer_metric_snapshots FOR SELECT USING (app_peer_scope());

-- The only way to other tenants' figures: percentiles over the other tenants (not the caller,
-- app_tenant_id()) of one industry and metric, and the caller's value's percentile rank among
-- them (% below, ties counted half), all NULL unless at least 5 other tenants have a figure.
-- app.scope is 'peer_benchmark' only while the one aggregate query runs, then back to what it was
-- (on an error too: the block's subtransaction undoes it).
-- +goose StatementBegin
CREATE FUNCTION peer_benchmark(p_industry text, p_metric text, p_value float8)
RETURNS TABLE (tenants bigint, p25 float8, median float8, p75 float8, percentile_rank float8)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    old_scope text := coalesce(current_setting('app.scope', true), '');
BEGIN
    PERFORM set_config('app.scope', 'peer_benchmark', true);
    RETURN QUERY
    SELECT CASE WHEN count(*) >= 5 THEN count(*) END,
           CASE WHEN count(*) >= 5 THEN percentile_cont(0.25) WITHIN GROUP (ORDER BY s.value) END,
           CASE WHEN count(*) >= 5 THEN percentile_cont(0.50) WITHIN GROUP (ORDER BY s.value) END,
           CASE WHEN count(*) >= 5 THEN percentile_cont(0.75) WITHIN GROUP (ORDER BY s.value) END,
           CASE WHEN count(*) >= 5 AND p_value IS NOT NULL
                THEN ((count(*) FILTER (WHERE s.value < p_value) + 0.5 * count(*) FILTER (WHERE s.value = p_value)) * 100.0 / count(*))::float8 END
    FROM peer_metric_snapshots s
    WHERE s.industry = p_industry AND s.metric = p_metric AND s.tenant_id IS DISTINCT FROM app_tenant_id();
    PERFORM set_config('app.scope', old_scope, true);
END $$;
-- +goose StatementEnd

-- (b) Peer datasets an operator loads (`valuecase benchmarks import FILE.csv`): published figures,
-- not any tenant's data; one row per peer value. An import replaces the rows of each source it names.
CREATE TABLE peer_benchmark_datasets (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    industry    text        NOT NULL CHECK (char_length(industry) BETWEEN 1 AND 100 AND industry = lower(btrim(industry))),
    metric      text        NOT NULL CHECK (metric IN ('roi_percent', 'payback_months', 'realization_rate', 'npv_per_initiative')),
    value       float8      NOT NULL CHECK (value <> 'NaN' AND value > '-Infinity' AND value < 'Infinity'),
    source      text        NOT NULL CHECK (char_length(source) BETWEEN 1 AND 200),
    year        integer     NOT NULL CHECK (year BETWEEN 2000 AND 2100),
    imported_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX peer_benchmark_datasets_peers ON peer_benchmark_datasets (industry, metric, source);

-- +goose Down
DROP TABLE peer_benchmark_datasets;
DROP FUNCTION peer_benchmark(text, text, float8);
DROP TABLE peer_metric_snapshots;
DROP FUNCTION app_peer_scope();
