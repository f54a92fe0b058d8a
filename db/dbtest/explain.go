package dbtest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PlanNode is one node of an executed plan, as EXPLAIN (ANALYZE, FORMAT JSON) gives it.
type PlanNode struct {
	NodeType                string     `json:"Node Type"`
	Relation                string     `json:"Relation Name"`
	ActualRows              float64    `json:"Actual Rows"`
	ActualLoops             float64    `json:"Actual Loops"`
	TIDCond                 string     `json:"TID Cond"`
	Filter                  string     `json:"Filter"`
	RowsRemovedByJoinFilter float64    `json:"Rows Removed by Join Filter"`
	Plans                   []PlanNode `json:"Plans"`
}

// Walk calls fn on the node and each node below it.
func (n PlanNode) Walk(fn func(PlanNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.Walk(fn)
	}
}

// ExecutedPlan is a statement that ran on an Explained connection, with its plan.
type ExecutedPlan struct {
	Query string   `json:"Query Text"`
	Plan  PlanNode `json:"Plan"`
	JIT   *struct {
		Functions int `json:"Functions"`
	} `json:"JIT"` // the expressions compiled, if any
}

// Statement is the sqlc name of the statement ("AnalyticsActuals" for "-- name: AnalyticsActuals
// :many"), or "" for one without. The name is looked for anywhere in the text: settings sent in
// the same round trip (db.WithSettings) come before it.
func (p ExecutedPlan) Statement() string {
	_, rest, found := strings.Cut(p.Query, "-- name: ")
	if !found {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// Explained returns a pool of one connection to the database of pool, acting as pool's role with
// pool's session settings (the service's) and then the settings given, and a function returning
// the plan of every statement it has run since, the statements of functions and triggers
// included, with the rows each node produced (auto_explain, which only a superuser can load,
// sending its plans to the client).
func Explained(t testing.TB, pool *pgxpool.Pool, settings map[string]string) (*pgxpool.Pool, func() []ExecutedPlan) {
	t.Helper()
	admin := config(t)
	cfg := pool.Config()
	role := cfg.ConnConfig.User
	cfg.ConnConfig.User, cfg.ConnConfig.Password = admin.User, admin.Password
	var mu sync.Mutex
	var plans []ExecutedPlan
	var parseErr error
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		_, text, found := strings.Cut(n.Message, "plan:\n")
		if !found {
			return
		}
		var p ExecutedPlan
		err := json.Unmarshal([]byte(text), &p)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			parseErr = err
			return
		}
		plans = append(plans, p)
	}
	afterConnect := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if afterConnect != nil {
			if err := afterConnect(ctx, conn); err != nil {
				return err
			}
		}
		_, err := conn.Exec(ctx, `LOAD 'auto_explain';
			SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off;
			SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = json; SET auto_explain.log_level = notice;
			SET ROLE `+pgx.Identifier{role}.Sanitize())
		return err
	}
	explained := oneConnection(t, cfg, settings)
	return explained, func() []ExecutedPlan {
		mu.Lock()
		defer mu.Unlock()
		if parseErr != nil {
			t.Fatalf("auto_explain plan: %v", parseErr)
		}
		return plans
	}
}
