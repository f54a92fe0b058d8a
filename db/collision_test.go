package db_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// A real deadlock (two transactions locking two rows in opposite orders) is
// what IsWriteCollision recognises; the transaction PostgreSQL keeps commits.
func TestIsWriteCollisionOnARealDeadlock(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO fx_rates (tenant_id, currency, period, rate) VALUES ($1, 'EUR', '2026-01-01', 1), ($1, 'GBP', '2026-01-01', 1)", tenant)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var firstLocked sync.WaitGroup
	firstLocked.Add(2)
	errs := make([]error, 2)
	var done sync.WaitGroup
	for i, order := range [][2]string{{"EUR", "GBP"}, {"GBP", "EUR"}} {
		done.Add(1)
		go func() {
			defer done.Done()
			errs[i] = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "UPDATE fx_rates SET rate = rate + 1 WHERE currency = $1", order[0]); err != nil {
					return err
				}
				firstLocked.Done()
				firstLocked.Wait()
				_, err := tx.Exec(ctx, "UPDATE fx_rates SET rate = rate + 1 WHERE currency = $1", order[1])
				return err
			})
		}()
	}
	done.Wait()
	collided := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case db.IsWriteCollision(err):
			collided++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if collided != 1 {
		t.Fatalf("want exactly one transaction aborted as a collision: %v", errs)
	}
	if db.IsWriteCollision(errors.New("40P01")) || db.IsWriteCollision(nil) {
		t.Error("only PostgreSQL's own collision errors count")
	}
}
