package api_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/testenv"
)

// TestHeadlineFiguresAgreeOnBothBases: the ROI analysis of an initiative
// over its lifetime, on each basis, the snapshot of its approved case and
// the key figures every template prints (read back with pdftotext, DOCX and
// PPTX through LibreOffice) agree figure for figure, labelled plan and
// forecast. The initiative is the "delayed capex": a quick-win
// benefit makes the first month positive, the CHF 1.5m build comes a month
// later, so the first definition of payback said 0 months; benefits of
// 150,000 a month were measured at 120,000 for the last 8 months, so the
// forecast basis (actuals to date, then plan) pays back later than plan.
func TestHeadlineFiguresAgreeOnBothBases(t *testing.T) {
	requireDocTools(t)
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "CHF", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	initID := ts.createInitiative(admin, map[string]any{"name": "Delayed capex"})
	benefit := func(name string, perYear float64, from, to string) string {
		return ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": name, "category": "cost_savings", "expected_value": perYear,
			"currency": "CHF", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": from + "-01", "expected_end_date": to + "-01"})
	}
	benefit("Quick win", 12_000, monthsAgo(11), monthsAgo(-24))
	main := benefit("Automation", 1_800_000, monthsAgo(8), monthsAgo(-24))
	for m := 8; m >= 1; m-- {
		expect(t, ts.do(&admin, "POST", "/v1/benefits/"+main+"/actuals", map[string]any{"period": monthsAgo(m), "value": 120_000}), 201)
	}
	costs := "/v1/initiatives/" + initID + "/costs"
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Build", "category": "capex", "amount": 1_500_000, "currency": "CHF", "period": monthsAgo(10)}), 201)
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Run", "category": "opex", "amount": 15_000, "currency": "CHF",
		"period": monthsAgo(10), "recurrence": "monthly", "end_period": monthsAgo(-24)}), 201)

	// The API, on each basis.
	type figures struct{ roi, npv, irr, mirr, payback float64 }
	api := map[string]figures{}
	for _, basis := range []string{"plan", "forecast"} {
		v := url.Values{"initiative_id": {initID}, "period": {"lifetime"}, "basis": {basis}}
		r := ts.do(&admin, "GET", "/v1/analytics/roi?"+v.Encode(), nil)
		expect(t, r, 200)
		d := r.json(t)["data"].(map[string]any)
		if d["basis"] != basis || len(d["null_reasons"].(map[string]any)) != 0 {
			t.Fatalf("%s: %s", basis, r.body)
		}
		api[basis] = figures{d["roi_percent"].(float64), d["npv"].(float64), d["irr"].(float64), d["mirr"].(float64), d["payback_months"].(float64)}
	}
	plan, forecast := api["plan"], api["forecast"]
	// By hand: cumulative +1,000 in the first month, −1,513,000 after the
	// build, −1,527,000 after the third, then +136,000 a month on plan:
	// payback 3 + 1,527,000 / 136,000 = 14.23 months, not 0.
	if math.Abs(plan.payback-14.23) > 1e-9 || forecast.payback <= plan.payback || forecast.roi >= plan.roi {
		t.Fatalf("plan %+v, forecast %+v", plan, forecast)
	}

	// One case per template, each exported in one of the formats (every
	// template and every format at least once); the CFO view is approved.
	exports := []struct{ template, format string }{
		{"cfo_view", "pdf"}, {"executive_summary", "docx"}, {"technical_deep_dive", "pptx"}, {"board_presentation", "pdf"},
	}
	startExportWorker(t, ts)
	for i, e := range exports {
		body := businessCaseBody(initID, "Headlines "+e.template)
		body["template"] = e.template
		body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
		body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
		r := ts.do(&admin, "POST", "/v1/business-cases", body)
		expect(t, r, 201)
		base := "/v1/business-cases/" + r.json(t)["id"].(string)
		if i == 0 {
			expect(t, ts.do(&admin, "POST", base+"/approve", map[string]any{"approval_level": "board"}), 200)
			snap := ts.do(&admin, "GET", base, nil).json(t)["snapshot"].(map[string]any)
			fc, _ := snap["forecast"].(map[string]any)
			if snap["definitions_version"] != 2.0 || snap["basis"] != "plan" || fc == nil || fc["basis"] != "forecast" {
				t.Fatalf("snapshot: %v", snap)
			}
			for _, side := range []struct {
				name string
				got  map[string]any
				want figures
			}{{"plan", snap, plan}, {"forecast", fc, forecast}} {
				g := side.got
				// The API rounds IRR and MIRR to 6 decimals and payback to 2; the snapshot keeps them.
				if g["roi_percent"] != side.want.roi || g["npv"] != side.want.npv || math.Abs(g["irr"].(float64)-side.want.irr) > 5e-7 ||
					math.Abs(g["mirr"].(float64)-side.want.mirr) > 5e-7 || math.Abs(g["payback_months"].(float64)-side.want.payback) > 0.005 {
					t.Errorf("snapshot %s figures %v, the API's %+v", side.name, g, side.want)
				}
			}
		}
		text := exportText(t, ts, base, e.format)
		for _, basis := range []string{"plan", "forecast"} {
			f, label := api[basis], map[string]string{"plan": "Plan", "forecast": "Forecast"}[basis]
			for _, s := range []string{render.FormatPercent(f.roi), render.FormatMoneyShort(f.npv, "CHF"), render.FormatPercent(f.irr * 100),
				render.FormatPercent(f.mirr * 100), render.FormatMonths(f.payback)} {
				if !strings.Contains(text, label+" "+s) {
					t.Errorf("the %s %s lacks %q: %.3000s", e.template, e.format, label+" "+s, text)
				}
			}
			if e.template == "cfo_view" { // the key-figure table: full NPV, plan and forecast columns
				if row := "Net present value " + render.FormatMoney(plan.npv, "CHF") + " " + render.FormatMoney(forecast.npv, "CHF"); !strings.Contains(text, row) {
					t.Errorf("the CFO view lacks the row %q", row)
				}
			}
		}
		if strings.Contains(text, "Plan 0 months") || strings.Contains(text, "frozen at approval under definitions version") {
			t.Errorf("the %s %s shows the old payback or an old definitions version", e.template, e.format)
		}
	}
}

// exportText exports the case at base in format and returns its text as a
// reader sees it, on single spaces.
func exportText(t *testing.T, ts *testServer, base, format string) string {
	t.Helper()
	admin := ts.admin()
	r := ts.do(&admin, "POST", base+"/export", map[string]any{"format": format, "include_appendices": false})
	expect(t, r, 202)
	u := r.json(t)["status_url"].(string)
	testenv.Eventually(t, 90*time.Second, format+" export to succeed", func() bool {
		got := ts.do(&admin, "GET", u, nil).json(t)
		if got["status"] == "failed" {
			t.Fatalf("%s export failed: %v", format, got["error"])
		}
		return got["status"] == "succeeded"
	})
	d := ts.do(&admin, "GET", u+"/download", nil)
	expect(t, d, 200)
	return strings.Join(strings.Fields(documentText(t, format, d.body)), " ")
}

// TestFrozenUnderOldDefinitions: a case approved before definition versions
// were recorded (its stored snapshot and frozen document have neither a
// version nor forecast figures) keeps its frozen figures: the API shows
// definitions_version 1 with the old figures untouched, and its export says
// the figures were frozen under definitions version 1.
func TestFrozenUnderOldDefinitions(t *testing.T) {
	requireDocTools(t)
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	initID := ts.createInitiative(admin, map[string]any{"name": "Old case"})
	ts.createBenefit(admin, benefitBody(initID, "Savings"))
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 5000,
		"currency": "EUR", "period": monthsAgo(24)}), 201)
	body := businessCaseBody(initID, "Approved long ago")
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r := ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	caseID := r.json(t)["id"].(string)
	base := "/v1/business-cases/" + caseID
	expect(t, ts.do(&admin, "POST", base+"/approve", map[string]any{"approval_level": "board"}), 200)

	// Rewrite what was stored as a version-1 approval stored it: no version,
	// no MIRR, no forecast, and a payback of 0 (the first definition's).
	ctx := context.Background()
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE business_cases SET snapshot = (snapshot - 'definitions_version' - 'basis' - 'forecast' - 'mirr' - 'mirr_reason' - 'irr_roots')
			|| '{"payback_months": 0, "payback_reason": null}' WHERE id = $1`, caseID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE business_case_documents SET document = jsonb_set(document #- '{figures,definitions_version}' #- '{figures,forecast}' #- '{figures,mirr}',
			'{figures,payback_months}', '{"value": 0}') WHERE business_case_id = $1`, caseID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	snap := ts.do(&admin, "GET", base, nil).json(t)["snapshot"].(map[string]any)
	if snap["definitions_version"] != 1.0 || snap["forecast"] != nil || snap["mirr"] != nil || snap["payback_months"] != 0.0 || fmt.Sprint(snap["irr_roots"]) != "[]" {
		t.Errorf("the old snapshot reads %v", snap)
	}
	startExportWorker(t, ts)
	text := exportText(t, ts, base, "pdf")
	for _, s := range []string{"At a glance: plan and forecast (frozen at approval under definitions version 1)", "Plan 0 months", "Forecast n/a"} {
		if !strings.Contains(text, s) {
			t.Errorf("the export of the old case lacks %q: %.2000s", s, text)
		}
	}
}

// TestROIMultipleRoots: the golden case "two_sign_changes" (invest 10,000,
// earn 1,200 a month for 23 months, 18,000 to wind down) through the API:
// no single IRR, both roots listed, MIRR and NPV as the oracle computes
// them (internal/finance/testdata/golden.json), never paid back (the series
// ends at −1,400).
func TestROIMultipleRoots(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	initID := ts.createInitiative(admin, map[string]any{"name": "Wind-down"})
	ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": "Service", "category": "revenue_growth", "expected_value": 14_400,
		"currency": "EUR", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": "2024-02-01", "expected_end_date": "2025-12-01"})
	costs := "/v1/initiatives/" + initID + "/costs"
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Build", "category": "capex", "amount": 10_000, "currency": "EUR", "period": "2024-01"}), 201)
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Wind-down", "category": "opex", "amount": 18_000, "currency": "EUR", "period": "2026-01"}), 201)
	r := cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/analytics/roi?basis=plan&initiative_id=" + initID, want: 200})
	d := r.json(t)["data"].(map[string]any)
	if d["from"] != "2024-01" || d["to"] != "2026-01" || d["irr"] != nil || d["npv"] != 146.59 || d["mirr"] != 0.083108 || d["payback_months"] != nil ||
		fmt.Sprint(d["irr_roots"]) != "[0.054928 1.236715]" ||
		fmt.Sprint(d["null_reasons"]) != "map[irr:multiple_roots payback_months:never_paid_back]" {
		t.Errorf("ROI of a series with two IRRs: %s", r.body)
	}
}
