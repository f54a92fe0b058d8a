package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/valuation"
)

var varianceSuite = suite{
	name: "variance",
	help: "GET /v1/benefits/{id}/variance of a benefit with 60 monthly actuals (duration) against pgbench on the same SQL",
	run:  runVariance,
}

// varianceQueries are what benefitVariance (api/benefits.go, through
// benefit.ReadVariance) runs after the request prologue, in this order: the
// benefit, the tenant's settings (fiscal year), its plan, and its actuals in
// the widest range the fiscal year can cover. The API sends the four as one
// pipelined batch; the pgbench script runs them one by one.
var varianceQueries = []string{"BenefitGet", "SettingsGet", "BenefitPlanList", "ActualValuesInRange"}

// benefitGetQueries are what getBenefit runs after the request prologue (the
// API as one pipelined batch: benefit.Read): the fixed part of a variance
// request (HTTP, token, tenant, transaction, short statements, JSON)
// measured on its own beside it. The benefit's plan is part of the resource.
var benefitGetQueries = []string{"BenefitGet", "BenefitPlanList"}

// variancePeriods is the number of monthly actuals the benefit has: the five
// years of the analytics history, ending last month.
const variancePeriods = 60

func runVariance(ctx context.Context, e *env) error {
	const run = "GET /v1/benefits/{id}/variance"
	c := e.concurrency
	perms := []string{string(rbac.InitiativesWrite), string(rbac.BenefitsRead), string(rbac.BenefitsWrite)}
	name := "bench variance " + time.Now().UTC().Format(time.RFC3339Nano)
	t, err := benchutil.NewTenant(ctx, e.pool, e.keys, name, benchSubject, []string{rbac.RoleAdmin}, perms)
	if err != nil {
		return err
	}
	benefitID, err := e.seedVarianceBenefit(ctx, t)
	if err != nil {
		return err
	}
	path := "/v1/benefits/" + benefitID + "/variance"
	if err := e.checkVariance(ctx, t, path); err != nil {
		e.fail(run, "check", err.Error())
	}

	// The actuals' range the API reads for the default report (the current fiscal year).
	from, to, _ := benefit.VarianceActualsBound(benefit.VarianceQuery{}, time.Now().UTC())
	script, vars, err := e.varianceScript(t, benefitID, from, to, "benefit-variance", varianceQueries)
	if err != nil {
		return err
	}
	report, err := e.varianceReportCost(ctx, t, benefitID)
	if err != nil {
		return err
	}
	pool := e.poolTracker()
	got, err := e.compareGET(ctx, run, "", path, t, c, pool, "benefit-variance", script, vars)
	if err != nil {
		return err
	}
	// The fixed part: the same tenant and benefit, the prologue and the benefit with its plan.
	const fixedRun = "GET /v1/benefits/{id} (variance's fixed part)"
	fixedScript, _, err := e.varianceScript(t, benefitID, from, to, "benefit-get", benefitGetQueries)
	if err != nil {
		return err
	}
	fixedPool := e.poolTracker()
	fixed, err := e.compareGET(ctx, fixedRun, "", "/v1/benefits/"+benefitID, t, c, fixedPool, "benefit-get", fixedScript, vars)
	if err != nil {
		return err
	}
	slice := e.durationSlice()
	added := got.API.P50MS - fixed.API.P50MS // what the variance adds to its fixed part, API p50 ms
	e.report.Runs = append(e.report.Runs, benchutil.NewComparison(run,
		"pgbench {BEGIN; set tenant; "+joinNames(txPrologue, varianceQueries)+"; COMMIT}",
		c, got,
		fmt.Sprintf("duration-based: %s per side and round; one monthly benefit with %d actuals (the 5-year history, through last month) and no plan; the report is the default one: the current fiscal year through its last actual", slice, variancePeriods),
		fmt.Sprintf("the API also computes the report (valuation.VarianceReport: expected per period from finance.Benefit.ExpectedFor, variance, trend) and renders it as JSON; pgbench only runs the SQL. The report's own work on this benefit's rows costs %.1f µs per request in this process (testing.Benchmark, without SQL or JSON): %.0f %% of the %.2f ms the variance adds to its fixed part at p50",
			report.Seconds()*1e6, 100*report.Seconds()*1e3/max(added, 1e-9), added),
		"the API sends BenefitGet, SettingsGet, BenefitPlanList and ActualValuesInRange as one pipelined batch (benefit.ReadVariance, db.Pipeline), the actuals in the widest range the fiscal year can cover whatever the benefit's frequency and the tenant's fiscal year start (benefit.VarianceActualsBound, 25 months; pgbench reads the same range), of which it keeps the year's: 1 round trip, the caller's UserAuthenticate going with it behind the tenant setting (expectCaller, db.Ride; a GET sends no BEGIN and no COMMIT), against pgbench's 8",
		fixedCostNote(got, fixed),
		pool.note(),
	), benchutil.NewComparison(fixedRun,
		"pgbench {BEGIN; set tenant; "+joinNames(txPrologue, benefitGetQueries)+"; COMMIT}",
		c, fixed,
		fmt.Sprintf("duration-based: %s per side and round; the variance run's benefit, read alone: what every authenticated read pays whatever its SQL (HTTP, token, tenant, rate limit, the tenant transaction, JSON)", slice),
		"the API sends BenefitGet and BenefitPlanList as one pipelined batch (benefit.Read): 1 round trip with UserAuthenticate (expectCaller, db.Ride; a GET sends no BEGIN and no COMMIT), against pgbench's 6",
		fixedPool.note(),
	))
	return nil
}

// varianceReportCost is the time valuation.VarianceReport takes per call on the rows the API
// reads for the benefit's default report: the work the API does on a variance request that no
// SQL does, measured apart from the request.
func (e *env) varianceReportCost(ctx context.Context, t benchutil.Tenant, benefitID string) (time.Duration, error) {
	id, err := uuid.Parse(benefitID)
	if err != nil {
		return 0, err
	}
	now := time.Now().UTC()
	var rows benefit.VarianceRows
	if err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) (err error) {
		rows, err = benefit.ReadVariance(ctx, tx, t.ID, id, benefit.VarianceQuery{}, now)
		return err
	}); err != nil {
		return 0, fmt.Errorf("variance rows: %w", err)
	}
	if _, _, err := valuation.VarianceReport(rows, now); err != nil {
		return 0, fmt.Errorf("variance report: %w", err)
	}
	r := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			_, _, _ = valuation.VarianceReport(rows, now)
		}
	})
	logf("variance: the report alone takes %s per call (%d calls)", time.Duration(r.NsPerOp()), r.N)
	return time.Duration(r.NsPerOp()), nil
}

// fixedCostNote sets the variance's ratio beside its fixed part's: per
// request, the API's share of the time over pgbench's for both runs of the
// same run (latency at p50).
func fixedCostNote(variance, fixed benchutil.Compared) string {
	v, f := variance, fixed
	return fmt.Sprintf("the fixed part of a request (the GET /v1/benefits/{id} run: prologue, the benefit and its plan) costs the API p50 %.2f ms against pgbench's %.2f ms (%.2fx throughput); the variance adds %.2f ms to it on the API, %.2f ms on pgbench: where the SQL is this short, the ratio is bounded by the fixed part's",
		f.API.P50MS, f.Baseline.P50MS, f.API.PerSecond/max(f.Baseline.PerSecond, 1e-9), v.API.P50MS-f.API.P50MS, v.Baseline.P50MS-f.Baseline.P50MS)
}

// seedVarianceBenefit creates, through the API, an initiative and a monthly
// benefit with an actual for each of the last variancePeriods months.
func (e *env) seedVarianceBenefit(ctx context.Context, t benchutil.Tenant) (string, error) {
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month()-variancePeriods, 1, 0, 0, 0, 0, time.UTC)
	var in struct {
		ID string `json:"id"`
	}
	if err := e.post(ctx, t, "/v1/initiatives", map[string]any{"name": "Variance benchmark"}, &in); err != nil {
		return "", err
	}
	var b struct {
		ID string `json:"id"`
	}
	if err := e.post(ctx, t, "/v1/benefits", map[string]any{"initiative_id": in.ID, "name": "Savings", "category": "cost_savings",
		"unit": "currency", "currency": "USD", "measurement_frequency": "monthly", "expected_value": 120000,
		"expected_start_date": first.Format(time.DateOnly)}, &b); err != nil {
		return "", err
	}
	for i := range variancePeriods {
		body := map[string]any{"period": first.AddDate(0, i, 0).Format("2006-01"), "value": 9000 + 50*i, "notes": "monthly close"}
		if err := e.post(ctx, t, "/v1/benefits/"+b.ID+"/actuals", body, nil); err != nil {
			return "", err
		}
	}
	logf("variance: benefit %s with %d monthly actuals from %s, tenant %s", b.ID, variancePeriods, first.Format("2006-01"), t.ID)
	return b.ID, nil
}

// post sends a JSON body and decodes a 2xx answer into out (when not nil).
// A nil body sends none.
func (e *env) post(ctx context.Context, t benchutil.Tenant, path string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	req, err := e.request(ctx, http.MethodPost, path, t, raw)
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s %s", path, resp.Status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// checkVariance verifies that the API's report covers the months of the
// current year through last month and that its actual_ytd is the sum of the
// stored actuals of those months.
func (e *env) checkVariance(ctx context.Context, t benchutil.Tenant, path string) error {
	req, err := e.request(ctx, http.MethodGet, path, t, nil)
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
		return fmt.Errorf("GET %s: %s %s", path, resp.Status, b)
	}
	var report struct {
		ActualYTD float64           `json:"actual_ytd"`
		Periods   []json.RawMessage `json:"periods"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&report); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	now := time.Now().UTC()
	var stored float64
	err = db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT coalesce(sum(value), 0)::float8 FROM benefit_actuals WHERE period >= $1`,
			time.Date(now.Year(), 1, 1, 0, 0, 0, 0, time.UTC)).Scan(&stored)
	})
	if err != nil {
		return err
	}
	if want := int(now.Month()) - 1; len(report.Periods) != want || math.Abs(report.ActualYTD-stored) > 0.005 {
		return fmt.Errorf("GET %s: %d periods, actual_ytd %.2f; want %d periods and %.2f (the stored actuals of this year)", path, len(report.Periods), report.ActualYTD, want, stored)
	}
	return nil
}

// varianceScript is benefitVariance's transaction (or another read of the
// benefit: queries after the prologue) as a pgbench script.
func (e *env) varianceScript(t benchutil.Tenant, benefitID string, from, to finance.Month, name string, queries []string) (string, map[string]string, error) {
	s := benchutil.NewScript("tenant_id", "subject", "id", "benefit_id", "benefit_ids", "from_period", "to_period")
	if err := e.prologue(s); err != nil {
		return "", nil, err
	}
	for _, q := range queries {
		sql, err := e.queries.Get(q)
		if err != nil {
			return "", nil, err
		}
		s.SQL(benchutil.Bind(sql, nil))
	}
	s.SQL("COMMIT")
	path := filepath.Join(e.workDir, name+".pgbench")
	if err := s.Write(path); err != nil {
		return "", nil, err
	}
	return path, map[string]string{
		"tenant_id": t.ID.String(), "subject": t.Subject, "id": benefitID, "benefit_id": benefitID, "benefit_ids": "{" + benefitID + "}",
		"from_period": from.FirstDay().Format(time.DateOnly), "to_period": to.FirstDay().Format(time.DateOnly),
	}, nil
}
