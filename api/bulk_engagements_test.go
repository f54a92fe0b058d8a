package api_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
)

// TestBulkImportEngagementsMatchesSingleRoute: importing engagements leaves a
// stakeholder exactly as logging the same engagements one by one through POST
// /v1/stakeholders/{id}/engagement leaves its twin (count, last date, recent
// sentiments in order, at_risk_from, what GET shows), lists the engagements
// in the same order, and emits one stakeholder.engagement event per
// engagement, the last one carrying the same stakeholder as the single route's last.
func TestBulkImportEngagementsMatchesSingleRoute(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Twins"})
	twin := func(name string) string {
		r := ts.do(&admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initID, "name": name,
			"email": name + "@example.com", "influence": "critical", "interest": "high"})
		expect(t, r, 201)
		return r.json(t)["id"].(string)
	}
	single, bulk := twin("single"), twin("bulk")
	day := func(ago int) string { return time.Now().UTC().AddDate(0, 0, -ago).Format(time.DateOnly) }
	// Same-day engagements (their order decides the latest sentiment), a back-dated one, notes.
	engagements := []map[string]any{
		{"type": "meeting", "date": day(40), "sentiment": "positive", "notes": "kick-off"},
		{"type": "call", "date": day(20), "sentiment": "positive"},
		{"type": "email", "date": day(20), "sentiment": "negative"},
		{"type": "survey", "date": day(60), "sentiment": "neutral"},
		{"type": "presentation", "date": day(20), "sentiment": "cautious"},
	}
	var singleEvents []map[string]any
	for _, e := range engagements {
		r := ts.do(&admin, "POST", "/v1/stakeholders/"+single+"/engagement", e)
		expect(t, r, 201)
		singleEvents = append(singleEvents, r.json(t))
	}
	records := make([]any, len(engagements))
	for i, e := range engagements {
		rec := map[string]any{"stakeholder_id": bulk}
		for k, v := range e {
			rec[k] = v
		}
		records[i] = rec
	}
	got := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "engagements", "records": records}))
	if got.statuses() != "created created created created created" {
		t.Fatalf("import: %s", got.statuses())
	}

	// The stored summary, at_risk_from included, is the same.
	if n := countRows(t, ts, ts.tenant, fmt.Sprintf(`SELECT count(DISTINCT (engagement_count, last_engagement_on, recent_sentiments, at_risk_from))
		FROM stakeholders WHERE id IN ('%s', '%s')`, single, bulk)); n != 1 {
		t.Errorf("the stakeholders' stored summaries differ")
	}
	strip := func(m map[string]any) map[string]any {
		for _, k := range []string{"id", "name", "email", "created_at", "updated_at"} {
			delete(m, k)
		}
		return m
	}
	a, b := strip(ts.do(&admin, "GET", "/v1/stakeholders/"+single, nil).json(t)), strip(ts.do(&admin, "GET", "/v1/stakeholders/"+bulk, nil).json(t))
	if !reflect.DeepEqual(a, b) || a["engagement_count"] != 5.0 || a["sentiment"] != "cautious" {
		t.Errorf("GET differs:\nsingle %v\nbulk   %v", a, b)
	}
	order := func(id string) []string {
		var out []string
		for _, e := range ts.do(&admin, "GET", "/v1/stakeholders/"+id+"/engagements", nil).json(t)["data"].([]any) {
			e := e.(map[string]any)
			out = append(out, fmt.Sprint(e["type"], e["date"], e["sentiment"], e["notes"], e["recorded_by"]))
		}
		return out
	}
	if oa, ob := order(single), order(bulk); !reflect.DeepEqual(oa, ob) {
		t.Errorf("engagement order differs:\n%v\n%v", oa, ob)
	}

	// One event per engagement, in row order, with the single route's data.
	var events []map[string]any
	for _, e := range eventsOf(t, ts, ts.tenant, "stakeholder.engagement") {
		if e["stakeholder_id"] == bulk {
			events = append(events, e)
		}
	}
	if len(events) != len(engagements) {
		t.Fatalf("%d events, want %d", len(events), len(engagements))
	}
	for i, e := range events {
		if e["id"] != *got.Results[i].ID || e["type"] != engagements[i]["type"] || e["sentiment"] != engagements[i]["sentiment"] {
			t.Errorf("event %d: %v", i, e)
		}
	}
	last, lastSingle := events[len(events)-1], singleEvents[len(singleEvents)-1]
	sa, sb := strip(lastSingle["stakeholder"].(map[string]any)), strip(last["stakeholder"].(map[string]any))
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("event's stakeholder differs:\nsingle %v\nbulk   %v", sa, sb)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		return k
	}
	if len(keys(last)) != len(keys(lastSingle)) {
		t.Errorf("event shapes differ: %v vs %v", keys(last), keys(lastSingle))
	}
}

// TestBulkImportEngagements: each row passes the reading and checks of POST
// /v1/stakeholders/{id}/engagement; the key is id (upsert: the same
// engagement again is unchanged, a changed one is refused, an unknown id is
// not found; create ignores id); the 10,000 per stakeholder hold across the
// import; dry runs and failed atomic imports write nothing (no events);
// another tenant's stakeholder is not found; an archived initiative's
// stakeholders are read-only; an export imports back unchanged without
// events; stakeholders:write to import, stakeholders:read to export.
func TestBulkImportEngagements(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	stakeholderIn := func(c caller, initID, name string) string {
		r := ts.do(&c, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initID, "name": name, "email": name + "@example.com",
			"influence": "low", "interest": "low"})
		expect(t, r, 201)
		return r.json(t)["id"].(string)
	}
	initA := ts.createInitiative(admin, map[string]any{"name": "Bulk engagements"})
	ada, bob := stakeholderIn(admin, initA, "ada"), stakeholderIn(admin, initA, "bob")
	foreign := stakeholderIn(other, ts.createInitiative(other, map[string]any{"name": "Theirs"}), "eve")
	engagementRows := func() int { return countRows(t, ts, ts.tenant, `SELECT count(*) FROM stakeholder_engagements`) }
	events := func() int {
		return countEvents(t, ts, ts.tenant, `type = 'stakeholder.engagement'`)
	}
	post := func(body map[string]any) importAnswer {
		t.Helper()
		body["resource"] = "engagements"
		return decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", body))
	}
	day := time.Now().UTC().AddDate(0, 0, -3).Format(time.DateOnly)
	row := func(sid, typ, sentiment string, extra ...any) map[string]any {
		r := map[string]any{"stakeholder_id": sid, "type": typ, "sentiment": sentiment, "date": day}
		for i := 0; i+1 < len(extra); i += 2 {
			r[extra[i].(string)] = extra[i+1]
		}
		return r
	}

	got := post(map[string]any{"records": []any{
		row(ada, "meeting", "positive", "notes", "first"),
		row(bob, "call", "neutral", "id", "00000000-0000-0000-0000-000000000001"), // create ignores id, as the single route does
		row(ada, "lunch", "positive"),
		row(ada, "call", "ecstatic"),
		row(ada, "call", "neutral", "date", "2999-01-01"),
		row(ada, "call", "neutral", "date", nil),
		row(foreign, "call", "neutral"),
		row("not-a-uuid", "call", "neutral"),
		map[string]any{"type": "call", "sentiment": "neutral", "date": day},
		row(ada, "call", "neutral", "colour", "red"),
	}})
	if s := got.statuses(); s != "created created error:type/invalid_value error:sentiment/invalid_value error:date/in_future error:date/required "+
		"error:stakeholder_id/not_found error:stakeholder_id/not_found error:stakeholder_id/required error:colour/unknown_field" {
		t.Errorf("statuses: %s", s)
	}
	if !got.Committed || got.Summary.Created != 2 || got.Results[0].ID == nil || *got.Results[1].ID == "00000000-0000-0000-0000-000000000001" {
		t.Errorf("answer: %+v", got)
	}
	if engagementRows() != 2 || events() != 2 {
		t.Errorf("%d engagements, %d events, want 2 and 2", engagementRows(), events())
	}
	if s := ts.do(&admin, "GET", "/v1/stakeholders/"+ada, nil).json(t); s["engagement_count"] != 1.0 || s["last_engagement_at"] != day || s["sentiment"] != "positive" {
		t.Errorf("ada after import: %v", s)
	}
	first := *got.Results[0].ID

	// upsert: the same engagement again is unchanged (no event); changed, refused; unknown id, another
	// stakeholder's engagement, a repeated id: errors; no id: logged.
	got = post(map[string]any{"mode": "upsert", "records": []any{
		row(ada, "meeting", "positive", "notes", "first", "id", first),
		row(ada, "meeting", "positive", "notes", "first", "id", first),
		row(ada, "meeting", "positive", "id", "7f3c1c1e-0000-4000-8000-000000000000"),
		row(ada, "email", "cautious"),
	}})
	if got.statuses() != "unchanged error:id/duplicate error:id/not_found created" || *got.Results[0].ID != first {
		t.Errorf("upsert: %s", got.statuses())
	}
	for _, r := range []struct {
		rec  map[string]any
		want string
	}{
		{row(ada, "meeting", "negative", "notes", "first", "id", first), "error:id/conflict"}, // a log entry is never changed
		{row(ada, "meeting", "positive", "id", first), "error:id/conflict"},
		{row(bob, "meeting", "positive", "notes", "first", "id", first), "error:id/not_found"}, // another stakeholder's
	} {
		if got := post(map[string]any{"mode": "upsert", "records": []any{r.rec}}); got.statuses() != r.want {
			t.Errorf("upsert %v: %s, want %s", r.rec, got.statuses(), r.want)
		}
	}
	if engagementRows() != 3 || events() != 3 {
		t.Errorf("after upsert: %d engagements, %d events, want 3 and 3", engagementRows(), events())
	}

	// dry_run and a failed atomic import write nothing and emit nothing.
	got = post(map[string]any{"dry_run": true, "records": []any{row(bob, "call", "negative")}})
	if got.Committed || got.statuses() != "created" || got.Results[0].ID != nil {
		t.Errorf("dry run: %+v", got)
	}
	got = post(map[string]any{"atomic": true, "records": []any{row(bob, "call", "negative"), row(bob, "call", "")}})
	if got.Committed || got.statuses() != "created error:sentiment/required" {
		t.Errorf("atomic: %s", got.statuses())
	}
	if engagementRows() != 3 || events() != 3 || ts.do(&admin, "GET", "/v1/stakeholders/"+bob, nil).json(t)["engagement_count"] != 1.0 {
		t.Errorf("dry run or atomic wrote: %d engagements, %d events", engagementRows(), events())
	}

	// Another tenant cannot reach this tenant's stakeholders, and exports none of their engagements.
	r := ts.do(&other, "POST", "/v1/bulk/import", map[string]any{"resource": "engagements", "records": []any{row(ada, "call", "neutral")}})
	if decodeImport(t, r).statuses() != "error:stakeholder_id/not_found" {
		t.Errorf("other tenant: %s", r.body)
	}
	if ex := ts.do(&other, "GET", "/v1/bulk/export?resource=engagements&format=csv", nil); string(ex.body) != "id,stakeholder_id,type,date,sentiment,notes\n" {
		t.Errorf("other tenant's export: %q", ex.body)
	}

	// Export, then import with upsert: every row unchanged and no event, in both formats.
	total, before := engagementRows(), events()
	for _, format := range []string{"ndjson", "csv"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=engagements&format="+format, nil)
		expect(t, ex, 200)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=engagements&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != total || back.Summary.Total != total {
			t.Errorf("%s round trip: %+v", format, back.Summary)
		}
	}
	if engagementRows() != total || events() != before {
		t.Errorf("round trip wrote: %d engagements, %d events", engagementRows(), events())
	}

	// 10,000 engagements per stakeholder hold across the rows of an import (9,999 seeded, 2 new); after the round trip, which would be a job past 10,000 rows.
	cy := stakeholderIn(admin, initA, "cy")
	if err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), `INSERT INTO stakeholder_engagements (tenant_id, stakeholder_id, type, date, sentiment, recorded_by)
			SELECT $1, $2, 'email', '2020-01-01', 'neutral', 'seed' FROM generate_series(1, 9999)`, ts.tenant, cy); err != nil {
			return err
		}
		_, err := tx.Exec(context.Background(), `UPDATE stakeholders SET engagement_count = 9999 WHERE id = $1`, cy)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got = post(map[string]any{"records": []any{row(cy, "call", "positive"), row(cy, "call", "positive")}})
	if got.statuses() != "created error:stakeholder_id/conflict" || !strings.Contains(got.Results[1].Errors[0].Message, "10") {
		t.Errorf("limit: %s %+v", got.statuses(), got.Results[1].Errors)
	}
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders/"+cy+"/engagement", row(cy, "call", "positive")), 409, "CONFLICT")

	// An archived initiative's stakeholders are read-only (the single route answers 409).
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initA, nil), 204)
	if got = post(map[string]any{"records": []any{row(ada, "call", "neutral")}}); got.statuses() != "error:stakeholder_id/conflict" {
		t.Errorf("archived: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders/"+ada+"/engagement", row(ada, "call", "neutral")), 409)

	// Permissions: stakeholders:write to import, stakeholders:read to export.
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"stakeholders:read"}}
	none := caller{sub: "n", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	expect(t, ts.do(&reader, "POST", "/v1/bulk/import", map[string]any{"resource": "engagements", "records": []any{}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&none, "GET", "/v1/bulk/export?resource=engagements", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "GET", "/v1/bulk/export?resource=engagements", nil), 200)
}

// TestBulkImportEngagementsJob: past 10,000 rows an engagements import is a
// job the worker runs with the same importer; the limit of 10,000 per
// stakeholder holds across the job's chunks, the stakeholder's summary counts
// every engagement, and each logged engagement has its event.
func TestBulkImportEngagementsJob(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Busy"})
	r := ts.do(&admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initID, "name": "Ada", "email": "ada@example.com",
		"influence": "low", "interest": "low"})
	expect(t, r, 201)
	sid := r.json(t)["id"].(string)
	rows := make([]any, 10_001)
	for i := range rows {
		rows[i] = map[string]any{"stakeholder_id": sid, "type": "email", "sentiment": "neutral",
			"date": time.Now().UTC().AddDate(0, 0, -1-i%365).Format(time.DateOnly)}
	}
	r = ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "engagements", "records": rows})
	expect(t, r, 202)
	loc := r.header.Get("Location")

	job := finishBulkJob(t, ts, admin, loc)
	if s := job["summary"].(map[string]any); job["status"] != "succeeded" || s["created"] != 10_000.0 || s["failed"] != 1.0 {
		t.Fatalf("finished job: %v", job)
	}
	if s := ts.do(&admin, "GET", "/v1/stakeholders/"+sid, nil).json(t); s["engagement_count"] != 10_000.0 {
		t.Errorf("stakeholder after the job: %v", s)
	}
	if n := countEvents(t, ts, ts.tenant, `type = 'stakeholder.engagement'`); n != 10_000 {
		t.Errorf("%d events, want 10,000", n)
	}
}
