-- +goose Up

-- Audit log (issue 13): one row per created, changed or deleted record of an audited table,
-- written by the triggers below in the SAME transaction as the change, so a rolled-back write
-- leaves no row and a write through any route (today's or a future bulk import or sync) is
-- recorded without the route remembering to. Who and which request come from transaction-local
-- settings that db.BeginTenant sets from the context (app.actor, app.request_id); a write with no
-- request behind it (a worker) says 'system' or 'system:<what>'.
CREATE TABLE audit_events (
    tenant_id      uuid        NOT NULL REFERENCES tenants (id),
    id             bigint      GENERATED ALWAYS AS IDENTITY,
    occurred_at    timestamptz NOT NULL DEFAULT now(),
    actor          text        NOT NULL,
    request_id     text,
    -- create | update | delete | status:<new status> (an update that changed the status column;
    -- state:<new state> for a table whose column is named state, as integrations)
    action         text        NOT NULL,
    resource_type  text        NOT NULL,
    resource_id    text        NOT NULL,
    -- The fields the write set or changed (redacted ones included by name).
    changed_fields text[]      NOT NULL,
    -- {field: {"old": ..., "new": ...}} for those fields, redacted fields left out.
    changes        jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
-- The list is newest first; from/to ranges and retention use the time index, the filters their own.
CREATE INDEX audit_events_time ON audit_events (tenant_id, occurred_at DESC, id DESC);
CREATE INDEX audit_events_resource ON audit_events (tenant_id, resource_type, resource_id, occurred_at DESC);
CREATE INDEX audit_events_actor ON audit_events (tenant_id, actor, occurred_at DESC);

ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_events USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- audit_write is one statement-level trigger for every audited table: it reads the statement's
-- transition tables (old_rows/new_rows), so a bulk COPY of 10,000 rows costs one INSERT ... SELECT,
-- not 10,000 function calls. Arguments: resource type, key columns (comma-separated, joined with
-- ':' into resource_id), redacted columns (named in changed_fields, values never stored: secrets,
-- hashes, large content), ignored columns (bookkeeping whose change alone is not a write worth a row).
-- Each row's fields are expanded once (one jsonb_each feeding both aggregates) and a one-column key
-- is read directly: this trigger is most of the cost of a bulk insert (10,000 actuals: ~0.95 s with
-- two expansions and a key subquery per row, ~0.75 s like this).
-- +goose StatementBegin
CREATE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rtype   text   := TG_ARGV[0];
    keys    text[] := string_to_array(TG_ARGV[1], ',');
    redact  text[] := string_to_array(TG_ARGV[2], ',');
    skip    text[] := ARRAY['tenant_id', 'created_at', 'updated_at'] || string_to_array(TG_ARGV[1], ',') || string_to_array(TG_ARGV[3], ',');
    who     text   := coalesce(nullif(current_setting('app.actor', true), ''), 'system');
    req     text   := nullif(current_setting('app.request_id', true), '');
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO audit_events (tenant_id, actor, request_id, action, resource_type, resource_id, changed_fields, changes)
        SELECT (s.r->>'tenant_id')::uuid, who, req, 'create', rtype, audit_key(s.r, keys),
               coalesce(f.fields, '{}'), coalesce(f.changes, '{}')
        FROM (SELECT to_jsonb(n) AS r FROM new_rows n) s,
        LATERAL (SELECT array_agg(k ORDER BY k) AS fields,
                        jsonb_object_agg(k, jsonb_build_object('new', v)) FILTER (WHERE k <> ALL (redact)) AS changes
                 FROM jsonb_each(s.r) AS e(k, v) WHERE k <> ALL (skip) AND v <> 'null') f;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO audit_events (tenant_id, actor, request_id, action, resource_type, resource_id, changed_fields, changes)
        SELECT (s.r->>'tenant_id')::uuid, who, req, 'delete', rtype, audit_key(s.r, keys),
               coalesce(f.fields, '{}'), coalesce(f.changes, '{}')
        FROM (SELECT to_jsonb(o) AS r FROM old_rows o) s,
        LATERAL (SELECT array_agg(k ORDER BY k) AS fields,
                        jsonb_object_agg(k, jsonb_build_object('old', v)) FILTER (WHERE k <> ALL (redact)) AS changes
                 FROM jsonb_each(s.r) AS e(k, v) WHERE k <> ALL (skip) AND v <> 'null') f;
    ELSE
        INSERT INTO audit_events (tenant_id, actor, request_id, action, resource_type, resource_id, changed_fields, changes)
        SELECT (n.r->>'tenant_id')::uuid, who, req,
               CASE WHEN 'status' = ANY (f.fields) THEN 'status:' || (n.r->>'status')
                    WHEN 'state' = ANY (f.fields) THEN 'state:' || (n.r->>'state') ELSE 'update' END,
               rtype, n.rid, f.fields, coalesce(f.changes, '{}')
        FROM (SELECT to_jsonb(x) AS r, audit_key(to_jsonb(x), keys) AS rid FROM new_rows x) n
        JOIN (SELECT to_jsonb(x) AS r, audit_key(to_jsonb(x), keys) AS rid FROM old_rows x) o
          ON o.rid = n.rid AND o.r->>'tenant_id' = n.r->>'tenant_id',
        LATERAL (SELECT array_agg(k ORDER BY k) AS fields,
                        jsonb_object_agg(k, jsonb_build_object('old', o.r->k, 'new', v)) FILTER (WHERE k <> ALL (redact)) AS changes
                 FROM jsonb_each(n.r) AS e(k, v) WHERE k <> ALL (skip) AND v IS DISTINCT FROM o.r->k) f
        WHERE f.fields IS NOT NULL; -- an update that changed nothing (or only ignored columns) is no event
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- audit_key is a row's resource id: its key columns' values joined with ':' (one column: its value).
-- +goose StatementBegin
CREATE FUNCTION audit_key(r jsonb, keys text[]) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN cardinality(keys) = 1 THEN r->>keys[1]
                ELSE (SELECT string_agg(r->>k, ':' ORDER BY i) FROM unnest(keys) WITH ORDINALITY AS u(k, i)) END
$$;
-- +goose StatementEnd

-- The audited tables (a listed table that does not exist is skipped). Not audited: the log itself;
-- delivery, retry and job machinery (outbox_events, webhook_deliveries, webhook_delivery_attempts,
-- idempotency_keys, integration_syncs, bulk_jobs, bulk_job_rows: the records they write are audited
-- in their own tables); sign-in machinery rewritten on
-- every token refresh (auth_sessions, refresh_tokens); history tables that already are a log of
-- an audited table's change (initiative_status_history, benefit_actual_revisions, initiative_owner_history); workflow
-- bookkeeping (initiative_reviews, business_case_approval_rounds), whose outcome is the audited
-- status change of the initiative or business case.
-- Derived or frozen copies of audited rows: benefit_actual_months (the rollup of actuals),
-- business_case_documents (written once with the audited approval), peer_metric_snapshots
-- (aggregates); initiative_owner_history is a log already. db.TestEveryTenantTableIsAudited
-- holds every tenant table to this list.
-- +goose StatementBegin
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES
        -- table,                  resource type,        key columns,             redacted,                       ignored
        ('initiatives',             'initiative',         'id',                    '',                             ''),
        ('projects',                'project',            'id',                    '',                             ''),
        ('users',                   'user',               'id',                    '',                             ''),
        ('roles',                   'role',               'id',                    '',                             ''),
        ('api_keys',                'api_key',            'id',                    'key_hash',                     'last_used_at'),
        ('service_clients',         'service_client',     'id',                    'secret_hash',                  'last_used_at'),
        ('webhooks',                'webhook',            'id',                    'secret_sealed,secret_hint',    ''),
        ('tenant_settings',         'settings',           'tenant_id',             '',                             ''),
        ('fx_rates',                'fx_rate',            'currency,period',       '',                             ''),
        ('benefits',                'benefit',            'id',                    '',                             ''),
        ('benefit_plan_entries',    'benefit_plan_entry', 'benefit_id,period',     '',                             ''),
        ('benefit_actuals',         'actual',             'id',                    '',                             ''),
        ('initiative_costs',        'cost',               'id',                    '',                             ''),
        ('stakeholders',            'stakeholder',        'id',                    '',                             ''),
        ('stakeholder_engagements', 'engagement',         'id',                    '',                             ''),
        ('business_cases',          'business_case',      'id',                    'content,snapshot',             ''),
        ('business_case_exports',   'export',             'id',                    'content',                      'progress'),
        ('dashboards',              'dashboard',          'id',                    '',                             ''),
        -- integrations: the sealed token and its hint are secrets; the sync watermark and time are
        -- bookkeeping of every sync.
        ('integrations',            'integration',        'id',                    'token_sealed,token_hint',      'watermark,last_sync_at')
    ) AS v (tbl, rtype, keys, redact, ignore) LOOP
        CONTINUE WHEN to_regclass(format('public.%I', t.tbl)) IS NULL;
        EXECUTE format('CREATE TRIGGER audit_insert AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION audit_write(%L, %L, %L, %L)', t.tbl, t.rtype, t.keys, t.redact, t.ignore);
        EXECUTE format('CREATE TRIGGER audit_update AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION audit_write(%L, %L, %L, %L)', t.tbl, t.rtype, t.keys, t.redact, t.ignore);
        EXECUTE format('CREATE TRIGGER audit_delete AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION audit_write(%L, %L, %L, %L)', t.tbl, t.rtype, t.keys, t.redact, t.ignore);
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT DISTINCT event_object_table FROM information_schema.triggers WHERE trigger_name = 'audit_insert' LOOP
        EXECUTE format('DROP TRIGGER audit_insert ON %I; DROP TRIGGER audit_update ON %I; DROP TRIGGER audit_delete ON %I', t, t, t);
    END LOOP;
END $$;
-- +goose StatementEnd
DROP FUNCTION audit_write();
DROP FUNCTION audit_key(jsonb, text[]);
DROP TABLE audit_events;
