package db

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BeginTenantDeferred is BeginTenant whose BEGIN and tenant setting go to the
// server with the transaction's first statement, pipelined in one batch: a
// request's transaction costs one round trip fewer (on a read of a few short
// statements the round trips are most of the API's cost). Nothing is sent, and
// no connection taken, until that first statement; a transaction that never
// runs one commits and rolls back as a no-op. A failure to begin shows as
// ErrUnavailable from the first statement.
func BeginTenantDeferred(ctx context.Context, pool *pgxpool.Pool, tenantID uuid.UUID) pgx.Tx {
	set, args := setTenant(ctx, tenantID)
	return &deferredTx{pool: pool, set: set, setArgs: args}
}

type deferredTx struct {
	pool    *pgxpool.Pool
	set     string
	setArgs []any
	tx      pgx.Tx // the transaction once begun
	ended   bool   // committed or rolled back before it began
}

// begin sends BEGIN, the tenant setting and (when sql is not "") the first
// statement in one batch. The batch stays open for the statement's result.
func (t *deferredTx) begin(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	if t.ended {
		return nil, pgx.ErrTxClosed
	}
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue(t.set, t.setArgs...)
	if sql != "" {
		b.Queue(sql, args...)
	}
	br := t.pool.SendBatch(ctx, b)
	t.tx = br.Tx()
	return afterPrologue(br, 2)
}

// started begins the transaction alone (for the calls that cannot share its batch).
func (t *deferredTx) started(ctx context.Context) (pgx.Tx, error) {
	if t.tx != nil {
		return t.tx, nil
	}
	br, err := t.begin(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	return t.tx, br.Close()
}

func (t *deferredTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.tx != nil {
		return t.tx.Exec(ctx, sql, args...)
	}
	return behind(t.begin).Exec(ctx, sql, args...)
}

func (t *deferredTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.tx != nil {
		return t.tx.Query(ctx, sql, args...)
	}
	return behind(t.begin).Query(ctx, sql, args...)
}

func (t *deferredTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.tx != nil {
		return t.tx.QueryRow(ctx, sql, args...)
	}
	return behind(t.begin).QueryRow(ctx, sql, args...)
}

func (t *deferredTx) Commit(ctx context.Context) error {
	return t.end(func() error { return t.tx.Commit(ctx) })
}

func (t *deferredTx) Rollback(ctx context.Context) error {
	return t.end(func() error { return t.tx.Rollback(ctx) })
}

// end ends the transaction with end once it has begun; one that never ran a
// statement has nothing to end (and ends once).
func (t *deferredTx) end(end func() error) error {
	if t.tx != nil {
		return end()
	}
	if t.ended {
		return pgx.ErrTxClosed
	}
	t.ended = true
	return nil
}

func (t *deferredTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.started(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(ctx)
}

func (t *deferredTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := t.started(ctx)
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, table, columns, src)
}

func (t *deferredTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	tx, err := t.started(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	return tx.SendBatch(ctx, b)
}

// LargeObjects and Conn have no error to return: a failed begin leaves a
// closed transaction (pgx.ErrTxClosed from its calls), or none after an end.
func (t *deferredTx) LargeObjects() pgx.LargeObjects {
	if _, _ = t.started(context.Background()); t.tx == nil {
		return pgx.LargeObjects{}
	}
	return t.tx.LargeObjects()
}

func (t *deferredTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	tx, err := t.started(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Prepare(ctx, name, sql)
}

func (t *deferredTx) Conn() *pgx.Conn {
	if _, _ = t.started(context.Background()); t.tx == nil {
		return nil
	}
	return t.tx.Conn()
}
