package outbox_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

// The statements that take events by seq (a publish, a batch's expansion) read those events, not
// every pending one, whatever the statistics said when their plans were made. Statistics taken
// while nothing was pending make the pending indexes look empty; a backlog of one tenant then
// made every publish of every tenant walk that tenant's pending events (3 s a publish beside the
// bench's 100,000-event backlog).
func TestBySeqReadsOnlyItsEvents(t *testing.T) {
	const backlog, warmup, runs = 3000, 6, 4 // warm-up: past the five custom plans of the plan cache
	for _, c := range []struct {
		name string
		rows int64 // event rows one run reads: its events, found, and each updated
		// done is what none of the tenant's events may match once every run ran.
		done string
		// prepare writes the tenant's events for one run and returns that run.
		prepare func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID) func(one *pgxpool.Pool) error
	}{
		{"publish", 2 * 2, "published_at IS NULL", func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID) func(one *pgxpool.Pool) error {
			seqs := seqsOf(t, pool, tenant, "id = ANY ($1)", writeEvents(t, pool, tenant, 2))
			return func(one *pgxpool.Pool) error {
				return (&outbox.Relay{Pool: one, Log: quiet}).Publish(context.Background(), seqs)
			}
		}},
		{"batch expansion", 2, "published_at IS NULL AND type = 'outbox.batch'", func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID) func(one *pgxpool.Pool) error {
			writeBatch(t, pool, tenant, 2)
			batches := seqsOf(t, pool, tenant, "type = $1", outbox.Batch)
			seq := batches[len(batches)-1] // the one just written
			return func(one *pgxpool.Pool) error {
				n, err := outbox.ExpandBatch(context.Background(), one, seq, []string{"webhooks"}, true)
				if err == nil && n != 2 {
					err = fmt.Errorf("the expansion wrote %d events, want 2", n)
				}
				return err
			}
		}},
	} {
		for _, mode := range []string{"auto", "force_generic_plan"} {
			t.Run(c.name+", "+mode, func(t *testing.T) {
				ctx := context.Background()
				pool := dbtest.NewPool(t)
				busy, other := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")

				// A published history, analyzed: nothing pending as far as the planner knows.
				// Then a backlog of one tenant, not analyzed yet.
				writeEvents(t, pool, busy, 500)
				if err := db.InSystem(ctx, pool, func(tx pgx.Tx) error {
					_, err := tx.Exec(ctx, "UPDATE outbox_events SET published_at = now()")
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if _, err := pool.Exec(ctx, "ANALYZE outbox_events"); err != nil {
					t.Fatal(err)
				}
				writeEvents(t, pool, busy, backlog)
				var todo []func(*pgxpool.Pool) error
				for range warmup + runs {
					todo = append(todo, c.prepare(t, pool, other))
				}

				// Only the statements under test run on one, from here on.
				one := dbtest.OneConnection(t, pool, map[string]string{"plan_cache_mode": mode})
				for _, run := range todo[:warmup] {
					if err := run(one); err != nil {
						t.Fatal(err)
					}
				}
				before := dbtest.RowsRead(t, one, "outbox_events")
				for _, run := range todo[warmup:] {
					if err := run(one); err != nil {
						t.Fatal(err)
					}
				}
				if read := dbtest.RowsRead(t, one, "outbox_events") - before; read > runs*c.rows {
					t.Errorf("%d runs read %d event rows beside another tenant's backlog of %d, want at most %d: the plan walks the pending events", runs, read, backlog, runs*c.rows)
				}
				// Each did its work: the events, or the batches, published.
				if n := len(seqsOf(t, pool, other, c.done)); n != 0 {
					t.Errorf("%d of the tenant's events match %q after the runs, want none", n, c.done)
				}
			})
		}
	}
}

// seqsOf is the seqs of the tenant's events that match where (with args), in order.
func seqsOf(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, where string, args ...any) []int64 {
	t.Helper()
	var seqs []int64
	if err := db.InTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), "SELECT seq FROM outbox_events WHERE "+where+" ORDER BY seq", args...)
		if err != nil {
			return err
		}
		seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return seqs
}
