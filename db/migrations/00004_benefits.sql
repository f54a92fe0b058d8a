-- +goose Up

-- Tenant settings that every money figure depends on (one row per tenant, created on first PUT;
-- absent means the defaults below).
CREATE TABLE tenant_settings (
    tenant_id               uuid        PRIMARY KEY REFERENCES tenants (id),
    base_currency           text        NOT NULL DEFAULT 'USD' CHECK (base_currency ~ '^[A-Z]{3}$'),
    discount_rate           numeric     NOT NULL DEFAULT 0.08 CHECK (discount_rate >= 0 AND discount_rate <= 1),
    fiscal_year_start_month integer     NOT NULL DEFAULT 1 CHECK (fiscal_year_start_month BETWEEN 1 AND 12),
    updated_at              timestamptz NOT NULL DEFAULT now()
);

-- Exchange rates to the tenant's base currency: base units per 1 unit of currency, per month.
CREATE TABLE fx_rates (
    tenant_id  uuid        NOT NULL REFERENCES tenants (id),
    currency   text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    period     date        NOT NULL CHECK (extract(day FROM period) = 1),
    rate       numeric     NOT NULL CHECK (rate > 0 AND rate <> 'NaN'),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, currency, period)
);

-- Benefits: the value an initiative is expected to deliver. expected_value is per year, spread
-- evenly over the measurement periods unless plan entries replace the spread (internal/finance).
CREATE TABLE benefits (
    tenant_id             uuid        NOT NULL,
    id                    uuid        NOT NULL DEFAULT gen_random_uuid(),
    initiative_id         uuid        NOT NULL,
    name                  text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description           text        NOT NULL DEFAULT '',
    category              text        NOT NULL CHECK (category IN ('revenue_growth', 'cost_savings', 'cost_avoidance',
                                          'productivity', 'risk_reduction', 'customer_experience', 'other')),
    expected_value        numeric     NOT NULL CHECK (expected_value <> 'NaN'),
    currency              text        CHECK (currency ~ '^[A-Z]{3}$'),
    unit                  text        NOT NULL CHECK (unit IN ('currency', 'percent', 'hours', 'days', 'count', 'fte', 'score')),
    measurement_frequency text        NOT NULL CHECK (measurement_frequency IN ('monthly', 'quarterly')),
    expected_start_date   date        NOT NULL,
    expected_end_date     date,
    status                text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'achieved', 'cancelled')),
    owner_id              text        NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id),
    CHECK (expected_end_date IS NULL OR expected_end_date >= expected_start_date),
    CHECK ((unit = 'currency') = (currency IS NOT NULL))
);
-- Names are unique within an initiative regardless of case.
CREATE UNIQUE INDEX benefits_initiative_name ON benefits (tenant_id, initiative_id, lower(name));
CREATE INDEX benefits_tenant_created ON benefits (tenant_id, created_at DESC, id);

-- An explicit plan replaces the even spread: listed periods expect their value, others 0.
CREATE TABLE benefit_plan_entries (
    tenant_id  uuid    NOT NULL,
    benefit_id uuid    NOT NULL,
    period     date    NOT NULL CHECK (extract(day FROM period) = 1),
    expected   numeric NOT NULL CHECK (expected <> 'NaN'),
    PRIMARY KEY (tenant_id, benefit_id, period),
    FOREIGN KEY (tenant_id, benefit_id) REFERENCES benefits (tenant_id, id) ON DELETE CASCADE
);

-- Actuals: one value per benefit and period (a quarter's first month for quarterly benefits).
-- A second value for the same period updates the row; benefit_actual_revisions keeps the old one.
CREATE TABLE benefit_actuals (
    tenant_id     uuid        NOT NULL,
    id            uuid        NOT NULL DEFAULT gen_random_uuid(),
    benefit_id    uuid        NOT NULL,
    period        date        NOT NULL CHECK (extract(day FROM period) = 1),
    value         numeric     NOT NULL CHECK (value <> 'NaN'),
    notes         text        NOT NULL DEFAULT '',
    evidence_url  text,
    recorded_by   text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, benefit_id, period),
    FOREIGN KEY (tenant_id, benefit_id) REFERENCES benefits (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE benefit_actual_revisions (
    tenant_id    uuid        NOT NULL,
    id           bigint      GENERATED ALWAYS AS IDENTITY,
    actual_id    uuid        NOT NULL,
    old_value    numeric     NOT NULL,
    new_value    numeric     NOT NULL,
    old_notes    text        NOT NULL,
    old_evidence_url text,
    changed_by   text        NOT NULL,
    changed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, actual_id) REFERENCES benefit_actuals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX benefit_actual_revisions_actual ON benefit_actual_revisions (tenant_id, actual_id, id);

-- Costs: the investment side of every ROI figure. Charged in period, then every 1, 3 or 12
-- months through end_period (open-ended recurring costs run to the horizon asked for).
CREATE TABLE initiative_costs (
    tenant_id     uuid        NOT NULL,
    id            uuid        NOT NULL DEFAULT gen_random_uuid(),
    initiative_id uuid        NOT NULL,
    name          text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    category      text        NOT NULL CHECK (category IN ('capex', 'opex')),
    amount        numeric     NOT NULL CHECK (amount > 0 AND amount <> 'NaN'),
    currency      text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    period        date        NOT NULL CHECK (extract(day FROM period) = 1),
    recurrence    text        NOT NULL CHECK (recurrence IN ('once', 'monthly', 'quarterly', 'annual')),
    end_period    date        CHECK (extract(day FROM end_period) = 1),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, initiative_id) REFERENCES initiatives (tenant_id, id),
    CHECK (end_period IS NULL OR (recurrence <> 'once' AND end_period >= period))
);
CREATE INDEX initiative_costs_initiative ON initiative_costs (tenant_id, initiative_id, period, id);

ALTER TABLE tenant_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_settings USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE fx_rates ENABLE ROW LEVEL SECURITY;
ALTER TABLE fx_rates FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON fx_rates USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE benefits ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefits USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE benefit_plan_entries ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_plan_entries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_plan_entries USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE benefit_actuals ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_actuals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_actuals USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE benefit_actual_revisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE benefit_actual_revisions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON benefit_actual_revisions USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

ALTER TABLE initiative_costs ENABLE ROW LEVEL SECURITY;
ALTER TABLE initiative_costs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON initiative_costs USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE initiative_costs, benefit_actual_revisions, benefit_actuals, benefit_plan_entries, benefits, fx_rates, tenant_settings;
