package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// accuracySummary writes an accuracy object as "n mape/wape/bias expected/actual".
func accuracySummary(m map[string]any) string {
	return fmt.Sprintf("%v %v/%v/%v %v/%v", m["periods"], m["mape_percent"], m["wape_percent"], m["bias_percent"], m["expected"], m["actual"])
}

// TestContractAnalyticsInsights: forecasts, benchmarks, the ROI additions
// and the analytics deadline, through the API on the golden portfolio of
// analyticsPortfolio (2024, every month past).
func TestContractAnalyticsInsights(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	analyst := caller{sub: "analyst-1", tenant: ts.tenant, permissions: []string{"analytics:read"}}
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "benefits:read"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	p, _ := analyticsPortfolio(t, ts, admin)
	data := func(r response) map[string]any { t.Helper(); return r.json(t)["data"].(map[string]any) }
	const forecasts, benchmarks = "/v1/analytics/forecasts", "/v1/analytics/benchmarks"

	// Accuracy, by hand. The pairs with an actual: A (USD, 2,000 a month) 01 1,000, 02
	// 1,500, 03 2,500, 04 2,000; B (EUR, 2,000 a quarter) 01 1,800, at 1.10: e 2,200, a
	// 1,980. MAPE (0.5 + 0.25 + 0.25 + 0 + 0.1) / 5 = 22 %; WAPE (1,000 + 500 + 500 + 0 +
	// 220) / 10,200 = 21.76 %; bias (8,980 − 10,200) / 10,200 = −11.96 %.
	r := call(contractCall{as: &analyst, method: "GET", path: forecasts + "?horizon=3", want: 200})
	d := data(r)
	if got, want := accuracySummary(d["total"].(map[string]any)), "5 22/21.76/-11.96 10200/8980"; got != want {
		t.Errorf("total accuracy %s, want %s", got, want)
	}
	groups := d["groups"].([]any)
	if g := groups[0].(map[string]any); len(groups) != 1 || d["group_by"] != "initiative" || g["key"] != p || g["name"] != "P" ||
		accuracySummary(g) != "5 22/21.76/-11.96 10200/8980" {
		t.Errorf("by initiative: %s", r.body)
	}
	// By benefit: A 4 pairs, MAPE 25 %, WAPE 2,000 / 8,000 = 25 %, bias −1,000 / 8,000; B one pair, 10 %.
	d = data(call(contractCall{as: &analyst, method: "GET", path: forecasts + "?group_by=benefit", want: 200}))
	var byBenefit []string
	for _, g := range d["groups"].([]any) {
		byBenefit = append(byBenefit, g.(map[string]any)["name"].(string)+" "+accuracySummary(g.(map[string]any)))
	}
	if got, want := strings.Join(byBenefit, "; "), "b EURquarterly 1 10/10/-10 2200/1980; b USDmonthly 4 25/25/-12.5 8000/7000"; got != want {
		t.Errorf("by benefit\n got %s\nwant %s", got, want)
	}
	for _, by := range []string{"owner", "category"} {
		d = data(call(contractCall{as: &analyst, method: "GET", path: forecasts + "?group_by=" + by, want: 200}))
		if gs := d["groups"].([]any); len(gs) != 1 || accuracySummary(gs[0].(map[string]any)) != "5 22/21.76/-11.96 10200/8980" {
			t.Errorf("by %s: %v", by, gs)
		}
	}
	// The forecast, by internal/analytics/testdata/forecast_golden.py over the realised
	// months 2,980, 1,500, 2,500, 2,000 (2024-01..04): 769.77 [−1,120.34, 2,659.89], 283.45
	// [−2,389.58, 2,956.48], −154.24 [−3,428.01, 3,119.54]; σ 1,474.87.
	f := data(r)["forecast"].(map[string]any)
	if got, want := fmt.Sprint(f["history_from"], " ", f["history_to"], " ", f["residual_sd"], " ", f["points"], " ", f["null_reason"]),
		"2024-01 2024-04 1474.87 [map[lower:-1120.34 period:2024-05 upper:2659.89 value:769.77] map[lower:-2389.58 period:2024-06 upper:2956.48 value:283.45] "+
			"map[lower:-3428.01 period:2024-07 upper:3119.54 value:-154.24]] <nil>"; got != want {
		t.Errorf("forecast\n got %s\nwant %s", got, want)
	}
	if d := data(call(contractCall{as: &analyst, method: "GET", path: forecasts, want: 200})); d["horizon"] != 6.0 || len(d["forecast"].(map[string]any)["points"].([]any)) != 6 {
		t.Errorf("default horizon: %v", d)
	}
	// Another tenant: nothing measured, no forecast.
	d = data(call(contractCall{as: &other, method: "GET", path: forecasts, want: 200}))
	if accuracySummary(d["total"].(map[string]any)) != "0 <nil>/<nil>/<nil> <nil>/<nil>" || len(d["groups"].([]any)) != 0 ||
		d["forecast"].(map[string]any)["null_reason"] != "insufficient_history" {
		t.Errorf("another tenant's forecasts: %v", d)
	}

	// ROI additions on P (lifetime): a month's delay loses December's 2,000: (30,280 −
	// 18,000) / 18,000 = 68.22 %; WAPE 21.76 % (not above 25: confidence stays as coverage
	// says); the Monte Carlo ordered, inside best and worst-and-late, and the same twice.
	roiOf := func(id string) map[string]any {
		return data(call(contractCall{as: &analyst, method: "GET", path: "/v1/analytics/roi?initiative_id=" + id, want: 200}))
	}
	roi := roiOf(p)
	mc := roi["monte_carlo"].(map[string]any)
	if roi["sensitivity"].(map[string]any)["delayed_one_month"].(map[string]any)["roi_percent"] != 68.22 || roi["forecast_wape_percent"] != 21.76 ||
		roi["confidence"] != "low" || mc["runs"] != 1000.0 || len(mc["seed"].(string)) != 16 {
		t.Errorf("roi of P: %v", roi)
	}
	if p10, p50, p90 := mc["p10"].(float64), mc["p50"].(float64), mc["p90"].(float64); !(22.34 <= p10 && p10 <= p50 && p50 <= p90 && p90 <= 139.11) {
		t.Errorf("monte carlo %v", mc)
	}
	if again := roiOf(p)["monte_carlo"]; fmt.Sprint(again) != fmt.Sprint(mc) {
		t.Errorf("monte carlo not deterministic: %v then %v", mc, again)
	}

	// Benchmarks. P and Q in retail: roi 59.5, payback 6.33, NPV 13,056.93 / 2 = 6,528.47,
	// realisation 8,980 / 39,500 = 22.73 %.
	for _, id := range []string{p, data(call(contractCall{as: &analyst, method: "GET", path: "/v1/analytics/realization", want: 200}))["initiatives"].([]any)[1].(map[string]any)["initiative_id"].(string)} {
		expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"industry": " Retail"}), 200)
	}
	// Four other tenants have a retail ROI: 10, 20, 30, 40.
	ctx := context.Background()
	for _, v := range []float64{10, 20, 30, 40} {
		peer := dbtest.NewTenant(t, ts.pool, "starter")
		if err := db.InTenant(ctx, ts.pool, peer, func(tx pgx.Tx) error {
			return db.Q.PeerSnapshotPut(ctx, tx, dbsqlc.PeerSnapshotPutParams{TenantID: peer, Industry: "retail", Metric: "roi_percent", Value: v})
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Operator datasets: Survey A 0, 50, 60, 100, 200 (p25 50, median 60, p75 100; 59.5 has
	// 2 of 5 below: 40); Survey B only 3 values.
	for _, row := range []string{"'Survey A', 0", "'Survey A', 50", "'Survey A', 60", "'Survey A', 100", "'Survey A', 200", "'Survey B', 1", "'Survey B', 2", "'Survey B', 3"} {
		if _, err := ts.pool.Exec(ctx, "INSERT INTO peer_benchmark_datasets (industry, metric, source, value, year) VALUES ('retail', 'roi_percent', "+row+", 2025)"); err != nil {
			t.Fatal(err)
		}
	}
	bench := func(as caller, query string) map[string]any {
		t.Helper()
		return data(call(contractCall{as: &as, method: "GET", path: benchmarks + "?" + query, want: 200}))
	}
	peersOf := func(d map[string]any) string {
		var out []string
		for _, g := range d["peers"].([]any) {
			m := g.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v n=%v %v/%v/%v rank=%v %v", m["source"], m["year"], m["sample_size"], m["p25"], m["median"], m["p75"], m["percentile_rank"], m["reason"]))
		}
		return strings.Join(out, "; ")
	}
	d = bench(analyst, "metric=roi_percent")
	if d["industry"] != "retail" || d["industry_source"] != "initiatives" || d["initiatives_count"] != 2.0 || d["tenant_value"] != 59.5 ||
		peersOf(d) != "valuecase_tenants <nil> n=<nil> <nil>/<nil>/<nil> rank=<nil> fewer_than_5_peers; Survey A 2025 n=5 50/60/100 rank=40 <nil>; Survey B 2025 n=3 <nil>/<nil>/<nil> rank=<nil> fewer_than_5_peers" {
		t.Errorf("4 peer tenants: %v / %s", d, peersOf(d))
	}
	for metric, want := range map[string]any{"payback_months": 6.33, "npv_per_initiative": 6528.47, "realization_rate": 88.04} { // realisation like for like: 8,980 / 10,200
		if d := bench(analyst, "metric="+metric+"&industry=RETAIL"); d["tenant_value"] != want || d["industry_source"] != "parameter" {
			t.Errorf("%s: %v, want %v", metric, d["tenant_value"], want)
		}
	}
	// A fifth tenant computes its own benchmark through the API (cost 1,000, benefit
	// 12,000: ROI 1,100 %), which files its figure. Its peers: 10, 20, 30, 40 and ours
	// (59.5, filed by our request above) → p25 20, median 30, p75 40, rank 100. Now 5 peers
	// for us too, none of them us: 10, 20, 30, 40, 1,100 → p25 20, median 30, p75 40; 59.5
	// above 4 of 5: rank 80.
	fifth := contractTenant(t, ts, "enterprise_plus")
	in := ts.createInitiative(fifth, map[string]any{"name": "Shop", "industry": "retail"})
	expect(t, ts.do(&fifth, "POST", "/v1/initiatives/"+in+"/costs", map[string]any{"name": "c", "category": "opex", "amount": 1000, "currency": "USD",
		"period": "2024-01", "recurrence": "once", "end_period": nil}), 201)
	ts.createBenefit(fifth, map[string]any{"initiative_id": in, "name": "b", "category": "cost_savings", "expected_value": 12000, "currency": "USD",
		"unit": "currency", "measurement_frequency": "monthly", "expected_start_date": "2024-01-01", "expected_end_date": "2024-12-31"})
	if d := bench(fifth, "metric=roi_percent"); d["tenant_value"] != 1100.0 || !strings.HasPrefix(peersOf(d), "valuecase_tenants <nil> n=5 20/30/40 rank=100") {
		t.Errorf("the fifth tenant: %v / %s", d["tenant_value"], peersOf(d))
	}
	d = bench(analyst, "metric=roi_percent")
	if got := peersOf(d); !strings.HasPrefix(got, "valuecase_tenants <nil> n=5 20/30/40 rank=80 <nil>; Survey A") {
		t.Errorf("5 peer tenants: %s", got)
	}
	// No industry anywhere: no figures, a reason. Retail without initiatives: no value of
	// its own, the 6 retail tenants as peers (10, 20, 30, 40, 59.5, 1,100: p25 22.5, median
	// 35, p75 54.63), no rank.
	d = bench(other, "metric=roi_percent")
	if d["industry"] != nil || d["industry_source"] != "none" || d["tenant_value_null_reason"] != "no_industry" || len(d["peers"].([]any)) != 0 {
		t.Errorf("no industry: %v", d)
	}
	d = bench(other, "metric=roi_percent&industry=retail")
	if d["tenant_value"] != nil || d["tenant_value_null_reason"] != "no_data" || !strings.HasPrefix(peersOf(d), "valuecase_tenants <nil> n=6 22.5/35/54.63 rank=<nil> <nil>") {
		t.Errorf("retail without initiatives: %v", d)
	}

	// Confidence from accuracy: T has every period measured (coverage 1: high) at 10 of 100
	// expected: WAPE 270 / 300 = 90 % → medium.
	tt := ts.createInitiative(admin, map[string]any{"name": "T"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+tt+"/costs", map[string]any{"name": "c", "category": "opex", "amount": 100, "currency": "USD",
		"period": "2024-01", "recurrence": "once", "end_period": nil}), 201)
	b := ts.createBenefit(admin, map[string]any{"initiative_id": tt, "name": "small", "category": "cost_savings", "expected_value": 1200, "currency": "USD",
		"unit": "currency", "measurement_frequency": "monthly", "expected_start_date": "2024-01-01", "expected_end_date": "2024-03-31"})
	for _, m := range []string{"2024-01", "2024-02", "2024-03"} {
		expect(t, ts.do(&admin, "POST", "/v1/benefits/"+b+"/actuals", map[string]any{"value": 10, "period": m}), 201)
	}
	if roi := roiOf(tt); roi["coverage"] != 1.0 || roi["forecast_wape_percent"] != 90.0 || roi["confidence"] != "medium" {
		t.Errorf("T: %v", roi)
	}

	// 400, 401, 403.
	long := strings.Repeat("x", 101)
	for _, c := range []struct {
		path       string
		docRejects bool
	}{
		{forecasts + "?group_by=goal", true}, {forecasts + "?horizon=0", true}, {forecasts + "?horizon=25", true}, {forecasts + "?horizon=six", true},
		{forecasts + "?horizon=3&horizon=4", false}, {forecasts + "?from=2024-01", false},
		{benchmarks, true}, {benchmarks + "?metric=ebitda", true}, {benchmarks + "?metric=roi_percent&industry=", true},
		{benchmarks + "?metric=roi_percent&industry=" + long, true}, {benchmarks + "?metric=roi_percent&metric=roi_percent", false},
		{benchmarks + "?metric=roi_percent&industry=%20%20", false}, {benchmarks + "?metric=roi_percent&colour=red", false},
	} {
		call(contractCall{as: &analyst, method: "GET", path: c.path, want: 400, code: "INVALID_PARAMETER", docRejects: c.docRejects, docSkip: !c.docRejects})
	}
	for _, path := range []string{forecasts, benchmarks + "?metric=roi_percent"} {
		call(contractCall{method: "GET", path: path, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &reader, method: "GET", path: path, want: 403, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &other, method: "GET", path: path, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
	}

	// 503 past the deadline: every analysis reads initiatives, and a second connection holds them
	// locked (ACCESS EXCLUSIVE) for longer than the deadline (300 ms, set through the config), so
	// the analysis's query waits until PostgreSQL cancels it at the statement timeout; the answer
	// comes at the deadline, with Retry-After.
	d2 := ts.srv.Deps
	d2.Config.AnalyticsTimeout, d2.Registry = 300*time.Millisecond, nil
	slow := &testServer{t: t, srv: api.New(d2), pool: ts.pool, keys: ts.keys, tenant: ts.tenant}
	lock, err := ts.pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(context.Background(), "LOCK TABLE initiatives IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{forecasts, benchmarks + "?metric=roi_percent", "/v1/analytics/roi", "/v1/analytics/realization", "/v1/analytics/trends"} {
		start := time.Now()
		r := cc.on(slow).call(t, contractCall{as: &analyst, method: "GET", path: path, want: 503, code: "SERVICE_UNAVAILABLE"})
		if took := time.Since(start); took > 2500*time.Millisecond || r.header.Get("Retry-After") != "5" {
			t.Errorf("%s: 503 after %s, Retry-After %q", path, took, r.header.Get("Retry-After"))
		}
	}
	if err := lock.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The pool is not poisoned: the normal server still answers.
	call(contractCall{as: &analyst, method: "GET", path: forecasts, want: 200})

	// 429 on the shared analytics limit, then the database gone: 503.
	v := url.Values{"metric": {"roi_percent"}}
	cc.limitsAndOutage(t, ts, admin, "/v1/analytics/roi", []contractCall{
		{method: "GET", path: forecasts + "?group_by=owner"},
		{method: "GET", path: benchmarks + "?" + v.Encode()},
	})
	for _, u := range cc.uncovered([]string{"analytics-insights"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// Accuracy of benefits with a plan (by hand): a monthly plan of 100 in 2024-01 and 300 in
// 2024-03 (02 unlisted: 0) with actuals 50, 20, 300: pairs (100, 50), (0, 20), (300, 300):
// MAPE over e ≠ 0 (0.5 + 0) / 2 = 25 %, WAPE 70 / 400 = 17.5 %, bias −30 / 400 = −7.5 %. A
// quarterly plan of 1,000 in 2024-Q2 only, actuals 500 in Q1 (expects 0) and 900 in Q2:
// MAPE 10 %, WAPE 600 / 1,000 = 60 %, bias 400 / 1,000 = 40 %.
func TestForecastAccuracyWithPlans(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	in := ts.createInitiative(admin, map[string]any{"name": "Planned"})
	benefit := func(name, freq string, plan []any, actuals map[string]float64) {
		t.Helper()
		id := ts.createBenefit(admin, map[string]any{"initiative_id": in, "name": name, "category": "cost_savings", "expected_value": 1200, "currency": "USD",
			"unit": "currency", "measurement_frequency": freq, "expected_start_date": "2024-01-01", "expected_end_date": "2024-12-31", "plan": plan})
		for period, v := range actuals {
			expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": v, "period": period}), 201)
		}
	}
	benefit("monthly", "monthly", []any{map[string]any{"period": "2024-01", "expected": 100}, map[string]any{"period": "2024-03", "expected": 300}},
		map[string]float64{"2024-01": 50, "2024-02": 20, "2024-03": 300})
	benefit("quarterly", "quarterly", []any{map[string]any{"period": "2024-04", "expected": 1000}}, map[string]float64{"2024-01": 500, "2024-04": 900})
	r := ts.do(&admin, "GET", "/v1/analytics/forecasts?group_by=benefit", nil)
	expect(t, r, 200)
	var got []string
	for _, g := range r.json(t)["data"].(map[string]any)["groups"].([]any) {
		got = append(got, g.(map[string]any)["name"].(string)+" "+accuracySummary(g.(map[string]any)))
	}
	if want := "monthly 3 25/17.5/-7.5 400/370; quarterly 2 10/60/40 1000/1400"; strings.Join(got, "; ") != want {
		t.Errorf("with plans\n got %s\nwant %s", strings.Join(got, "; "), want)
	}
}
