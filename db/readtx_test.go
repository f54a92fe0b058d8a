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

// Ride sends its step with a read's next round trip, in the same implicit
// transaction behind the tenant setting; settle runs what follows once. A
// step no round trip took runs alone when settled, and at the latest before
// the read begins a real transaction, whose BEGIN it does not join; any other
// transaction runs the step at once.
func TestRide(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := db.WithActor(context.Background(), "alice", "req-1")
	tenant := uuid.New()

	type ride struct {
		txid    int64
		tenant  string
		thens   int
		stepErr error
		settle  func() error
	}
	queue := func(tx pgx.Tx, answer error) *ride {
		r := &ride{}
		r.settle = db.Ride(ctx, tx, func(q dbsqlc.DBTX) error {
			return q.QueryRow(ctx, "SELECT txid_current(), current_setting('app.tenant_id')").Scan(&r.txid, &r.tenant)
		}, func(err error) error {
			r.thens++
			r.stepErr = err
			return answer
		})
		return r
	}

	// With the next statement: one implicit transaction, the step's result read first.
	tx := db.BeginTenantReads(ctx, pool, tenant)
	r := queue(tx, nil)
	if r.txid != 0 || r.thens != 0 {
		t.Fatalf("the step ran before any round trip: %+v", r)
	}
	var txid int64
	if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&txid); err != nil {
		t.Fatal(err)
	}
	if r.txid != txid || r.tenant != tenant.String() {
		t.Fatalf("rider in transaction %d (tenant %q), the statement in %d: want the same, behind the tenant setting", r.txid, r.tenant, txid)
	}
	if err := r.settle(); err != nil || r.settle() != nil || r.thens != 1 || r.stepErr != nil {
		t.Fatalf("settle: %v, then ran %d times on %v", err, r.thens, r.stepErr)
	}
	if second := scopedStatement(ctx, t, tx, tenant, "alice"); second == txid {
		t.Fatal("the rider went with a second statement too")
	}
	_ = tx.Rollback(ctx)

	// No statement sent: settle runs the step alone, and returns then's answer.
	refused := errors.New("refused")
	tx = db.BeginTenantReads(ctx, pool, tenant)
	r = queue(tx, refused)
	if err := r.settle(); !errors.Is(err, refused) || r.txid == 0 || r.tenant != tenant.String() || r.thens != 1 {
		t.Fatalf("settled alone: %v, %+v", err, r)
	}
	_ = tx.Rollback(ctx)

	// Pin settles first, outside the real transaction, and fails with then's answer.
	tx = db.BeginTenantReads(ctx, pool, tenant)
	r = queue(tx, nil)
	if err := db.Pin(ctx, tx); err != nil || r.thens != 1 {
		t.Fatalf("Pin: %v, then ran %d times", err, r.thens)
	}
	if pinned := scopedStatement(ctx, t, tx, tenant, "alice"); pinned == r.txid {
		t.Fatal("the rider joined the real transaction")
	}
	_ = tx.Rollback(ctx)
	tx = db.BeginTenantReads(ctx, pool, tenant)
	r = queue(tx, refused)
	if err := db.Pin(ctx, tx); !errors.Is(err, refused) || !errors.Is(r.settle(), refused) || r.thens != 1 {
		t.Fatalf("Pin with a refusing rider: %v, then ran %d times", err, r.thens)
	}
	_ = tx.Rollback(ctx)

	// A write's transaction runs the step at once.
	wtx := db.BeginTenantDeferred(ctx, pool, tenant)
	r = queue(wtx, nil)
	if r.txid == 0 || r.thens != 0 {
		t.Fatalf("a write's rider did not run at once: %+v", r)
	}
	if own := scopedStatement(ctx, t, wtx, tenant, "alice"); own != r.txid {
		t.Fatalf("a write's rider ran in transaction %d, its statements in %d", r.txid, own)
	}
	if err := r.settle(); err != nil || r.thens != 1 {
		t.Fatalf("a write's settle: %v, %d", err, r.thens)
	}
	_ = wtx.Rollback(ctx)
}
