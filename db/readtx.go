package db

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db/dbsqlc"
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
	rider   *rider // a statement waiting to go with the next round trip (Ride)
}

// Ride queues step, one statement whose result nothing needs before tx's
// next statement does, to go with tx's next round trip behind the tenant
// setting, when tx is a read's (BeginTenantReads) that runs implicit
// transactions: the statement costs no round trip of its own. The step reads
// its result when that round trip returns, before the statements behind it.
//
// settle makes sure the step ran (alone, if no round trip took it), then runs
// then on the step's error, once, and returns its answer; then may send
// statements of its own. A read settles before it begins a real transaction
// (Pin), so that then's statements do not depend on how that one ends. Any
// other tx runs the step at once.
func Ride(ctx context.Context, tx pgx.Tx, step Step, then func(stepErr error) error) (settle func() error) {
	rd := &rider{step: step, then: then}
	if r, ok := tx.(*readTx); ok && r.tx == nil && !r.ended && r.rider == nil {
		var err error
		if rd.sql, rd.args, err = record(step); err == nil {
			r.rider = rd
			return func() error {
				if r.rider == rd {
					r.rider = nil // no round trip took it: it runs alone
				}
				return rd.settle(tx)
			}
		}
	}
	// At once (a step that fails before its statement fails the same way again, sending nothing).
	rd.stepErr, rd.ran = step(tx), true
	return func() error { return rd.settle(tx) }
}

// rider is Ride's statement and what follows it.
type rider struct {
	sql     string
	args    []any
	step    Step
	then    func(error) error
	ran     bool // the step read its result
	stepErr error
	settled bool
	answer  error // then's
}

// settle runs the step on q unless it ran, then then, once.
func (rd *rider) settle(q dbsqlc.DBTX) error {
	if !rd.ran {
		rd.stepErr, rd.ran = rd.step(q), true
	}
	if !rd.settled {
		rd.answer, rd.settled = rd.then(rd.stepErr), true
	}
	return rd.answer
}

// begun turns r into a real transaction (once) and returns it: a deferred one,
// whose BEGIN goes with its first statement.
func (r *readTx) begun(ctx context.Context) (pgx.Tx, error) {
	if r.ended {
		return nil, pgx.ErrTxClosed
	}
	if rd := r.rider; rd != nil {
		r.rider = nil
		if err := rd.settle(r); err != nil {
			return nil, err
		}
	}
	if r.tx == nil {
		r.tx = &deferredTx{pool: r.pool, set: r.set, setArgs: r.setArgs}
	}
	return r.tx, nil
}

// withSet is a batch that starts with the tenant setting and the rider, if one waits.
func (r *readTx) withSet() *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(r.set, r.setArgs...)
	if r.rider != nil {
		b.Queue(r.rider.sql, r.rider.args...)
	}
	return b
}

// send runs b (withSet's, then the statements) as one implicit transaction;
// the returned results start after the setting and the rider, whose step has
// read its own.
func (r *readTx) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	if r.ended {
		return nil, pgx.ErrTxClosed
	}
	br, err := afterPrologue(r.pool.SendBatch(ctx, b), 1)
	if rd := r.rider; rd != nil {
		r.rider = nil
		if err != nil {
			rd.stepErr, rd.ran = err, true
			return nil, err
		}
		rp := &replay{br: br, sql: rd.sql}
		if rd.stepErr, rd.ran = rd.step(rp), true; !rp.used {
			_, _ = br.Exec() // cannot be, as the step is the same call: keep the statements behind on their own results
		}
	}
	return br, err
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
	return behind(r.one).Exec(ctx, sql, args...)
}

func (r *readTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if r.tx != nil {
		return r.tx.Query(ctx, sql, args...)
	}
	return behind(r.one).Query(ctx, sql, args...)
}

func (r *readTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if r.tx != nil {
		return r.tx.QueryRow(ctx, sql, args...)
	}
	return behind(r.one).QueryRow(ctx, sql, args...)
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
