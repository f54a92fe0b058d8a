-- +goose Up

-- Each tenant's analytics data version: a counter that moves whenever any input of an analytics
-- figure of the tenant changes, so the API keeps analysed reports per (tenant, version) and a
-- stored report is never served once its data changed (internal/analytics/cache.go).
--
-- The inputs are every table the cached analyses read (internal/analytics/operations.go):
-- initiatives, benefits, benefit_plan_entries, benefit_actuals, initiative_costs, fx_rates and
-- tenant_settings. The rollups they also read (benefit_actual_months, benefit_actual_stats,
-- benefit_actual_portfolio_months, benefit_measured_expectations) are written only by triggers on
-- those tables, in the same transaction.
--
-- Bumped at COMMIT: a deferred constraint trigger on every input. Its WHEN runs at each row and
-- queues the deferred bump only for the first row of a tenant in the transaction (it remembers the
-- tenant in the transaction-local setting vc.analytics_pending), so a bulk import of 100,000 rows
-- queues one event, and the counter's row lock is taken last, just before commit: writers of one
-- tenant serialise only on their commits, and never hold it while waiting for another lock. A
-- rolled-back transaction (or savepoint) drops its queued bump with its rows and setting.
-- vc.analytics_pending also tells a reader that its own transaction changed inputs that the
-- version does not count yet: the cache stays out of such a transaction.
--
-- TRUNCATE does not fire row triggers; the service never truncates these tables.
-- Not audited (db/audit_catalog_test.go): machinery, derived from audited tables.

CREATE TABLE analytics_data_versions (
    tenant_id uuid   PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    version   bigint NOT NULL
);

ALTER TABLE analytics_data_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE analytics_data_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON analytics_data_versions USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- The WHEN of the bump triggers: true (queue the bump) for the first row of a tenant written in
-- the transaction, false after.
CREATE FUNCTION analytics_input_written(tenant uuid) RETURNS boolean LANGUAGE sql VOLATILE AS
$$ SELECT CASE WHEN current_setting('vc.analytics_pending', true) = tenant::text THEN false
               ELSE set_config('vc.analytics_pending', tenant::text, true) IS NOT NULL END $$;

-- The deferred bump. It names the row's tenant as the transaction's for its one statement (a
-- cascade or a system-scope writer may run without it) and skips a tenant deleted in the same
-- transaction.
-- +goose StatementBegin
CREATE FUNCTION analytics_data_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenant uuid := CASE TG_OP WHEN 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END;
    scope  text := coalesce(current_setting('app.tenant_id', true), '');
BEGIN
    PERFORM set_config('app.tenant_id', tenant::text, true);
    INSERT INTO analytics_data_versions AS v (tenant_id, version)
    SELECT tenant, 1 WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = tenant)
    ON CONFLICT (tenant_id) DO UPDATE SET version = v.version + 1;
    PERFORM set_config('app.tenant_id', scope, true);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
DECLARE
    input text;
BEGIN
    FOREACH input IN ARRAY ARRAY['initiatives', 'benefits', 'benefit_plan_entries', 'benefit_actuals', 'initiative_costs', 'fx_rates', 'tenant_settings'] LOOP
        EXECUTE format('CREATE CONSTRAINT TRIGGER analytics_version_write AFTER INSERT OR UPDATE ON %I DEFERRABLE INITIALLY DEFERRED
                        FOR EACH ROW WHEN (analytics_input_written(NEW.tenant_id)) EXECUTE FUNCTION analytics_data_version_bump()', input);
        EXECUTE format('CREATE CONSTRAINT TRIGGER analytics_version_delete AFTER DELETE ON %I DEFERRABLE INITIALLY DEFERRED
                        FOR EACH ROW WHEN (analytics_input_written(OLD.tenant_id)) EXECUTE FUNCTION analytics_data_version_bump()', input);
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    input text;
BEGIN
    FOREACH input IN ARRAY ARRAY['initiatives', 'benefits', 'benefit_plan_entries', 'benefit_actuals', 'initiative_costs', 'fx_rates', 'tenant_settings'] LOOP
        EXECUTE format('DROP TRIGGER analytics_version_write ON %I', input);
        EXECUTE format('DROP TRIGGER analytics_version_delete ON %I', input);
    END LOOP;
END $$;
-- +goose StatementEnd
DROP FUNCTION analytics_data_version_bump();
DROP FUNCTION analytics_input_written(uuid);
DROP TABLE analytics_data_versions;
