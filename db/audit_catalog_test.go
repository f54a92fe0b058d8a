package db_test

import (
	"context"
	"slices"
	"testing"

	"github.com/valuecase/valuecase/db/dbtest"
)

// notAudited are the tenant tables migration 00015 leaves out of the audit log
// on purpose (its comment says why: machinery, history tables that already are
// a log, sign-in bookkeeping, derived aggregates). Every other tenant table,
// now and in every later migration, carries the three audit triggers: a new
// table that forgets them fails here.
var notAudited = []string{
	"audit_events", "outbox_events", "webhook_deliveries", "webhook_delivery_attempts", "idempotency_keys",
	"integration_syncs", "bulk_jobs", "bulk_job_chunks", "auth_sessions", "refresh_tokens",
	"initiative_status_history", "benefit_actual_revisions", "initiative_owner_history", "initiative_reviews",
	"business_case_approval_rounds", "business_case_documents", "benefit_actual_months", "benefit_actual_stats", "benefit_actual_portfolio_months",
	"benefit_measured_expectations",
	"peer_metric_snapshots", "analytics_data_versions",
}

func TestEveryTenantTableIsAudited(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	rows, err := pool.Query(ctx, `
		SELECT c.relname,
		       array(SELECT tg.tgname::text FROM pg_trigger tg WHERE tg.tgrelid = c.oid AND tg.tgname LIKE 'audit\_%' ORDER BY 1)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
		WHERE c.relkind IN ('r', 'p')
		ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := []string{"audit_delete", "audit_insert", "audit_update"}
	audited := 0
	for rows.Next() {
		var name string
		var triggers []string
		if err := rows.Scan(&name, &triggers); err != nil {
			t.Fatal(err)
		}
		switch {
		case slices.Contains(notAudited, name) && len(triggers) > 0:
			t.Errorf("%s: listed as not audited but has %v", name, triggers)
		case !slices.Contains(notAudited, name) && !slices.Equal(triggers, want):
			t.Errorf("%s: audit triggers %v, want %v (or list it in notAudited with the reason in the migration)", name, triggers, want)
		case !slices.Contains(notAudited, name):
			audited++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if audited < 15 {
		t.Errorf("only %d audited tables found: the catalog query misses them", audited)
	}
}
