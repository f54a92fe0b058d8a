package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db/dbsqlc"
)

// OneTrip is a dbsqlc.DBTX for single-statement work scoped to a tenant, as
// InTenant scopes a transaction, in ONE round trip: each call pipelines the
// tenant setting and its statement in a batch, which PostgreSQL runs as one
// implicit transaction (BEGIN, set tenant, statement, COMMIT would be four).
// Use it where a statement stands alone and round trips dominate (the webhook
// relay's bookkeeping). With asyncCommit the commit does not wait for the WAL
// flush: only for work that is safe to redo after a database crash. A database
// it cannot reach gives ErrUnavailable, as the transactions do.
func OneTrip(pool *pgxpool.Pool, tenantID uuid.UUID, asyncCommit bool) dbsqlc.DBTX {
	return behind(oneTrip{pool: pool, tenantID: tenantID, asyncCommit: asyncCommit}.first)
}

// OneTripSystem is OneTrip in InSystem's scope (the outbox relay's own
// bookkeeping of an event it handled), in one round trip instead of four.
// Settings apply to its statement alone (transaction-local, like the scope).
func OneTripSystem(pool *pgxpool.Pool, asyncCommit bool, settings ...Settings) dbsqlc.DBTX {
	return behind(oneTrip{pool: pool, system: true, asyncCommit: asyncCommit, settings: settings}.first)
}

type oneTrip struct {
	pool        *pgxpool.Pool
	tenantID    uuid.UUID
	system      bool // InSystem's scope instead of a tenant
	asyncCommit bool
	settings    []Settings
}

// asyncCommitSQL lets the implicit transaction commit without waiting for the WAL flush.
const asyncCommitSQL = "set_config('synchronous_commit', 'off', true)"

// send queues the prologue and the statement; prologue is how many results precede the
// statement's. The prologue is one statement: the scope's settings and, with asyncCommit, the
// commit's (each statement of the batch costs the server a bind, a portal and a snapshot).
func (o oneTrip) send(ctx context.Context, sql string, args []any) (br pgx.BatchResults, prologue int) {
	b := &pgx.Batch{}
	var setSQL string
	var setArgs []any
	if o.system {
		setSQL = systemScopeSQL
	} else {
		setSQL, setArgs = setTenant(ctx, o.tenantID)
	}
	if o.asyncCommit {
		setSQL += ", " + asyncCommitSQL
	}
	for _, st := range o.settings {
		setSQL += ", " + st.assign
	}
	b.Queue(setSQL, setArgs...)
	b.Queue(sql, args...)
	return o.pool.SendBatch(ctx, b), b.Len() - 1
}

// skip reads the prologue's results.
func skip(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// afterPrologue reads the n results of br's prologue. On a failure it closes
// br and returns the error: ErrUnavailable unless the server answered it.
func afterPrologue(br pgx.BatchResults, n int) (pgx.BatchResults, error) {
	if err := skip(br, n); err != nil {
		_ = br.Close()
		if _, ok := errors.AsType[*pgconn.PgError](err); ok || errors.Is(err, ErrUnavailable) {
			return nil, err // the server answered (it is there), or a transaction below said so
		}
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return br, nil
}

// first sends sql after the prologue and reads the prologue's results.
func (o oneTrip) first(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	return afterPrologue(o.send(ctx, sql, args))
}

// behind sends a statement in a batch behind statements of its own (a prologue) and returns
// the batch's results from the statement's on, the prologue's read; its Exec, Query and
// QueryRow read the statement's result as pgx's do. It is the one reading of such a batch
// for every sender (OneTrip, WithSettings, the deferred and the read transactions).
type behind func(ctx context.Context, sql string, args []any) (pgx.BatchResults, error)

func (send behind) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br, err := send(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer br.Close()
	return br.Exec()
}

func (send behind) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br, err := send(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (send behind) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := send.Query(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return firstRow{rows}
}

// batchRows closes the batch with the rows.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// firstRow scans the first row like pgx's QueryRow (pgx.ErrNoRows when none).
type firstRow struct{ rows pgx.Rows }

func (r firstRow) Scan(dest ...any) error {
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
