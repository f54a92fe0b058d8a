-- +goose Up
-- The syncs' health across tenants (GET /api/v1/ingestion/health, unauthenticated like /health):
-- per provider, how many integrations are active and in error (an integration in error has its
-- schedule paused until fixed), how many syncs are open, and the outcome and time of the last
-- finished sync. Only these aggregates leave ingestion_health(): no tenant, no id, no name.
-- Like peer_benchmark() (migration 00012) the function sets a scope of its own
-- (app.scope = 'ingestion_health') for its one query, which the read-only ingestion_aggregate
-- policies admit, then puts the scope back.
CREATE FUNCTION app_ingestion_scope() RETURNS boolean
    LANGUAGE sql STABLE AS $$ SELECT coalesce(current_setting('app.scope', true), '') = 'ingestion_health' $$;

CREATE POLICY ingestion_aggregate ON integrations FOR SELECT USING (app_ingestion_scope());
CREATE POLICY ingestion_aggregate ON integration_syncs FOR SELECT USING (app_ingestion_scope());

-- +goose StatementBegin
CREATE FUNCTION ingestion_health()
RETURNS TABLE (provider text, active bigint, in_error bigint, open_syncs bigint, last_status text, last_finished_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    old_scope text := coalesce(current_setting('app.scope', true), '');
BEGIN
    PERFORM set_config('app.scope', 'ingestion_health', true);
    RETURN QUERY
    SELECT i.provider,
           count(*) FILTER (WHERE i.state = 'active'),
           count(*) FILTER (WHERE i.state = 'error'),
           coalesce(sum(o.open), 0)::bigint,
           (array_agg(l.status ORDER BY l.finished_at DESC) FILTER (WHERE l.finished_at IS NOT NULL))[1],
           max(l.finished_at)
    FROM integrations i
    LEFT JOIN LATERAL (
        SELECT s.status, s.finished_at FROM integration_syncs s
        WHERE s.tenant_id = i.tenant_id AND s.integration_id = i.id AND s.finished_at IS NOT NULL
        ORDER BY s.created_at DESC LIMIT 1) l ON true
    LEFT JOIN LATERAL (
        SELECT count(*) AS open FROM integration_syncs s
        WHERE s.tenant_id = i.tenant_id AND s.integration_id = i.id AND s.status IN ('queued', 'running')) o ON true
    WHERE i.state <> 'disconnected'
    GROUP BY i.provider
    ORDER BY i.provider;
    PERFORM set_config('app.scope', old_scope, true);
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION ingestion_health();
DROP POLICY ingestion_aggregate ON integration_syncs;
DROP POLICY ingestion_aggregate ON integrations;
DROP FUNCTION app_ingestion_scope();
