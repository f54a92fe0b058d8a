-- name: SettingsGet :one
SELECT * FROM tenant_settings WHERE tenant_id = @tenant_id;

-- name: SettingsUpsert :one
INSERT INTO tenant_settings (tenant_id, base_currency, discount_rate, fiscal_year_start_month)
VALUES (@tenant_id, @base_currency, @discount_rate, @fiscal_year_start_month)
ON CONFLICT (tenant_id) DO UPDATE
SET base_currency = excluded.base_currency, discount_rate = excluded.discount_rate,
    fiscal_year_start_month = excluded.fiscal_year_start_month, updated_at = now()
RETURNING *;

-- name: FxRatesUpsert :exec
INSERT INTO fx_rates (tenant_id, currency, period, rate)
SELECT @tenant_id, unnest(@currencies::text[]), unnest(@periods::date[]), unnest(@rates::numeric[])
ON CONFLICT (tenant_id, currency, period) DO UPDATE SET rate = excluded.rate, updated_at = now();

-- name: FxRatesDeleteAll :exec
DELETE FROM fx_rates WHERE tenant_id = @tenant_id;

-- name: FxRateList :many
SELECT * FROM fx_rates
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('currency')::text IS NULL OR currency = sqlc.narg('currency')::text)
  AND (sqlc.narg('from_period')::date IS NULL OR period >= sqlc.narg('from_period')::date)
  AND (sqlc.narg('to_period')::date IS NULL OR period <= sqlc.narg('to_period')::date)
ORDER BY currency, period;

-- name: SettingsLock :exec
-- Serialises changes of a tenant's settings and FX rates, so rates quoted against one base
-- currency are never saved while another transaction switches the base (and clears them).
SELECT pg_advisory_xact_lock(hashtextextended('tenant-settings:' || (@tenant_id::uuid)::text, 0));

-- name: FxRatePage :many
SELECT sqlc.embed(fx_rates), count(*) OVER () AS total
FROM fx_rates
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('currency')::text IS NULL OR currency = sqlc.narg('currency')::text)
  AND (sqlc.narg('from_period')::date IS NULL OR period >= sqlc.narg('from_period')::date)
  AND (sqlc.narg('to_period')::date IS NULL OR period <= sqlc.narg('to_period')::date)
ORDER BY currency, period
LIMIT @page_limit OFFSET @page_offset;

-- name: FxRateCount :one
SELECT count(*)
FROM fx_rates
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('currency')::text IS NULL OR currency = sqlc.narg('currency')::text)
  AND (sqlc.narg('from_period')::date IS NULL OR period >= sqlc.narg('from_period')::date)
  AND (sqlc.narg('to_period')::date IS NULL OR period <= sqlc.narg('to_period')::date);
