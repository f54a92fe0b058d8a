package db

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Setting is a server setting for one statement, for a statement whose plan must not depend
// on the statistics of the moment (see the outbox claim, the portfolio realisation and
// PlanPerCall). Name and Value are constants of the code, never input.
type Setting struct{ Name, Value string }

func (s Setting) sql() string {
	return "set_config(" + quoteLiteral(s.Name) + ", " + quoteLiteral(s.Value) + ", true)"
}

// saved names the transaction-local placeholder that keeps the setting's value from before.
func (s Setting) saved() string { return quoteLiteral("app.saved_" + s.Name) }

// Settings are settings for one statement with the statements that give them, written once
// (NewSettings) rather than on every call: Local just before the statement in a read's
// implicit transaction; Before and After around it in a transaction. The bench's pgbench
// scripts send the same statements, so both sides run the same SQL.
type Settings struct {
	Each          []Setting
	assign        string // the set_config calls, for a prologue of their own (OneTripSystem)
	Local         string // the settings, for the rest of the implicit transaction
	Before, After string // the settings saving the values they replace; those values back
}

// NewSettings writes the statements that give a statement each setting.
func NewSettings(each ...Setting) Settings {
	assign := make([]string, 0, len(each))
	save := make([]string, 0, 2*len(each))
	restore := make([]string, 0, len(each))
	for _, s := range each {
		assign = append(assign, s.sql())
		save = append(save, "set_config("+s.saved()+", current_setting("+quoteLiteral(s.Name)+"), true)", s.sql())
		restore = append(restore, "set_config("+quoteLiteral(s.Name)+", current_setting("+s.saved()+"), true)")
	}
	joined := strings.Join(assign, ", ")
	return Settings{Each: each, assign: joined, Local: "SELECT " + joined,
		Before: "SELECT " + strings.Join(save, ", "), After: "SELECT " + strings.Join(restore, ", ")}
}

// PlanPerCall plans a statement for its parameters on every call. A statement whose sort
// or filters are parameters (the lists' ORDER BY CASE) has a generic plan that cannot
// use an index's order and costs a tenant at the average tenant's rows; a pooled
// connection that once chose that plan (after five calls under statistics that made it
// look cheap) kept it, and paid twice the server's time per call. An analysis plans
// every statement of its transaction so, set once with its deadline
// (analytics.PrepareTransaction): all of them read the tenant's whole portfolio.
var PlanPerCall = NewSettings(Setting{Name: "plan_cache_mode", Value: "force_custom_plan"})

// WithSettings runs each statement sent through it with settings for that statement
// alone, in the same round trip. In a read's implicit transaction (BeginTenantReads) the
// settings go just before the statement (after a statement riding with it, which they must
// not touch) and end with the transaction; in a transaction they also keep the values they
// replace, which go back after the statement, so the transaction's later statements run as
// before.
func WithSettings(tx pgx.Tx, settings Settings) dbsqlc.DBTX {
	return behind(withSettings{tx: tx, settings: settings}.send)
}

type withSettings struct {
	tx       pgx.Tx
	settings Settings
}

// send runs the statement with the settings; the results start at the statement's.
func (w withSettings) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	if r, ok := w.tx.(*readTx); ok && r.tx == nil {
		b.Queue(w.settings.Local)
		b.Queue(sql, args...)
	} else {
		b.Queue(w.settings.Before)
		b.Queue(sql, args...)
		b.Queue(w.settings.After)
	}
	return afterPrologue(w.tx.SendBatch(ctx, b), 1)
}
