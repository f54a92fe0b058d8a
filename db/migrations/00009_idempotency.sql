-- +goose Up

-- Answers to POST requests sent with an Idempotency-Key (Stripe's semantics), kept 24 h per
-- tenant. The row is written in the transaction of the change it answers, so a key is stored
-- exactly when its change committed. status 0 marks a request still running whose transaction
-- committed early (a handler that waits on the outside world after its write); request_hash
-- covers the method, the path with its query, the caller and the body.
CREATE TABLE idempotency_keys (
    tenant_id        uuid        NOT NULL REFERENCES tenants (id),
    key              text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    request_hash     bytea       NOT NULL,
    method           text        NOT NULL,
    path             text        NOT NULL,
    status           integer     NOT NULL DEFAULT 0,
    response_headers jsonb       NOT NULL DEFAULT '[]',
    response_body    bytea       NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL DEFAULT now() + interval '24 hours',
    PRIMARY KEY (tenant_id, key)
);
-- Housekeeping deletes expired keys in small batches.
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE idempotency_keys;
