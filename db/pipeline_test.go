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

// Pipeline runs its steps' statements in the transaction (after the deferred
// prologue), each step reading its own result in order: a row, rows, none
// (pgx.ErrNoRows, the first error); a step that fails before its statement
// sends nothing; one that runs two statements is refused.
func TestPipeline(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := uuid.New()
	tx := db.BeginTenantDeferred(ctx, pool, tenant)
	defer func() { _ = tx.Rollback(ctx) }()
	var txid int64
	if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&txid); err != nil {
		t.Fatal(err)
	}

	var got string
	var inTx int64
	var list []int32
	err := db.Pipeline(ctx, tx,
		func(q dbsqlc.DBTX) error {
			return q.QueryRow(ctx, "SELECT current_setting('app.tenant_id'), txid_current()").Scan(&got, &inTx)
		},
		func(q dbsqlc.DBTX) error {
			rows, err := q.Query(ctx, "SELECT g::int4 FROM generate_series(1, $1::int) g", 3)
			if err != nil {
				return err
			}
			list, err = pgx.CollectRows(rows, pgx.RowTo[int32])
			return err
		},
		func(q dbsqlc.DBTX) error {
			_, err := q.Exec(ctx, "CREATE TEMP TABLE pipeline_probe (x int) ON COMMIT DROP")
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	if got != tenant.String() || inTx != txid || len(list) != 3 || list[2] != 3 {
		t.Fatalf("tenant %q txid %d (want %d), rows %v", got, inTx, txid, list)
	}

	var after int
	err = db.Pipeline(ctx, tx,
		func(q dbsqlc.DBTX) error { return q.QueryRow(ctx, "SELECT 1 WHERE false").Scan(new(int)) },
		func(q dbsqlc.DBTX) error {
			return q.QueryRow(ctx, "SELECT count(*)::int FROM pipeline_probe").Scan(&after)
		})
	if !errors.Is(err, pgx.ErrNoRows) || after != 0 {
		t.Fatalf("no row: %v, then %d", err, after)
	}

	early := errors.New("malformed id")
	err = db.Pipeline(ctx, tx,
		func(q dbsqlc.DBTX) error { _, err := q.Exec(ctx, "SELECT 1"); return err },
		func(dbsqlc.DBTX) error { return early })
	if !errors.Is(err, early) {
		t.Fatalf("a step failing before its statement: %v", err)
	}
	err = db.Pipeline(ctx, tx, func(q dbsqlc.DBTX) error {
		_, _ = q.Exec(ctx, "SELECT 1")
		_, err := q.Exec(ctx, "SELECT 2")
		return err
	})
	if err == nil {
		t.Fatal("a step of two statements was run")
	}
	// The transaction is still usable after the refusals.
	if err := tx.QueryRow(ctx, "SELECT count(*)::int FROM pipeline_probe").Scan(&after); err != nil {
		t.Fatal(err)
	}
}
