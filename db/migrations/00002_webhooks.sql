-- +goose Up

-- Webhook subscriptions. The signing secret is stored sealed (AES-256-GCM under SECRETS_KEY,
-- bound to tenant and webhook id) and never returned; secret_hint keeps its last 4 characters.
CREATE TABLE webhooks (
    tenant_id        uuid        NOT NULL REFERENCES tenants (id),
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    url              text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
    events           text[]      NOT NULL CHECK (cardinality(events) > 0),
    secret_sealed    bytea       NOT NULL,
    secret_hint      text        NOT NULL,
    active           boolean     NOT NULL DEFAULT true,
    -- Set when the webhook is switched off: automatically (all attempts for an event failed,
    -- or 410 Gone) or through the API. Cleared when it is switched on again.
    disabled_at      timestamptz,
    disabled_reason  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX webhooks_tenant_created ON webhooks (tenant_id, created_at, id);

-- One row per event per subscription: the unit an operator lists and redelivers. The unique key
-- makes the relay's fan-out idempotent (a redelivered outbox event finds its rows).
CREATE TABLE webhook_deliveries (
    tenant_id       uuid        NOT NULL,
    id              uuid        NOT NULL DEFAULT gen_random_uuid(),
    webhook_id      uuid        NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    -- pending: attempt 1 in flight (claimed until locked_until); retrying: an attempt failed and
    -- more are scheduled; delivered: a receiver answered 2xx; failed: no more attempts.
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'delivered', 'failed')),
    locked_until    timestamptz,
    -- retrying only: whether the retry workflow has been started (the relay's hand-over is done).
    retry_scheduled boolean     NOT NULL DEFAULT false,
    attempts        integer     NOT NULL DEFAULT 0,
    last_attempt_at timestamptz,
    next_attempt_at timestamptz,
    last_status_code integer,
    last_error      text,
    -- The exact envelope for events that are not in the outbox (webhook.test); NULL otherwise.
    payload         bytea,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, webhook_id, event_id),
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (tenant_id, webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (tenant_id, event_id);

-- Every attempt, one row each: what was sent when and what came back.
CREATE TABLE webhook_delivery_attempts (
    tenant_id        uuid             NOT NULL,
    delivery_id      uuid             NOT NULL,
    attempt          integer          NOT NULL CHECK (attempt > 0),
    trigger          text             NOT NULL CHECK (trigger IN ('relay', 'retry', 'redeliver', 'test')),
    outcome          text             NOT NULL CHECK (outcome IN ('delivered', 'gone', 'failed')),
    started_at       timestamptz      NOT NULL,
    latency_ms       double precision NOT NULL,
    status_code      integer,
    error            text,
    response_snippet text             NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, delivery_id, attempt),
    FOREIGN KEY (tenant_id, delivery_id) REFERENCES webhook_deliveries (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE webhooks ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhooks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhooks USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_deliveries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_deliveries USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE webhook_delivery_attempts ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_delivery_attempts FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_delivery_attempts USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE webhook_delivery_attempts, webhook_deliveries, webhooks;
