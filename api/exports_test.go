package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/export"
)

// TestContractBusinessCaseExports: every export operation against
// api/openapi.yaml, each documented status but 500. The file is put in the
// blob store directly here (the workflow's side is TestBusinessCaseExportsEndToEnd).
func TestContractBusinessCaseExports(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"business_cases:read"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := uuid.NewString()

	initID := ts.createInitiative(admin, map[string]any{"name": "Exports"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Board pack"))
	expect(t, r, 201)
	caseID := r.json(t)["id"].(string)
	base := "/v1/business-cases/" + caseID

	// 202 by a reader; Location is the status URL.
	r = call(contractCall{as: &reader, method: "POST", path: base + "/export", body: map[string]any{"format": "docx", "include_appendices": true, "watermark": "Vertraulich – Łódź"}, want: 202})
	ex := r.json(t)
	statusURL := base + "/exports/" + ex["id"].(string)
	if ex["status"] != "queued" || ex["progress"] != float64(0) || ex["status_url"] != statusURL || r.header.Get("Location") != statusURL ||
		ex["watermark"] != "Vertraulich – Łódź" || ex["download_url"] != nil {
		t.Errorf("created: %s", r.body)
	}
	// 422: unknown format, missing format, watermark over 64 characters.
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{"format": "odt"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{"format": "pdf", "watermark": "0123456789012345678901234567890123456789012345678901234567890123456789"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})

	// 200 status and list; 409 download while queued.
	call(contractCall{as: &reader, method: "GET", path: statusURL, want: 200})
	call(contractCall{as: &reader, method: "GET", path: statusURL + "/download", want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &reader, method: "GET", path: base + "/exports?page=1&page_size=100", want: 200})
	if data := r.json(t)["data"].([]any); len(data) != 1 {
		t.Errorf("list: %s", r.body)
	}

	// The file arrives: 200 with Content-Type, file name and ETag; 304 on If-None-Match.
	content := []byte("PK\x03\x04 not really a docx")
	if _, err := (export.Store{Pool: ts.pool}).Put(ctx, export.Job{TenantID: ts.tenant, ID: uuid.MustParse(ex["id"].(string))}, content, time.Hour); err != nil {
		t.Fatal(err)
	}
	r = call(contractCall{as: &reader, method: "GET", path: statusURL, want: 200})
	done := r.json(t)
	if done["status"] != "succeeded" || done["download_url"] != statusURL+"/download" || done["size"] != float64(len(content)) {
		t.Errorf("succeeded: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: statusURL + "/download", want: 200})
	etag := `"` + done["sha256"].(string) + `"`
	if string(r.body) != string(content) || r.header.Get("ETag") != etag ||
		r.header.Get("Content-Type") != "application/vnd.openxmlformats-officedocument.wordprocessingml.document" ||
		r.header.Get("Content-Disposition") != `attachment; filename="Board pack v1.docx"; filename*=UTF-8''Board%20pack%20v1.docx` ||
		r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("download: %v %q", r.header, r.body)
	}
	call(contractCall{as: &reader, method: "GET", path: statusURL + "/download", headers: []string{"If-None-Match", etag}, want: 304})

	// 400, 401, 403 on every operation.
	ops := []struct {
		method, path string
		body         any
	}{
		{"POST", base + "/export", map[string]any{"format": "pdf"}},
		{"GET", base + "/exports", nil},
		{"GET", statusURL, nil},
		{"GET", statusURL + "/download", nil},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &nobody, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		// Another tenant's case and export: not there.
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, want: 404, code: "NOT_FOUND"})
	}
	// 404: unknown or malformed ids.
	call(contractCall{as: &admin, method: "POST", path: "/v1/business-cases/" + missing + "/export", body: map[string]any{"format": "pdf"}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: "/v1/business-cases/nope/exports", want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: base + "/exports/" + missing, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: base + "/exports/" + missing + "/download", want: 404, code: "NOT_FOUND"})

	// 413, 415 on the operation with a body.
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: `{"watermark":"` + strings.Repeat("a", 6<<20) + `"}`, want: 413, network: true, code: "INVALID_PARAMETER"})
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})

	// Idempotency-Key: a retried export request is the first answer (one export, not two);
	// the key reused for another request is 422; a duplicate while the first runs is 409.
	r = call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{"format": "pptx"}, headers: []string{"Idempotency-Key", "export-1"}, want: 202})
	again := call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{"format": "pptx"}, headers: []string{"Idempotency-Key", "export-1"}, want: 202})
	if again.header.Get("Idempotent-Replayed") != "true" || again.json(t)["id"] != r.json(t)["id"] {
		t.Errorf("replayed export: %s, first %s", again.body, r.body)
	}
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{"format": "pdf"}, headers: []string{"Idempotency-Key", "export-1"}, want: 422, code: "VALIDATION_ERROR"})
	holder, err := db.BeginTenant(context.Background(), ts.pool, ts.tenant) // holds the key's lock, as a running first request does
	if err != nil {
		t.Fatal(err)
	}
	var locked bool
	if err := holder.QueryRow(context.Background(), `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`, "idempotency/"+ts.tenant.String()+"/export-2").Scan(&locked); err != nil || !locked {
		t.Fatalf("lock: %v %v", locked, err)
	}
	call(contractCall{as: &admin, method: "POST", path: base + "/export", body: map[string]any{"format": "pdf"}, headers: []string{"Idempotency-Key", "export-2"}, want: 409, code: "CONFLICT"})
	_ = holder.Rollback(context.Background())

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.preconditions(t, admin, calls) // ETag: 304 and the 409 of a stale If-Match
	cc.limitsAndOutage(t, ts, admin, base+"/exports", calls)
	for _, u := range cc.uncovered([]string{"business-case-exports"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
