package dispatch_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
)

// The webhook tables are tenant-scoped by row-level security like every other:
// a forgotten WHERE clause returns nothing of another tenant, and no tenant set
// sees nothing at all.
func TestWebhookTablesAreTenantScoped(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	tables := []string{"webhooks", "webhook_deliveries", "webhook_delivery_attempts"}
	count := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}, table string) int {
		var n int
		if err := q.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, table := range tables {
		if n := count(f.pool, table); n != 0 {
			t.Errorf("%s: %d rows visible without a tenant", table, n)
		}
	}
	other := dbtest.NewTenant(t, f.pool, "starter")
	err := db.InTenant(context.Background(), f.pool, other, func(tx pgx.Tx) error {
		for _, table := range tables {
			if n := count(tx, table); n != 0 {
				t.Errorf("%s: another tenant sees %d rows", table, n)
			}
		}
		tag, err := tx.Exec(context.Background(), "UPDATE webhooks SET active = false WHERE id = $1", h)
		if err == nil && tag.RowsAffected() != 0 {
			t.Error("another tenant switched the webhook off")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.inTenant(func(tx pgx.Tx) error {
		for _, table := range tables {
			if n := count(tx, table); n != 1 {
				t.Errorf("%s: the owner sees %d rows, want 1", table, n)
			}
		}
		return nil
	})
	if !f.hook(h).Active {
		t.Error("the webhook was switched off")
	}
}
