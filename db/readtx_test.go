package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// BeginTenantReads runs every statement and batch as an implicit transaction
// of its own behind the tenant setting (with the context's actor), holding no
// connection between them and sending no BEGIN or COMMIT; Pin turns it into
// one real transaction, in which a transaction-local setting holds for the
// statements after it and a rollback undoes them.
func TestBeginTenantReads(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := db.WithActor(context.Background(), "alice", "req-1")
	tenant := uuid.New()

	tx := db.BeginTenantReads(ctx, pool, tenant)
	first := scopedStatement(ctx, t, tx, tenant, "alice")
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections held between two statements", n)
	}
	if second := scopedStatement(ctx, t, tx, tenant, "alice"); first == second {
		t.Fatalf("two statements shared transaction %d: each should run as its own", first)
	}

	// A batch: the tenant setting goes in front, each statement reads its own result.
	var inBatch string
	var a, b int
	err := db.Pipeline(ctx, tx,
		func(q dbsqlc.DBTX) error {
			return q.QueryRow(ctx, "SELECT current_setting('app.tenant_id')").Scan(&inBatch)
		},
		func(q dbsqlc.DBTX) error { return q.QueryRow(ctx, "SELECT 1").Scan(&a) },
		func(q dbsqlc.DBTX) error { return q.QueryRow(ctx, "SELECT 2").Scan(&b) })
	if err != nil || inBatch != tenant.String() || a != 1 || b != 2 {
		t.Fatalf("batch: tenant %q, results %d %d, %v", inBatch, a, b, err)
	}

	// A setting for the rest of the transaction lasts only for its own statement...
	var timeout string
	if _, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', '1234', true)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, "SELECT current_setting('statement_timeout')").Scan(&timeout); err != nil || timeout == "1234ms" {
		t.Fatalf("a local setting outlived its implicit transaction: %q %v", timeout, err)
	}
	// ... until Pin makes the rest one transaction.
	if err := db.Pin(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', '1234', true)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE reads_probe (x int) ON COMMIT DROP"); err != nil {
		t.Fatal(err)
	}
	var tenantInTx string
	if err := tx.QueryRow(ctx, "SELECT current_setting('statement_timeout'), current_setting('app.tenant_id')").Scan(&timeout, &tenantInTx); err != nil ||
		timeout != "1234ms" || tenantInTx != tenant.String() {
		t.Fatalf("after Pin: statement_timeout %q, tenant %q, %v", timeout, tenantInTx, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still taken after the rollback", n)
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('reads_probe') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Fatalf("the rollback did not undo the pinned transaction's work: %v %v", exists, err)
	}

	// A read that never pinned ends once, sending nothing.
	idle := db.BeginTenantReads(ctx, pool, tenant)
	if _, err := idle.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := idle.Commit(ctx); err != nil {
		t.Fatalf("commit of a read: %v", err)
	}
	if err := idle.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) {
		t.Fatalf("rollback after commit: %v", err)
	}
	if _, err := idle.Exec(ctx, "SELECT 1"); !errors.Is(err, pgx.ErrTxClosed) {
		t.Fatalf("a statement after commit: %v", err)
	}

	// A statement's error is its own; the next statement runs.
	failed := db.BeginTenantReads(ctx, pool, tenant)
	if _, err := failed.Exec(ctx, "SELECT 1/0"); err == nil || errors.Is(err, db.ErrUnavailable) {
		t.Fatalf("the statement's error: %v", err)
	}
	if _, err := failed.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("a statement after a failed one: %v", err)
	}
	_ = failed.Rollback(ctx)
}

// Row-level security holds for a read's statements: each sees its tenant's
// rows only, as in a transaction of BeginTenant.
func TestBeginTenantReadsTenantScope(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	mine, other := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	for _, tenant := range []uuid.UUID{mine, other} {
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "scoped " + tenant.String()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	tx := db.BeginTenantReads(ctx, pool, mine)
	defer func() { _ = tx.Rollback(ctx) }()
	var n int
	var owner uuid.UUID
	if err := tx.QueryRow(ctx, "SELECT count(*), min(tenant_id::text)::uuid FROM initiatives").Scan(&n, &owner); err != nil {
		t.Fatal(err)
	}
	if n != 1 || owner != mine {
		t.Fatalf("a read saw %d initiatives (tenant %s), want its own 1", n, owner)
	}
}
