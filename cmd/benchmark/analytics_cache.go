package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/benchutil"
)

// The analytics runs beside the report cache (internal/analytics/cache.go):
// the portfolio realisation computed on every request (cold), and answered
// to 200 concurrent clients.
const (
	realizationColdRun = "GET /v1/analytics/realization (portfolio), cold: a write before each request"
	realizationManyRun = "GET /v1/analytics/realization (portfolio), 200 clients"
	// realizationManyClients is the concurrency for the portfolio realisation.
	realizationManyClients = 200
	// pgbenchSpareConnections are left to the API, the bench's own pool and other sessions
	// when pgbench takes what max_connections allows.
	pgbenchSpareConnections = 25
)

// runAnalyticsCache adds the cold and the 200-client realisation runs on
// the analytics tenant t (one of its initiatives: one); script is the
// realisation's pgbench script.
func (e *env) runAnalyticsCache(ctx context.Context, t benchutil.Tenant, one, script string, vars map[string]string) error {
	defer func(c int) { e.concurrency = c }(e.concurrency)
	slice := e.durationSlice()

	// Every request measured in both runs: a cold portfolio request takes a large share of a
	// round, and pgbench's clients at 200 each run only a few transactions in one.
	defer func(w int) { e.warmup = w }(e.warmup)
	e.warmup = 0

	// Cold: before each request (outside its timing) a write to an input moves the tenant's
	// data version, so every request computes the report as without the cache.
	e.concurrency = 1
	bump := func(ctx context.Context) error {
		return db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE initiatives SET updated_at = updated_at WHERE tenant_id = $1 AND id = $2`, t.ID, one)
			return err
		})
	}
	api := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		logf("%s round %d: API, %s, 1 client", realizationColdRun, r+1, slice)
		res, err := benchutil.HTTPLoad{
			BaseURL: e.apiURL, Workers: 1, Warmup: e.warmup, Duration: slice,
			NewRequest: func(_ int, req *fasthttp.Request) error {
				setRequest(req, http.MethodGet, "/v1/analytics/realization", t, nil)
				return bump(ctx)
			},
		}.Run(ctx)
		if err != nil {
			return nil, 0, err
		}
		if res.Errors > 0 {
			e.fail(realizationColdRun, fmt.Sprintf("API round %d", r+1), res.ErrorText())
		}
		return res.Samples, res.Errors, nil
	}
	base := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		logf("%s round %d: pgbench %s, %s", realizationColdRun, r+1, script, slice)
		res, err := e.pgbench("analytics-realization-cold", script, vars, 0, slice).Run(ctx)
		if err != nil {
			return nil, 0, err
		}
		return res.Samples, res.Errors, nil
	}
	cold, err := benchutil.Alternate(ctx, e.rounds, api, base)
	if err != nil {
		return fmt.Errorf("%s: %w", realizationColdRun, err)
	}
	e.report.Runs = append(e.report.Runs, benchutil.NewComparison(realizationColdRun,
		"pgbench {BEGIN; set tenant; "+joinNames(txPrologue, realizationQueries)+"; COMMIT}", 1, cold,
		fmt.Sprintf("duration-based: %s per side and round, 1 client, no warm-up; the portfolio: 1,000 initiatives, 10,000 benefits, 360,000 actuals", slice),
		"the cost without the report cache: before each request a one-row write to an input (outside the request's timing) moves the tenant's data version, so the API reads the version, computes the report in SQL and Go, reads the version again and renders; the API's req/s includes the writes' time, its latencies do not",
		"both sides run the portfolio's sums with nested loops off (analytics.PortfolioPlan: the setting before the statement and the old value back after it; the API in the same round trip, pgbench as statements of their own)",
	))

	// 200 clients: the API takes them all; pgbench opens one connection per client, so it takes
	// what max_connections leaves.
	var pgClients int
	err = e.pool.QueryRow(ctx, `SELECT current_setting('max_connections')::int - (SELECT count(*) FROM pg_stat_activity)::int`).Scan(&pgClients)
	if err != nil {
		return err
	}
	e.concurrency = max(1, min(realizationManyClients, pgClients-pgbenchSpareConnections))
	pool := e.poolTracker()
	many, err := e.compareGET(ctx, realizationManyRun, "", "/v1/analytics/realization", t, realizationManyClients, pool, "analytics-realization-many", script, vars)
	if err != nil {
		return err
	}
	pgNote := fmt.Sprintf("pgbench with %d clients (one connection each: max_connections less those in use and %d spare)", e.concurrency, pgbenchSpareConnections)
	if e.concurrency == realizationManyClients {
		pgNote = fmt.Sprintf("pgbench with the same %d clients", realizationManyClients)
	}
	e.report.Runs = append(e.report.Runs, benchutil.NewComparison(realizationManyRun,
		"pgbench {BEGIN; set tenant; "+joinNames(txPrologue, realizationQueries)+"; COMMIT}", realizationManyClients, many,
		fmt.Sprintf("duration-based: %s per side and round, %d HTTP clients; %s; no warm-up: every request and transaction is measured", slice, realizationManyClients, pgNote),
		"answered from the report cache: the API reads the tenant's data version and sends the stored JSON body; pgbench runs the report's SQL",
		pool.note(),
	))
	return nil
}
