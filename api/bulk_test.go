package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
)

// NDJSON bodies are text to the contract checks (as text/csv is).
func init() {
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.FileBodyDecoder)
}

// seedLongBenefits inserts n monthly benefits of an initiative that started in
// January 2000, so each has over 300 periods to file actuals for (fixtures at
// the scale of a bulk import; the API would refuse nothing here).
func seedLongBenefits(t testing.TB, ts *testServer, initID string, n int) []string {
	t.Helper()
	return seedLongBenefitsN(t, ts, initID, n, 0)
}

// seedLongBenefitsN is seedLongBenefits for the batch-th time in one initiative (names differ).
func seedLongBenefitsN(t testing.TB, ts *testServer, initID string, n, batch int) []string {
	t.Helper()
	var ids []string
	err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit,
			measurement_frequency, expected_start_date, owner_id)
			SELECT $1, $2, 'long ' || $4::int || ' ' || g, 'cost_savings', 12000, 'EUR', 'currency', 'monthly', '2000-01-01', 'seed'
			FROM generate_series(1, $3::int) g RETURNING id`, ts.tenant, initID, n, batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uuid.UUID
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id.String())
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// actualRows builds n actuals spread over the benefits, month by month from January 2000.
func actualRows(benefits []string, n int, value func(i int) float64) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		b, m := benefits[i%len(benefits)], i/len(benefits)
		out[i] = map[string]any{"benefit_id": b, "period": fmt.Sprintf("%04d-%02d", 2000+m/12, m%12+1), "value": value(i)}
	}
	return out
}

type importAnswer struct {
	Committed bool `json:"committed"`
	Summary   struct {
		Total, Created, Updated, Unchanged, Failed int
	} `json:"summary"`
	Results []struct {
		Index  int     `json:"index"`
		Status string  `json:"status"`
		ID     *string `json:"id"`
		Errors []struct {
			Field, Code, Message string
		} `json:"errors"`
	} `json:"results"`
}

func decodeImport(t *testing.T, r response) importAnswer {
	t.Helper()
	expect(t, r, 200)
	var a importAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a importAnswer) statuses() string {
	var s []string
	for _, r := range a.Results {
		if r.Status == "error" {
			s = append(s, "error:"+r.Errors[0].Field+"/"+r.Errors[0].Code)
			continue
		}
		s = append(s, r.Status)
	}
	return strings.Join(s, " ")
}

// expandBatches does the relay's first step for every pending batch row
// (outbox.ExpandBatch), so a test reads a bulk import's events as every
// handler sees them: one row each.
func expandBatches(t *testing.T, ts *testServer) {
	t.Helper()
	var seqs []int64
	if err := db.InSystem(context.Background(), ts.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `SELECT seq FROM outbox_events WHERE type = $1 AND published_at IS NULL ORDER BY seq`, outbox.Batch)
		if err != nil {
			return err
		}
		seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, seq := range seqs {
		if _, err := outbox.ExpandBatch(context.Background(), ts.pool, seq, nil, false); err != nil {
			t.Fatal(err)
		}
	}
}

// countEvents counts a tenant's events (batches expanded) that match the SQL condition cond.
func countEvents(t *testing.T, ts *testServer, tenant uuid.UUID, cond string) int {
	t.Helper()
	expandBatches(t, ts)
	return countRows(t, ts, tenant, `SELECT count(*) FROM outbox_events WHERE type <> '`+outbox.Batch+`' AND (`+cond+`)`)
}

// eventsOf reads the data of a tenant's events of one type (batches expanded), oldest first.
func eventsOf(t *testing.T, ts *testServer, tenant uuid.UUID, typ string) []map[string]any {
	t.Helper()
	expandBatches(t, ts)
	var out []map[string]any
	if err := db.InTenant(context.Background(), ts.pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `SELECT data FROM outbox_events WHERE type = $1 ORDER BY seq`, typ)
		if err != nil {
			return err
		}
		raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		for _, raw := range raws {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func countRows(t *testing.T, ts *testServer, tenant uuid.UUID, sql string) int {
	t.Helper()
	var n int
	if err := db.InTenant(context.Background(), ts.pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), sql).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBulkImportActuals: each row passes the checks of POST
// /v1/benefits/{id}/actuals; errors stay on their rows unless atomic; dry
// runs write nothing; upsert tells unchanged from updated; every created or
// changed actual emits benefit.actual_recorded; another tenant's benefit is
// not found; an archived initiative's benefits are read-only.
func TestBulkImportActuals(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	initID := ts.createInitiative(admin, map[string]any{"name": "Bulk actuals"})
	a := ts.createBenefit(admin, benefitBody(initID, "A"))
	b := ts.createBenefit(admin, benefitBody(initID, "B"))
	foreign := ts.createBenefit(other, benefitBody(ts.createInitiative(other, map[string]any{"name": "Theirs"}), "Theirs"))
	m1, m2, m3 := monthsAgo(3), monthsAgo(2), monthsAgo(1)
	events := func() int {
		return countEvents(t, ts, ts.tenant, `type = 'benefit.actual_recorded'`)
	}
	actuals := func() int { return countRows(t, ts, ts.tenant, `SELECT count(*) FROM benefit_actuals`) }
	post := func(body map[string]any) importAnswer {
		t.Helper()
		body["resource"] = "actuals"
		return decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", body))
	}

	// Non-atomic create: good rows land, bad rows carry the single route's errors.
	got := post(map[string]any{"records": []any{
		map[string]any{"benefit_id": a, "period": m1, "value": 100},
		map[string]any{"benefit_id": a, "period": m2, "value": 200, "notes": "Q", "evidence_url": "https://example.com/e"},
		map[string]any{"benefit_id": b, "period": m1, "value": 300},
		map[string]any{"benefit_id": b, "period": m2, "value": "lots"},
		map[string]any{"benefit_id": foreign, "period": m1, "value": 1},
		map[string]any{"benefit_id": b, "period": "2999-01", "value": 1},
		map[string]any{"benefit_id": b, "period": m3, "value": 1, "colour": "red"},
		map[string]any{"benefit_id": a, "period": m1, "value": 5},
		map[string]any{"benefit_id": b, "period": m3, "value": 1, "evidence_url": "ftp://x"},
	}})
	if s := got.statuses(); s != "created created created error:value/invalid_type error:benefit_id/not_found error:period/in_future "+
		"error:colour/unknown_field error:period/duplicate error:evidence_url/invalid_format" {
		t.Errorf("statuses: %s", s)
	}
	if !got.Committed || got.Summary.Created != 3 || got.Summary.Failed != 6 || got.Results[0].ID == nil || got.Results[3].ID != nil {
		t.Errorf("answer: %+v", got)
	}
	if actuals() != 3 || events() != 3 {
		t.Errorf("%d actuals, %d events; want 3 and 3", actuals(), events())
	}
	// The single route sees the bulk-written actual and its event data matches the single route's.
	r := ts.do(&admin, "GET", "/v1/benefits/"+a+"/actuals", nil)
	if d := r.json(t)["data"].([]any); len(d) != 2 || d[1].(map[string]any)["evidence_url"] != "https://example.com/e" || d[1].(map[string]any)["recorded_by"] != "admin-1" {
		t.Errorf("actuals of a: %s", r.body)
	}

	// create again: existing keys are row errors; upsert: unchanged, updated, created.
	got = post(map[string]any{"records": []any{map[string]any{"benefit_id": a, "period": m1, "value": 100}}})
	if got.statuses() != "error:period/already_exists" {
		t.Errorf("create over existing: %s", got.statuses())
	}
	got = post(map[string]any{"mode": "upsert", "records": []any{
		map[string]any{"benefit_id": a, "period": m1, "value": 100},
		map[string]any{"benefit_id": a, "period": m2, "value": 250, "notes": "restated"},
		map[string]any{"benefit_id": a, "period": m3, "value": 50},
	}})
	if got.statuses() != "unchanged updated created" || *got.Results[0].ID != *decodeID(t, ts, admin, a, m1) {
		t.Errorf("upsert: %s", got.statuses())
	}
	if actuals() != 4 || events() != 5 {
		t.Errorf("after upsert: %d actuals, %d events; want 4 and 5", actuals(), events())
	}
	r = ts.do(&admin, "GET", "/v1/benefits/"+a+"/actuals", nil)
	rev := r.json(t)["data"].([]any)[1].(map[string]any)
	if rev["value"] != 250.0 || len(rev["revisions"].([]any)) != 1 || rev["revisions"].([]any)[0].(map[string]any)["old_value"] != 200.0 {
		t.Errorf("corrected actual: %v", rev)
	}
	var last map[string]any
	for _, e := range eventsOf(t, ts, ts.tenant, "benefit.actual_recorded") {
		if e["corrected"] == true {
			last = e
		}
	}
	if last["previous_value"] != 200.0 || last["value"] != 250.0 || last["benefit"].(map[string]any)["name"] != "A" || last["initiative"].(map[string]any)["id"] != initID {
		t.Errorf("correction event: %v", last)
	}

	// dry_run: the answer says what would happen; nothing is written.
	got = post(map[string]any{"mode": "upsert", "dry_run": true, "records": []any{
		map[string]any{"benefit_id": b, "period": m3, "value": 7},
		map[string]any{"benefit_id": a, "period": m1, "value": 101},
	}})
	if got.Committed || got.statuses() != "created updated" || got.Results[0].ID != nil {
		t.Errorf("dry run: %+v", got)
	}
	// atomic: one bad row and nothing is written.
	got = post(map[string]any{"mode": "upsert", "atomic": true, "records": []any{
		map[string]any{"benefit_id": b, "period": m3, "value": 7},
		map[string]any{"benefit_id": b, "period": m2},
	}})
	if got.Committed || got.statuses() != "created error:value/required" {
		t.Errorf("atomic: %+v", got)
	}
	if actuals() != 4 || events() != 5 {
		t.Errorf("dry run or atomic wrote: %d actuals, %d events", actuals(), events())
	}
	// atomic without errors commits.
	got = post(map[string]any{"atomic": true, "records": []any{map[string]any{"benefit_id": b, "period": m3, "value": 7}}})
	if !got.Committed || got.statuses() != "created" || actuals() != 5 {
		t.Errorf("atomic ok: %+v, %d actuals", got, actuals())
	}

	// Another tenant cannot reach this tenant's benefit, and sees none of its actuals.
	r = ts.do(&other, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "mode": "upsert",
		"records": []any{map[string]any{"benefit_id": a, "period": m1, "value": 9}}})
	if decodeImport(t, r).statuses() != "error:benefit_id/not_found" {
		t.Errorf("other tenant: %s", r.body)
	}
	if n := countRows(t, ts, ts.tenant, `SELECT count(*) FROM benefit_actuals WHERE value = 9`); n != 0 {
		t.Errorf("another tenant wrote %d actuals here", n)
	}

	// An archived initiative's benefits are read-only (the single route answers 409).
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initID, nil), 204)
	got = post(map[string]any{"mode": "upsert", "records": []any{map[string]any{"benefit_id": a, "period": m1, "value": 1}}})
	if got.statuses() != "error:benefit_id/conflict" {
		t.Errorf("archived: %s", got.statuses())
	}
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+a+"/actuals", map[string]any{"period": m1, "value": 1}), 409)

	// Permissions: benefits:write to import, benefits:read to export.
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	none := caller{sub: "n", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	expect(t, ts.do(&reader, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "records": []any{}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&none, "GET", "/v1/bulk/export?resource=actuals", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "GET", "/v1/bulk/export?resource=actuals", nil), 200)
}

// decodeID is the id of benefit's actual for a period, read through the single route.
func decodeID(t *testing.T, ts *testServer, c caller, benefit, period string) *string {
	t.Helper()
	for _, d := range ts.do(&c, "GET", "/v1/benefits/"+benefit+"/actuals", nil).json(t)["data"].([]any) {
		if d.(map[string]any)["period"] == period {
			return new(d.(map[string]any)["id"].(string))
		}
	}
	t.Fatalf("no actual for %s", period)
	return nil
}

// TestBulkFormatsAndRoundTrip: NDJSON and CSV bodies import like JSON; an
// export imported again (upsert) changes nothing, in both formats, and a
// tenant's export holds only its own records.
func TestBulkFormatsAndRoundTrip(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Round trip"})
	ids := seedLongBenefits(t, ts, initID, 3)
	other := contractTenant(t, ts, "enterprise_plus")
	ts.do(&other, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "records": []any{}})

	var nd strings.Builder
	for _, r := range actualRows(ids, 30, func(i int) float64 { return float64(i) * 1.25 }) {
		r["notes"] = fmt.Sprintf("note, \"quoted\" %g", r["value"].(float64))
		line, _ := json.Marshal(r)
		nd.Write(line)
		nd.WriteString("\n\n")
	}
	got := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals", nd.String(), "Content-Type", "application/x-ndjson"))
	if got.Summary.Created != 30 || !got.Committed {
		t.Fatalf("ndjson: %+v", got.Summary)
	}
	csvBody := "benefit_id,period,value,notes,evidence_url\n" +
		ids[0] + ",2010-01,1e3,\"multi\nline, note\",https://example.com/x\n" +
		ids[1] + ",2010-01,-2.5,,\n" +
		ids[2] + ",2010-01,abc,,\n"
	got = decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals&mode=upsert", csvBody, "Content-Type", "text/csv"))
	if got.statuses() != "created created error:value/invalid_type" {
		t.Errorf("csv: %s", got.statuses())
	}
	// Bad CSV: a ragged row is the whole body's 400.
	expect(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals", "benefit_id,period,value\n"+ids[0]+",2010-02\n", "Content-Type", "text/csv"), 400, "INVALID_PARAMETER")
	expect(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals", "{\"benefit_id\":1}\nnot json\n", "Content-Type", "application/x-ndjson"), 400, "INVALID_PARAMETER")

	before := countRows(t, ts, ts.tenant, `SELECT count(*) FROM benefit_actuals`)
	events := countEvents(t, ts, ts.tenant, `true`)
	for _, format := range []string{"ndjson", "csv"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=actuals&format="+format, nil)
		expect(t, ex, 200)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		if !strings.HasPrefix(ex.header.Get("Content-Type"), ct) {
			t.Errorf("%s Content-Type %s", format, ex.header.Get("Content-Type"))
		}
		lines := strings.Count(string(ex.body), "\n")
		if format == "ndjson" && lines != before {
			t.Errorf("ndjson export has %d lines, want %d", lines, before)
		}
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != before || back.Summary.Total != before {
			t.Errorf("%s round trip: %+v (%s)", format, back.Summary, back.statuses())
		}
	}
	if n := countEvents(t, ts, ts.tenant, `true`); n != events {
		t.Errorf("an identity round trip emitted %d events", n-events)
	}
	// Accept picks the format; the other tenant's export is empty.
	ex := ts.do(&other, "GET", "/v1/bulk/export?resource=actuals", nil, "Accept", "text/csv")
	if string(ex.body) != "id,benefit_id,period,value,notes,evidence_url\n" {
		t.Errorf("other tenant's csv export: %q", ex.body)
	}
}

// TestBulkImportJobEndToEnd: past 10,000 rows the import is a job (202 and
// Location) that the bulk-import workflow runs on the Temporal dev server;
// the job reports progress and results page by page, and the actuals and
// their events are written as in a request.
func TestBulkImportJobEndToEnd(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Job"})
	ids := seedLongBenefits(t, ts, initID, 40)
	rows := actualRows(ids, 10_050, func(i int) float64 { return float64(i % 977) })
	rows[10_020]["value"] = "bad"
	r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "records": rows})
	expect(t, r, 202)
	job := r.json(t)
	loc := r.header.Get("Location")
	if loc != "/v1/bulk/jobs/"+job["id"].(string) || job["status"] != "queued" || job["summary"].(map[string]any)["total"] != 10_050.0 {
		t.Fatalf("job: %s (Location %s)", r.body, loc)
	}
	other := contractTenant(t, ts, "enterprise_plus")
	expect(t, ts.do(&other, "GET", loc, nil), 404)

	job = finishBulkJob(t, ts, admin, loc)
	s := job["summary"].(map[string]any)
	if job["status"] != "succeeded" || job["progress"] != 100.0 || job["committed"] != true || s["created"] != 10_049.0 || s["failed"] != 1.0 {
		t.Fatalf("finished job: %v", job)
	}
	if n := countRows(t, ts, ts.tenant, `SELECT count(*) FROM benefit_actuals`); n != 10_049 {
		t.Errorf("%d actuals written, want 10049", n)
	}
	if n := countEvents(t, ts, ts.tenant, `type = 'benefit.actual_recorded'`); n != 10_049 {
		t.Errorf("%d events, want 10049", n)
	}
	res := ts.do(&admin, "GET", loc+"/results?page=21&page_size=500", nil).json(t)
	data := res["data"].([]any)
	bad := data[20].(map[string]any)
	if bad["index"] != 10_020.0 || bad["status"] != "error" || bad["id"] != nil || res["meta"].(map[string]any)["pagination"].(map[string]any)["total"] != 10_050.0 {
		t.Errorf("results page 21: row %v, meta %v", bad, res["meta"])
	}
	// A page across the chunks' boundary (10,000): every index once, in order.
	across := ts.do(&admin, "GET", loc+"/results?page=34&page_size=300", nil).json(t)["data"].([]any)
	for i, d := range across {
		if d.(map[string]any)["index"] != float64(9_900+i) {
			t.Fatalf("results page 34 of 300: row %d is %v", i, d)
		}
	}
	if len(across) != 150 {
		t.Errorf("results page 34 of 300: %d rows, want 150", len(across))
	}
	if first := ts.do(&admin, "GET", loc+"/results?page_size=1", nil).json(t)["data"].([]any)[0].(map[string]any); first["status"] != "created" || first["id"] == nil {
		t.Errorf("first result: %v", first)
	}
	list := ts.do(&admin, "GET", "/v1/bulk/jobs", nil).json(t)["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != job["id"] {
		t.Errorf("jobs list: %v", list)
	}
	if n := len(ts.do(&other, "GET", "/v1/bulk/jobs", nil).json(t)["data"].([]any)); n != 0 {
		t.Errorf("another tenant lists %d jobs", n)
	}
}

// TestBulkImportJobRejectsLateRecords: a job's records are read and stored
// chunk by chunk, yet a record past the first chunk that does not read, or
// one past 500,000, still fails the whole request and stores no job.
func TestBulkImportJobRejectsLateRecords(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	lines := strings.Repeat("{}\n", 12_000)
	r := ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals", lines+"[1]\n", "Content-Type", "application/x-ndjson")
	expect(t, r, 400, "INVALID_PARAMETER")
	if !strings.Contains(string(r.body), "line 12001") {
		t.Errorf("want the line in the message: %s", r.body)
	}
	r = ts.do(&admin, "POST", "/v1/bulk/import", `{"resource":"actuals","records":[`+strings.Repeat("{},", 11_000)+`1]}`, "Content-Type", "application/json")
	expect(t, r, 400, "INVALID_PARAMETER")
	if !strings.Contains(string(r.body), "records[11000] must be a JSON object") {
		t.Errorf("want the record's index in the message: %s", r.body)
	}
	r = ts.do(&admin, "POST", "/v1/bulk/import?resource=actuals", strings.Repeat("{}\n", bulk.MaxRows+1), "Content-Type", "application/x-ndjson")
	expect(t, r, 422)
	if !strings.Contains(string(r.body), "too_many") {
		t.Errorf("want too_many: %s", r.body)
	}
	if n := countRows(t, ts, ts.tenant, `SELECT count(*) FROM bulk_jobs`); n != 0 {
		t.Errorf("%d jobs stored, want none", n)
	}
	if n := countRows(t, ts, ts.tenant, `SELECT count(*) FROM bulk_job_chunks`); n != 0 {
		t.Errorf("%d job rows stored, want none", n)
	}
}

// finishBulkJob runs a worker (the API's importers, on the test's Temporal
// dev server) until the bulk job at loc has finished, and returns the job as
// as reads it. The worker stops when the test ends.
func finishBulkJob(t *testing.T, ts *testServer, as caller, loc string) map[string]any {
	t.Helper()
	runWorker(t, &worker.Worker{Config: testConfig(t), Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
	var job map[string]any
	testenv.Eventually(t, 90*time.Second, "the bulk job to finish", func() bool {
		job = ts.do(&as, "GET", loc, nil).json(t)
		return job["status"] == "succeeded" || job["status"] == "failed"
	})
	return job
}

// TestBulkRateLimit: 5 bulk calls per minute per tenant, then 429 with Retry-After.
func TestBulkRateLimit(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	for i := range 5 {
		r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "dry_run": true, "records": []any{map[string]any{}}})
		expect(t, r, 200)
		if i == 0 && r.header.Get("X-RateLimit-Limit") != "5" {
			t.Errorf("X-RateLimit-Limit %q", r.header.Get("X-RateLimit-Limit"))
		}
	}
	r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "records": []any{}})
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	expect(t, ts.do(&admin, "GET", "/v1/bulk/jobs", nil), 200) // reading jobs is not a bulk call
}

// TestContractBulk drives every bulk operation through its success and error
// paths and validates every response against api/openapi.yaml.
func TestContractBulk(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // negotiated limits: no per-endpoint limit in the way
	cc := newContractClient(t, ts)
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"benefits:read"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	initID := ts.createInitiative(admin, map[string]any{"name": "Bulk contract"})
	ids := seedLongBenefits(t, ts, initID, 2)
	imp := "/v1/bulk/import"

	// 200: JSON, NDJSON and CSV; mixed row outcomes; the answer's shape.
	r := call(contractCall{as: &admin, method: "POST", path: imp, want: 200, body: map[string]any{"resource": "actuals", "mode": "upsert",
		"records": []any{map[string]any{"benefit_id": ids[0], "period": "2001-01", "value": 10}, map[string]any{"benefit_id": ids[0], "period": "2001-02", "value": "x"}}}})
	if s := r.json(t)["summary"].(map[string]any); s["created"] != 1.0 || s["failed"] != 1.0 {
		t.Errorf("json import: %s", r.body)
	}
	call(contractCall{as: &admin, method: "POST", path: imp + "?resource=actuals&mode=upsert&dry_run=true&atomic=false", want: 200,
		body: `{"benefit_id":"` + ids[1] + `","period":"2001-01","value":1}` + "\n", headers: []string{"Content-Type", "application/x-ndjson"}})
	call(contractCall{as: &admin, method: "POST", path: imp + "?resource=actuals&atomic=true", want: 200,
		body: "benefit_id,period,value\n" + ids[1] + ",2001-03,4.5\n", headers: []string{"Content-Type", "text/csv; charset=utf-8"}})
	// Stakeholders: a created row and a row error (schema BulkStakeholderRecord), and their export.
	r = call(contractCall{as: &admin, method: "POST", path: imp, want: 200, body: map[string]any{"resource": "stakeholders", "records": []any{
		map[string]any{"initiative_id": initID, "name": "Ada", "email": "ada@example.com", "influence": "high", "interest": "low", "role": "CFO"},
		map[string]any{"initiative_id": initID, "name": "Bob", "email": "bob", "influence": "high", "interest": "low"}}}})
	if s := r.json(t)["summary"].(map[string]any); s["created"] != 1.0 || s["failed"] != 1.0 {
		t.Errorf("stakeholders import: %s", r.body)
	}
	call(contractCall{as: &admin, method: "POST", path: imp + "?resource=stakeholders&mode=upsert", want: 200,
		body: "initiative_id,name,email,influence,interest\n" + initID + ",Ada,ADA@example.com,high,low\n", headers: []string{"Content-Type", "text/csv"}})
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/bulk/export?resource=stakeholders&format=csv", want: 200})
	if !strings.HasPrefix(string(r.body), "id,initiative_id,name,email,role,department,influence,interest,notes\n") || !strings.Contains(string(r.body), ",Ada,ADA@example.com,,,high,low,\n") {
		t.Errorf("stakeholders csv export: %q", r.body)
	}
	// Benefits: a row with a plan (schema BulkBenefitRecord) and a row error; the CSV export holds the plan as JSON text.
	r = call(contractCall{as: &admin, method: "POST", path: imp, want: 200, body: map[string]any{"resource": "benefits", "records": []any{
		map[string]any{"initiative_id": initID, "name": "Planned", "category": "cost_savings", "expected_value": 1200, "currency": "EUR", "unit": "currency",
			"measurement_frequency": "monthly", "expected_start_date": "2020-01-01", "plan": []any{map[string]any{"period": "2020-01", "expected": 100}}},
		map[string]any{"initiative_id": initID, "name": "Broken", "category": "cost_savings"}}}})
	if s := r.json(t)["summary"].(map[string]any); s["created"] != 1.0 || s["failed"] != 1.0 {
		t.Errorf("benefits import: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export?resource=benefits&format=csv", want: 200})
	if !strings.Contains(string(r.body), `,"[{""period"":""2020-01"",""expected"":100}]"`) {
		t.Errorf("benefits csv export: %q", r.body)
	}
	// 202: over 10,000 records is a job.
	big := actualRows(ids, 10_001, func(i int) float64 { return 1 })
	r = call(contractCall{as: &admin, method: "POST", path: imp, want: 202, body: map[string]any{"resource": "actuals", "dry_run": true, "records": big}})
	jobPath := r.header.Get("Location")
	if jobPath == "" || r.json(t)["status"] != "queued" {
		t.Fatalf("job: %s", r.body)
	}
	// 400: a body that holds no records, options missing or given twice, malformed JSON.
	call(contractCall{as: &admin, method: "POST", path: imp + "?resource=actuals", want: 400, code: "INVALID_PARAMETER",
		body: "benefit_id,period,value\n\"unclosed,2001-01,1\n", headers: []string{"Content-Type", "text/csv"}})
	call(contractCall{as: &admin, method: "POST", path: imp + "?resource=actuals", want: 400, code: "INVALID_PARAMETER",
		body: "[1,2]\n", headers: []string{"Content-Type", "application/x-ndjson"}})
	call(contractCall{as: &admin, method: "POST", path: imp, want: 400, code: "INVALID_PARAMETER",
		body: "benefit_id,period,value\n", headers: []string{"Content-Type", "text/csv"}, docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: imp + "?resource=actuals", want: 400, code: "INVALID_PARAMETER",
		body: map[string]any{"resource": "actuals", "records": []any{}}, docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: imp, want: 400, code: "INVALID_PARAMETER", body: `{"resource":`})
	call(contractCall{as: &admin, method: "POST", path: imp, want: 400, code: "INVALID_PARAMETER", body: map[string]any{"resource": "actuals", "records": []any{1}}, docRejects: true})
	// 422: bad resource, bad mode, records missing.
	call(contractCall{as: &admin, method: "POST", path: imp, want: 422, code: "VALIDATION_ERROR", body: map[string]any{"resource": "widgets", "records": []any{}}, docRejects: true})
	call(contractCall{as: &admin, method: "POST", path: imp, want: 422, code: "VALIDATION_ERROR", body: map[string]any{"resource": "actuals", "mode": "merge", "records": []any{}}, docRejects: true})
	call(contractCall{as: &admin, method: "POST", path: imp, want: 422, code: "VALIDATION_ERROR", body: map[string]any{"resource": "actuals"}, docRejects: true})
	// 401, 403 (benefits:write is needed), 415, 413 over the bulk limit (50 MB; 6 MB is fine here).
	call(contractCall{method: "POST", path: imp, want: 401, body: map[string]any{"resource": "actuals", "records": []any{}}})
	call(contractCall{as: &reader, method: "POST", path: imp, want: 403, code: "AUTHORIZATION_ERROR", body: map[string]any{"resource": "actuals", "records": []any{}}})
	call(contractCall{as: &admin, method: "POST", path: imp, want: 415, code: "INVALID_PARAMETER", body: `{}`, headers: []string{"Content-Type", "text/plain"}, docRejects: true})
	six := `{"resource":"actuals","records":[],"pad":"` + strings.Repeat("a", 6<<20) + `"}`
	r = call(contractCall{as: &admin, method: "POST", path: imp, want: 422, body: six, docSkip: true}) // over 5 MB, under 50 MB: read, and pad is unknown
	huge := strings.Repeat("a", 51<<20)
	call(contractCall{as: &admin, method: "POST", path: imp, body: huge, want: 413, network: true, code: "INVALID_PARAMETER", docSkip: true})
	// Every other route keeps 5 MB.
	call(contractCall{as: &admin, method: "POST", path: "/v1/benefits/" + ids[0] + "/actuals", body: six, want: 413, network: true, code: "INVALID_PARAMETER", docSkip: true})
	// 409: a duplicate of a request still running under the same Idempotency-Key.
	holder, err := db.BeginTenant(context.Background(), ts.pool, ts.tenant)
	if err != nil {
		t.Fatal(err)
	}
	var locked bool
	if err := holder.QueryRow(context.Background(), `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`, "idempotency/"+ts.tenant.String()+"/bulk-1").Scan(&locked); err != nil || !locked {
		t.Fatalf("lock: %v %v", locked, err)
	}
	call(contractCall{as: &admin, method: "POST", path: imp, body: map[string]any{"resource": "actuals", "records": []any{}}, headers: []string{"Idempotency-Key", "bulk-1"}, want: 409, code: "CONFLICT"})
	_ = holder.Rollback(context.Background())

	// Export: 200 in both formats, 400, 401, 403, 406.
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export?resource=actuals&format=csv", want: 200})
	if !strings.HasPrefix(string(r.body), "id,benefit_id,period,value,notes,evidence_url\n") || strings.Count(string(r.body), "\n") != 3 {
		t.Errorf("csv export: %q", r.body)
	}
	call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export?resource=actuals", headers: []string{"Accept", "application/x-ndjson"}, want: 200})
	call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export?resource=actuals&format=xml", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export?resource=widgets", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{method: "GET", path: "/v1/bulk/export?resource=actuals", want: 401})
	call(contractCall{as: &nobody, method: "GET", path: "/v1/bulk/export?resource=actuals", want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &reader, method: "GET", path: "/v1/bulk/export?resource=actuals", headers: []string{"Accept", "application/xml"}, want: 406, code: "INVALID_PARAMETER"})

	// Jobs: list, get, results; another tenant's job is 404; a caller of another tenant's header is 403.
	wrongTenant := []string{"X-Tenant-ID", other.tenant.String()}
	for _, p := range []string{"/v1/bulk/jobs", jobPath, jobPath + "/results"} {
		call(contractCall{as: &reader, method: "GET", path: p, want: 200})
		call(contractCall{as: &reader, method: "GET", path: p + "?bogus=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
		call(contractCall{method: "GET", path: p, want: 401})
		call(contractCall{as: &reader, method: "GET", path: p, headers: wrongTenant, want: 403})
	}
	for _, p := range []string{jobPath, jobPath + "/results"} {
		call(contractCall{as: &other, method: "GET", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &nobody, method: "GET", path: p, want: 404, code: "NOT_FOUND"}) // cannot read actuals: no such job for them
	}
	if n := len(ts.do(&nobody, "GET", "/v1/bulk/jobs", nil).json(t)["data"].([]any)); n != 0 {
		t.Errorf("a caller without benefits:read lists %d actuals jobs", n)
	}

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	empty := map[string]any{"resource": "actuals", "records": []any{}}
	calls := []contractCall{
		{method: "POST", path: imp, body: empty},
		{method: "GET", path: "/v1/bulk/export?resource=actuals"},
		{method: "GET", path: "/v1/bulk/jobs"},
		{method: "GET", path: jobPath},
		{method: "GET", path: jobPath + "/results"},
	}
	cc.limitsAndOutage(t, ts, admin, "/v1/bulk/jobs", calls)
	for _, u := range cc.uncovered([]string{"bulk"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// TestBulkImportEventsReachAReceiver: an import's events, committed as one
// batch row, reach a real subscribed receiver through the relay as one
// signed benefit.actual_recorded delivery per created actual, each once,
// with its own event id and the import's data.
func TestBulkImportEventsReachAReceiver(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	ts.createWebhook(admin, rc.URL, "benefit.actual_recorded")
	initID := ts.createInitiative(admin, map[string]any{"name": "Bulk hooked"})
	ids := seedLongBenefits(t, ts, initID, 2)
	var records []any
	want := map[string]float64{} // benefit + period → value
	for i := range 30 {
		b, period := ids[i%2], fmt.Sprintf("2001-%02d", i/2%12+1)
		if i >= 24 {
			period = fmt.Sprintf("2002-%02d", i/2%12+1)
		}
		records = append(records, map[string]any{"benefit_id": b, "period": period, "value": 100 + i})
		want[b+" "+period] = float64(100 + i)
	}
	got := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "records": records}))
	if got.Summary.Created != 30 {
		t.Fatalf("import: %+v", got.Summary)
	}

	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{ts.srv.Webhooks}, Log: testenv.QuietLogger()}
	if _, err := relay.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "30 deliveries", func() bool { return len(rc.Requests()) >= 30 })
	time.Sleep(200 * time.Millisecond) // a 31st (a duplicate) would be in by now
	reqs := rc.Requests()
	if len(reqs) != 30 || rc.SignatureErrors() != 0 {
		t.Fatalf("receiver saw %d deliveries (bad signatures %d), want 30", len(reqs), rc.SignatureErrors())
	}
	seenIDs := map[string]bool{}
	for _, r := range reqs {
		var env struct {
			Type string `json:"type"`
			Data struct {
				Period  string  `json:"period"`
				Value   float64 `json:"value"`
				Benefit struct {
					ID string `json:"id"`
				} `json:"benefit"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatal(err)
		}
		key := env.Data.Benefit.ID + " " + env.Data.Period
		if env.Type != "benefit.actual_recorded" || seenIDs[r.EventID] || want[key] != env.Data.Value {
			t.Fatalf("delivery %s: %s (want value %v for %s, each event id once)", r.EventID, r.Body, want[key], key)
		}
		seenIDs[r.EventID] = true
		delete(want, key)
	}
	if len(want) != 0 {
		t.Errorf("no delivery for %v", want)
	}
}
