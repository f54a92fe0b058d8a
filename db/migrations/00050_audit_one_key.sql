-- +goose Up

-- The audit trigger (migration 00015) reads a one-column key directly instead of calling
-- audit_key, which it still calls for a composite key: a SQL function called from PL/pgSQL is
-- parsed and planned again on every execution of the statement that calls it, about a third of
-- the trigger's cost on a one-row insert (the webhooks benchmark: one POST /v1/initiatives).
-- The rows it writes are the same (audit_key of one column is that column's value).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rtype   text   := TG_ARGV[0];
    keys    text[] := string_to_array(TG_ARGV[1], ',');
    one_key boolean := cardinality(string_to_array(TG_ARGV[1], ',')) = 1;
    redact  text[] := string_to_array(TG_ARGV[2], ',');
    skip    text[] := ARRAY['tenant_id', 'created_at', 'updated_at'] || string_to_array(TG_ARGV[1], ',') || string_to_array(TG_ARGV[3], ',');
    who     text   := coalesce(nullif(current_setting('app.actor', true), ''), 'system');
    req     text   := nullif(current_setting('app.request_id', true), '');
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO audit_events (tenant_id, actor, request_id, action, resource_type, resource_id, changed_fields, changes)
        SELECT (s.r->>'tenant_id')::uuid, who, req, 'create', rtype, CASE WHEN one_key THEN s.r->>keys[1] ELSE audit_key(s.r, keys) END,
               coalesce(f.fields, '{}'), coalesce(f.changes, '{}')
        FROM (SELECT to_jsonb(n) AS r FROM new_rows n) s,
        LATERAL (SELECT array_agg(k ORDER BY k) AS fields,
                        jsonb_object_agg(k, jsonb_build_object('new', v)) FILTER (WHERE k <> ALL (redact)) AS changes
                 FROM jsonb_each(s.r) AS e(k, v) WHERE k <> ALL (skip) AND v <> 'null') f;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO audit_events (tenant_id, actor, request_id, action, resource_type, resource_id, changed_fields, changes)
        SELECT (s.r->>'tenant_id')::uuid, who, req, 'delete', rtype, CASE WHEN one_key THEN s.r->>keys[1] ELSE audit_key(s.r, keys) END,
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
        FROM (SELECT to_jsonb(x) AS r, CASE WHEN one_key THEN to_jsonb(x)->>keys[1] ELSE audit_key(to_jsonb(x), keys) END AS rid FROM new_rows x) n
        JOIN (SELECT to_jsonb(x) AS r, CASE WHEN one_key THEN to_jsonb(x)->>keys[1] ELSE audit_key(to_jsonb(x), keys) END AS rid FROM old_rows x) o
          ON o.rid = n.rid AND o.r->>'tenant_id' = n.r->>'tenant_id',
        LATERAL (SELECT array_agg(k ORDER BY k) AS fields,
                        jsonb_object_agg(k, jsonb_build_object('old', o.r->k, 'new', v)) FILTER (WHERE k <> ALL (redact)) AS changes
                 FROM jsonb_each(n.r) AS e(k, v) WHERE k <> ALL (skip) AND v IS DISTINCT FROM o.r->k) f
        WHERE f.fields IS NOT NULL; -- an update that changed nothing (or only ignored columns) is no event
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS $$
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
