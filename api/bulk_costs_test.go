package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
)

// TestBulkImportCosts: each row passes the reading and checks of POST
// /v1/initiatives/{id}/costs (and, when it replaces one by id, of PUT); the
// key is id (upsert: an id of a cost of the row's initiative replaces it,
// an unknown one is not found; create ignores id); upsert tells unchanged
// from updated; the 500 per initiative hold across the import; dry runs and
// failed atomic imports write nothing; another tenant's initiative is not
// found; an archived initiative's costs are read-only; no events; an export
// imports back unchanged; initiatives:write to import, initiatives:read to export.
func TestBulkImportCosts(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	initA := ts.createInitiative(admin, map[string]any{"name": "Bulk costs"})
	initC := ts.createInitiative(admin, map[string]any{"name": "Other costs"})
	foreign := ts.createInitiative(other, map[string]any{"name": "Theirs"})
	costs := func() int { return countRows(t, ts, ts.tenant, `SELECT count(*) FROM initiative_costs`) }
	post := func(body map[string]any) importAnswer {
		t.Helper()
		body["resource"] = "costs"
		return decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", body))
	}
	row := func(init, name string, amount float64, extra ...any) map[string]any {
		r := map[string]any{"initiative_id": init, "name": name, "category": "capex", "amount": amount, "currency": "USD", "period": "2026-01"}
		for i := 0; i+1 < len(extra); i += 2 {
			r[extra[i].(string)] = extra[i+1]
		}
		return r
	}

	// Non-atomic create: good rows land, bad rows carry the single route's errors.
	got := post(map[string]any{"records": []any{
		row(initA, "  Licences ", 1200.5, "recurrence", "monthly", "end_period", "2026-12"),
		row(initA, "Setup", 5000, "id", "00000000-0000-0000-0000-000000000001"), // create ignores id, as the single create does
		row(initA, "Zero", 0),
		row(initA, "Bad", 10, "category", "misc"),
		row(initA, "Once", 10, "end_period", "2026-06"),
		row(foreign, "Theirs", 10),
		row("not-a-uuid", "X", 10),
		map[string]any{"name": "No initiative", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-01"},
		row(initA, "W", 10, "colour", "red"),
		row(initA, "Y", 10, "currency", "usd"),
	}})
	if s := got.statuses(); s != "created created error:amount/out_of_range error:category/invalid_value error:end_period/not_allowed "+
		"error:initiative_id/not_found error:initiative_id/not_found error:initiative_id/required error:colour/unknown_field error:currency/invalid_value" {
		t.Errorf("statuses: %s", s)
	}
	if !got.Committed || got.Summary.Created != 2 || got.Summary.Failed != 8 || got.Results[0].ID == nil || got.Results[2].ID != nil ||
		*got.Results[1].ID == "00000000-0000-0000-0000-000000000001" {
		t.Errorf("answer: %+v", got)
	}
	if costs() != 2 {
		t.Errorf("%d costs, want 2", costs())
	}
	// The single route reads what bulk wrote, as it would have written it.
	licID, setupID := *got.Results[0].ID, *got.Results[1].ID
	costOf := func(id string) map[string]any {
		t.Helper()
		for _, c := range ts.do(&admin, "GET", "/v1/initiatives/"+initA+"/costs", nil).json(t)["data"].([]any) {
			if c := c.(map[string]any); c["id"] == id {
				return c
			}
		}
		t.Fatalf("no cost %s", id)
		return nil
	}
	lic := costOf(licID)
	if lic["name"] != "Licences" || lic["recurrence"] != "monthly" || lic["end_period"] != "2026-12" || lic["amount"] != 1200.5 {
		t.Errorf("licences: %v", lic)
	}

	// upsert: same fields by id → unchanged; changed → updated, replaced as PUT replaces (recurrence back to once);
	// no id → created; unknown id, another initiative's cost, a repeated id → errors.
	got = post(map[string]any{"mode": "upsert", "records": []any{
		row(initA, "Licences", 1200.5, "recurrence", "monthly", "end_period", "2026-12", "id", licID),
		row(initA, "Setup v2", 6000, "id", setupID),
		row(initA, "Training", 300),
		row(initA, "Ghost", 1, "id", "7f3c1c1e-0000-4000-8000-000000000000"),
		row(initA, "Setup v3", 7000, "id", setupID),
		row(initA, "Bad id", 1, "id", "nope"),
	}})
	if got.statuses() != "unchanged updated created error:id/not_found error:id/duplicate error:id/not_found" ||
		*got.Results[0].ID != licID || *got.Results[1].ID != setupID {
		t.Errorf("upsert: %s", got.statuses())
	}
	if costOf(licID)["updated_at"] != lic["updated_at"] {
		t.Errorf("an unchanged row changed updated_at")
	}
	// A cost never moves: named under another initiative it is not found there.
	if got = post(map[string]any{"mode": "upsert", "records": []any{row(initC, "Moved", 1, "id", licID)}}); got.statuses() != "error:id/not_found" {
		t.Errorf("moved: %s", got.statuses())
	}
	got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Licences", 1200.5, "id", licID)}})
	if got.statuses() != "updated" {
		t.Errorf("replace: %s", got.statuses())
	}
	if c := costOf(licID); c["recurrence"] != "once" || c["end_period"] != nil {
		t.Errorf("upsert did not replace as PUT: %v", c)
	}
	if c := costOf(setupID); c["name"] != "Setup v2" || c["amount"] != 6000.0 {
		t.Errorf("setup after upsert: %v", c)
	}
	if costs() != 3 {
		t.Errorf("after upsert: %d costs, want 3", costs())
	}

	// dry_run: the answer says what would happen; nothing is written. atomic: one bad row and nothing is written.
	got = post(map[string]any{"mode": "upsert", "dry_run": true, "records": []any{row(initA, "New", 1), row(initA, "Setup", 1, "id", setupID)}})
	if got.Committed || got.statuses() != "created updated" || got.Results[0].ID != nil {
		t.Errorf("dry run: %+v", got)
	}
	got = post(map[string]any{"mode": "upsert", "atomic": true, "records": []any{row(initA, "New", 1), row(initA, "Setup", -1, "id", setupID)}})
	if got.Committed || got.statuses() != "created error:amount/out_of_range" {
		t.Errorf("atomic: %s", got.statuses())
	}
	if costs() != 3 {
		t.Errorf("dry run or atomic wrote: %d costs", costs())
	}

	// 500 costs per initiative hold across the rows of an import (498 seeded, 3 new).
	initB := ts.createInitiative(admin, map[string]any{"name": "Crowded"})
	if err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence)
			SELECT $1, $2, 'seed ' || g, 'opex', 1, 'USD', '2026-01-01', 'once' FROM generate_series(1, 498) g`, ts.tenant, initB)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got = post(map[string]any{"records": []any{row(initB, "N1", 1), row(initB, "N2", 1), row(initB, "N3", 1)}})
	if got.statuses() != "created created error:initiative_id/conflict" || !strings.Contains(got.Results[2].Errors[0].Message, "500") {
		t.Errorf("limit: %s %+v", got.statuses(), got.Results[2].Errors)
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initB+"/costs", row(initB, "N3", 1)), 409, "CONFLICT")

	// Another tenant cannot reach this tenant's initiative or costs, and exports none of them.
	r := ts.do(&other, "POST", "/v1/bulk/import", map[string]any{"resource": "costs", "mode": "upsert",
		"records": []any{row(initA, "Licences", 1, "id", licID), row(foreign, "Licences", 1, "id", licID)}})
	if decodeImport(t, r).statuses() != "error:initiative_id/not_found error:id/not_found" {
		t.Errorf("other tenant: %s", r.body)
	}
	if ex := ts.do(&other, "GET", "/v1/bulk/export?resource=costs&format=csv", nil); string(ex.body) !=
		"id,initiative_id,name,category,amount,currency,period,recurrence,end_period\n" {
		t.Errorf("other tenant's export: %q", ex.body)
	}

	// Export, then import with upsert: every row unchanged, in both formats (an odd amount and an end_period included).
	post(map[string]any{"records": []any{row(initC, "Odd", 1234.5678, "recurrence", "quarterly", "end_period", "2027-03", "category", "opex", "currency", "EUR")}})
	total := costs()
	for _, format := range []string{"ndjson", "csv"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=costs&format="+format, nil)
		expect(t, ex, 200)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=costs&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != total || back.Summary.Total != total {
			t.Errorf("%s round trip: %+v", format, back.Summary)
		}
	}
	if costs() != total {
		t.Errorf("round trip wrote: %d costs, want %d", costs(), total)
	}
	// No cost route emits an event, and neither does the import.
	if n := countEvents(t, ts, ts.tenant, `type NOT LIKE 'initiative.%'`); n != 0 {
		t.Errorf("%d events", n)
	}

	// An archived initiative's costs are read-only (the single route answers 409).
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initA, nil), 204)
	got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Licences", 9, "id", licID), row(initA, "New", 9)}})
	if got.statuses() != "error:initiative_id/conflict error:initiative_id/conflict" {
		t.Errorf("archived: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initA+"/costs", row(initA, "New", 9)), 409)

	// Permissions: initiatives:write to import, initiatives:read to export (as the cost routes).
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	none := caller{sub: "n", tenant: ts.tenant, permissions: []string{"stakeholders:read"}}
	expect(t, ts.do(&reader, "POST", "/v1/bulk/import", map[string]any{"resource": "costs", "records": []any{}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&none, "GET", "/v1/bulk/export?resource=costs", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "GET", "/v1/bulk/export?resource=costs", nil), 200)
}

// TestBulkImportCostsJob: past 10,000 rows a costs import is a job the worker
// runs with the same importer, and the 500 costs per initiative hold across
// the job's chunks: 20 initiatives' rows interleaved, 500 each, then a 501st
// for the first, which fails as the single route's would.
func TestBulkImportCostsJob(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	inits := make([]string, 20)
	for i := range inits {
		inits[i] = ts.createInitiative(admin, map[string]any{"name": fmt.Sprintf("Costly %d", i)})
	}
	rows := make([]any, 10_001)
	for i := range rows {
		rows[i] = map[string]any{"initiative_id": inits[i%len(inits)], "name": fmt.Sprintf("Line %d", i), "category": "opex",
			"amount": float64(i%97 + 1), "currency": "USD", "period": "2026-01"}
	}
	r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "costs", "records": rows})
	expect(t, r, 202)
	loc := r.header.Get("Location")

	job := finishBulkJob(t, ts, admin, loc)
	s := job["summary"].(map[string]any)
	if job["status"] != "succeeded" || job["resource"] != "costs" || s["created"] != 10_000.0 || s["failed"] != 1.0 {
		t.Fatalf("finished job: %v", job)
	}
	for _, id := range []string{inits[0], inits[19]} {
		if n := countRows(t, ts, ts.tenant, `SELECT count(*) FROM initiative_costs WHERE initiative_id = '`+id+`'`); n != 500 {
			t.Errorf("initiative %s holds %d costs, want 500", id, n)
		}
	}
	last := ts.do(&admin, "GET", loc+"/results?page=21&page_size=500", nil).json(t)["data"].([]any)[0].(map[string]any)
	if last["index"] != 10_000.0 || last["status"] != "error" || last["errors"].([]any)[0].(map[string]any)["code"] != "conflict" {
		t.Errorf("the 501st cost: %v", last)
	}
	if n := countEvents(t, ts, ts.tenant, `type LIKE 'cost%'`); n != 0 {
		t.Errorf("%d cost events, want none (costs emit none, as the single routes)", n)
	}
}
