package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Batcher is what Pipeline sends its batch through: a transaction (pgx.Tx,
// the request's deferred one) or a connection.
type Batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Step is one statement of a Pipeline: a call of a dbsqlc query (or of a
// helper that runs exactly one, such as settings.Load) on q, keeping its
// results in the caller's variables. It runs twice: first to record its
// statement, then on the statement's result.
type Step func(q dbsqlc.DBTX) error

// errRecorded stops a step's first run once its statement is recorded.
var errRecorded = errors.New("db: statement recorded for a pipeline")

// Pipeline runs steps, independent statements each (none needs another's
// result), in ONE round trip: their statements go to the server as one
// pipelined batch in tx, then each step reads its own result, in order.
// Each step keeps the code path of its statement run alone (the same dbsqlc
// call and its handling of the result); only the round trips differ. The
// error is the first step's in order that failed; a step that fails before
// running its statement (a malformed id) fails the pipeline before anything
// is sent.
func Pipeline(ctx context.Context, tx Batcher, steps ...Step) error {
	b := &pgx.Batch{}
	for _, step := range steps {
		sql, args, err := record(step)
		if err != nil {
			return err
		}
		b.Queue(sql, args...)
	}
	br := tx.SendBatch(ctx, b)
	var first error
	for i, step := range steps {
		r := &replay{br: br, sql: b.QueuedQueries[i].SQL}
		err := step(r)
		if !r.used { // cannot be, as the step is the same call: keep the next steps on their own results
			_, _ = br.Exec()
			err = fmt.Errorf("db.Pipeline: step %d did not read its result", i)
		}
		if first == nil && err != nil {
			first = err
		}
	}
	if err := br.Close(); first == nil {
		first = err
	}
	return first
}

// record runs step to learn its one statement, sending nothing. The error is
// the step's own when it fails before its statement (a malformed id).
func record(step Step) (sql string, args []any, err error) {
	r := &recorder{}
	err = step(r)
	switch {
	case r.n == 0 && err != nil && !errors.Is(err, errRecorded):
		return "", nil, err
	case r.n != 1:
		return "", nil, fmt.Errorf("db: a step ran %d statements; a step runs exactly one", r.n)
	}
	return r.sql, r.args, nil
}

// recorder is a step's first run: it keeps the statement and runs none.
type recorder struct {
	n    int
	sql  string
	args []any
}

func (r *recorder) record(sql string, args []any) {
	r.n++
	r.sql, r.args = sql, args
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.record(sql, args)
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.record(sql, args)
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.record(sql, args)
	return errRow{errRecorded}
}

// replay is a step's second run: its statement's result from the batch.
type replay struct {
	br   pgx.BatchResults
	sql  string
	used bool
}

// next checks that the step runs the statement it recorded, once.
func (r *replay) next(sql string) error {
	if r.used || sql != r.sql {
		return errors.New("db.Pipeline: a step ran another statement than it recorded")
	}
	r.used = true
	return nil
}

func (r *replay) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	if err := r.next(sql); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.br.Exec()
}

func (r *replay) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	if err := r.next(sql); err != nil {
		return nil, err
	}
	return r.br.Query()
}

func (r *replay) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := r.Query(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return firstRow{rows}
}
