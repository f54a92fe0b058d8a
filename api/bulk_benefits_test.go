package api_test

import (
	"strings"
	"testing"
)

// TestBulkImportBenefits: each row passes the reading and checks of POST
// /v1/benefits (and, when it replaces one, of PUT, plan and basis lock
// included); the key is initiative + name, case-insensitively; upsert tells
// unchanged from updated; the 100 per initiative hold across the import; dry
// runs and failed atomic imports write nothing; another tenant's initiative
// is not found; an archived initiative's benefits are read-only; an export
// (plans included) imports back unchanged in NDJSON and CSV.
func TestBulkImportBenefits(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	initA := ts.createInitiative(admin, map[string]any{"name": "Bulk benefits"})
	foreign := ts.createInitiative(other, map[string]any{"name": "Theirs"})
	benefits := func() int { return countRows(t, ts, ts.tenant, `SELECT count(*) FROM benefits`) }
	post := func(body map[string]any) importAnswer {
		t.Helper()
		body["resource"] = "benefits"
		return decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", body))
	}
	row := func(init, name string, extra ...any) map[string]any {
		r := benefitBody(init, name)
		for i := 0; i+1 < len(extra); i += 2 {
			r[extra[i].(string)] = extra[i+1]
		}
		return r
	}
	plan := []any{map[string]any{"period": monthsAgo(24), "expected": 500}, map[string]any{"period": monthsAgo(23), "expected": 700}}

	// Non-atomic create: good rows land, bad rows carry the single route's errors.
	got := post(map[string]any{"records": []any{
		row(initA, "Savings", "plan", plan, "description", "Lower run costs"),
		row(initA, "Revenue", "owner_id", "olga"),
		row(initA, "SAVINGS"),
		row(initA, "Bad", "category", "magic"),
		row(foreign, "Theirs"),
		row(initA, "Lots", "expected_value", "lots"),
		row(initA, "Planned", "plan", []any{map[string]any{"period": monthsAgo(24)}}),
		row(initA, "Extra", "colour", "red"),
	}})
	if s := got.statuses(); s != "created created error:name/duplicate error:category/invalid_value error:initiative_id/not_found "+
		"error:expected_value/invalid_type error:plan[0].expected/required error:colour/unknown_field" {
		t.Errorf("statuses: %s", s)
	}
	if !got.Committed || got.Summary.Created != 2 || got.Results[0].ID == nil || got.Results[2].ID != nil || benefits() != 2 {
		t.Fatalf("answer: %+v, %d benefits", got, benefits())
	}
	savings := *got.Results[0].ID
	b := ts.do(&admin, "GET", "/v1/benefits/"+savings, nil).json(t)
	if b["owner_id"] != "admin-1" || b["description"] != "Lower run costs" || len(b["plan"].([]any)) != 2 || b["status"] != "active" {
		t.Errorf("savings: %v", b)
	}
	if r := ts.do(&admin, "GET", "/v1/benefits/"+*got.Results[1].ID, nil).json(t); r["owner_id"] != "olga" || r["plan"] != nil {
		t.Errorf("revenue: %v", r)
	}

	// create again: an existing key (any case) is a row error; upsert: unchanged, updated, created.
	if got = post(map[string]any{"records": []any{row(initA, "savings")}}); got.statuses() != "error:name/already_exists" {
		t.Errorf("create over existing: %s", got.statuses())
	}
	got = post(map[string]any{"mode": "upsert", "records": []any{
		row(initA, "Savings", "plan", plan, "description", "Lower run costs"),
		row(initA, "Revenue", "expected_value", 20000),
		row(initA, "Growth"),
	}})
	if got.statuses() != "unchanged updated created" || *got.Results[0].ID != savings {
		t.Errorf("upsert: %s", got.statuses())
	}
	if r := ts.do(&admin, "GET", "/v1/benefits/"+*got.Results[1].ID, nil).json(t); r["expected_value"] != 20000.0 || r["owner_id"] != "olga" {
		t.Errorf("revenue after upsert (PUT keeps the owner): %v", r)
	}
	if ts.do(&admin, "GET", "/v1/benefits/"+savings, nil).json(t)["updated_at"] != b["updated_at"] {
		t.Errorf("an unchanged row changed updated_at")
	}
	// A new plan over the same periods replaces the stored one (entries kept, changed and dropped).
	got = post(map[string]any{"mode": "upsert", "records": []any{
		row(initA, "Savings", "plan", []any{map[string]any{"period": monthsAgo(24), "expected": 600}}, "description", "Lower run costs")}})
	if p := ts.do(&admin, "GET", "/v1/benefits/"+savings, nil).json(t)["plan"].([]any); got.statuses() != "updated" || len(p) != 1 || p[0].(map[string]any)["expected"] != 600.0 {
		t.Errorf("new plan: %s %v", got.statuses(), p)
	}
	// Replaced as PUT replaces: the plan and description the row leaves out are cleared.
	got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Savings")}})
	if r := ts.do(&admin, "GET", "/v1/benefits/"+savings, nil).json(t); got.statuses() != "updated" || r["plan"] != nil || r["description"] != "" {
		t.Errorf("replace: %s %v", got.statuses(), r)
	}
	// The single route's PUT keeping a planned period (it shares the plan replacement's way; was a 500).
	probe := row(initA, "Probe", "plan", plan)
	probeID := ts.createBenefit(admin, probe)
	expect(t, ts.do(&admin, "PUT", "/v1/benefits/"+probeID, probe), 200)
	// Once an actual is recorded, the basis is locked, in bulk as in PUT (409).
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+savings+"/actuals", map[string]any{"period": monthsAgo(2), "value": 900}), 201)
	if got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Savings", "currency", "USD")}}); got.statuses() != "error:currency/conflict" {
		t.Errorf("basis lock: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "PUT", "/v1/benefits/"+savings, row(initA, "Savings", "currency", "USD")), 409, "CONFLICT")

	// dry_run and a failing atomic import write nothing; an atomic import without errors commits.
	got = post(map[string]any{"mode": "upsert", "dry_run": true, "records": []any{row(initA, "Dry"), row(initA, "Revenue", "expected_value", 1)}})
	if got.Committed || got.statuses() != "created updated" || got.Results[0].ID != nil {
		t.Errorf("dry run: %+v", got)
	}
	got = post(map[string]any{"atomic": true, "records": []any{row(initA, "Dry"), row(initA, "Wet", "unit", "gallons")}})
	if got.Committed || got.statuses() != "created error:unit/invalid_value" || benefits() != 4 {
		t.Errorf("atomic: %s, %d benefits", got.statuses(), benefits())
	}
	if got = post(map[string]any{"atomic": true, "records": []any{row(initA, "Dry")}}); !got.Committed || benefits() != 5 {
		t.Errorf("atomic ok: %+v", got)
	}

	// 100 benefits per initiative hold across the rows of an import (98 seeded, 3 new).
	initB := ts.createInitiative(admin, map[string]any{"name": "Crowded"})
	seedLongBenefits(t, ts, initB, 98)
	got = post(map[string]any{"records": []any{row(initB, "N1"), row(initB, "N2"), row(initB, "N3")}})
	if got.statuses() != "created created error:initiative_id/conflict" || !strings.Contains(got.Results[2].Errors[0].Message, "100") {
		t.Errorf("limit: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "POST", "/v1/benefits", row(initB, "N3")), 409, "CONFLICT")

	// Another tenant cannot reach this tenant's initiative, and exports none of its benefits.
	r := ts.do(&other, "POST", "/v1/bulk/import", map[string]any{"resource": "benefits", "mode": "upsert", "records": []any{row(initA, "Savings")}})
	if decodeImport(t, r).statuses() != "error:initiative_id/not_found" {
		t.Errorf("other tenant: %s", r.body)
	}
	if ex := ts.do(&other, "GET", "/v1/bulk/export?resource=benefits&format=csv", nil); string(ex.body) !=
		"id,initiative_id,name,description,category,expected_value,currency,unit,measurement_frequency,expected_start_date,expected_end_date,status,owner_id,plan,external_key\n" {
		t.Errorf("other tenant's export: %q", ex.body)
	}

	// Export, then import with upsert: every row unchanged, in both formats (a plan too).
	if got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Growth", "plan", plan, "expected_end_date", monthsAgo(1)+"-01", "description", "a, \"quoted\"\nnote")}}); got.statuses() != "updated" {
		t.Errorf("growth: %s %+v", got.statuses(), got.Results)
	}
	total := benefits()
	for _, format := range []string{"ndjson", "csv"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=benefits&format="+format, nil)
		expect(t, ex, 200)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=benefits&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != total || back.Summary.Total != total {
			t.Errorf("%s round trip: %+v %s", format, back.Summary, back.statuses())
		}
	}
	// The single routes emit no benefit events on create or edit, and neither does the import.
	if n := countEvents(t, ts, ts.tenant, `type LIKE 'benefit.%' AND type <> 'benefit.actual_recorded'`); n != 0 {
		t.Errorf("%d benefit events", n)
	}

	// An archived initiative's benefits are read-only (the single route answers 409).
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initA, nil), 204)
	if got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Revenue")}}); got.statuses() != "error:initiative_id/conflict" {
		t.Errorf("archived: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "POST", "/v1/benefits", row(initA, "Late")), 409)

	// Permissions: benefits:write to import, benefits:read to export.
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	none := caller{sub: "n", tenant: ts.tenant, permissions: []string{"stakeholders:read"}}
	expect(t, ts.do(&reader, "POST", "/v1/bulk/import", map[string]any{"resource": "benefits", "records": []any{}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&none, "GET", "/v1/bulk/export?resource=benefits", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "GET", "/v1/bulk/export?resource=benefits", nil), 200)
}
