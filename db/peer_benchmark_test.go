package db_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// TestPeerBenchmarkIsolation proves, as the service's role (neither superuser
// nor BYPASSRLS), that peer benchmarks never reveal another tenant's figure
// nor a group of fewer than 5 other tenants: a tenant reads only its own
// snapshot rows, however it asks; peer_benchmark() gives nothing with 4 other
// tenants and only percentiles with 5; the scope it uses does not outlive it.
//
// Golden percentiles (PostgreSQL percentile_cont, linear interpolation, done by
// hand): the other tenants' values 10, 20, 30, 40, 50: p25 at position
// (5 − 1) × 0.25 = 1 → 20, median 30, p75 40; the caller's 35 has 3 of 5 below:
// rank 60.
func TestPeerBenchmarkIsolation(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	put := func(tenant uuid.UUID, v float64) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			return db.Q.PeerSnapshotPut(ctx, tx, dbsqlc.PeerSnapshotPutParams{TenantID: tenant, Industry: "retail", Metric: "roi_percent", Value: v})
		}); err != nil {
			t.Fatal(err)
		}
	}
	others := make([]uuid.UUID, 5)
	for i := range others {
		others[i] = dbtest.NewTenant(t, pool, "starter")
	}
	me := dbtest.NewTenant(t, pool, "starter")
	for i, v := range []float64{10, 20, 30, 40} {
		put(others[i], v)
	}
	put(me, 35)

	// Errors inside a transaction are reported with Errorf (a Fatal there would leave it open).
	asMe := func(t *testing.T, fn func(tx pgx.Tx) error) {
		t.Helper()
		if err := db.InTenant(ctx, pool, me, fn); err != nil {
			t.Error(err)
		}
	}
	bench := func(tx pgx.Tx) (dbsqlc.PeerBenchmarkRow, error) {
		v := 35.0
		return db.Q.PeerBenchmark(ctx, tx, dbsqlc.PeerBenchmarkParams{Industry: "retail", Metric: "roi_percent", Value: &v})
	}
	ownRowsOnly := func(t *testing.T, tx pgx.Tx) error {
		t.Helper()
		rows, err := tx.Query(ctx, "SELECT tenant_id, value FROM peer_metric_snapshots")
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id uuid.UUID
			var v float64
			if err := rows.Scan(&id, &v); err != nil {
				return err
			}
			n++
			if id != me || v != 35 {
				t.Errorf("a direct SELECT revealed tenant %s's figure %v", id, v)
			}
		}
		if n != 1 {
			t.Errorf("own rows: %d, want 1", n)
		}
		return rows.Err()
	}

	t.Run("4 other tenants: no figures at all", func(t *testing.T) {
		asMe(t, func(tx pgx.Tx) error {
			if err := ownRowsOnly(t, tx); err != nil {
				return err
			}
			r, err := bench(tx)
			if r.Shown || r.Ranked || r.Tenants != 0 || r.P25 != 0 || r.Median != 0 || r.P75 != 0 {
				t.Errorf("with 4 peers: %+v", r)
			}
			return err
		})
	})

	put(others[4], 50)
	t.Run("5 other tenants: percentiles only, the caller left out", func(t *testing.T) {
		asMe(t, func(tx pgx.Tx) error {
			r, err := bench(tx)
			if err != nil {
				return err
			}
			if !r.Shown || r.Tenants != 5 || r.P25 != 20 || r.Median != 30 || r.P75 != 40 || !r.Ranked || r.PercentileRank != 60 {
				t.Errorf("with 5 peers: %+v", r)
			}
			// The function's scope ended with it: the table is as closed as before.
			var scope string
			if err := tx.QueryRow(ctx, "SELECT coalesce(current_setting('app.scope', true), '')").Scan(&scope); err != nil {
				return err
			}
			if scope != "" {
				t.Errorf("app.scope %q after peer_benchmark()", scope)
			}
			return ownRowsOnly(t, tx)
		})
		// Another tenant in the same industry sees 5 others too (me included), never me alone.
		if err := db.InTenant(ctx, pool, others[0], func(tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM peer_metric_snapshots WHERE tenant_id <> $1", others[0]).Scan(&n); err != nil || n != 0 {
				t.Errorf("tenant 0 read %d rows of others (%v)", n, err)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	})

	t.Run("another industry or metric is its own group", func(t *testing.T) {
		asMe(t, func(tx pgx.Tx) error {
			r, err := db.Q.PeerBenchmark(ctx, tx, dbsqlc.PeerBenchmarkParams{Industry: "banking", Metric: "roi_percent"})
			if err != nil || r.Shown {
				t.Errorf("banking: %+v %v", r, err)
			}
			return nil
		})
	})

	t.Run("no tenant set: no rows", func(t *testing.T) {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM peer_metric_snapshots").Scan(&n); err != nil || n != 0 {
			t.Errorf("outside a tenant: %d rows (%v)", n, err)
		}
	})

	t.Run("a tenant cannot write another's figure", func(t *testing.T) {
		err := db.InTenant(ctx, pool, me, func(tx pgx.Tx) error {
			return db.Q.PeerSnapshotPut(ctx, tx, dbsqlc.PeerSnapshotPutParams{TenantID: others[0], Industry: "retail", Metric: "roi_percent", Value: 1e9})
		})
		if err == nil {
			t.Error("wrote another tenant's snapshot")
		}
	})
}
