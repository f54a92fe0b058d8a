-- +goose Up

-- A run of an export or a sync can be canceled (POST /api/v1/agents/workflows/{id}/cancel, or
-- an operator in the Temporal UI): its row then says so. canceled is Temporal's word for the
-- run's state, and the row and the run use the same one. A canceled sync frees the
-- one-open-sync slot (integration_syncs_one_open covers queued and running only).
ALTER TABLE business_case_exports DROP CONSTRAINT business_case_exports_status_check,
    ADD CONSTRAINT business_case_exports_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled'));
ALTER TABLE integration_syncs DROP CONSTRAINT integration_syncs_status_check,
    ADD CONSTRAINT integration_syncs_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'rate_limited', 'canceled'));

-- +goose Down
UPDATE business_case_exports SET status = 'failed', error = coalesce(error, 'canceled') WHERE status = 'canceled';
UPDATE integration_syncs SET status = 'failed', error = coalesce(error, 'canceled') WHERE status = 'canceled';
ALTER TABLE business_case_exports DROP CONSTRAINT business_case_exports_status_check,
    ADD CONSTRAINT business_case_exports_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'failed'));
ALTER TABLE integration_syncs DROP CONSTRAINT integration_syncs_status_check,
    ADD CONSTRAINT integration_syncs_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'rate_limited'));
