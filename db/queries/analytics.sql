-- name: AnalyticsInitiativeIDs :many
-- The portfolio of the analytics: every initiative of the tenant but the archived ones.
SELECT id FROM initiatives WHERE tenant_id = @tenant_id AND status <> 'archived' ORDER BY id;
