package db

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Setting is a server setting for one statement, for a statement whose plan must not depend
// on the statistics of the moment (see the outbox claim and PlanPerCall). Name and Value are
// constants of the code, never input.
type Setting struct{ Name, Value string }

func quote(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

func (s Setting) sql() string {
	return "set_config(" + quote(s.Name) + ", " + quote(s.Value) + ", true)"
}

// saved names the transaction-local placeholder that keeps the setting's value from before.
func (s Setting) saved() string { return quote("app.saved_" + s.Name) }

// PlanPerCall plans a statement for its parameters on every call. A statement whose sort
// or filters are parameters (the lists' ORDER BY CASE) has a generic plan that cannot
// use an index's order and costs a tenant at the average tenant's rows; a pooled
// connection that once chose that plan (after five calls under statistics that made it
// look cheap) kept it, and paid twice the server's time per call.
var PlanPerCall = []Setting{{Name: "plan_cache_mode", Value: "force_custom_plan"}}

// WithSettings runs each statement sent through it with settings for that statement
// alone, in the same round trip: the settings (keeping the values they replace), the
// statement, and the values put back, so a transaction's later statements run as before.
// tx is any transaction, a read's (BeginTenantReads) included: there the three join its
// batch behind the tenant setting.
func WithSettings(tx pgx.Tx, settings ...Setting) dbsqlc.DBTX {
	set := make([]string, 0, 2*len(settings))
	restore := make([]string, 0, len(settings))
	for _, s := range settings {
		set = append(set, "set_config("+s.saved()+", current_setting("+quote(s.Name)+"), true)", s.sql())
		restore = append(restore, "set_config("+quote(s.Name)+", current_setting("+s.saved()+"), true)")
	}
	return withSettings{tx: tx, set: "SELECT " + strings.Join(set, ", "), restore: "SELECT " + strings.Join(restore, ", ")}
}

type withSettings struct {
	tx           pgx.Tx
	set, restore string
}

// send queues the settings, the statement and the restore; the results start at the statement's.
func (w withSettings) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(w.set)
	b.Queue(sql, args...)
	b.Queue(w.restore)
	return afterPrologue(w.tx.SendBatch(ctx, b), 1)
}

func (w withSettings) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return execResult(w.send(ctx, sql, args))
}

func (w withSettings) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return queryResult(w.send(ctx, sql, args))
}

func (w withSettings) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return rowResult(w.Query(ctx, sql, args...))
}
