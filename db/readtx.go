package db

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BeginTenantReads is the transaction of a request that reads: each of its
// statements, or batches, runs as one implicit transaction with the tenant
// setting in front, in one round trip, on a connection taken for it alone. No
// BEGIN and no COMMIT go to the server: a read of a few short statements costs
// one round trip fewer, and holds a pooled connection only while a statement
// runs. Under READ COMMITTED every statement of a transaction reads its own
// snapshot anyway, so a read sees what it would have seen in one transaction.
//
// What needs one transaction (settings for the rest of it: Pin; savepoints,
// COPY, large objects) begins a real one, as BeginTenantDeferred's, and the
// statements from then on run in it; Commit and Rollback end it. Commit and
// Rollback of a read that never began one send nothing.
func BeginTenantReads(ctx context.Context, pool *pgxpool.Pool, tenantID uuid.UUID) pgx.Tx {
	set, args := setTenant(ctx, tenantID)
	return &readTx{pool: pool, set: set, setArgs: args}
}

// Pin makes tx one transaction from now on: the request transaction of a read
// (BeginTenantReads) begins a real one, so that a setting for the rest of the
// transaction (set_config(..., true)) holds for the statements after it. Any
// other transaction is one already.
func Pin(ctx context.Context, tx pgx.Tx) error {
	if r, ok := tx.(*readTx); ok {
		_, err := r.begun(ctx)
		return err
	}
	return nil
}

type readTx struct {
	pool    *pgxpool.Pool
	set     string // the tenant setting, as BeginTenantDeferred's
	setArgs []any
	tx      pgx.Tx // the real transaction, once one was needed
	ended   bool
}

// begun turns r into a real transaction (once) and returns it: a deferred one,
// whose BEGIN goes with its first statement.
func (r *readTx) begun(ctx context.Context) (pgx.Tx, error) {
	if r.ended {
		return nil, pgx.ErrTxClosed
	}
	if r.tx == nil {
		r.tx = &deferredTx{pool: r.pool, set: r.set, setArgs: r.setArgs}
	}
	return r.tx, nil
}

// withSet is a batch that starts with the tenant setting.
func (r *readTx) withSet() *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(r.set, r.setArgs...)
	return b
}

// send runs b (withSet's, then the statements) as one implicit transaction;
// the returned results start after the setting.
func (r *readTx) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	if r.ended {
		return nil, pgx.ErrTxClosed
	}
	return afterPrologue(r.pool.SendBatch(ctx, b), 1)
}

func (r *readTx) one(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := r.withSet()
	b.Queue(sql, args...)
	return r.send(ctx, b)
}

func (r *readTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if r.tx != nil {
		return r.tx.Exec(ctx, sql, args...)
	}
	return execResult(r.one(ctx, sql, args))
}

func (r *readTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if r.tx != nil {
		return r.tx.Query(ctx, sql, args...)
	}
	return queryResult(r.one(ctx, sql, args))
}

func (r *readTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if r.tx != nil {
		return r.tx.QueryRow(ctx, sql, args...)
	}
	return rowResult(r.Query(ctx, sql, args...))
}

func (r *readTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if r.tx != nil {
		return r.tx.SendBatch(ctx, b)
	}
	withSet := r.withSet()
	withSet.QueuedQueries = append(withSet.QueuedQueries, b.QueuedQueries...)
	br, err := r.send(ctx, withSet)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	return br
}

func (r *readTx) Commit(ctx context.Context) error {
	return r.end(func(tx pgx.Tx) error { return tx.Commit(ctx) })
}

func (r *readTx) Rollback(ctx context.Context) error {
	return r.end(func(tx pgx.Tx) error { return tx.Rollback(ctx) })
}

// end ends the real transaction if one began; a read that ran only implicit
// transactions has nothing to end (and ends once).
func (r *readTx) end(end func(pgx.Tx) error) error {
	if r.tx != nil {
		return end(r.tx)
	}
	if r.ended {
		return pgx.ErrTxClosed
	}
	r.ended = true
	return nil
}

func (r *readTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := r.begun(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(ctx)
}

func (r *readTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := r.begun(ctx)
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, table, columns, src)
}

// LargeObjects and Conn have no error to return, as deferredTx's.
func (r *readTx) LargeObjects() pgx.LargeObjects {
	tx, err := r.begun(context.Background())
	if err != nil {
		return pgx.LargeObjects{}
	}
	return tx.LargeObjects()
}

func (r *readTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	tx, err := r.begun(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Prepare(ctx, name, sql)
}

func (r *readTx) Conn() *pgx.Conn {
	tx, err := r.begun(context.Background())
	if err != nil {
		return nil
	}
	return tx.Conn()
}
