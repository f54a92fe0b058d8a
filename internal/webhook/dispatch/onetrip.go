package dispatch

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// oneTrip is a dbsqlc.DBTX for the relay's single-statement bookkeeping
// (fan-out claims, attempt records): each call runs its statement as its own
// implicit transaction, scoped to the tenant like db.InTenant, in ONE round
// trip: a pipelined batch of the tenant setting and the statement, which
// PostgreSQL runs in one implicit transaction. Compared with BEGIN, set
// tenant, statement, COMMIT that is one round trip instead of four, which is
// most of the relay's cost per delivery on a small machine.
//
// The commit does not wait for the WAL flush (synchronous_commit off, for
// this transaction only). That is safe for this bookkeeping: the events
// committed synchronously with the changes that made them, and the WAL is
// flushed in order, so a PostgreSQL crash can only lose a suffix of it
// together with the later "event handled" mark; the relay then handles the
// event again and repeats the delivery with the same event id (at least once,
// as promised). A crash of the worker itself loses nothing.
type oneTrip struct {
	pool     *pgxpool.Pool
	tenantID uuid.UUID
}

const oneTripPrologue = "SELECT set_config('app.tenant_id', $1, true), set_config('synchronous_commit', 'off', true)"

func (o oneTrip) send(ctx context.Context, sql string, args []any) pgx.BatchResults {
	b := &pgx.Batch{}
	b.Queue(oneTripPrologue, o.tenantID.String())
	b.Queue(sql, args...)
	return o.pool.SendBatch(ctx, b)
}

func (o oneTrip) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br := o.send(ctx, sql, args)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return br.Exec()
}

func (o oneTrip) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br := o.send(ctx, sql, args)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (o oneTrip) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := o.Query(ctx, sql, args...)
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
