package api_test

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"testing"

	"github.com/google/uuid"
)

// analyticsPortfolio creates, through the API, the golden portfolio of
// internal/analytics/roi_test.go moved to 2024 (so that every month is past
// and "lifetime" does not depend on today): base USD, discount 10 %, P and Q
// as there, and R archived with a cost of 1,000,000 (left out of the
// portfolio). It returns the ids of P and R.
func analyticsPortfolio(t *testing.T, ts *testServer, admin caller) (p, r string) {
	t.Helper()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	rate := func(period string, r float64) map[string]any {
		return map[string]any{"currency": "EUR", "period": period, "rate": r}
	}
	expect(t, ts.do(&admin, "PUT", "/v1/settings/fx-rates", map[string]any{"rates": []any{
		rate("2024-01", 1.10), rate("2024-04", 1.20), rate("2024-07", 1.20), rate("2024-10", 1.25)}}), 200)
	cost := func(in string, amount float64, recurrence, period string, end any) {
		t.Helper()
		expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+in+"/costs", map[string]any{"name": "c", "category": "opex", "amount": amount,
			"currency": "USD", "period": period, "recurrence": recurrence, "end_period": end}), 201)
	}
	benefit := func(in, cur, freq string, perYear float64, start, end string, actuals map[string]float64) {
		t.Helper()
		id := ts.createBenefit(admin, map[string]any{"initiative_id": in, "name": "b " + cur + freq, "category": "cost_savings", "expected_value": perYear,
			"currency": cur, "unit": "currency", "measurement_frequency": freq, "expected_start_date": start, "expected_end_date": end})
		for period, v := range actuals {
			expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": v, "period": period}), 201)
		}
	}
	p = ts.createInitiative(admin, map[string]any{"name": "P"})
	cost(p, 12_000, "once", "2024-01", nil)
	cost(p, 500, "monthly", "2024-01", "2024-12")
	benefit(p, "USD", "monthly", 24_000, "2024-01-01", "2024-12-31", map[string]float64{"2024-01": 1_000, "2024-02": 1_500, "2024-03": 2_500, "2024-04": 2_000})
	benefit(p, "EUR", "quarterly", 8_000, "2024-01-01", "2024-12-31", map[string]float64{"2024-01": 1_800})
	q := ts.createInitiative(admin, map[string]any{"name": "Q"})
	cost(q, 6_000, "once", "2024-03", nil)
	benefit(q, "USD", "monthly", 12_000, "2024-03-01", "2024-08-31", nil)
	r = ts.createInitiative(admin, map[string]any{"name": "R"})
	cost(r, 1_000_000, "once", "2024-01", nil)
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+r, nil), 204)
	return p, r
}

// roiWant is what a user reads in an ROI analysis (nil: null).
type roiWant struct {
	from, to                                            string
	basis                                               string // "" for the default, forecast
	count                                               float64
	roi, payback, npv, irr, mirr, best, worst, coverage *float64
	confidence                                          string
	nullReasons                                         map[string]string
}

func checkROI(t *testing.T, r response, w roiWant) {
	t.Helper()
	if r.status != 200 {
		return
	}
	d := r.json(t)["data"].(map[string]any)
	num := func(name string, got any, want *float64) {
		t.Helper()
		if want == nil {
			if got != nil {
				t.Errorf("%s = %v, want null", name, got)
			}
			return
		}
		if g, ok := got.(float64); !ok || math.Abs(g-*want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, *want)
		}
	}
	s := d["sensitivity"].(map[string]any)
	scenario := func(name string) any { return s[name].(map[string]any)["roi_percent"] }
	num("roi_percent", d["roi_percent"], w.roi)
	num("sensitivity.expected", scenario("expected"), w.roi)
	num("sensitivity.best_case", scenario("best_case"), w.best)
	num("sensitivity.worst_case", scenario("worst_case"), w.worst)
	num("payback_months", d["payback_months"], w.payback)
	num("npv", d["npv"], w.npv)
	num("irr", d["irr"], w.irr)
	num("mirr", d["mirr"], w.mirr)
	num("coverage", d["coverage"], w.coverage)
	if basis := cmp.Or(w.basis, "forecast"); d["basis"] != basis {
		t.Errorf("basis %v, want %s", d["basis"], basis)
	}
	if roots, _ := d["irr_roots"].([]any); (w.irr != nil) != (len(roots) == 1) || (w.irr != nil && roots[0] != *w.irr) {
		t.Errorf("irr_roots %v with irr %v", d["irr_roots"], d["irr"])
	}
	month := func(m string) any {
		if m == "" {
			return nil
		}
		return m
	}
	if d["from"] != month(w.from) || d["to"] != month(w.to) || d["initiatives_count"] != w.count || d["confidence"] != w.confidence {
		t.Errorf("from %v to %v count %v confidence %v, want %s %s %v %s", d["from"], d["to"], d["initiatives_count"], d["confidence"], w.from, w.to, w.count, w.confidence)
	}
	if fmt.Sprint(d["null_reasons"]) != fmt.Sprint(w.nullReasons) {
		t.Errorf("null_reasons %v, want %v", d["null_reasons"], w.nullReasons)
	}
}

// TestContractAnalytics drives GET /v1/analytics/roi through its success and
// error paths and validates every response against api/openapi.yaml. The
// figures are the golden ones of internal/analytics (hand-worked, NPV and IRR
// by LibreOffice Calc), rounded as the API rounds them.
func TestContractAnalytics(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // negotiated limits: the 30/min analytics limit is tested on its own
	cc := newContractClient(t, ts)
	admin := ts.admin()
	analyst := caller{sub: "analyst-1", tenant: ts.tenant, permissions: []string{"analytics:read"}}
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "benefits:read"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	p, archived := analyticsPortfolio(t, ts, admin)
	roi := func(id, period string) string {
		v := url.Values{}
		if id != "" {
			v.Set("initiative_id", id)
		}
		if period != "" {
			v.Set("period", period)
		}
		return "/v1/analytics/roi?" + v.Encode()
	}

	// P over its lifetime (2024-01 .. 2024-12): the golden P figures; coverage
	// 5 of 16 elapsed periods (A 4 of 12, B 1 of 4): low.
	// MIRR at 10 % for both rates: internal/finance/testdata/oracle.py's
	// mirr() on these flows (60-digit decimals) gives 1.837482.
	pLifetime := roiWant{from: "2024-01", to: "2024-12", count: 1, roi: new(79.33), payback: new(5.75), npv: new(13172.50), irr: new(6.92087), mirr: new(1.837482),
		best: new(139.11), worst: new(30.42), coverage: new(0.3125), confidence: "low", nullReasons: map[string]string{}}
	r := call(contractCall{as: &analyst, method: "GET", path: roi(p, ""), want: 200})
	checkROI(t, r, pLifetime)
	if d := r.json(t); d["data"].(map[string]any)["initiative_id"] != p || d["data"].(map[string]any)["period"] != "lifetime" ||
		fmt.Sprint(d["meta"]) != "map[as_of:"+d["meta"].(map[string]any)["as_of"].(string)+" base_currency:USD missing_fx_rates:[]]" {
		t.Errorf("envelope: %s", r.body)
	}
	// Fiscal year 2024 is the same series; basis=forecast is the default.
	checkROI(t, call(contractCall{as: &analyst, method: "GET", path: roi(p, "2024"), want: 200}), pLifetime)
	checkROI(t, call(contractCall{as: &analyst, method: "GET", path: roi(p, "") + "&basis=forecast", want: 200}), pLifetime)
	// The plan basis leaves the actuals out: benefits 24,000 + 2,000 × (1.10 + 1.20 + 1.20 +
	// 1.25) = 33,500; ROI 15,500 / 18,000 = 86.11 %; cumulative −8,300, −6,800, −5,300, −1,400,
	// +100: payback 4 + 1,400 / 1,500 = 4.93; NPV, IRR and MIRR by oracle.py on these flows.
	checkROI(t, call(contractCall{as: &analyst, method: "GET", path: roi(p, "") + "&basis=plan", want: 200}), roiWant{from: "2024-01", to: "2024-12", basis: "plan", count: 1,
		roi: new(86.11), payback: new(4.93), npv: new(14396.43), irr: new(10.686776), mirr: new(2.296009), best: new(148.15), worst: new(35.35),
		coverage: new(0.3125), confidence: "low", nullReasons: map[string]string{}})
	// 2024-Q2: benefits 8,400, costs 1,500; every month positive: no IRR;
	// NPV 3,900 + 1,500/1.1^(1/12) + 1,500/1.1^(2/12) = 6,864.49.
	checkROI(t, call(contractCall{as: &analyst, method: "GET", path: roi(p, "2024-Q2"), want: 200}), roiWant{from: "2024-04", to: "2024-06", count: 1,
		roi: new(460.0), payback: new(0.0), npv: new(6864.49), best: new(646.67), worst: new(307.27), coverage: new(0.25), confidence: "low",
		nullReasons: map[string]string{"irr": "no_sign_change", "mirr": "no_sign_change"}})
	// The portfolio: P and Q, not the archived R (its 1,000,000 cost would sink the ROI);
	// coverage 5 of 22 (Q's 6 months have no actual).
	checkROI(t, call(contractCall{as: &analyst, method: "GET", path: roi("", "lifetime"), want: 200}), roiWant{from: "2024-01", to: "2024-12", count: 2,
		roi: new(59.5), payback: new(6.33), npv: new(13056.93), irr: new(4.76119), mirr: new(1.403016), best: new(112.67), worst: new(16.0), coverage: new(0.2273), confidence: "low",
		nullReasons: map[string]string{}})
	// Realisation to date (every 2024 month has passed): expected A 24,000 + B 2,000 ×
	// (1.10 + 1.20 + 1.20 + 1.25) = 9,500 → P 33,500; Q 6,000. Realised A 1,000 + 1,500 + 2,500
	// + 2,000 = 7,000, B 1,800 × 1.10 = 1,980 → P 8,980, Q 0. Like for like, against what
	// the measured periods expect (A 01..04 4 × 2,000 = 8,000, B Q1 2,000 × 1.10 = 2,200):
	// P 8,980 / 10,200 = 88.04 %; Q has nothing measured: null; the portfolio the same
	// 88.04 % (against all 39,500 it read 22.73 %). R is archived: left out. Nothing at
	// risk (A's latest two: 125 % and 100 %).
	const realization = "/v1/analytics/realization"
	r = call(contractCall{as: &analyst, method: "GET", path: realization, want: 200})
	if got, want := realizationSummary(t, r), "total 39500/8980/88.04; P 33500/8980/88.04; Q 6000/0/null; cost_savings 39500/8980/88.04; at risk:; missing: []"; got != want {
		t.Errorf("realization\n got %s\nwant %s", got, want)
	}
	if d := r.json(t)["data"].(map[string]any); d["expected_measured_to_date"] != 10200.0 || d["expected_unmeasured_to_date"] != 29300.0 || d["variance"] != -1220.0 ||
		d["variance_percent"] != -11.96 {
		t.Errorf("realization, like for like: %s", r.body)
	}
	// The same figures as the initiative detail of P.
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/initiatives/" + p, want: 200})
	if m := r.json(t)["metrics"].(map[string]any); m["expected_value_to_date"] != 33500.0 || m["realized_value_to_date"] != 8980.0 || m["realization_percent"] != 88.04 ||
		m["expected_measured_to_date"] != 10200.0 || m["variance"] != -1220.0 {
		t.Errorf("detail of P: %v", m)
	}
	// An hours benefit on S, 100 a month, at 50 % in 2024-05 and 70 % in 2024-06: at risk.
	s := ts.createInitiative(admin, map[string]any{"name": "S"})
	hours := ts.createBenefit(admin, map[string]any{"initiative_id": s, "name": "Hours", "category": "productivity", "expected_value": 1200,
		"unit": "hours", "measurement_frequency": "monthly", "expected_start_date": "2024-01-01", "expected_end_date": "2024-12-31"})
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+hours+"/actuals", map[string]any{"value": 50, "period": "2024-05"}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+hours+"/actuals", map[string]any{"value": 70, "period": "2024-06"}), 201)
	r = call(contractCall{as: &analyst, method: "GET", path: realization + "?initiative_id=" + s, want: 200})
	if got, want := realizationSummary(t, r), "total 0/0/null; S 0/0/null; at risk: Hours 2024-05 100/50/50 2024-06 100/70/70; missing: []"; got != want {
		t.Errorf("realization of S\n got %s\nwant %s", got, want)
	}
	if d := r.json(t)["data"].(map[string]any); d["initiative_id"] != s || d["at_risk_benefits"].([]any)[0].(map[string]any)["benefit_id"] != hours {
		t.Errorf("realization of S: %s", r.body)
	}
	r = call(contractCall{as: &analyst, method: "GET", path: realization + "?initiative_id=" + archived, want: 200})
	if got, want := realizationSummary(t, r), "total 0/0/null; R 0/0/null; at risk:; missing: []"; got != want {
		t.Errorf("realization of the archived R\n got %s\nwant %s", got, want)
	}

	// Trends over 2024 (P and Q; S has no money benefit): expected A 2,000 a month + B 2,000 a
	// quarter at its rate + C 1,000 in 03..08; actual 2,980 (1,000 + 1,800 × 1.10), 1,500, 2,500,
	// 2,000, then 0. Slope Σ(t − 5.5)·y / Σ(t − 5.5)² = −36,890 / 143 = −257.97: down.
	const trends = "/v1/analytics/trends"
	r = call(contractCall{as: &analyst, method: "GET", path: trends + "?from=2024-01&to=2024-12&group_by=category", want: 200})
	want := "down -257.97: 2024-01 4200/2980/null 2024-02 2000/1500/null 2024-03 3000/2500/2326.67 2024-04 5400/2000/2000 " +
		"2024-05 3000/0/1500 2024-06 3000/0/666.67 2024-07 5400/0/0 2024-08 3000/0/0 2024-09 2000/0/0 2024-10 4500/0/0 2024-11 2000/0/0 2024-12 2000/0/0"
	if got := trendSummary(t, r, "total"); got != want {
		t.Errorf("trends\n got %s\nwant %s", got, want)
	}
	if got := trendSummary(t, r, "cost_savings"); got != want { // the only category
		t.Errorf("trends of cost_savings\n got %s\nwant %s", got, want)
	}
	r = call(contractCall{as: &analyst, method: "GET", path: trends + "?from=2024-03&to=2024-04&group_by=initiative", want: 200})
	if got, want := trendSummary(t, r, "P")+" | "+trendSummary(t, r, "Q"), "<nil> <nil>: 2024-03 2000/2500/null 2024-04 4400/2000/null | <nil> <nil>: 2024-03 1000/0/null 2024-04 1000/0/null"; got != want {
		t.Errorf("trends by initiative\n got %s\nwant %s", got, want)
	}
	r = call(contractCall{as: &analyst, method: "GET", path: trends, want: 200})
	if d := r.json(t)["data"].(map[string]any); d["group_by"] != nil || len(d["groups"].([]any)) != 0 || len(d["total"].(map[string]any)["points"].([]any)) != 12 || d["to"] != r.json(t)["meta"].(map[string]any)["as_of"] {
		t.Errorf("default trends: %s", r.body)
	}

	// An archived initiative can still be analysed by id.
	r = call(contractCall{as: &analyst, method: "GET", path: roi(archived, ""), want: 200})
	checkROI(t, r, roiWant{from: "2024-01", to: "2024-01", count: 1, roi: new(-100.0), npv: new(-1e6), best: new(-100.0), worst: new(-100.0),
		confidence: "low", nullReasons: map[string]string{"irr": "no_sign_change", "mirr": "no_sign_change", "payback_months": "never_paid_back"}})

	// A missing FX rate: every money figure null, the rate named.
	// (A change of base clears the rates; back to USD, the rates but 2024-10 again.)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	expect(t, ts.do(&admin, "PUT", "/v1/settings/fx-rates", map[string]any{"rates": []any{
		map[string]any{"currency": "EUR", "period": "2024-01", "rate": 1.10}, map[string]any{"currency": "EUR", "period": "2024-04", "rate": 1.20},
		map[string]any{"currency": "EUR", "period": "2024-07", "rate": 1.20}}}), 200)
	r = call(contractCall{as: &analyst, method: "GET", path: roi(p, ""), want: 200})
	missing := map[string]string{}
	for _, f := range []string{"roi_percent", "payback_months", "npv", "irr", "mirr", "total_benefits", "total_costs", "sensitivity.best_case.roi_percent", "sensitivity.worst_case.roi_percent",
		"sensitivity.delayed_one_month.roi_percent", "monte_carlo"} {
		missing[f] = "missing_fx_rates"
	}
	checkROI(t, r, roiWant{from: "2024-01", to: "2024-12", count: 1, coverage: new(0.3125), confidence: "low", nullReasons: missing})
	if fmt.Sprint(r.json(t)["meta"].(map[string]any)["missing_fx_rates"]) != "[map[currency:EUR period:2024-10]]" {
		t.Errorf("missing rates: %s", r.body)
	}
	// A window that does not need the rate is unaffected.
	checkROI(t, call(contractCall{as: &analyst, method: "GET", path: roi(p, "2024-Q2"), want: 200}), roiWant{from: "2024-04", to: "2024-06", count: 1,
		roi: new(460.0), payback: new(0.0), npv: new(6864.49), best: new(646.67), worst: new(307.27), coverage: new(0.25), confidence: "low",
		nullReasons: map[string]string{"irr": "no_sign_change", "mirr": "no_sign_change"}})

	// Realisation: B's unmeasured Q4 needs the 2024-10 rate: the plan to date of P and the
	// total is null; the like-for-like figures need only the measured periods' rates.
	r = call(contractCall{as: &analyst, method: "GET", path: realization, want: 200})
	if got, want := realizationSummary(t, r), "total null/8980/88.04; P null/8980/88.04; Q 6000/0/null; S 0/0/null; cost_savings null/8980/88.04; "+
		"at risk: Hours 2024-05 100/50/50 2024-06 100/70/70; missing: [map[currency:EUR period:2024-10]]"; got != want {
		t.Errorf("realization without a rate\n got %s\nwant %s", got, want)
	}
	// Without the 2024-01 rate either, B's actual cannot be converted: realised is null too.
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	r = call(contractCall{as: &analyst, method: "GET", path: realization, want: 200})
	if got, want := realizationSummary(t, r), "total null/null/null; P null/null/null; Q 6000/0/null; S 0/0/null; cost_savings null/null/null; "+
		"at risk: Hours 2024-05 100/50/50 2024-06 100/70/70; missing: [map[currency:EUR period:2024-01] map[currency:EUR period:2024-04] "+
		"map[currency:EUR period:2024-07] map[currency:EUR period:2024-10]]"; got != want {
		t.Errorf("realization without any rate\n got %s\nwant %s", got, want)
	}

	// Tenant isolation: another tenant sees neither the initiative nor the portfolio.
	call(contractCall{as: &other, method: "GET", path: roi(p, ""), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "GET", path: realization + "?initiative_id=" + p, want: 404, code: "NOT_FOUND"})
	r = call(contractCall{as: &other, method: "GET", path: realization, want: 200})
	if got, want := realizationSummary(t, r), "total 0/0/null; at risk:; missing: []"; got != want {
		t.Errorf("another tenant's realization: %s", got)
	}
	r = call(contractCall{as: &other, method: "GET", path: roi("", ""), want: 200})
	nothing := map[string]string{}
	for _, f := range []string{"roi_percent", "payback_months", "npv", "irr", "mirr", "sensitivity.best_case.roi_percent", "sensitivity.worst_case.roi_percent",
		"sensitivity.delayed_one_month.roi_percent", "monte_carlo"} {
		nothing[f] = "no_data"
	}
	checkROI(t, r, roiWant{confidence: "low", nullReasons: nothing})
	if d := r.json(t)["data"].(map[string]any); d["from"] != nil || d["total_costs"] != 0.0 || d["initiatives_count"] != 0.0 {
		t.Errorf("other tenant's portfolio: %s", r.body)
	}

	r = call(contractCall{as: &other, method: "GET", path: "/v1/analytics/trends?from=2024-01&to=2024-03&group_by=initiative", want: 200})
	if got, want := trendSummary(t, r, "total"), "flat 0: 2024-01 0/0/null 2024-02 0/0/null 2024-03 0/0/0"; got != want || len(r.json(t)["data"].(map[string]any)["groups"].([]any)) != 0 {
		t.Errorf("another tenant's trends: %s", r.body)
	}

	// 400: malformed parameters, unknown or repeated ones, no tenant.
	for _, c := range []struct {
		query      string
		docRejects bool
	}{
		{"period=2024-q2", true}, {"period=2024-Q5", true}, {"period=24", true}, {"period=1999", false}, {"period=2024-06", true},
		{"initiative_id=nope", true}, {"initiative_id=" + p + "&initiative_id=" + p, false}, {"colour=red", false}, {"period=%zz", false},
		{"basis=actual", true}, {"basis=PLAN", true}, {"basis=plan&basis=forecast", false},
	} {
		call(contractCall{as: &analyst, method: "GET", path: "/v1/analytics/roi?" + c.query, want: 400, code: "INVALID_PARAMETER", docRejects: c.docRejects, docSkip: !c.docRejects})
	}
	for _, q := range []string{"initiative_id=nope", "period=ytd", "initiative_id=" + p + "&initiative_id=" + p} {
		call(contractCall{as: &analyst, method: "GET", path: realization + "?" + q, want: 400, code: "INVALID_PARAMETER", docRejects: q == "initiative_id=nope", docSkip: q != "initiative_id=nope"})
	}
	for _, q := range []string{"from=2024-07&to=2024-06", "from=2019-12&to=2024-12", "from=2024-1", "to=2024-13", "group_by=owner", "from=2024-01&from=2024-02", "initiative_id=" + p} {
		docRejects := q == "from=2024-1" || q == "to=2024-13" || q == "group_by=owner"
		call(contractCall{as: &analyst, method: "GET", path: trends + "?" + q, want: 400, code: "INVALID_PARAMETER", docRejects: docRejects, docSkip: !docRejects})
	}
	for _, path := range []string{roi("", ""), realization, trends} {
		call(contractCall{as: &analyst, method: "GET", path: path, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: "GET", path: path, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &reader, method: "GET", path: path, want: 403, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &other, method: "GET", path: path, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
	}
	call(contractCall{as: &analyst, method: "GET", path: realization + "?initiative_id=" + uuid.NewString(), want: 404, code: "NOT_FOUND"})
	// 401, 403: no token; no analytics:read; a token of another tenant naming this one.
	call(contractCall{method: "GET", path: roi("", ""), want: 401, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &reader, method: "GET", path: roi(p, ""), want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &other, method: "GET", path: roi("", ""), headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
	// 404: an initiative that does not exist.
	call(contractCall{as: &analyst, method: "GET", path: roi(uuid.NewString(), ""), want: 404, code: "NOT_FOUND"})

	// 429: the 31st analytics request of a minute (TestAnalyticsRateLimit checks the count).
	limited := contractTenant(t, ts, "enterprise")
	limits := contractFrozenServer(ts) // no refill however slowly the 30 run
	limitsCC := cc.on(limits)
	for range 30 {
		expect(t, limits.do(&limited, "GET", roi("", ""), nil), 200)
	}
	limitsCC.call(t, contractCall{as: &limited, method: "GET", path: roi("", ""), want: 429, code: "RATE_LIMIT_EXCEEDED"})
	limitsCC.call(t, contractCall{as: &limited, method: "GET", path: realization, want: 429, code: "RATE_LIMIT_EXCEEDED"})
	limitsCC.call(t, contractCall{as: &limited, method: "GET", path: trends, want: 429, code: "RATE_LIMIT_EXCEEDED"})

	// 503: the database is gone.
	ts.pool.Close()
	call(contractCall{as: &analyst, method: "GET", path: roi(p, ""), want: 503, code: "SERVICE_UNAVAILABLE"})
	call(contractCall{as: &analyst, method: "GET", path: realization, want: 503, code: "SERVICE_UNAVAILABLE"})
	call(contractCall{as: &analyst, method: "GET", path: trends, want: 503, code: "SERVICE_UNAVAILABLE"})

	for _, u := range cc.uncovered([]string{"analytics"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// TestAnalyticsRateLimit: 30 analytics requests a minute per tenant, shared
// by every /v1/analytics path, on a plan whose own burst (enterprise: 200)
// would allow more; the 31st is 429 with Retry-After, and another tenant is
// not affected.
func TestAnalyticsRateLimit(t *testing.T) {
	ts := contractFrozenServer(newTestServer(t, "enterprise")) // a limiter clock that stands still: no refill mid-test
	admin := ts.admin()
	for i := range 30 {
		path := "/v1/analytics/roi"
		if i%2 == 1 {
			path += "?period=ytd"
		}
		expect(t, ts.do(&admin, "GET", path, nil), 200)
	}
	r := ts.do(&admin, "GET", "/v1/analytics/roi?period=2025", nil)
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	// Other endpoints of the same tenant are not limited by it.
	expect(t, ts.do(&admin, "GET", "/v1/initiatives", nil), 200)
	other := contractTenant(t, ts, "enterprise")
	expect(t, ts.do(&other, "GET", "/v1/analytics/roi", nil), 200)
}

// realizationSummary writes a realization as "total e/r/%; <initiative> e/r/%...;
// <category> e/r/%...; at risk: <name> <period> e/a/%...; missing: [...]".
func realizationSummary(t *testing.T, r response) string {
	t.Helper()
	if r.status != 200 {
		return fmt.Sprintf("status %d", r.status)
	}
	body := r.json(t)
	d := body["data"].(map[string]any)
	v := func(x any) string {
		if x == nil {
			return "null"
		}
		return fmt.Sprint(x)
	}
	amounts := func(m map[string]any) string {
		return v(m["expected_to_date"]) + "/" + v(m["realized_to_date"]) + "/" + v(m["realization_percent"])
	}
	out := "total " + amounts(d)
	for _, in := range d["initiatives"].([]any) {
		out += "; " + in.(map[string]any)["name"].(string) + " " + amounts(in.(map[string]any))
	}
	for _, c := range d["categories"].([]any) {
		out += "; " + c.(map[string]any)["category"].(string) + " " + amounts(c.(map[string]any))
	}
	out += "; at risk:"
	for i, b := range d["at_risk_benefits"].([]any) {
		if i > 0 {
			out += ","
		}
		out += " " + b.(map[string]any)["name"].(string)
		for _, p := range b.(map[string]any)["periods"].([]any) {
			pm := p.(map[string]any)
			out += " " + pm["period"].(string) + " " + v(pm["expected"]) + "/" + v(pm["actual"]) + "/" + v(pm["realization_percent"])
		}
	}
	return out + "; missing: " + fmt.Sprint(body["meta"].(map[string]any)["missing_fx_rates"])
}

// trendSummary writes the series of the total ("total") or of the group of
// that name as "<direction> <slope>: <period> expected/actual/ma ...".
func trendSummary(t *testing.T, r response, name string) string {
	t.Helper()
	if r.status != 200 {
		return fmt.Sprintf("status %d", r.status)
	}
	d := r.json(t)["data"].(map[string]any)
	series := map[string]any(nil)
	if name == "total" {
		series = d["total"].(map[string]any)
	}
	for _, g := range d["groups"].([]any) {
		if g.(map[string]any)["name"] == name {
			series = g.(map[string]any)
		}
	}
	if series == nil {
		return "no series " + name
	}
	v := func(x any) string {
		if x == nil {
			return "null"
		}
		return fmt.Sprint(x)
	}
	out := fmt.Sprint(series["direction"], " ", series["slope"], ":")
	for _, p := range series["points"].([]any) {
		pm := p.(map[string]any)
		out += " " + pm["period"].(string) + " " + v(pm["expected"]) + "/" + v(pm["actual"]) + "/" + v(pm["moving_average"])
	}
	return out
}
