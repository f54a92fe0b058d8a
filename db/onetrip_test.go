package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// OneTrip's statement runs in the same (implicit) transaction as the tenant
// setting, with synchronous_commit off for it only, and nothing leaks to the
// connection afterwards.
func TestOneTripScopesOneStatement(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := uuid.New()
	o := db.OneTrip(pool, tenant, true)
	var got, sync string
	if err := o.QueryRow(ctx, "SELECT current_setting('app.tenant_id'), current_setting('synchronous_commit')").Scan(&got, &sync); err != nil {
		t.Fatal(err)
	}
	if got != tenant.String() || sync != "off" {
		t.Fatalf("inside: tenant %q synchronous_commit %q", got, sync)
	}
	for range 3 { // whichever pooled connection comes next
		if err := pool.QueryRow(ctx, "SELECT coalesce(current_setting('app.tenant_id', true), ''), current_setting('synchronous_commit')").Scan(&got, &sync); err != nil {
			t.Fatal(err)
		}
		if got != "" || sync != "on" {
			t.Fatalf("leaked to the connection: tenant %q synchronous_commit %q", got, sync)
		}
	}
	if err := o.QueryRow(ctx, "SELECT 1 WHERE false").Scan(new(int)); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("no row: %v", err)
	}
	if _, err := o.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Error("an error was lost")
	}
	rows, err := o.Query(ctx, "SELECT generate_series(1, 3)")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 3 || rows.Err() != nil {
		t.Errorf("rows %d %v", n, rows.Err())
	}
}
