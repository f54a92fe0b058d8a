package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
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
	// 4,400 hours a year, quarterly: 1,100 a quarter. Q1 has no actual, Q2 950: actual 950 against 2,200 expected,
	// variance −1,250, −1,250 / 2,200 × 100 = −56.82 %; Q1 is missing.
	if m := r.json(t); m["expected_ytd"] != 2200.0 || m["actual_ytd"] != 950.0 || m["variance"] != -1250.0 || m["variance_percent"] != -56.82 ||
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
				OldValue: float64(i), NewValue: float64(i + 1), ChangedBy: "test"}); err != nil {
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

	// 429: a starter tenant over its burst.
	starter := caller{sub: "admin-1", tenant: dbtest.NewTenant(t, ts.pool, "starter"), roles: []string{"Admin"}, permissions: allPermissions()}
	for i := 0; ; i++ {
		if r := ts.do(&starter, "GET", "/v1/benefits", nil); r.status == 429 {
			break
		}
		if i > 200 {
			t.Fatal("never rate limited")
		}
	}
	for _, op := range ops {
		call(contractCall{as: &starter, method: op.method, path: op.path, body: op.body, want: 429, code: "RATE_LIMIT_EXCEEDED"})
	}

	// 503: the database is gone.
	ts.pool.Close()
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, want: 503, code: "SERVICE_UNAVAILABLE"})
	}

	for _, u := range cc.uncovered([]string{"benefits"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
