package api_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestBulkImportInitiatives: each row passes the reading and checks of POST
// /v1/initiatives (and, when it replaces one, of PUT, status transitions
// included, with the caller's roles); the key is the name, case-insensitively;
// upsert tells unchanged from updated; the live-initiative cap holds across
// the rows; events and history are those of the single routes; dry runs and
// failed atomic imports write nothing; tenants are apart; an export imports
// back unchanged with no events.
func TestBulkImportInitiatives(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	alpha := ts.createInitiative(admin, map[string]any{"name": "Alpha"})
	post := func(as caller, body map[string]any) importAnswer {
		t.Helper()
		body["resource"] = "initiatives"
		return decodeImport(t, ts.do(&as, "POST", "/v1/bulk/import", body))
	}
	get := func(id string) map[string]any { return ts.do(&admin, "GET", "/v1/initiatives/"+id, nil).json(t) }
	count := func() int { return countRows(t, ts, ts.tenant, `SELECT count(*) FROM initiatives`) }

	// Non-atomic create: good rows land as the single create makes them, bad rows carry its errors.
	got := post(admin, map[string]any{"records": []any{
		map[string]any{"name": "  Bravo ", "description": "b", "industry": "Retail", "expected_start_date": "2026-01-01", "expected_end_date": "2026-06-30"},
		map[string]any{"name": "BRAVO"},
		map[string]any{"name": "alpha"},
		map[string]any{"name": "Charlie", "status": "active"},
		map[string]any{"name": "Delta", "expected_start_date": "2026-05-01", "expected_end_date": "2026-01-01"},
		map[string]any{"description": "no name"},
		map[string]any{"name": "Echo", "colour": "red"},
		map[string]any{"name": "Foxtrot", "owner_id": "someone", "status": "draft", "id": "ignored", "created_at": "ignored"},
		map[string]any{"name": strings.Repeat("n", 201)},
	}})
	if s := got.statuses(); s != "created error:name/duplicate error:name/already_exists error:status/invalid_value "+
		"error:expected_end_date/invalid_value error:name/required error:colour/unknown_field created error:name/too_long" {
		t.Errorf("statuses: %s", s)
	}
	if !got.Committed || got.Summary.Created != 2 || got.Summary.Failed != 7 || got.Results[0].ID == nil || got.Results[1].ID != nil {
		t.Errorf("answer: %+v", got)
	}
	// The single route refuses what the import refused, with the same 422 elements.
	single := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Charlie", "status": "active"})
	expect(t, single, 422, "VALIDATION_ERROR")
	if errs := single.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any); errs["field"] != "status" ||
		errs["code"] != "invalid_value" || errs["message"] != got.Results[3].Errors[0].Message {
		t.Errorf("single route's error %v, import's %+v", errs, got.Results[3].Errors[0])
	}
	bravoID, foxID := *got.Results[0].ID, *got.Results[7].ID
	bravo := get(bravoID)
	if bravo["name"] != "Bravo" || bravo["status"] != "draft" || bravo["owner_id"] != "admin-1" || bravo["industry"] != "Retail" ||
		bravo["expected_end_date"] != "2026-06-30" || bravo["segment"] != nil {
		t.Errorf("bravo: %v", bravo)
	}
	if get(foxID)["owner_id"] != "someone" {
		t.Errorf("foxtrot's owner: %v", get(foxID))
	}
	hist := ts.do(&admin, "GET", "/v1/initiatives/"+bravoID+"/status-history", nil).json(t)["data"].([]any)
	if len(hist) != 1 || hist[0].(map[string]any)["reason"] != "created" || hist[0].(map[string]any)["to_status"] != "draft" {
		t.Errorf("bravo's history: %v", hist)
	}
	// initiative.created per created record, with the data the single create emits (the record as GET shows it).
	created := eventsOf(t, ts, ts.tenant, "initiative.created")
	if len(created) != 3 {
		t.Fatalf("%d initiative.created events, want 3 (1 single, 2 bulk)", len(created))
	}
	if !slices.Equal(slices.Sorted(maps.Keys(created[0])), slices.Sorted(maps.Keys(created[1]))) {
		t.Errorf("event data differs in shape: single %v, bulk %v", created[0], created[1])
	}
	for k, v := range created[1] {
		if fmt.Sprint(bravo[k]) != fmt.Sprint(v) {
			t.Errorf("bravo's event %s = %v, GET says %v", k, v, bravo[k])
		}
	}
	if created[2]["name"] != "Foxtrot" {
		t.Errorf("second event: %v", created[2])
	}

	// Upsert: equal → unchanged; replaced as PUT replaces (owner_id left out is cleared; the
	// admin may); a status change passes the single transition rules and emits status_changed.
	got = post(admin, map[string]any{"mode": "upsert", "records": []any{
		map[string]any{"name": "Bravo", "description": "b", "industry": "Retail", "status": "draft", "owner_id": "admin-1",
			"expected_start_date": "2026-01-01", "expected_end_date": "2026-06-30"},
		map[string]any{"name": "Foxtrot", "description": "new"},
		map[string]any{"name": "ALPHA", "status": "in_review", "owner_id": "admin-1"},
		map[string]any{"name": "Hotel"},
		map[string]any{"name": "Bravo", "status": "completed"},
	}})
	if s := got.statuses(); s != "unchanged updated updated created error:name/duplicate" {
		t.Errorf("upsert: %s", s)
	}
	if *got.Results[0].ID != bravoID || get(bravoID)["updated_at"] != bravo["updated_at"] {
		t.Errorf("an unchanged row changed updated_at")
	}
	fox, al := get(foxID), get(alpha)
	if fox["owner_id"] != nil || fox["description"] != "new" || al["status"] != "in_review" || al["name"] != "ALPHA" {
		t.Errorf("after upsert: %v %v", fox, al)
	}
	foxHist := ts.do(&admin, "GET", "/v1/initiatives/"+foxID+"/status-history", nil).json(t)["data"].([]any)
	if len(foxHist) != 2 || foxHist[1].(map[string]any)["kind"] != "owner" || foxHist[1].(map[string]any)["from_owner_id"] != "someone" {
		t.Errorf("foxtrot's history: %v", foxHist)
	}
	changed := eventsOf(t, ts, ts.tenant, "initiative.status_changed")
	if len(changed) != 1 || changed[0]["initiative_id"] != alpha || changed[0]["from_status"] != "draft" || changed[0]["to_status"] != "in_review" ||
		changed[0]["actor"] != "admin-1" || changed[0]["initiative"].(map[string]any)["updated_at"] != al["updated_at"] {
		t.Errorf("status events: %v", changed)
	}
	if n := len(eventsOf(t, ts, ts.tenant, "initiative.created")); n != 4 {
		t.Errorf("%d created events, want 4 (Hotel added one)", n)
	}

	// A transition that does not exist is the single route's 422 element; one the caller's roles
	// do not allow is a row error (the single route: 403); so is an owner change by a non-owner.
	writer := caller{sub: "w", tenant: ts.tenant, permissions: []string{"initiatives:read", "initiatives:write"}}
	got = post(admin, map[string]any{"mode": "upsert", "records": []any{map[string]any{"name": "Alpha", "status": "completed", "owner_id": "admin-1"}}})
	if got.statuses() != "error:status/invalid_transition" {
		t.Errorf("bad transition: %s", got.statuses())
	}
	got = post(writer, map[string]any{"mode": "upsert", "records": []any{
		map[string]any{"name": "Alpha", "status": "approved", "owner_id": "admin-1"},
		map[string]any{"name": "Hotel", "owner_id": "w"},
	}})
	if got.statuses() != "error:status/forbidden error:owner_id/forbidden" || !strings.Contains(got.Results[0].Errors[0].Message, "Admin") {
		t.Errorf("forbidden: %s %+v", got.statuses(), got.Results)
	}
	expect(t, ts.do(&writer, "POST", "/v1/initiatives/"+alpha+"/status", map[string]any{"status": "approved"}), 403, "AUTHORIZATION_ERROR")

	// Archived through the transitions: its projects are archived with it, as the single route does.
	india := ts.createInitiative(admin, map[string]any{"name": "India"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+india+"/projects", map[string]any{"name": "P"}), 201)
	for _, st := range []string{"in_review", "approved", "active", "archived"} {
		if got = post(admin, map[string]any{"mode": "upsert", "records": []any{map[string]any{"name": "India", "status": st, "owner_id": "admin-1"}}}); got.statuses() != "updated" {
			t.Fatalf("india to %s: %s", st, got.statuses())
		}
	}
	if p := ts.do(&admin, "GET", "/v1/initiatives/"+india+"/projects", nil).json(t)["data"].([]any)[0].(map[string]any); p["status"] != "archived" {
		t.Errorf("india's project: %v", p)
	}
	got = post(admin, map[string]any{"mode": "upsert", "records": []any{map[string]any{"name": "India", "status": "archived", "description": "x", "owner_id": "admin-1"}}})
	if got.statuses() != "error:name/conflict" {
		t.Errorf("archived is read-only: %s", got.statuses())
	}

	// dry_run: the answer says what would happen; nothing is written, no event.
	events := countEvents(t, ts, ts.tenant, `true`)
	total := count()
	got = post(admin, map[string]any{"mode": "upsert", "dry_run": true, "records": []any{
		map[string]any{"name": "Juliet"},
		map[string]any{"name": "Bravo", "description": "changed"},
	}})
	if got.Committed || got.statuses() != "created updated" || got.Results[0].ID != nil {
		t.Errorf("dry run: %+v", got)
	}
	// atomic: one bad row and nothing is written.
	got = post(admin, map[string]any{"atomic": true, "records": []any{map[string]any{"name": "Juliet"}, map[string]any{"name": ""}}})
	if got.Committed || got.statuses() != "created error:name/required" {
		t.Errorf("atomic: %+v (%s)", got, got.statuses())
	}
	if count() != total || get(bravoID)["description"] != "b" || countEvents(t, ts, ts.tenant, `true`) != events {
		t.Errorf("dry run or atomic wrote")
	}

	// Another tenant: names are per tenant, and neither sees the other's records.
	got = post(other, map[string]any{"mode": "upsert", "records": []any{map[string]any{"name": "Alpha"}}})
	if got.statuses() != "created" || *got.Results[0].ID == alpha || get(alpha)["status"] != "in_review" {
		t.Errorf("other tenant: %s", got.statuses())
	}
	if ex := ts.do(&other, "GET", "/v1/bulk/export?resource=initiatives&format=ndjson", nil); strings.Count(string(ex.body), "\n") != 1 ||
		strings.Contains(string(ex.body), alpha) {
		t.Errorf("other tenant's export: %q", ex.body)
	}

	// Export, then import with upsert: every row unchanged (archived India too), no events, both formats.
	total = count()
	for _, format := range []string{"ndjson", "csv"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=initiatives&format="+format, nil)
		expect(t, ex, 200)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=initiatives&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != total || back.Summary.Total != total {
			t.Errorf("%s round trip: %+v %s", format, back.Summary, back.statuses())
		}
	}
	if n := countEvents(t, ts, ts.tenant, `true`); n != events {
		t.Errorf("the round trip emitted %d events", n-events)
	}

	// Permissions: initiatives:write to import, initiatives:read to export.
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	none := caller{sub: "n", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	expect(t, ts.do(&reader, "POST", "/v1/bulk/import", map[string]any{"resource": "initiatives", "records": []any{}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&none, "GET", "/v1/bulk/export?resource=initiatives", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "GET", "/v1/bulk/export?resource=initiatives", nil), 200)
}

// TestBulkImportInitiativesCap: the tenant's 1,000 initiatives that are not
// archived hold across the rows of one import, as they hold for the single create.
func TestBulkImportInitiativesCap(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	rows := make([]any, 1001)
	for i := range rows {
		rows[i] = map[string]any{"name": fmt.Sprintf("Cap %d", i)}
	}
	got := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "initiatives", "records": rows}))
	last := got.Results[1000]
	if got.Summary.Created != 1000 || last.Status != "error" || last.Errors[0].Code != "conflict" || !strings.Contains(last.Errors[0].Message, "1000") {
		t.Errorf("cap: %+v, last %+v", got.Summary, last)
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "One more"}), 409, "CONFLICT")
	if n := len(eventsOf(t, ts, ts.tenant, "initiative.created")); n != 1000 {
		t.Errorf("%d created events, want 1000", n)
	}
}

// TestBulkImportInitiativesJob: past 10,000 rows an initiatives import is a
// job the worker runs with the same importer and the requester's roles (an
// Admin-only transition passes); the cap holds across the job's chunks.
func TestBulkImportInitiativesJob(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Reviewed"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "in_review"}), 200)
	rows := make([]any, 10_001)
	rows[0] = map[string]any{"name": "Reviewed", "status": "approved", "owner_id": "admin-1"}
	for i := 1; i < len(rows); i++ {
		rows[i] = map[string]any{"name": fmt.Sprintf("J %d", i)}
	}
	r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "initiatives", "mode": "upsert", "records": rows})
	expect(t, r, 202)
	loc := r.header.Get("Location")
	benefitsOnly := caller{sub: "b", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	expect(t, ts.do(&benefitsOnly, "GET", loc, nil), 404)

	job := finishBulkJob(t, ts, admin, loc)
	s := job["summary"].(map[string]any)
	// One live initiative before: 999 more fit.
	if job["status"] != "succeeded" || job["resource"] != "initiatives" || s["updated"] != 1.0 || s["created"] != 999.0 || s["failed"] != 9_001.0 {
		t.Fatalf("finished job: %v", job)
	}
	if st := ts.do(&admin, "GET", "/v1/initiatives/"+id, nil).json(t)["status"]; st != "approved" {
		t.Errorf("the job's transition: %v", st)
	}
	if n := len(eventsOf(t, ts, ts.tenant, "initiative.status_changed")); n != 2 {
		t.Errorf("%d status events, want 2", n)
	}
}
