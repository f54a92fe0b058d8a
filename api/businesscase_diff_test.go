package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// TestContractBusinessCaseDiff compares an approved version (its frozen
// inputs) with the draft that follows it (live figures, after the
// initiative changed) and checks every step of the attribution against the
// numbers worked by hand in internal/businesscase TestAttributeGolden: the
// same flows, here entered through the API (EUR, monthly benefits):
//
//	approved v1: rate 0; cost 1200 once 2026-01; A 3600/yr Jan–Apr 2026
//	  (300 a month); B 1200/yr Jan–Feb 2026 (100 a month)
//	  → ROI 200/1200 = 16.67 %, NPV 200.00, payback 3 + 100/300 = 3.33
//	draft v2: rate 1.01^12 − 1 (1 % a month); cost 1500; A 4800/yr (400 a
//	  month); B deleted; D 2400/yr Feb–Mar 2026 (200 a month)
//	  → ROI 500/1500 = 33.33 %, NPV 470.47, payback 2 + 500/600 = 2.83
//
// Then the error paths, a case frozen without inputs (as before migration
// 00016 plus this change: figures only, attribution null), 429 and 503.
func TestContractBusinessCaseDiff(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"business_cases:read"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }

	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0, "fiscal_year_start_month": 1}), 200)
	initID := ts.createInitiative(admin, map[string]any{"name": "Cloud migration"})
	benefit := func(name string, perYear float64, start, end string) string {
		return ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": name, "category": "cost_savings", "expected_value": perYear,
			"currency": "EUR", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": start, "expected_end_date": end})
	}
	a := benefit("A", 3600, "2026-01-01", "2026-04-30")
	b := benefit("B", 1200, "2026-01-01", "2026-02-28")
	r := ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "C", "category": "capex", "amount": 1200, "currency": "EUR", "period": "2026-01"})
	expect(t, r, 201)
	costID := r.json(t)["id"].(string)

	body := businessCaseBody(initID, "Cloud case")
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r = ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	v1 := r.json(t)["id"].(string)
	expect(t, ts.do(&admin, "POST", "/v1/business-cases/"+v1+"/approve", map[string]any{"approval_level": "board"}), 200)
	r = ts.do(&admin, "POST", "/v1/business-cases/"+v1+"/versions", nil)
	expect(t, r, 201)
	v2 := r.json(t)["id"].(string)

	// The initiative changes after the approval.
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.12682503013196977, "fiscal_year_start_month": 1}), 200)
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+initID+"/costs/"+costID, map[string]any{"amount": 1500}), 200)
	expect(t, ts.do(&admin, "PATCH", "/v1/benefits/"+a, map[string]any{"expected_value": 4800}), 200)
	expect(t, ts.do(&admin, "DELETE", "/v1/benefits/"+b, nil), 204)
	d := benefit("D", 2400, "2026-02-01", "2026-03-31")

	fig := func(m map[string]any, name string) string {
		f := m[name].(map[string]any)
		if f["value"] == nil {
			return "null(" + f["reason"].(string) + ")"
		}
		return fmt.Sprintf("%.2f", f["value"])
	}
	chg := func(v any) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprintf("%+.2f", v)
	}
	figures := func(side map[string]any) string {
		f := side["figures"].(map[string]any)
		return fmt.Sprintf("ROI %s NPV %s payback %s", fig(f, "roi_percent"), fig(f, "npv"), fig(f, "payback_months"))
	}

	// 200: v2 (live) against v1 (frozen); every step as worked by hand.
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + v2 + "/diff?against=" + v1, want: 200})
	data := r.json(t)["data"].(map[string]any)
	cs, ag := data["case"].(map[string]any), data["against"].(map[string]any)
	if cs["source"] != "live" || cs["version"] != 2.0 || figures(cs) != "ROI 33.33 NPV 470.47 payback 2.83" {
		t.Errorf("case: %v", cs)
	}
	if ag["source"] != "frozen" || ag["status"] != "approved" || figures(ag) != "ROI 16.67 NPV 200.00 payback 3.33" {
		t.Errorf("against: %v", ag)
	}
	if c := data["change"].(map[string]any); fmt.Sprint(chg(c["roi_percent"]), " ", chg(c["npv"]), " ", chg(c["payback_months"])) != "+16.66 +270.47 -0.50" {
		t.Errorf("change: %v", c)
	}
	want := []string{
		"discount_rate - ROI 16.67 (+0.00) NPV 181.31 (-18.69) payback 3.33 (+0.00)",
		"costs - ROI -6.67 (-23.34) NPV -118.69 (-300.00) payback null(never_paid_back) (null)",
		"benefit_removed B ROI -20.00 (-13.33) NPV -317.70 (-199.01) payback null(never_paid_back) (null)",
		"benefit_added D ROI 6.67 (+26.67) NPV 76.37 (+394.07) payback 3.67 (null)",
		"benefit_changed A ROI 33.33 (+26.66) NPV 470.47 (+394.10) payback 2.83 (-0.84)",
	}
	attr := data["attribution"].(map[string]any)
	steps := attr["steps"].([]any)
	if attr["method"] != "sequential_substitution" || len(steps) != len(want) || data["attribution_null_reason"] != nil {
		t.Fatalf("attribution: %s", r.body)
	}
	ids := map[string]string{"A": a, "B": b, "D": d}
	for i, s := range steps {
		s := s.(map[string]any)
		name := "-"
		if s["benefit_name"] != nil {
			name = s["benefit_name"].(string)
			if s["benefit_id"] != ids[name] {
				t.Errorf("step %d: benefit_id %v, want %s", i+1, s["benefit_id"], ids[name])
			}
		}
		f, c := s["figures"].(map[string]any), s["change"].(map[string]any)
		got := fmt.Sprintf("%s %s ROI %s (%s) NPV %s (%s) payback %s (%s)", s["cause"], name, fig(f, "roi_percent"), chg(c["roi_percent"]),
			fig(f, "npv"), chg(c["npv"]), fig(f, "payback_months"), chg(c["payback_months"]))
		if got != want[i] {
			t.Errorf("step %d:\n got %s\nwant %s", i+1, got, want[i])
		}
	}
	// The frozen figures are the approval's snapshot.
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + v1, want: 200})
	if snap := r.json(t)["snapshot"].(map[string]any); fmt.Sprintf("%.2f %.2f %.2f", snap["roi_percent"], snap["npv"], snap["payback_months"]) != "16.67 200.00 3.33" {
		t.Errorf("snapshot of v1: %s", r.body)
	}

	// The other way round: every change negated.
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + v1 + "/diff?against=" + v2, want: 200})
	if c := r.json(t)["data"].(map[string]any)["change"].(map[string]any); fmt.Sprint(chg(c["roi_percent"]), " ", chg(c["npv"])) != "-16.66 -270.47" {
		t.Errorf("reverse change: %v", c)
	}

	// 400: against missing, malformed, the same case; an unknown parameter.
	for _, c := range []struct {
		query      string
		docRejects bool // the document refuses it too (required, format uuid)
	}{{"", true}, {"?against=nope", true}, {"?against=" + v2, false}, {"?against=" + v1 + "&colour=red", false}} {
		call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + v2 + "/diff" + c.query, want: 400, code: "INVALID_PARAMETER", docRejects: c.docRejects})
	}
	// 404: either case missing; another tenant's.
	call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + v2 + "/diff?against=" + uuid.NewString(), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + uuid.NewString() + "/diff?against=" + v1, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "GET", path: "/v1/business-cases/" + v2 + "/diff?against=" + v1, want: 404, code: "NOT_FOUND"})
	// 403 without business_cases:read; 401 without credentials.
	call(contractCall{as: &nobody, method: "GET", path: "/v1/business-cases/" + v2 + "/diff?against=" + v1, want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{method: "GET", path: "/v1/business-cases/" + v2 + "/diff?against=" + v1, want: 401, code: "AUTHORIZATION_ERROR"})

	// A live case of another initiative whose figures need a USD rate never entered: null, never partial.
	usdInit := ts.createInitiative(admin, map[string]any{"name": "US expansion"})
	ts.createBenefit(admin, map[string]any{"initiative_id": usdInit, "name": "US sales", "category": "revenue_growth", "expected_value": 12000,
		"currency": "USD", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": "2026-01-01", "expected_end_date": "2026-12-31"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+usdInit+"/costs", map[string]any{"name": "Office", "category": "capex", "amount": 1000, "currency": "EUR", "period": "2026-01"}), 201)
	r = ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(usdInit, "US case"))
	expect(t, r, 201)
	usdCase := r.json(t)["id"].(string)
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + usdCase + "/diff?against=" + v1, want: 200})
	data = r.json(t)["data"].(map[string]any)
	if cs := data["case"].(map[string]any); cs["source"] != "live" || figures(cs) != "ROI null(missing_fx_rates) NPV null(missing_fx_rates) payback null(missing_fx_rates)" ||
		data["attribution"] != nil || data["attribution_null_reason"] != "missing_fx_rates" || data["change"].(map[string]any)["npv"] != nil {
		t.Errorf("a case with a missing FX rate: %s", r.body)
	}

	// A case approved before its inputs were frozen: figures compared, no attribution.
	err := pgx.BeginFunc(context.Background(), ts.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), "SELECT set_config('app.tenant_id', $1, true)", ts.tenant.String()); err != nil {
			return err
		}
		tag, err := tx.Exec(context.Background(), "UPDATE business_case_documents SET document = document - 'diff_inputs' WHERE business_case_id = $1", v1)
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("%d frozen documents updated", tag.RowsAffected())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases/" + v2 + "/diff?against=" + v1, want: 200})
	data = r.json(t)["data"].(map[string]any)
	if ag := data["against"].(map[string]any); ag["source"] != "snapshot" || figures(ag) != "ROI 16.67 NPV 200.00 payback 3.33" ||
		data["attribution"] != nil || data["attribution_null_reason"] != "no_frozen_inputs" || data["change"].(map[string]any)["npv"] != 270.47 {
		t.Errorf("without frozen inputs: %s", r.body)
	}

	probe := "/v1/business-cases/" + v2 + "/diff?against=" + v1
	cc.limitsAndOutage(t, ts, admin, probe, []contractCall{{method: "GET", path: probe}})
	for _, u := range cc.uncovered([]string{"business-case-diff"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
