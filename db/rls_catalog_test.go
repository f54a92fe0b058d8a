package db_test

import (
	"context"
	"testing"

	"github.com/valuecase/valuecase/db/dbtest"
)

// Every table with a tenant_id column, now and in every later migration, has
// row-level security enabled and FORCEd with the one tenant_isolation policy
// (rows of the tenant the transaction set, for reads and writes alike). A new
// table without it fails here, without anyone keeping a list.
func TestEveryTenantTableHasForcedRowSecurity(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	rows, err := pool.Query(ctx, `
		SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
		       coalesce(p.qual, ''), coalesce(p.with_check, ''),
		       (SELECT count(*) FROM pg_policies o WHERE o.schemaname = 'public' AND o.tablename = c.relname)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
		LEFT JOIN pg_policies p ON p.schemaname = 'public' AND p.tablename = c.relname AND p.policyname = 'tenant_isolation'
		WHERE c.relkind IN ('r', 'p')
		ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	const isolation = "(tenant_id = app_tenant_id())"
	var tables []string
	for rows.Next() {
		var name, qual, check string
		var enabled, forced bool
		var policies int
		if err := rows.Scan(&name, &enabled, &forced, &qual, &check, &policies); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
		if !enabled || !forced || qual != isolation || check != isolation {
			t.Errorf("%s: row security enabled=%v forced=%v, tenant_isolation USING %q WITH CHECK %q; want both %q",
				name, enabled, forced, qual, check, isolation)
		}
		// A second permissive policy would widen what the first allows. Some tables
		// have one on purpose: the outbox relay's system scope, the peer benchmark's
		// aggregate scope (read only inside peer_benchmark(), which returns
		// percentiles of at least 5 tenants; db.TestPeerBenchmarkIsolation), and the
		// ingestion health's (read only inside ingestion_health(), which returns
		// per-provider counts; db.TestIngestionHealthIsolation).
		if policies != 1 && name != "outbox_events" && name != "peer_metric_snapshots" && name != "integrations" && name != "integration_syncs" {
			t.Errorf("%s: %d policies, want only tenant_isolation", name, policies)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The catalog query itself must see the tables it guards.
	for _, want := range []string{"initiatives", "users", "webhooks", "benefits", "stakeholders", "initiative_costs"} {
		found := false
		for _, got := range tables {
			found = found || got == want
		}
		if !found {
			t.Errorf("catalog query missed %s (found %v)", want, tables)
		}
	}
	t.Logf("%d tenant tables checked: %v", len(tables), tables)
}
