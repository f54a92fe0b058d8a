package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
)

// TestBulkImportStakeholders: each row passes the reading and checks of POST
// /v1/stakeholders (and, when it replaces one, of PUT); the key is initiative
// + e-mail, case-insensitively; upsert tells unchanged from updated; the 500
// per initiative hold across the import; dry runs and failed atomic imports
// write nothing; another tenant's initiative is not found; an archived
// initiative's stakeholders are read-only; an export imports back unchanged.
func TestBulkImportStakeholders(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	initA := ts.createInitiative(admin, map[string]any{"name": "Bulk stakeholders"})
	foreign := ts.createInitiative(other, map[string]any{"name": "Theirs"})
	stakeholders := func() int { return countRows(t, ts, ts.tenant, `SELECT count(*) FROM stakeholders`) }
	post := func(body map[string]any) importAnswer {
		t.Helper()
		body["resource"] = "stakeholders"
		return decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", body))
	}
	row := func(init, name, email, influence, interest string, extra ...any) map[string]any {
		r := map[string]any{"initiative_id": init, "name": name, "email": email, "influence": influence, "interest": interest}
		for i := 0; i+1 < len(extra); i += 2 {
			r[extra[i].(string)] = extra[i+1]
		}
		return r
	}

	// Non-atomic create: good rows land, bad rows carry the single route's errors.
	got := post(map[string]any{"records": []any{
		row(initA, "Ada", "ada@example.com", "high", "high", "role", "  CFO ", "notes", "sponsor"),
		row(initA, "Bob", "bob@example.com", "low", "medium"),
		row(initA, "Ada again", "ADA@Example.com", "low", "low"),
		row(initA, "X", "not-an-email", "low", "low"),
		row(foreign, "Y", "y@example.com", "low", "low"),
		row("not-a-uuid", "Y", "y@example.com", "low", "low"),
		row(initA, "Z", "z@example.com", "huge", "low"),
		row(initA, "W", "w@example.com", "low", "low", "colour", "red"),
		map[string]any{"initiative_id": initA, "email": "v@example.com", "influence": "low", "interest": "low"},
		row(initA, "U", "u@example.com", "low", "low", "role", "a\tb"),
	}})
	if s := got.statuses(); s != "created created error:email/duplicate error:email/invalid_format error:initiative_id/not_found "+
		"error:initiative_id/not_found error:influence/invalid_value error:colour/unknown_field error:name/required error:role/invalid_value" {
		t.Errorf("statuses: %s", s)
	}
	if !got.Committed || got.Summary.Created != 2 || got.Summary.Failed != 8 || got.Results[0].ID == nil || got.Results[2].ID != nil {
		t.Errorf("answer: %+v", got)
	}
	if stakeholders() != 2 {
		t.Errorf("%d stakeholders, want 2", stakeholders())
	}
	// The single route reads what bulk wrote: role trimmed, derived fields as for a stakeholder it created.
	ada := ts.do(&admin, "GET", "/v1/stakeholders/"+*got.Results[0].ID, nil).json(t)
	if ada["role"] != "CFO" || ada["notes"] != "sponsor" || ada["quadrant"] != "manage_closely" || ada["department"] != nil {
		t.Errorf("ada: %v", ada)
	}
	single := ts.do(&admin, "POST", "/v1/stakeholders", row(initA, "Cy", "cy@example.com", "high", "high"))
	expect(t, single, 201)
	// at_risk_from of a powerful stakeholder never engaged: the same offset from creation either way.
	if n := countRows(t, ts, ts.tenant, `SELECT count(DISTINCT at_risk_from - created_at::date) FROM stakeholders WHERE influence = 'high' AND at_risk_from IS NOT NULL`); n != 1 {
		t.Errorf("bulk and single route disagree on at_risk_from (%d distinct offsets)", n)
	}

	// create again: an existing key (any case) is a row error; upsert: unchanged, updated, created.
	got = post(map[string]any{"records": []any{row(initA, "Ada", "Ada@Example.com", "high", "high")}})
	if got.statuses() != "error:email/already_exists" {
		t.Errorf("create over existing: %s", got.statuses())
	}
	got = post(map[string]any{"mode": "upsert", "records": []any{
		row(initA, "Ada", "ada@example.com", "high", "high", "role", "CFO", "notes", "sponsor"),
		row(initA, "Bob", "BOB@example.com", "low", "high", "department", "Finance"),
		row(initA, "Dee", "dee@example.com", "medium", "low"),
	}})
	if got.statuses() != "unchanged updated created" || *got.Results[0].ID != ada["id"] {
		t.Errorf("upsert: %s", got.statuses())
	}
	bob := ts.do(&admin, "GET", "/v1/stakeholders/"+*got.Results[1].ID, nil).json(t)
	if bob["email"] != "BOB@example.com" || bob["interest"] != "high" || bob["department"] != "Finance" || bob["quadrant"] != "keep_informed" {
		t.Errorf("bob after upsert: %v", bob)
	}
	if ts.do(&admin, "GET", "/v1/stakeholders/"+ada["id"].(string), nil).json(t)["updated_at"] != ada["updated_at"] {
		t.Errorf("an unchanged row changed updated_at")
	}
	// Replaced as PUT replaces: what the row leaves out is cleared.
	got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Ada", "ada@example.com", "high", "high")}})
	ada2 := ts.do(&admin, "GET", "/v1/stakeholders/"+ada["id"].(string), nil).json(t)
	if got.statuses() != "updated" || ada2["role"] != nil || ada2["notes"] != "" {
		t.Errorf("replace: %s %v", got.statuses(), ada2)
	}
	if stakeholders() != 4 {
		t.Errorf("after upsert: %d stakeholders, want 4", stakeholders())
	}

	// dry_run: the answer says what would happen; nothing is written.
	got = post(map[string]any{"mode": "upsert", "dry_run": true, "records": []any{
		row(initA, "Eve", "eve@example.com", "low", "low"),
		row(initA, "Ada", "ada@example.com", "critical", "high"),
	}})
	if got.Committed || got.statuses() != "created updated" || got.Results[0].ID != nil {
		t.Errorf("dry run: %+v", got)
	}
	// atomic: one bad row and nothing is written.
	got = post(map[string]any{"mode": "upsert", "atomic": true, "records": []any{
		row(initA, "Eve", "eve@example.com", "low", "low"),
		row(initA, "Fay", "fay@example.com", "low", ""),
	}})
	if got.Committed || got.statuses() != "created error:interest/required" {
		t.Errorf("atomic: %+v (%s)", got, got.statuses())
	}
	if stakeholders() != 4 || ts.do(&admin, "GET", "/v1/stakeholders/"+ada["id"].(string), nil).json(t)["influence"] != "high" {
		t.Errorf("dry run or atomic wrote: %d stakeholders", stakeholders())
	}
	got = post(map[string]any{"atomic": true, "records": []any{row(initA, "Eve", "eve@example.com", "low", "low")}})
	if !got.Committed || got.statuses() != "created" || stakeholders() != 5 {
		t.Errorf("atomic ok: %+v, %d stakeholders", got, stakeholders())
	}

	// 500 stakeholders per initiative hold across the rows of an import (498 seeded, 3 new).
	initB := ts.createInitiative(admin, map[string]any{"name": "Crowded"})
	if err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO stakeholders (tenant_id, initiative_id, name, email, influence, interest)
			SELECT $1, $2, 'seed ' || g, 'seed' || g || '@example.com', 'low', 'low' FROM generate_series(1, 498) g`, ts.tenant, initB)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got = post(map[string]any{"mode": "upsert", "records": []any{
		row(initB, "N1", "n1@example.com", "low", "low"),
		row(initB, "Seed 1", "SEED1@example.com", "medium", "low"), // an update does not count
		row(initB, "N2", "n2@example.com", "low", "low"),
		row(initB, "N3", "n3@example.com", "low", "low"),
	}})
	if got.statuses() != "created updated created error:initiative_id/conflict" || !strings.Contains(got.Results[3].Errors[0].Message, "500") {
		t.Errorf("limit: %s %+v", got.statuses(), got.Results[3].Errors)
	}
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders", row(initB, "N3", "n3@example.com", "low", "low")), 409, "CONFLICT")

	// Another tenant cannot reach this tenant's initiative, and exports none of its stakeholders.
	r := ts.do(&other, "POST", "/v1/bulk/import", map[string]any{"resource": "stakeholders", "mode": "upsert",
		"records": []any{row(initA, "Ada", "ada@example.com", "low", "low")}})
	if decodeImport(t, r).statuses() != "error:initiative_id/not_found" {
		t.Errorf("other tenant: %s", r.body)
	}
	if ex := ts.do(&other, "GET", "/v1/bulk/export?resource=stakeholders&format=csv", nil); string(ex.body) !=
		"id,initiative_id,name,email,role,department,influence,interest,notes\n" {
		t.Errorf("other tenant's export: %q", ex.body)
	}

	// Export, then import with upsert: every row unchanged, in both formats.
	total := stakeholders()
	for _, format := range []string{"ndjson", "csv"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=stakeholders&format="+format, nil)
		expect(t, ex, 200)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=stakeholders&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != total || back.Summary.Total != total {
			t.Errorf("%s round trip: %+v", format, back.Summary)
		}
	}
	// The single routes emit no stakeholder events on create or edit, and neither does the import.
	if n := countEvents(t, ts, ts.tenant, `type LIKE 'stakeholder%'`); n != 0 {
		t.Errorf("%d stakeholder events", n)
	}

	// An archived initiative's stakeholders are read-only (the single route answers 409).
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initA, nil), 204)
	got = post(map[string]any{"mode": "upsert", "records": []any{row(initA, "Ada", "ada@example.com", "low", "low")}})
	if got.statuses() != "error:initiative_id/conflict" {
		t.Errorf("archived: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders", row(initA, "Gus", "gus@example.com", "low", "low")), 409)

	// Permissions: stakeholders:write to import, stakeholders:read to export.
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"stakeholders:read"}}
	none := caller{sub: "n", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	expect(t, ts.do(&reader, "POST", "/v1/bulk/import", map[string]any{"resource": "stakeholders", "records": []any{}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&none, "GET", "/v1/bulk/export?resource=stakeholders", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "GET", "/v1/bulk/export?resource=stakeholders", nil), 200)
}

// TestBulkImportStakeholdersJob: past 10,000 rows a stakeholders import is a
// job the worker runs with the same importer; the limit of 500 per
// initiative holds across the job's chunks; the job is visible only to
// callers who may read stakeholders.
func TestBulkImportStakeholdersJob(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Big crowd"})
	rows := make([]any, 10_001)
	for i := range rows {
		rows[i] = map[string]any{"initiative_id": initID, "name": fmt.Sprintf("P %d", i), "email": fmt.Sprintf("p%d@example.com", i),
			"influence": "low", "interest": "low"}
	}
	r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "stakeholders", "records": rows})
	expect(t, r, 202)
	loc := r.header.Get("Location")
	benefitsOnly := caller{sub: "b", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	expect(t, ts.do(&benefitsOnly, "GET", loc, nil), 404)

	job := finishBulkJob(t, ts, admin, loc)
	s := job["summary"].(map[string]any)
	if job["status"] != "succeeded" || job["resource"] != "stakeholders" || s["created"] != 500.0 || s["failed"] != 9_501.0 {
		t.Fatalf("finished job: %v", job)
	}
	if n := countRows(t, ts, ts.tenant, `SELECT count(*) FROM stakeholders`); n != 500 {
		t.Errorf("%d stakeholders written, want 500", n)
	}
	last := ts.do(&admin, "GET", loc+"/results?page=21&page_size=500", nil).json(t)["data"].([]any)[0].(map[string]any)
	if last["index"] != 10_000.0 || last["status"] != "error" || last["errors"].([]any)[0].(map[string]any)["code"] != "conflict" {
		t.Errorf("the row of the second chunk: %v", last)
	}
}
