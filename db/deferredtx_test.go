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

// BeginTenantDeferred's first statement runs inside the transaction its BEGIN
// opens, scoped to the tenant with the context's actor, and later statements in
// the same transaction; a rollback undoes them; a transaction with no statement
// takes no connection; an error in the first statement leaves a transaction
// that rolls back and returns its connection.
func TestBeginTenantDeferred(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := db.WithActor(context.Background(), "alice", "req-1")
	tenant := uuid.New()

	tx := db.BeginTenantDeferred(ctx, pool, tenant)
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections taken before the first statement", n)
	}
	first := scopedStatement(ctx, t, tx, tenant, "alice")
	var second int64
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE deferred_probe (x int) ON COMMIT DROP"); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&second); err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("two transactions: %d then %d", first, second)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still taken after the rollback", n)
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('deferred_probe') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Fatalf("the rollback did not undo the first transaction's work: %v %v", exists, err)
	}

	idle := db.BeginTenantDeferred(ctx, pool, tenant)
	if err := idle.Commit(ctx); err != nil {
		t.Fatalf("commit of a transaction with no statement: %v", err)
	}
	if err := idle.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) {
		t.Fatalf("rollback after commit: %v", err)
	}

	failed := db.BeginTenantDeferred(ctx, pool, tenant)
	if _, err := failed.Exec(ctx, "SELECT 1/0"); err == nil || errors.Is(err, db.ErrUnavailable) {
		t.Fatalf("the first statement's error: %v", err)
	}
	if err := failed.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	many := db.BeginTenantDeferred(ctx, pool, tenant)
	defer func() { _ = many.Rollback(ctx) }()
	rows, err := many.Query(ctx, "SELECT generate_series(1, 3)")
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

// scopedStatement runs a statement in tx, checks that it saw the tenant and the
// actor set, and returns the id of the transaction it ran in.
func scopedStatement(ctx context.Context, t *testing.T, tx pgx.Tx, tenant uuid.UUID, actor string) int64 {
	t.Helper()
	var gotTenant, gotActor string
	var txid int64
	if err := tx.QueryRow(ctx, "SELECT current_setting('app.tenant_id'), current_setting('app.actor'), txid_current()").Scan(&gotTenant, &gotActor, &txid); err != nil {
		t.Fatal(err)
	}
	if gotTenant != tenant.String() || gotActor != actor {
		t.Fatalf("statement: tenant %q actor %q, want %s and %q", gotTenant, gotActor, tenant, actor)
	}
	return txid
}
