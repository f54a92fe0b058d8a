package outbox_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
)

// A claim reads the tenants' oldest pending events up to its batch, not every event they ever
// had nor every pending one, whatever the statistics said when its plan was made. Statistics
// taken while a backlog was pending made the plan read each tenant's events through the full
// (tenant, seq) index and filter out the published ones, or read and sort all of a tenant's
// pending events by a bitmap scan: every claim cost as much as the tenant's whole history.
func TestClaimReadsOnlyPendingEvents(t *testing.T) {
	const tenants, history = 8, 500 // events a tenant
	for _, c := range []struct {
		name, mode string
		published  bool // the history was published after the statistics were taken
	}{
		{"published history", "auto", true},
		{"published history, generic plan", "force_generic_plan", true},
		{"pending backlog", "auto", false},
		{"pending backlog, generic plan", "force_generic_plan", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			pool := dbtest.NewPool(t)
			tenant := dbtest.NewTenant(t, pool, "starter")

			// The tenants' history was pending when the statistics were taken; then it was
			// published, or it is a backlog claimed a batch at a time.
			writeEvents(t, pool, tenant, history)
			for range tenants - 1 {
				writeEvents(t, pool, dbtest.NewTenant(t, pool, "starter"), history)
			}
			if _, err := pool.Exec(ctx, "ANALYZE outbox_events"); err != nil {
				t.Fatal(err)
			}
			if c.published {
				if err := db.InSystem(ctx, pool, func(tx pgx.Tx) error {
					_, err := tx.Exec(ctx, "UPDATE outbox_events SET published_at = now()")
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			// The claims on one connection of their own, whose reads are counted.
			one := dbtest.OneConnection(t, pool, map[string]string{"plan_cache_mode": c.mode})
			rowsRead := func() int64 { return dbtest.RowsRead(t, one, "outbox_events") }

			// The relay's claim (its statement and settings) on that connection; a batch of 2 takes
			// the two new events of a published history, or the next two of the backlog.
			relay := &outbox.Relay{Pool: one, Batch: 2, Log: quiet}
			claim := func() {
				t.Helper()
				if c.published {
					writeEvents(t, pool, tenant, 2)
				}
				if n, err := relay.ClaimDeliveries(ctx); err != nil || n != 2 {
					t.Fatalf("a claim took %d events (%v), want 2", n, err)
				}
			}

			// Past the five custom plans of PostgreSQL's plan cache.
			for range 6 {
				claim()
			}
			const claims = 4
			before := rowsRead()
			for range claims {
				claim()
			}
			perClaim := float64(rowsRead()-before) / claims
			// The pending events walked to the batch (the earlier ones, leased, first) and their locking.
			if perClaim > 100 {
				t.Errorf("a claim of 2 read %.0f event rows of %d tenants with %d events each: the plan reads more than the oldest pending ones", perClaim, tenants, history)
			}
		})
	}
}
