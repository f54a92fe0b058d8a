package dispatch_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
)

// The relay's handling of an event reads only that event's deliveries, however many the tenant
// already has, also when the statistics were taken before the tenant had any (to the planner a
// new tenant looks empty). A plan that scanned the tenant's deliveries made each event cost more
// than the one before it.
func TestHandleReadsOnlyItsEventsDeliveries(t *testing.T) {
	const history, events = 3000, 7
	f := newFixture(t)
	ctx := context.Background()
	rc := newReceiver(t, 200)
	hook := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	f.webhook(rc.URL, true, outbox.InitiativeCreated)

	// Statistics with another tenant's deliveries only, then the tenant's history.
	f.other(500)
	if _, err := f.pool.Exec(ctx, "ANALYZE webhook_deliveries"); err != nil {
		t.Fatal(err)
	}
	f.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, status, attempts)
			SELECT $1, $2, gen_random_uuid(), 'initiative.created', 'delivered', 1 FROM generate_series(1, $3)`, f.tenant, hook, history)
		return err
	})

	// The dispatcher on one connection of its own, whose reads are counted.
	one := dbtest.OneConnection(t, f.pool, nil)
	f.d.Pool = one
	rowsRead := func() int64 { return dbtest.RowsRead(t, one, "webhook_deliveries") }

	handle := func(n int) {
		t.Helper()
		for range n {
			if err := f.d.Handle(ctx, f.event(outbox.InitiativeCreated, map[string]string{"name": "x"})); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first five executions of a statement on a connection are planned for their values
	// (PostgreSQL's plan cache); the foreign-key check of an attempt's insert is then a scan of
	// the tenant's deliveries too (docs/benchmarks.md, Webhooks). Measured: the executions after those.
	handle(5)
	before := rowsRead()
	handle(events)
	perEvent := float64(rowsRead()-before) / events
	if got := len(rc.Requests()); got != 2*(5+events) {
		t.Fatalf("receiver got %d deliveries, want %d", got, 2*(5+events))
	}
	// Each statement of an event's handling finds its two deliveries by the event or by their key.
	if perEvent > 30 {
		t.Errorf("handling one event read %.0f delivery rows of a tenant with %d: the plan scans the tenant's history", perEvent, history)
	}
}

// other gives another tenant a webhook with n deliveries.
func (f *fixture) other(n int) {
	f.t.Helper()
	tenant := dbtest.NewTenant(f.t, f.pool, "starter")
	if err := db.InTenant(context.Background(), f.pool, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `WITH w AS (
				INSERT INTO webhooks (tenant_id, url, events, secret_sealed, secret_hint, active)
				VALUES ($1, 'http://127.0.0.1:9/', '{initiative.created}', '\x00', '0000', true) RETURNING id)
			INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, status, attempts)
			SELECT $1, w.id, gen_random_uuid(), 'initiative.created', 'delivered', 1 FROM w, generate_series(1, $2)`, tenant, n)
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
}
