package db_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// TestIngestionHealthIsolation proves, as the service's role, that the ingestion health's
// scope reveals only per-provider counts: ingestion_health() counts every tenant's
// integrations, a tenant's own SELECT (before and after the call, in the same transaction)
// still sees only its own rows, and the scope does not outlive the call.
func TestIngestionHealthIsolation(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	a, b := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	add := func(tenant uuid.UUID, name, state string) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO integrations (tenant_id, provider, name, config, state) VALUES ($1, 'http_feed', $2, '{}', $3)`, tenant, name, state)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	add(a, "A feed", "active")
	add(b, "B feed", "error")
	add(b, "B second", "active")

	own := func(tx pgx.Tx) int {
		t.Helper()
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM integrations").Scan(&n); err != nil {
			t.Error(err)
		}
		return n
	}
	err := db.InTenant(ctx, pool, a, func(tx pgx.Tx) error {
		if n := own(tx); n != 1 {
			t.Errorf("before: tenant A sees %d integrations, want 1", n)
		}
		var provider string
		var active, inError int64
		if err := tx.QueryRow(ctx, "SELECT provider, active, in_error FROM ingestion_health()").Scan(&provider, &active, &inError); err != nil {
			return err
		}
		if provider != "http_feed" || active != 2 || inError != 1 {
			t.Errorf("ingestion_health: %s active %d in error %d, want http_feed 2 1", provider, active, inError)
		}
		if n := own(tx); n != 1 {
			t.Errorf("after: tenant A sees %d integrations, want 1 (the scope outlived the call)", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
