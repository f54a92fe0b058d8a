package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
)

// monthsAgo is the month n months before the current one (UTC), as YYYY-MM.
func monthsAgo(n int) string {
	now := time.Now().UTC()
	return time.Date(now.Year(), now.Month()-time.Month(n), 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
}

// benefitBody is a valid benefit to create: 12,000 EUR a year, monthly, from two years ago.
func benefitBody(initiativeID, name string) map[string]any {
	return map[string]any{"initiative_id": initiativeID, "name": name, "category": "cost_savings", "expected_value": 12000,
		"currency": "EUR", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": monthsAgo(24) + "-01"}
}

func (ts *testServer) createBenefit(c caller, body map[string]any) string {
	ts.t.Helper()
	r := ts.do(&c, "POST", "/v1/benefits", body)
	expect(ts.t, r, 201)
	return r.json(ts.t)["id"].(string)
}

// TestContractBenefits drives every benefit operation through its success
// and error paths and validates every response against api/openapi.yaml.
func TestContractBenefits(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // negotiated limits: no per-endpoint limit in the way
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	writer := caller{sub: "writer-1", tenant: ts.tenant, permissions: []string{"benefits:write"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "initiatives:write"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := uuid.NewString()

	initID := ts.createInitiative(admin, map[string]any{"name": "Benefits"})
	otherInit := ts.createInitiative(admin, map[string]any{"name": "Other initiative"})

	// 201: the seed's body (internal/demo seedBenefit) as it sends it; the owner defaults to the creator.
	r := call(contractCall{as: &writer, method: "POST", path: "/v1/benefits", want: 201, body: map[string]any{
		"initiative_id": initID, "name": " Data-centre savings ", "category": "cost_savings", "unit": "currency",
		"measurement_frequency": "monthly", "expected_value": 1_200_000, "expected_start_date": monthsAgo(24) + "-01", "currency": "USD",
	}})
	savings := r.json(t)
	savingsPath := "/v1/benefits/" + savings["id"].(string)
	if savings["name"] != "Data-centre savings" || savings["owner_id"] != "writer-1" || savings["status"] != "active" || savings["plan"] != nil ||
		savings["initiative_id"] != initID || savings["currency"] != "USD" || r.header.Get("Location") != savingsPath {
		t.Errorf("created: %s (Location %s)", r.body, r.header.Get("Location"))
	}
	// 201: quarterly hours with an explicit plan, read-only fields sent back, no currency.
	start := monthsAgo(12)[:5] + "01-01" // January of last year: a quarter start
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", want: 201, body: map[string]any{
		"initiative_id": initID, "name": "Hours freed", "category": "productivity", "unit": "hours", "measurement_frequency": "quarterly",
		"expected_value": 4000, "expected_start_date": start, "expected_end_date": nil, "currency": nil, "owner_id": "ops-lead",
		"description": "Hours no longer spent on manual reconciliation.", "status": "achieved",
		"plan": []any{map[string]any{"period": start[:4] + "-04", "expected": 600}, map[string]any{"period": start[:7], "expected": 400}},
		"id":   "ignored", "created_at": "then",
	}})
	hours := r.json(t)
	hoursPath := "/v1/benefits/" + hours["id"].(string)
	if hours["owner_id"] != "ops-lead" || hours["status"] != "achieved" || hours["currency"] != nil ||
		fmt.Sprint(hours["plan"]) != fmt.Sprintf("[map[expected:400 period:%s] map[expected:600 period:%s-04]]", start[:7], start[:4]) {
		t.Errorf("created with plan: %s", r.body)
	}

	// 200 GET, and lists with filters, sort and pagination.
	r = call(contractCall{as: &reader, method: "GET", path: hoursPath, want: 200})
	if r.json(t)["name"] != "Hours freed" {
		t.Errorf("get: %s", r.body)
	}
	list := func(q string, want ...string) {
		t.Helper()
		r := call(contractCall{as: &reader, method: "GET", path: "/v1/benefits?" + q, want: 200})
		var got []string
		for _, b := range r.json(t)["data"].([]any) {
			got = append(got, b.(map[string]any)["name"].(string))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("list %s: %v, want %v", q, got, want)
		}
	}
	list("", "Hours freed", "Data-centre savings") // created_at desc
	list("sort=name&order=asc&page=1&page_size=500", "Data-centre savings", "Hours freed")
	list("sort=expected_value&order=desc", "Data-centre savings", "Hours freed")
	list("initiative_id="+initID+"&category=productivity&status=achieved&owner_id=ops-lead", "Hours freed")
	list("currency=USD", "Data-centre savings")
	list("initiative_id=" + otherInit)
	list("initiative_id=" + missing)
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/benefits?page=3&page_size=1", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 2.0 || p["total_pages"] != 2.0 || len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("past the last page: %s", r.body)
	}

	// 200 PUT: replaces; status and owner kept, plan and description cleared.
	r = call(contractCall{as: &writer, method: "PUT", path: hoursPath, want: 200, body: map[string]any{
		"name": "Hours freed", "category": "productivity", "unit": "hours", "measurement_frequency": "quarterly",
		"expected_value": 4400, "expected_start_date": start, "initiative_id": initID, "updated_at": "x",
	}})
	if m := r.json(t); m["plan"] != nil || m["description"] != "" || m["status"] != "achieved" || m["owner_id"] != "ops-lead" || m["expected_value"] != 4400.0 || m["created_at"] != hours["created_at"] {
		t.Errorf("PUT: %s", r.body)
	}
	// 200 PATCH: only what is sent; null clears the end date; a plan set and cleared.
	r = call(contractCall{as: &writer, method: "PATCH", path: hoursPath, want: 200, body: map[string]any{"expected_end_date": start[:4] + "-12-31", "status": "active",
		"plan": []any{map[string]any{"period": start[:4] + "-10", "expected": 1000}}}})
	if m := r.json(t); m["expected_end_date"] != start[:4]+"-12-31" || m["status"] != "active" || m["name"] != "Hours freed" || len(m["plan"].([]any)) != 1 {
		t.Errorf("PATCH: %s", r.body)
	}
	r = call(contractCall{as: &writer, method: "PATCH", path: hoursPath, want: 200, body: map[string]any{"expected_end_date": nil, "plan": nil}})
	if m := r.json(t); m["expected_end_date"] != nil || m["plan"] != nil {
		t.Errorf("PATCH nulls: %s", r.body)
	}

	// Actuals: 201 first value, 200 correction (revision kept), 200 the same filing again (nothing changes).
	actuals := savingsPath + "/actuals"
	period := monthsAgo(2)
	r = call(contractCall{as: &writer, method: "POST", path: actuals, want: 201, body: map[string]any{"value": 95000, "period": period, "notes": "monthly finance close"}})
	first := r.json(t)
	if first["period"] != period || first["value"] != 95000.0 || first["recorded_by"] != "writer-1" || first["evidence_url"] != nil || len(first["revisions"].([]any)) != 0 {
		t.Errorf("first actual: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "POST", path: actuals, want: 200, body: map[string]any{"value": 97500.5, "period": period,
		"notes": "restated", "evidence_url": "https://finance.example.com/close/" + period}})
	corrected := r.json(t)
	revs := corrected["revisions"].([]any)
	if corrected["id"] != first["id"] || corrected["value"] != 97500.5 || corrected["recorded_by"] != "admin-1" || len(revs) != 1 {
		t.Fatalf("correction: %s", r.body)
	}
	if rev := revs[0].(map[string]any); rev["old_value"] != 95000.0 || rev["new_value"] != 97500.5 || rev["old_notes"] != "monthly finance close" || rev["changed_by"] != "admin-1" {
		t.Errorf("revision: %v", rev)
	}
	r = call(contractCall{as: &admin, method: "POST", path: actuals, want: 200, body: map[string]any{"value": 97500.5, "period": period,
		"notes": "restated", "evidence_url": "https://finance.example.com/close/" + period}})
	if m := r.json(t); len(m["revisions"].([]any)) != 1 || m["updated_at"] != corrected["updated_at"] {
		t.Errorf("same filing again must change nothing: %s", r.body)
	}
	// Quarterly: any month of a quarter files under its first month.
	r = call(contractCall{as: &writer, method: "POST", path: hoursPath + "/actuals", want: 201, body: map[string]any{"value": 950, "period": start[:4] + "-05"}})
	if r.json(t)["period"] != start[:4]+"-04" {
		t.Errorf("quarterly filing: %s", r.body)
	}
	call(contractCall{as: &writer, method: "POST", path: actuals, want: 201, body: map[string]any{"value": 90000, "period": monthsAgo(3), "notes": nil, "evidence_url": nil}})
	r = call(contractCall{as: &reader, method: "GET", path: actuals + "?order=desc&page=1&page_size=500", want: 200})
	if data := r.json(t)["data"].([]any); len(data) != 2 || data[0].(map[string]any)["period"] != period || len(data[0].(map[string]any)["revisions"].([]any)) != 1 {
		t.Errorf("actuals list: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: actuals + "?page=2&page_size=5", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 2.0 {
		t.Errorf("actuals past the last page: %s", r.body)
	}

	// Variance: the default year (no actual in it yet for hours) and an explicit one.
	r = call(contractCall{as: &reader, method: "GET", path: hoursPath + "/variance", want: 200})
	if m := r.json(t); m["year"] != float64(time.Now().UTC().Year()) || m["through"] != nil || len(m["periods"].([]any)) != 0 || m["variance_percent"] != nil || m["trend"] != "insufficient_data" {
		t.Errorf("default year without actuals: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: hoursPath + "/variance?year=" + start[:4] + "&through=" + start[:4] + "-06", want: 200})
	// 4,400 hours a year, quarterly: 1,100 a quarter. Q1 has no actual, Q2 950: like for like, actual 950 against
	// Q2's 1,100 expected, variance −150, −150 / 1,100 × 100 = −13.64 %; Q1 is missing, its 1,100 reported apart.
	if m := r.json(t); m["expected_ytd"] != 1100.0 || m["actual_ytd"] != 950.0 || m["variance"] != -150.0 || m["variance_percent"] != -13.64 ||
		m["expected_unmeasured"] != 1100.0 ||
		m["from"] != start[:7] || m["through"] != start[:4]+"-04" || fmt.Sprint(m["missing_periods"]) != "["+start[:7]+"]" || m["unit"] != "hours" {
		t.Errorf("hours variance: %s", r.body)
	}

	// 422: rules (internal/benefit) and body types, each naming its field.
	base := func(change map[string]any) map[string]any {
		b := benefitBody(initID, "x")
		for k, v := range change {
			if v == "-" {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field, code  string
		docRejects   bool
	}{
		{"POST", "/v1/benefits", base(map[string]any{"name": "-"}), "name", "required", true},
		{"POST", "/v1/benefits", base(map[string]any{"initiative_id": "-"}), "initiative_id", "required", true},
		{"POST", "/v1/benefits", base(map[string]any{"category": "synergies"}), "category", "invalid_value", true},
		{"POST", "/v1/benefits", base(map[string]any{"measurement_frequency": "weekly"}), "measurement_frequency", "invalid_value", true},
		{"POST", "/v1/benefits", base(map[string]any{"unit": "dollars"}), "unit", "invalid_value", true},
		{"POST", "/v1/benefits", base(map[string]any{"status": "done"}), "status", "invalid_value", true},
		{"POST", "/v1/benefits", base(map[string]any{"currency": "XYZ"}), "currency", "invalid_value", false},
		{"POST", "/v1/benefits", base(map[string]any{"currency": "-"}), "currency", "required", false},
		{"POST", "/v1/benefits", base(map[string]any{"unit": "hours"}), "currency", "not_allowed", false},
		{"POST", "/v1/benefits", base(map[string]any{"expected_value": 2e12}), "expected_value", "out_of_range", true},
		{"POST", "/v1/benefits", base(map[string]any{"expected_value": "12000"}), "expected_value", "invalid_type", true},
		{"POST", "/v1/benefits", base(map[string]any{"expected_start_date": "2026-2-3"}), "expected_start_date", "invalid_format", true},
		{"POST", "/v1/benefits", base(map[string]any{"expected_start_date": "-"}), "expected_start_date", "required", true},
		{"POST", "/v1/benefits", base(map[string]any{"expected_start_date": "0026-01-01"}), "expected_start_date", "out_of_range", false},
		{"POST", "/v1/benefits", base(map[string]any{"expected_end_date": "2020-01-01"}), "expected_end_date", "invalid_range", false},
		{"POST", "/v1/benefits", base(map[string]any{"plan": "monthly"}), "plan", "invalid_type", true},
		{"POST", "/v1/benefits", base(map[string]any{"plan": []any{map[string]any{"period": "2020-01", "expected": 1}}}), "plan[0].period", "out_of_range", false},
		{"POST", "/v1/benefits", base(map[string]any{"plan": []any{map[string]any{"period": monthsAgo(1), "expected": "1"}}}), "plan[0].expected", "invalid_type", true},
		{"POST", "/v1/benefits", base(map[string]any{"plan": []any{map[string]any{"period": monthsAgo(1), "expected": 1, "note": "x"}}}), "plan[0].note", "unknown_field", true},
		{"POST", "/v1/benefits", base(map[string]any{"colour": "red"}), "colour", "unknown_field", true},
		{"PUT", savingsPath, base(map[string]any{"expected_value": "-"}), "expected_value", "required", true},
		{"PUT", savingsPath, base(map[string]any{"initiative_id": otherInit}), "initiative_id", "invalid_value", false},
		{"PATCH", hoursPath, map[string]any{"measurement_frequency": nil}, "measurement_frequency", "required", false},
		{"PATCH", hoursPath, map[string]any{"currency": "EUR"}, "currency", "not_allowed", false},
		{"PATCH", hoursPath, map[string]any{"plan": []any{map[string]any{"period": start[:4] + "-02", "expected": 1}}}, "plan[0].period", "off_grid", false},
		{"POST", actuals, map[string]any{"period": period}, "value", "required", true},
		{"POST", actuals, map[string]any{"value": 1, "period": "2026-13"}, "period", "invalid_format", true},
		{"POST", actuals, map[string]any{"value": 1, "period": monthsAgo(-1)}, "period", "in_future", false},
		{"POST", actuals, map[string]any{"value": 1, "period": monthsAgo(25)}, "period", "too_early", false},
		{"POST", actuals, map[string]any{"value": 1e13, "period": period}, "value", "out_of_range", true},
		{"POST", actuals, map[string]any{"value": 1, "period": period, "evidence_url": "finance.example.com/x"}, "evidence_url", "invalid_format", true},
		{"POST", actuals, map[string]any{"value": 1, "period": period, "evidence_url": "ftp://finance.example.com/x"}, "evidence_url", "invalid_format", true},
		{"POST", actuals, map[string]any{"value": 1, "period": period, "currency": "EUR"}, "currency", "unknown_field", true},
	} {
		r := call(contractCall{as: &admin, method: c.method, path: c.path, body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.docRejects, docSkip: !c.docRejects})
		if r.status == 422 {
			e := r.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any)
			if e["field"] != c.field || e["code"] != c.code {
				t.Errorf("%s %v: first error %v, want %s/%s", c.method, c.body, e, c.field, c.code)
			}
		}
	}

	// 400: query, body, tenant header.
	for _, q := range []string{"page=0", "page_size=501", "sort=colour", "order=up", "category=x", "status=x", "currency=eur", "initiative_id=nope", "owner_id=", "page=1&page=2", "colour=red"} {
		call(contractCall{as: &reader, method: "GET", path: "/v1/benefits?" + q, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	}
	for _, q := range []string{"year=abc", "year=0", "year=2020", "year=" + fmt.Sprint(time.Now().Year()-5), "through=2026-13", "year=2025&through=2026-01", "year=2025&through=2024-12", "year=2025&year=2026"} {
		call(contractCall{as: &reader, method: "GET", path: savingsPath + "/variance?" + q, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	}
	call(contractCall{as: &reader, method: "GET", path: actuals + "?order=sideways", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &reader, method: "GET", path: savingsPath + "?x=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: actuals, body: `[1]`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "PATCH", path: hoursPath + "?x=1", body: map[string]any{}, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "PUT", path: hoursPath, body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "DELETE", path: hoursPath + "?x=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})

	ops := []struct {
		method, path string
		body         any
		write        bool
	}{
		{"GET", "/v1/benefits", nil, false},
		{"POST", "/v1/benefits", benefitBody(initID, "op"), true},
		{"GET", hoursPath, nil, false},
		{"PUT", hoursPath, benefitBody(initID, "op"), true},
		{"PATCH", hoursPath, map[string]any{}, true},
		{"DELETE", hoursPath, nil, true},
		{"POST", actuals, map[string]any{"value": 1, "period": period}, true},
		{"GET", actuals, nil, false},
		{"GET", savingsPath + "/variance", nil, false},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &nobody, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
		if op.write { // benefits:read reads; every write, DELETE included, needs benefits:write
			call(contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		} else {
			call(contractCall{as: &writer, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		}
	}

	// 404: unknown benefits in any form, an initiative that is not in the tenant.
	for _, id := range []string{missing, "nope"} {
		p := "/v1/benefits/" + id
		call(contractCall{as: &admin, method: "GET", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PUT", path: p, body: benefitBody(initID, "x"), want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PATCH", path: p, body: map[string]any{"name": "y"}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "DELETE", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "POST", path: p + "/actuals", body: map[string]any{"value": 1, "period": period}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "GET", path: p + "/actuals", want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "GET", path: p + "/variance", want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(id, "x"), want: 404, code: "NOT_FOUND", docSkip: true})
	}
	theirs := ts.createInitiative(other, map[string]any{"name": "Theirs"})
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(theirs, "intruder"), want: 404, code: "NOT_FOUND"})
	if strings.Contains(string(r.body), theirs) {
		t.Errorf("the 404 hints at another tenant's initiative: %s", r.body)
	}

	// 409: duplicate name (any case) within the initiative; another initiative may reuse it.
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(initID, "HOURS FREED"), want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &admin, method: "PATCH", path: savingsPath, body: map[string]any{"name": "hours freed"}, want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(otherInit, "Hours freed"), want: 201})
	// 409: the measurement basis is locked once actuals exist.
	call(contractCall{as: &admin, method: "PATCH", path: savingsPath, body: map[string]any{"currency": "EUR"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PATCH", path: savingsPath, body: map[string]any{"measurement_frequency": "quarterly"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PATCH", path: savingsPath, body: map[string]any{"expected_start_date": monthsAgo(1) + "-01"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PATCH", path: savingsPath, body: map[string]any{"expected_value": 1_300_000, "category": "cost_avoidance"}, want: 200})
	// 409: 100 corrections per period (1 made above, 98 stored directly, the 100th through the API, the 101st refused).
	err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		for i := range 98 {
			if err := db.Q.ActualRevisionAdd(ctx, tx, dbsqlc.ActualRevisionAddParams{TenantID: ts.tenant, ActualID: uuid.MustParse(first["id"].(string)),
				OldValue: decimal.NewFromFloat(float64(i)), NewValue: decimal.NewFromFloat(float64(i + 1)), ChangedBy: "test"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	call(contractCall{as: &admin, method: "POST", path: actuals, body: map[string]any{"value": 1, "period": period}, want: 200})
	call(contractCall{as: &admin, method: "POST", path: actuals, body: map[string]any{"value": 2, "period": period}, want: 409, code: "CONFLICT"})
	// 409: 100 benefits per initiative (99 stored directly, the 100th through the API, the 101st refused).
	fullID := ts.createInitiative(admin, map[string]any{"name": "Full"})
	err = db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		for i := range 99 {
			if _, err := db.Q.BenefitCreate(ctx, tx, dbsqlc.BenefitCreateParams{TenantID: ts.tenant, InitiativeID: uuid.MustParse(fullID), Name: fmt.Sprintf("b%d", i),
				Category: "other", Unit: "count", MeasurementFrequency: "monthly", ExpectedStartDate: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Status: "active", OwnerID: "x"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(fullID, "100th"), want: 201})
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(fullID, "101st"), want: 409, code: "CONFLICT"})
	// 409: an archived initiative's benefits are read-only, and still readable.
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initID, nil), 204)
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits", body: benefitBody(initID, "late"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PUT", path: savingsPath, body: benefitBody(initID, "late"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PATCH", path: savingsPath, body: map[string]any{"name": "late"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "DELETE", path: savingsPath, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "POST", path: actuals, body: map[string]any{"value": 5, "period": monthsAgo(1)}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &reader, method: "GET", path: savingsPath, want: 200})
	call(contractCall{as: &reader, method: "GET", path: actuals, want: 200})
	call(contractCall{as: &reader, method: "GET", path: savingsPath + "/variance?year=" + monthsAgo(2)[:4], want: 200})

	// 204 on a live initiative, then gone with its actuals.
	live := ts.createBenefit(admin, benefitBody(otherInit, "Short-lived"))
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+live+"/actuals", map[string]any{"value": 1, "period": monthsAgo(1)}), 201)
	call(contractCall{as: &writer, method: "DELETE", path: "/v1/benefits/" + live, want: 204})
	call(contractCall{as: &admin, method: "GET", path: "/v1/benefits/" + live + "/actuals", want: 404, code: "NOT_FOUND"})

	// 413, 415 on every operation with a body.
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range ops {
		if op.body == nil {
			continue
		}
		call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// The events of this test match the document: four first values and two corrections (the
	// first and the 100th); the repeated filing and the refused ones emit nothing.
	contractCheckEvents(t, cc.spec, ts, map[string]int{"benefit.actual_recorded": 6})

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.preconditions(t, admin, calls) // ETag: 304 and the 409 of a stale If-Match
	cc.limitsAndOutage(t, ts, admin, "/v1/benefits", calls)

	for _, u := range cc.uncovered([]string{"benefits"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// TestBenefitTenantIsolation: another tenant neither sees nor changes a
// tenant's benefits, plans, actuals and revisions, through the API or in SQL
// run in its own tenant transaction (row-level security, FORCEd).
func TestBenefitTenantIsolation(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	ctx := context.Background()
	a := ts.admin()
	b := contractTenant(t, ts, "enterprise_plus")
	initID := ts.createInitiative(a, map[string]any{"name": "A's initiative"})
	body := benefitBody(initID, "A's benefit")
	body["plan"] = []any{map[string]any{"period": monthsAgo(1), "expected": 5}}
	id := ts.createBenefit(a, body)
	path := "/v1/benefits/" + id
	expect(t, ts.do(&a, "POST", path+"/actuals", map[string]any{"value": 1, "period": monthsAgo(1)}), 201)
	expect(t, ts.do(&a, "POST", path+"/actuals", map[string]any{"value": 2, "period": monthsAgo(1)}), 200)

	for _, q := range []string{"", "?initiative_id=" + initID} {
		r := ts.do(&b, "GET", "/v1/benefits"+q, nil)
		expect(t, r, 200)
		if n := len(r.json(t)["data"].([]any)); n != 0 {
			t.Errorf("tenant B lists %d of A's benefits", n)
		}
	}
	for _, op := range []struct {
		method, path string
		body         any
	}{
		{"GET", path, nil},
		{"PUT", path, benefitBody(initID, "taken")},
		{"PATCH", path, map[string]any{"name": "taken"}},
		{"DELETE", path, nil},
		{"POST", path + "/actuals", map[string]any{"value": 666, "period": monthsAgo(1)}},
		{"GET", path + "/actuals", nil},
		{"GET", path + "/variance", nil},
		{"POST", "/v1/benefits", benefitBody(initID, "planted in A")},
	} {
		expect(t, ts.do(&b, op.method, op.path, op.body), 404, "NOT_FOUND")
	}

	// SQL without any WHERE clause, in each tenant's transaction.
	count := func(tenant uuid.UUID) map[string]int {
		out := map[string]int{}
		err := db.InTenant(ctx, ts.pool, tenant, func(tx pgx.Tx) error {
			for _, table := range []string{"benefits", "benefit_plan_entries", "benefit_actuals", "benefit_actual_revisions"} {
				var n int
				if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
					return err
				}
				out[table] = n
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := count(b.tenant); fmt.Sprint(got) != "map[benefit_actual_revisions:0 benefit_actuals:0 benefit_plan_entries:0 benefits:0]" {
		t.Errorf("tenant B sees rows of A: %v", got)
	}
	if got := count(ts.tenant); fmt.Sprint(got) != "map[benefit_actual_revisions:1 benefit_actuals:1 benefit_plan_entries:1 benefits:1]" {
		t.Errorf("tenant A's own rows: %v", got)
	}
	// A's data is as A left it.
	r := ts.do(&a, "GET", path+"/actuals", nil)
	expect(t, r, 200)
	if data := r.json(t)["data"].([]any); len(data) != 1 || data[0].(map[string]any)["value"] != 2.0 {
		t.Errorf("A's actuals: %s", r.body)
	}
}

// TestBenefitVarianceGolden checks GET /v1/benefits/{id}/variance against
// figures worked out by hand. Y is last calendar year (every month of it is
// in the past, and it lies within the 5-year history).
//
// Monthly, fiscal years from January: 12,000 EUR a year from Y-03-15 expects
// 12,000 / 12 = 1,000 a month from Y-03. Actuals Y-03 800, Y-04 1,100, Y-05 900
// corrected to 950, Y-07 1,300; none for Y-06.
//
//	?year=Y: periods Y-03..Y-07 (Jan and Feb precede the start; Y-07 is the last actual)
//	  like for like over the four periods with an actual: expected_ytd 4 × 1,000 = 4,000;
//	  actual_ytd 800 + 1,100 + 950 + 1,300 = 4,150; variance +150; variance_percent
//	  150 / 4,000 × 100 = +3.75; expected_unmeasured 1,000 (Y-06, not a shortfall: counting
//	  it as 0 actual, as before, showed −850 / −17 %)
//	  periods 03: −200 (−20 %), 04: +100 (+10 %), 05: −50 (−5 %), 06: none, 07: +300 (+30 %)
//	  trend: the last three with an actual are 04, 05, 07: Δ = (300 − 100) / 1,000 = 0.2 ≥ 0.05 → improving
//	?year=Y&through=Y-09: periods Y-03..Y-09: the same like-for-like figures (4,000, 4,150,
//	  +150, +3.75); missing Y-06, Y-08, Y-09, expected_unmeasured 3,000; trend still improving.
//
// Quarterly with a plan, fiscal years from April (FY Y = Y-04 .. Y+1-03): 40,000 USD a
// year from Y-04-01 with plan {Y-04: 5,000, Y-07: 15,000}, which replaces the spread
// (Y-10 and Y+1-01 expect 0). Actuals filed for Y-05, Y-08 and Y-11 go to the quarters
// Y-04 (6,000), Y-07 (12,000) and Y-10 (500).
//
//	?year=Y: periods Y-04, Y-07, Y-10; expected 5,000 + 15,000 + 0 = 20,000; actual 18,500;
//	  variance −1,500; −1,500 / 20,000 × 100 = −7.5
//	  periods Y-04: +1,000 (+20 %), Y-07: −3,000 (−20 %), Y-10: +500 (percent null: 0 expected)
//	  trend: Δ = (500 − 1,000) / ((5,000 + 15,000 + 0) / 3) = −500 / 6,666.67 = −0.075 → declining
//	?year=Y&through=Y+1-02: adds Y+1-01 (expects 0, no actual): totals unchanged, missing [Y+1-01].
func TestBenefitVarianceGolden(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	y := time.Now().UTC().Year() - 1
	m := func(year, month int) string { return fmt.Sprintf("%04d-%02d", year, month) }
	initID := ts.createInitiative(admin, map[string]any{"name": "Variance"})

	monthly := ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": "Monthly", "category": "cost_savings",
		"expected_value": 12000, "currency": "EUR", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": fmt.Sprintf("%d-03-15", y)})
	for _, a := range []struct {
		period string
		value  float64
	}{{m(y, 3), 800}, {m(y, 4), 1100}, {m(y, 5), 900}, {m(y, 5), 950}, {m(y, 7), 1300}} {
		r := ts.do(&admin, "POST", "/v1/benefits/"+monthly+"/actuals", map[string]any{"period": a.period, "value": a.value})
		if r.status != 201 && r.status != 200 {
			t.Fatalf("actual %v: %d %s", a, r.status, r.body)
		}
	}
	type line struct {
		Period          string   `json:"period"`
		Expected        float64  `json:"expected"`
		Actual          *float64 `json:"actual"`
		Variance        *float64 `json:"variance"`
		VariancePercent *float64 `json:"variance_percent"`
	}
	type report struct {
		Year            int      `json:"year"`
		From            *string  `json:"from"`
		Through         *string  `json:"through"`
		Currency        *string  `json:"currency"`
		ExpectedYTD     float64  `json:"expected_ytd"`
		ActualYTD       float64  `json:"actual_ytd"`
		Variance        float64  `json:"variance"`
		VariancePercent *float64 `json:"variance_percent"`
		Unmeasured      float64  `json:"expected_unmeasured"`
		Trend           string   `json:"trend"`
		Periods         []line   `json:"periods"`
		Missing         []string `json:"missing_periods"`
	}
	get := func(id, query string) report {
		t.Helper()
		r := ts.do(&admin, "GET", "/v1/benefits/"+id+"/variance?"+query, nil)
		expect(t, r, 200)
		var out report
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	f := func(v float64) *float64 { return &v }
	show := func(r report) string { b, _ := json.Marshal(r); return string(b) }
	check := func(name string, got report, want report) {
		t.Helper()
		if show(got) != show(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, show(got), show(want))
		}
	}

	check("monthly, through the last actual", get(monthly, fmt.Sprintf("year=%d", y)), report{
		Year: y, From: new(m(y, 3)), Through: new(m(y, 7)), Currency: new("EUR"),
		ExpectedYTD: 4000, ActualYTD: 4150, Variance: 150, VariancePercent: f(3.75), Unmeasured: 1000, Trend: "improving",
		Periods: []line{
			{m(y, 3), 1000, f(800), f(-200), f(-20)},
			{m(y, 4), 1000, f(1100), f(100), f(10)},
			{m(y, 5), 1000, f(950), f(-50), f(-5)},
			{m(y, 6), 1000, nil, nil, nil},
			{m(y, 7), 1000, f(1300), f(300), f(30)},
		},
		Missing: []string{m(y, 6)},
	})
	through := get(monthly, fmt.Sprintf("year=%d&through=%s", y, m(y, 9)))
	if through.ExpectedYTD != 4000 || through.ActualYTD != 4150 || through.Variance != 150 || *through.VariancePercent != 3.75 || through.Unmeasured != 3000 ||
		fmt.Sprint(through.Missing) != fmt.Sprintf("[%s %s %s]", m(y, 6), m(y, 8), m(y, 9)) || through.Trend != "improving" || *through.Through != m(y, 9) {
		t.Errorf("monthly through %s: %s", m(y, 9), show(through))
	}

	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "fiscal_year_start_month": 4}), 200)
	quarterly := ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": "Quarterly", "category": "revenue_growth",
		"expected_value": 40000, "currency": "USD", "unit": "currency", "measurement_frequency": "quarterly", "expected_start_date": fmt.Sprintf("%d-04-01", y),
		"plan": []any{map[string]any{"period": m(y, 4), "expected": 5000}, map[string]any{"period": m(y, 7), "expected": 15000}}})
	for _, a := range []struct {
		period string
		value  float64
	}{{m(y, 5), 6000}, {m(y, 8), 12000}, {m(y, 11), 500}} {
		expect(t, ts.do(&admin, "POST", "/v1/benefits/"+quarterly+"/actuals", map[string]any{"period": a.period, "value": a.value}), 201)
	}
	check("quarterly plan, fiscal year from April", get(quarterly, fmt.Sprintf("year=%d", y)), report{
		Year: y, From: new(m(y, 4)), Through: new(m(y, 10)), Currency: new("USD"),
		ExpectedYTD: 20000, ActualYTD: 18500, Variance: -1500, VariancePercent: f(-7.5), Trend: "declining",
		Periods: []line{
			{m(y, 4), 5000, f(6000), f(1000), f(20)},
			{m(y, 7), 15000, f(12000), f(-3000), f(-20)},
			{m(y, 10), 0, f(500), f(500), nil},
		},
		Missing: []string{},
	})
	next := get(quarterly, fmt.Sprintf("year=%d&through=%s", y, m(y+1, 2)))
	if next.ExpectedYTD != 20000 || next.ActualYTD != 18500 || *next.VariancePercent != -7.5 || next.Unmeasured != 0 || len(next.Periods) != 4 ||
		next.Periods[3] != (line{Period: m(y+1, 1)}) || fmt.Sprint(next.Missing) != "["+m(y+1, 1)+"]" || *next.Through != m(y+1, 1) {
		t.Errorf("quarterly through %s: %s", m(y+1, 2), show(next))
	}
	// A month of the year before the fiscal year's start is outside it (inverted range).
	expect(t, ts.do(&admin, "GET", "/v1/benefits/"+quarterly+"/variance?year="+fmt.Sprint(y)+"&through="+m(y, 3), nil), 400, "INVALID_PARAMETER")
}

// TestBenefitActualWebhook: recording and correcting an actual reaches a real
// subscribed receiver as benefit.actual_recorded, signed, through the outbox relay.
func TestBenefitActualWebhook(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	ts.createWebhook(admin, rc.URL, "benefit.actual_recorded")
	initID := ts.createInitiative(admin, map[string]any{"name": "Hooked"})
	id := ts.createBenefit(admin, benefitBody(initID, "Savings"))
	period := monthsAgo(1)
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 900, "period": period}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 950, "period": period, "notes": "restated"}), 200)
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 950, "period": period, "notes": "restated"}), 200) // no change, no event

	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{ts.srv.Webhooks}, Log: testenv.QuietLogger()}
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := rc.Requests()
	if len(reqs) != 2 || rc.SignatureErrors() != 0 || reqs[0].Type != "benefit.actual_recorded" || reqs[1].Type != "benefit.actual_recorded" || reqs[0].EventID == reqs[1].EventID {
		t.Fatalf("receiver saw %+v (bad signatures %d)", reqs, rc.SignatureErrors())
	}
	var got []map[string]any
	for _, req := range reqs {
		b := req.Body
		var env struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		got = append(got, env.Data)
	}
	// Delivery order between events is not guaranteed: sort by corrected.
	if got[0]["corrected"] == true {
		got[0], got[1] = got[1], got[0]
	}
	first, second := got[0], got[1]
	if first["value"] != 900.0 || first["previous_value"] != nil || first["period"] != period ||
		first["benefit"].(map[string]any)["name"] != "Savings" || first["initiative"].(map[string]any)["name"] != "Hooked" ||
		first["initiative"].(map[string]any)["id"] != initID || first["benefit"].(map[string]any)["currency"] != "EUR" {
		t.Errorf("first value event: %v", first)
	}
	if second["value"] != 950.0 || second["previous_value"] != 900.0 || second["corrected"] != true || second["notes"] != "restated" || second["actual_id"] != first["actual_id"] {
		t.Errorf("correction event: %v", second)
	}
}

// TestBenefitActualConcurrentFilings: simultaneous filings for one period
// serialise on the benefit's row lock: one creates the actual (201), the
// others correct it (200) with one revision each; none fails.
func TestBenefitActualConcurrentFilings(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	id := ts.createBenefit(admin, benefitBody(ts.createInitiative(admin, map[string]any{"name": "Race"}), "Raced"))
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses <- ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 100 + i, "period": monthsAgo(1)}).status
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[201] != 1 || count[200] != n-1 {
		t.Fatalf("statuses %v, want one 201 and %d 200", count, n-1)
	}
	r := ts.do(&admin, "GET", "/v1/benefits/"+id+"/actuals", nil)
	expect(t, r, 200)
	if data := r.json(t)["data"].([]any); len(data) != 1 || len(data[0].(map[string]any)["revisions"].([]any)) != n-1 {
		t.Errorf("one actual with %d revisions expected: %s", n-1, r.body)
	}
}
