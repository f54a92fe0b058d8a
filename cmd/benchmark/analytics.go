package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/rbac"
)

var analyticsSuite = suite{
	name: "analytics",
	help: "portfolio realization, trends and single-initiative ROI on the issue's large tenant (360,000 actuals) against pgbench on the same SQL",
	run:  runAnalytics,
}

// The large analytics tenant: analyticsInitiatives initiatives, each with
// analyticsBenefits monthly USD benefits (2023-01 .. 2025-12) that have an
// actual every month (analyticsMonths), and a one-off cost.
const (
	analyticsInitiatives = 1000
	analyticsBenefits    = 10
	analyticsMonths      = 36
)

// The SQL each endpoint runs after the request prologue, in order: the
// analysis's deadline (api analyticsDeadline), then internal/analytics's
// AnalyseRealization, AnalyseTrends, AnalyseROI (realisation reads its benefits
// one by one only when the sums name some, and this tenant has none to name; ROI
// ends with the forecast accuracy of its confidence, forecastWAPE).
var (
	realizationQueries = []string{"AnalyticsTransactionSettings", "SettingsGet", "AnalyticsInitiativeNames", "AnalyticsRealizationSums", "FxRateList"}
	trendsQueries      = []string{"AnalyticsTransactionSettings", "SettingsGet", "AnalyticsTrendBenefits", "AnalyticsPlans", "AnalyticsActualsByMonth", "AnalyticsMissingActualRates", "FxRateList"}
	roiQueries         = []string{"AnalyticsTransactionSettings", "SettingsGet", "AnalyticsInitiativeNames", "AnalyticsBenefits", "AnalyticsPlans", "AnalyticsActuals", "AnalyticsCosts", "FxRateList", "AnalyticsForecastAccuracy"}
)

// analyticsQueryBinds are the parameters of a query the same in every run,
// as the API passes them.
var analyticsQueryBinds = map[string]map[string]string{
	// The API's default deadline (the bench sets no ANALYTICS_TIMEOUT).
	"AnalyticsTransactionSettings": {"timeout_ms": strconv.FormatInt(config.DefaultAnalyticsTimeout.Milliseconds(), 10)},
	// Every rate of the tenant: no filter (NULL parameters).
	"FxRateList": {"currency": benchutil.Null, "from_period": benchutil.Null, "to_period": benchutil.Null},
	// ROI's forecastWAPE over a lifetime window: no group, no lower bound, through the current month.
	"AnalyticsForecastAccuracy": {"group_by": "''", "from_period": benchutil.Null},
}

// analyticsClients: the targets are per-request latencies (p95, p99),
// so one client measures them; more clients on a small machine would measure
// the queue in front of its cores.
const analyticsClients = 1

func runAnalytics(ctx context.Context, e *env) error {
	// Both sides of these runs have analyticsClients clients (e.pgbench reads e.concurrency).
	defer func(c int) { e.concurrency = c }(e.concurrency)
	e.concurrency = analyticsClients
	name := "bench analytics " + time.Now().UTC().Format(time.RFC3339Nano)
	t, err := benchutil.NewTenant(ctx, e.pool, e.keys, name, benchSubject, []string{rbac.RoleAdmin}, []string{string(rbac.AnalyticsRead)})
	if err != nil {
		return err
	}
	type analyticsRun struct {
		run, path, name string
		queries         []string
		binds           map[string]string
		what            string
		script          string
	}
	runs := []analyticsRun{
		{run: "GET /v1/analytics/realization (portfolio)", path: "/v1/analytics/realization", name: "analytics-realization", queries: realizationQueries,
			binds: map[string]string{"initiative_id": benchutil.Null}, what: "the portfolio: 1,000 initiatives, 10,000 benefits, 360,000 actuals"},
		{run: "GET /v1/analytics/trends (36 months by category)", path: "/v1/analytics/trends?from=2023-01&to=2025-12&group_by=category", name: "analytics-trends",
			queries: trendsQueries, binds: map[string]string{"through": "'2025-12-01'", "initiative_id": benchutil.Null}, what: "the portfolio's 36 months 2023-01 .. 2025-12, grouped by category"},
		{run: "GET /v1/analytics/roi (one initiative)", path: "/v1/analytics/roi?initiative_id=", name: "analytics-roi", queries: roiQueries,
			what: "one initiative: 10 benefits, 360 actuals, a cost; lifetime"},
	}
	for i, r := range runs { // before the 2-minute seeding: a script error shows at once
		if runs[i].script, err = e.analyticsScript(r.name, r.queries, r.binds); err != nil {
			return err
		}
	}
	one, err := e.seedAnalytics(ctx, t, analyticsInitiatives)
	if err != nil {
		return err
	}
	largeAnalyticsTenant = &seededAnalytics{tenant: t, initiative: one} // the scaling suite's 100x
	if err := e.checkAnalytics(ctx, t, analyticsInitiatives); err != nil {
		e.fail("analytics", "check", err.Error())
	}
	now := time.Now().UTC()
	through := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	currentMonth := strconv.Itoa(now.Year()*12 + int(now.Month()) - 1) // finance.Month, as the API passes it
	vars := map[string]string{"tenant_id": t.ID.String(), "subject": t.Subject, "base": "USD", "through": through, "current_month": currentMonth,
		"group_by": "category", "from_period": "2023-01-01", "initiative_id": one}
	slice := e.durationSlice()
	for _, r := range runs {
		path, script := r.path, r.script
		if r.name == "analytics-roi" {
			path += one
		}
		pool := e.poolTracker()
		got, err := e.compareGET(ctx, r.run, "", path, t, analyticsClients, pool, r.name, script, vars)
		if err != nil {
			return err
		}
		e.report.Runs = append(e.report.Runs, benchutil.NewComparison(r.run,
			"pgbench {BEGIN; set tenant; "+joinNames(txPrologue, r.queries)+"; COMMIT}",
			analyticsClients, got,
			fmt.Sprintf("duration-based: %s per side and round, 1 client (the targets are per-request latencies); %s", slice, r.what),
			"the tenant is on Enterprise Plus with negotiated limits: the 30/min analytics limit does not apply to that plan, so it never throttles the measurement",
			"the API also computes the figures in Go (expected values per benefit and month, at-risk rule, series) and renders JSON; pgbench only runs the SQL",
			pool.note(),
			"answered from the API's report cache after the first request (the data does not change during the run); the cold cost, computed on every request, is the run \""+realizationColdRun+"\" (analytics_cache.go)",
		))
	}
	return e.runAnalyticsCache(ctx, t, one, runs[0].script, vars) // analytics_cache.go
}

// analyticsScript is an analytics endpoint's transaction as a pgbench script.
func (e *env) analyticsScript(name string, queries []string, binds map[string]string) (string, error) {
	s := benchutil.NewScript("tenant_id", "subject", "base", "through", "current_month", "group_by", "from_period", "initiative_id")
	if err := e.prologue(s); err != nil {
		return "", err
	}
	for _, q := range queries {
		sql, err := e.queries.Get(q)
		if err != nil {
			return "", err
		}
		b := binds
		if fixed, ok := analyticsQueryBinds[q]; ok {
			b = fixed
		}
		// In the analysis's transaction: the settings, the query, the old values back.
		settings, withSettings := querySettings[q]
		if withSettings {
			s.SQL(settings.Before)
		}
		s.SQL(benchutil.Bind(sql, b))
		if withSettings {
			s.SQL(settings.After)
		}
	}
	s.SQL("COMMIT")
	path := filepath.Join(e.workDir, name+".pgbench")
	return path, s.Write(path)
}

// seedAnalytics writes the large tenant (or, for the scaling suite, one of
// initiatives initiatives shaped alike) in SQL (the API would take hours to
// take 360,000 actuals within its rate limits); the rollup triggers run as
// for any writer. It returns the id of one initiative.
func (e *env) seedAnalytics(ctx context.Context, t benchutil.Tenant, initiatives int) (string, error) {
	start := time.Now()
	var one string
	err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		for i := range initiatives {
			in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: t.ID, Name: fmt.Sprintf("Initiative %04d", i)})
			if err != nil {
				return err
			}
			one = in.ID.String()
		}
		for _, q := range []string{
			fmt.Sprintf(`INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
			 SELECT i.tenant_id, i.id, 'b' || g, (ARRAY['cost_savings','revenue_growth','productivity'])[1 + g %% 3], 12000, 'USD', 'currency', 'monthly', '2023-01-01', '2025-12-31', 'bench'
			 FROM initiatives i, generate_series(1, %d) g WHERE i.tenant_id = $1`, analyticsBenefits),
			// Statistics of the new benefits first: on a stale estimate the rollup trigger's join of
			// the new actuals to benefits is planned as a nested loop over all of them (tens of minutes).
			`ANALYZE benefits`,
			fmt.Sprintf(`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			 SELECT b.tenant_id, b.id, date '2023-01-01' + make_interval(months => m), 900 + m, 'bench'
			 FROM benefits b, generate_series(0, %d) m WHERE b.tenant_id = $1`, analyticsMonths-1),
			`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence)
			 SELECT i.tenant_id, i.id, 'Build', 'capex', 250000, 'USD', '2023-01-01', 'once' FROM initiatives i WHERE i.tenant_id = $1`,
		} {
			var args []any
			if !strings.HasPrefix(q, "ANALYZE") {
				args = []any{t.ID}
			}
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	// The seeding transaction updated the rollup 360,000 times; versions of a transaction still
	// running cannot be pruned, so the table ends ~3× its size. Actuals written in their own
	// transactions (as the API and imports write them) leave it compact: VACUUM FULL stands for
	// that steady state, ANALYZE for autovacuum after a bulk load.
	for _, q := range []string{"VACUUM FULL benefit_actual_months, benefit_actual_stats, benefit_measured_expectations",
		"VACUUM ANALYZE benefits, benefit_actuals, benefit_actual_months, benefit_actual_stats, benefit_measured_expectations, initiatives, initiative_costs"} {
		if _, err := e.pool.Exec(ctx, q); err != nil {
			return "", err
		}
	}
	logf("analytics: %d initiatives × %d benefits × %d monthly actuals written in %s, tenant %s", initiatives, analyticsBenefits, analyticsMonths,
		time.Since(start).Round(time.Millisecond), t.ID)
	return one, nil
}

// checkAnalytics verifies that the rollup and the portfolio rollup equal a
// fresh GROUP BY of the actuals, that benefit_actual_stats and
// benefit_measured_expectations equal a fresh recomputation, and that the API's realised to date is the sum of every stored
// actual (Σ over 10,000 benefits of Σ_{m=0..35} (900 + m) = 10,000 × 33,030).
func (e *env) checkAnalytics(ctx context.Context, t benchutil.Tenant, initiatives int) error {
	var diff []dbsqlc.AnalyticsRollupCheckRow
	var statsDiff []dbsqlc.AnalyticsActualStatsCheckRow
	var portfolioDiff []dbsqlc.AnalyticsPortfolioRollupCheckRow
	var measuredDiff []dbsqlc.AnalyticsMeasuredCheckRow
	var stored float64
	err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		var err error
		if diff, err = db.Q.AnalyticsRollupCheck(ctx, tx, t.ID); err != nil {
			return err
		}
		if statsDiff, err = db.Q.AnalyticsActualStatsCheck(ctx, tx, t.ID); err != nil {
			return err
		}
		if portfolioDiff, err = db.Q.AnalyticsPortfolioRollupCheck(ctx, tx, t.ID); err != nil {
			return err
		}
		if measuredDiff, err = db.Q.AnalyticsMeasuredCheck(ctx, tx, t.ID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT coalesce(sum(value), 0)::float8 FROM benefit_actuals`).Scan(&stored)
	})
	if err != nil {
		return err
	}
	if len(diff) > 0 {
		return fmt.Errorf("the rollup differs from a fresh GROUP BY in %d rows", len(diff))
	}
	if len(portfolioDiff) > 0 {
		return fmt.Errorf("benefit_actual_portfolio_months differs from a fresh GROUP BY in %d rows", len(portfolioDiff))
	}
	if len(measuredDiff) > 0 {
		return fmt.Errorf("benefit_measured_expectations differs from a fresh recomputation for %d benefits", len(measuredDiff))
	}
	if len(statsDiff) > 0 {
		return fmt.Errorf("benefit_actual_stats differs from a fresh recomputation for %d benefits", len(statsDiff))
	}
	want := float64(initiatives*analyticsBenefits) * (analyticsMonths*900 + analyticsMonths*(analyticsMonths-1)/2)
	if stored != want {
		return fmt.Errorf("stored actuals sum to %.2f, want %.2f", stored, want)
	}
	req, err := e.request(ctx, http.MethodGet, "/v1/analytics/realization", t, nil)
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("GET /v1/analytics/realization: %s %s", resp.Status, b)
	}
	var got struct {
		Data struct {
			Realized *float64 `json:"realized_to_date"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		return err
	}
	if got.Data.Realized == nil || math.Abs(*got.Data.Realized-want) > 0.005 {
		return fmt.Errorf("GET /v1/analytics/realization: realized_to_date %v, want %.2f (every stored actual)", got.Data.Realized, want)
	}
	return nil
}
