-- +goose Up

-- Integrations keep syncing on OAuth credentials. credentials_sealed holds the write-only secrets
-- besides the access token (refresh_token, client_id, client_secret, api_token) as one sealed
-- JSON object (secretbox, associated data "integration-credentials:<tenant>:<id>");
-- token_expires_at is when the access token in token_sealed expires (NULL: unknown, refreshed
-- only when the provider refuses it). A refresh replaces both in one UPDATE, so a rotated
-- refresh token is stored before the new access token is used.
ALTER TABLE integrations
    ADD COLUMN credentials_sealed bytea,
    ADD COLUMN token_expires_at   timestamptz,
    ADD CONSTRAINT integrations_disconnected_no_credentials CHECK (state <> 'disconnected' OR credentials_sealed IS NULL);

-- A sync that spent the provider's daily request allowance ends as rate_limited (its pages stay
-- written, the watermark stays) with next_try_at, the first schedule firing the provider allows.
ALTER TABLE integration_syncs
    ADD COLUMN next_try_at timestamptz,
    DROP CONSTRAINT integration_syncs_status_check,
    ADD CONSTRAINT integration_syncs_status_check
        CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'rate_limited'));

-- The audit keeps the new secret out of its records and ignores the expiry bookkeeping.
DROP TRIGGER audit_insert ON integrations;
DROP TRIGGER audit_update ON integrations;
DROP TRIGGER audit_delete ON integrations;
CREATE TRIGGER audit_insert AFTER INSERT ON integrations REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION audit_write('integration', 'id', 'token_sealed,token_hint,credentials_sealed', 'watermark,last_sync_at,token_expires_at');
CREATE TRIGGER audit_update AFTER UPDATE ON integrations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION audit_write('integration', 'id', 'token_sealed,token_hint,credentials_sealed', 'watermark,last_sync_at,token_expires_at');
CREATE TRIGGER audit_delete AFTER DELETE ON integrations REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION audit_write('integration', 'id', 'token_sealed,token_hint,credentials_sealed', 'watermark,last_sync_at,token_expires_at');

-- +goose Down
DROP TRIGGER audit_insert ON integrations;
DROP TRIGGER audit_update ON integrations;
DROP TRIGGER audit_delete ON integrations;
CREATE TRIGGER audit_insert AFTER INSERT ON integrations REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION audit_write('integration', 'id', 'token_sealed,token_hint', 'watermark,last_sync_at');
CREATE TRIGGER audit_update AFTER UPDATE ON integrations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION audit_write('integration', 'id', 'token_sealed,token_hint', 'watermark,last_sync_at');
CREATE TRIGGER audit_delete AFTER DELETE ON integrations REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION audit_write('integration', 'id', 'token_sealed,token_hint', 'watermark,last_sync_at');
DELETE FROM integration_syncs WHERE status = 'rate_limited';
ALTER TABLE integration_syncs
    DROP CONSTRAINT integration_syncs_status_check,
    ADD CONSTRAINT integration_syncs_status_check
        CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed')),
    DROP COLUMN next_try_at;
ALTER TABLE integrations
    DROP CONSTRAINT integrations_disconnected_no_credentials,
    DROP COLUMN token_expires_at,
    DROP COLUMN credentials_sealed;
