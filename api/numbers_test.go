package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/testenv"
)

// TestSameFigureOnEverySurface: one tenant with FX rates and the awkward
// amounts a finance team checked; every endpoint and document that shows a
// figure shows it to the cent, as PostgreSQL's numeric arithmetic and
// round(…, 2) give it (worked out by hand, base USD, EUR at 1.0825 in every
// month of 2024, all periods in the past):
//
//	E1 EUR 3,240/yr monthly, 2024-01 only (270.00); actual 2024-01 270.00
//	   → 270.00 × 1.0825 = 292.275 (float64 made it 292.27499… and showed 292.27)
//	E2 EUR 28,562.88/yr monthly, 2024-02 only (2,380.24); actual 2,380.24
//	E3 EUR 40,869.12/yr monthly, 2024-02 only (3,405.76); actual 3,405.76
//	   → (2,380.24 + 3,405.76) × 1.0825 = 6,263.345 (detail 6,263.34 and realisation 6,263.35 before)
//	U1 USD 1.20/yr monthly 2024-01..11 (0.10 a month); actuals 0.10 in 01..10 and 0.005 in 11
//	   → actual 1.005 (float64 summed it to 1.00499…: 1.00); expected measured 1.10
//	U2 USD 32.10/yr monthly, 2024-12 only (2.675); no actual: not yet measured 2.675
//	cost EUR 270.00 once 2024-01 → 292.275
//
//	realised            292.275 + 6,263.345 + 1.005      = 6,556.625 → 6,556.63
//	expected, measured  292.275 + 6,263.345 + 1.10       = 6,556.72
//	not yet measured    2.675                            → 2.68
//	expected to date    6,556.72 + 2.675                 = 6,559.395 → 6,559.40
//	variance            6,556.625 − 6,556.72             = −0.095 → −0.10 (half away from zero)
//	total cost          292.275                          → 292.28
//	ROI's total benefits (actuals through 2024-11, plan after) 6,556.625 + 2.675 = 6,559.30
//
// Rounded once, at the edge: summing the rounded parts would give 6,556.63
// + … − a cent here and there; every surface below must agree.
func TestSameFigureOnEverySurface(t *testing.T) {
	requireDocTools(t)
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	var rates []map[string]any
	for m := 1; m <= 12; m++ {
		rates = append(rates, map[string]any{"currency": "EUR", "period": fmt.Sprintf("2024-%02d", m), "rate": 1.0825})
	}
	expect(t, ts.do(&admin, "PUT", "/v1/settings/fx-rates", map[string]any{"rates": rates}), 200)

	initID := ts.createInitiative(admin, map[string]any{"name": "Numbers"})
	benefit := func(name, currency string, perYear float64, start, end string, actuals map[string]float64) string {
		t.Helper()
		id := ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": name, "category": "cost_savings", "expected_value": perYear,
			"currency": currency, "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": start, "expected_end_date": end})
		for period, v := range actuals {
			expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"period": period, "value": v}), 201)
		}
		return id
	}
	e1 := benefit("E1", "EUR", 3_240, "2024-01-01", "2024-01-31", map[string]float64{"2024-01": 270.00})
	benefit("E2", "EUR", 28_562.88, "2024-02-01", "2024-02-29", map[string]float64{"2024-02": 2_380.24})
	benefit("E3", "EUR", 40_869.12, "2024-02-01", "2024-02-29", map[string]float64{"2024-02": 3_405.76})
	u1Actuals := map[string]float64{"2024-11": 0.005}
	for m := 1; m <= 10; m++ {
		u1Actuals[fmt.Sprintf("2024-%02d", m)] = 0.10
	}
	u1 := benefit("U1", "USD", 1.20, "2024-01-01", "2024-11-30", u1Actuals)
	u2 := benefit("U2", "USD", 32.10, "2024-12-01", "2024-12-31", nil)
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs",
		map[string]any{"name": "Licence", "category": "opex", "amount": 270.00, "currency": "EUR", "period": "2024-01"}), 201)

	want := map[string]float64{
		"realized": 6_556.63, "measured": 6_556.72, "unmeasured": 2.68, "expected": 6_559.40, "variance": -0.10, "cost": 292.28,
	}
	same := func(surface string, got map[string]any, names map[string]string) {
		t.Helper()
		for figure, field := range names {
			if v, ok := got[field].(float64); !ok || v != want[figure] {
				t.Errorf("%s: %s = %v, want %v", surface, field, got[field], want[figure])
			}
		}
	}

	// The initiative detail.
	detail := ts.do(&admin, "GET", "/v1/initiatives/"+initID, nil)
	expect(t, detail, 200)
	same("initiative detail", detail.json(t)["metrics"].(map[string]any), map[string]string{"realized": "realized_value_to_date",
		"measured": "expected_measured_to_date", "unmeasured": "expected_unmeasured_to_date", "expected": "expected_value_to_date",
		"variance": "variance", "cost": "total_cost"})

	// Realisation analytics, of the initiative and of the portfolio (the only initiative).
	realizationFields := map[string]string{"realized": "realized_to_date", "measured": "expected_measured_to_date",
		"unmeasured": "expected_unmeasured_to_date", "expected": "expected_to_date", "variance": "variance"}
	for _, path := range []string{"/v1/analytics/realization?initiative_id=" + initID, "/v1/analytics/realization"} {
		r := ts.do(&admin, "GET", path, nil)
		expect(t, r, 200)
		same(path, r.json(t)["data"].(map[string]any), realizationFields)
	}
	// The portfolio dashboard's value card.
	dash := ts.do(&admin, "GET", "/v1/dashboards/portfolio", nil)
	expect(t, dash, 200)
	same("portfolio dashboard", dash.json(t)["data"].(map[string]any)["value"].(map[string]any), realizationFields)

	// ROI: the same cost; total benefits on its actual basis.
	roi := ts.do(&admin, "GET", "/v1/analytics/roi?initiative_id="+initID, nil)
	expect(t, roi, 200)
	if d := roi.json(t)["data"].(map[string]any); d["total_costs"] != 292.28 || d["total_benefits"] != 6_559.30 {
		t.Errorf("roi: total_costs %v (want 292.28), total_benefits %v (want 6559.3)", d["total_costs"], d["total_benefits"])
	}

	// The variance reports, in each benefit's own currency: E1's 270.00; U1's ten
	// 0.10 and one 0.005 → 1.005 → 1.01 against 1.10 (−0.095 → −0.10); U2 not measured.
	variance := func(id, query string) map[string]any {
		r := ts.do(&admin, "GET", "/v1/benefits/"+id+"/variance?"+query, nil)
		expect(t, r, 200)
		return r.json(t)
	}
	if v := variance(e1, "year=2024"); v["actual_ytd"] != 270.0 || v["expected_ytd"] != 270.0 || v["variance"] != 0.0 {
		t.Errorf("E1 variance: %v", v)
	}
	if v := variance(u1, "year=2024"); v["actual_ytd"] != 1.01 || v["expected_ytd"] != 1.1 || v["variance"] != -0.1 || v["expected_unmeasured"] != 0.0 {
		t.Errorf("U1 variance: %v", v)
	}
	if v := variance(u2, "year=2024&through=2024-12"); v["expected_ytd"] != 0.0 || v["expected_unmeasured"] != 2.68 || v["variance_percent"] != nil ||
		fmt.Sprint(v["missing_periods"]) != "[2024-12]" {
		t.Errorf("U2 variance: %v", v)
	}

	// Approve a case: its frozen snapshot holds the same figures.
	body := businessCaseBody(initID, "Numbers case")
	body["template"] = "cfo_view"
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r := ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	casePath := "/v1/business-cases/" + r.json(t)["id"].(string)
	expect(t, ts.do(&admin, "POST", casePath+"/approve", map[string]any{"approval_level": "board", "notes": "To the cent."}), 200)
	snap := ts.do(&admin, "GET", casePath, nil).json(t)["snapshot"].(map[string]any)
	same("frozen snapshot", snap, map[string]string{"realized": "realized_value_to_date", "measured": "expected_measured_to_date",
		"unmeasured": "expected_unmeasured_to_date", "expected": "expected_value_to_date", "variance": "variance"})
	if snap["total_costs"] != 292.28 || snap["total_benefits"] != 6_559.40 || snap["definitions_version"] != 2.0 {
		t.Errorf("snapshot: total_costs %v total_benefits %v definitions_version %v", snap["total_costs"], snap["total_benefits"], snap["definitions_version"])
	}

	// The exported PDF, read as text: the benefits table's total row (expected of
	// the measured periods, actual, variance, … not yet measured), the cost line and
	// the appendix's value to date.
	startExportWorker(t, ts)
	exp := ts.do(&admin, "POST", casePath+"/export", map[string]any{"format": "pdf", "include_appendices": true})
	expect(t, exp, 202)
	statusURL := exp.json(t)["status_url"].(string)
	testenv.Eventually(t, 60*time.Second, "the PDF export to succeed", func() bool {
		got := ts.do(&admin, "GET", statusURL, nil).json(t)
		if got["status"] == "failed" {
			t.Fatalf("export failed: %v", got["error"])
		}
		return got["status"] == "succeeded"
	})
	d := ts.do(&admin, "GET", statusURL+"/download", nil)
	expect(t, d, 200)
	flat := strings.Join(strings.Fields(documentText(t, "pdf", d.body)), " ")
	for _, s := range []string{
		"Total 6,556.72 6,556.63 −0.10", // benefits table: expected measured, actual, variance
		"2.68",                          // … not yet measured
		"Licence", "292.28",             // the cost line
		"realised USD 6,556.63", "expected USD 6,559.40", // appendix: value to date
	} {
		if !strings.Contains(flat, s) {
			t.Errorf("the PDF lacks %q:\n%.3000s", s, flat)
		}
	}
}
