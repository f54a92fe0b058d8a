package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// costBody is a valid cost to create.
func costBody(name string) map[string]any {
	return map[string]any{"name": name, "category": "opex", "amount": 100, "currency": "USD", "period": "2026-01"}
}

// TestContractCosts drives the cost operations through their success and
// error paths and validates every response against api/openapi.yaml.
func TestContractCosts(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // negotiated limits: no per-endpoint limit in the way
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := uuid.NewString()

	initID := ts.createInitiative(admin, map[string]any{"name": "Costs"})
	base := "/v1/initiatives/" + initID + "/costs"

	// 201: a recurring cost; the amount is kept as sent and rounded to 2 decimals in responses.
	r := call(contractCall{as: &admin, method: "POST", path: base, want: 201, body: map[string]any{
		"name": " Licences ", "category": "opex", "amount": 1200.125, "currency": "EUR", "period": "2026-01", "recurrence": "monthly", "end_period": "2026-12",
	}})
	licences := r.json(t)
	licencesPath := base + "/" + licences["id"].(string)
	if licences["name"] != "Licences" || licences["amount"] != 1200.13 || licences["recurrence"] != "monthly" || licences["end_period"] != "2026-12" ||
		licences["initiative_id"] != initID || r.header.Get("Location") != licencesPath {
		t.Errorf("created: %s (Location %s)", r.body, r.header.Get("Location"))
	}
	// 201: once by default, no end; the read-only fields of a response may be sent back.
	r = call(contractCall{as: &admin, method: "POST", path: base, want: 201, body: map[string]any{
		"name": "Hardware", "category": "capex", "amount": 50000, "currency": "USD", "period": "2025-11",
		"recurrence": nil, "id": "x", "initiative_id": initID, "created_at": "then",
	}})
	hardware := r.json(t)
	hardwarePath := base + "/" + hardware["id"].(string)
	if hardware["recurrence"] != "once" || hardware["end_period"] != nil {
		t.Errorf("defaults: %s", r.body)
	}

	// 200 lists: by period, then creation.
	r = call(contractCall{as: &reader, method: "GET", path: base + "?page=1&page_size=500", want: 200})
	data := r.json(t)["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["name"] != "Hardware" || data[1].(map[string]any)["name"] != "Licences" {
		t.Errorf("list by period: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: base + "?page=3&page_size=1", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 2.0 || p["total_pages"] != 2.0 || len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("past the last page: %s", r.body)
	}

	// 200 PUT: replaces; recurrence back to once, end cleared.
	r = call(contractCall{as: &admin, method: "PUT", path: licencesPath, want: 200, body: map[string]any{
		"name": "Licences", "category": "opex", "amount": 900, "currency": "EUR", "period": "2026-02",
	}})
	if m := r.json(t); m["recurrence"] != "once" || m["end_period"] != nil || m["amount"] != 900.0 || m["period"] != "2026-02" || m["created_at"] != licences["created_at"] {
		t.Errorf("PUT: %s", r.body)
	}
	// 200 PATCH: only what is sent; end_period null clears it.
	r = call(contractCall{as: &admin, method: "PATCH", path: licencesPath, want: 200, body: map[string]any{"recurrence": "quarterly", "end_period": "2026-07"}})
	if m := r.json(t); m["recurrence"] != "quarterly" || m["end_period"] != "2026-07" || m["amount"] != 900.0 || m["name"] != "Licences" {
		t.Errorf("PATCH: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "PATCH", path: licencesPath, want: 200, body: map[string]any{"end_period": nil}})
	if m := r.json(t); m["end_period"] != nil || m["recurrence"] != "quarterly" {
		t.Errorf("PATCH end_period null: %s", r.body)
	}

	// 422: rules (internal/cost) and body types, each naming its field.
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field, code  string
		docRejects   bool
	}{
		{"POST", base, map[string]any{"category": "opex", "amount": 1, "currency": "USD", "period": "2026-01"}, "name", "required", true},
		{"POST", base, map[string]any{"name": "x", "category": "hardware", "amount": 1, "currency": "USD", "period": "2026-01"}, "category", "invalid_value", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 0, "currency": "USD", "period": "2026-01"}, "amount", "out_of_range", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": -5, "currency": "USD", "period": "2026-01"}, "amount", "out_of_range", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 2e12, "currency": "USD", "period": "2026-01"}, "amount", "out_of_range", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": "100", "currency": "USD", "period": "2026-01"}, "amount", "invalid_type", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "DEM", "period": "2026-01"}, "currency", "invalid_value", false},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "usd", "period": "2026-01"}, "currency", "invalid_value", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-13"}, "period", "invalid_format", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "1999-12"}, "period", "out_of_range", false},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-01", "end_period": "2026-06"}, "end_period", "not_allowed", false},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-05", "recurrence": "monthly", "end_period": "2026-04"}, "end_period", "invalid_range", false},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-05", "recurrence": "weekly"}, "recurrence", "invalid_value", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-05", "colour": "red"}, "colour", "unknown_field", true},
		{"POST", base, map[string]any{"name": "x", "category": "opex", "amount": 1, "currency": "USD", "period": "2026-05", "initiative_id": missing}, "initiative_id", "invalid_value", false},
		{"PUT", licencesPath, map[string]any{"name": "x", "category": "opex", "currency": "USD", "period": "2026-01"}, "amount", "required", true},
		{"PATCH", licencesPath, map[string]any{"amount": nil}, "amount", "required", false},
		{"PATCH", licencesPath, map[string]any{"recurrence": "once", "end_period": "2026-09"}, "end_period", "not_allowed", false},
		{"PATCH", hardwarePath, map[string]any{"end_period": "2026-09"}, "end_period", "not_allowed", false}, // hardware is once
	} {
		r := call(contractCall{as: &admin, method: c.method, path: c.path, body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.docRejects, docSkip: !c.docRejects})
		if r.status == 422 {
			e := r.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any)
			if e["field"] != c.field || e["code"] != c.code {
				t.Errorf("%s %v: first error %v, want %s/%s", c.method, c.body, e, c.field, c.code)
			}
		}
	}
	// A number too large for float64 is out of range, not a type error.
	r = call(contractCall{as: &admin, method: "POST", path: base, body: `{"name":"x","category":"opex","amount":1e400,"currency":"USD","period":"2026-01"}`, want: 422, docSkip: true})
	if !strings.Contains(string(r.body), `"out_of_range"`) {
		t.Errorf("1e400: %s", r.body)
	}

	// 400: query, body, tenant header.
	for q, docRejects := range map[string]bool{"page=0": true, "page_size=501": true, "sort=name": false, "page=1&page=2": false} {
		// The document does not forbid unknown or repeated parameters; the API does.
		call(contractCall{as: &reader, method: "GET", path: base + "?" + q, want: 400, code: "INVALID_PARAMETER", docRejects: docRejects, docSkip: !docRejects})
	}
	call(contractCall{as: &admin, method: "POST", path: base, body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "PATCH", path: licencesPath + "?x=1", body: map[string]any{}, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	ops := []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"POST", base, costBody("op")},
		{"PUT", licencesPath, costBody("op")},
		{"PATCH", licencesPath, map[string]any{}},
		{"DELETE", hardwarePath, nil},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &nobody, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		// A token of another tenant naming this one.
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
		if op.method != "GET" { // reading needs initiatives:read, writing initiatives:write
			call(contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		}
	}

	// 404: unknown initiatives and costs in any form; another initiative's cost;
	// another tenant's initiative and cost (as that tenant sees it: not there).
	otherInit := ts.createInitiative(admin, map[string]any{"name": "Other"})
	for _, p := range []string{"/v1/initiatives/" + missing + "/costs", "/v1/initiatives/nope/costs"} {
		call(contractCall{as: &admin, method: "GET", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "POST", path: p, body: costBody("x"), want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PUT", path: p + "/" + hardware["id"].(string), body: costBody("x"), want: 404, code: "NOT_FOUND"})
	}
	for _, p := range []string{base + "/" + missing, base + "/nope", "/v1/initiatives/" + otherInit + "/costs/" + hardware["id"].(string)} {
		call(contractCall{as: &admin, method: "PUT", path: p, body: costBody("x"), want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PATCH", path: p, body: map[string]any{"amount": 5}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "DELETE", path: p, want: 404, code: "NOT_FOUND"})
	}
	otherOwn := "/v1/initiatives/" + ts.createInitiative(other, map[string]any{"name": "Theirs"}) + "/costs"
	call(contractCall{as: &other, method: "GET", path: base, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "POST", path: base, body: costBody("intruder"), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "PATCH", path: licencesPath, body: map[string]any{"amount": 1}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "DELETE", path: otherOwn + "/" + hardware["id"].(string), want: 404, code: "NOT_FOUND"})
	r = call(contractCall{as: &other, method: "GET", path: otherOwn, want: 200})
	if n := len(r.json(t)["data"].([]any)); n != 0 {
		t.Errorf("another tenant sees %d costs", n)
	}

	// 204, then gone.
	call(contractCall{as: &admin, method: "DELETE", path: hardwarePath, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: hardwarePath, want: 404, code: "NOT_FOUND"})

	// 409: 500 costs per initiative (499 stored directly, the 500th and 501st through the API).
	fullID := ts.createInitiative(admin, map[string]any{"name": "Full"})
	err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		for i := range 499 {
			if _, err := db.Q.CostCreate(ctx, tx, dbsqlc.CostCreateParams{TenantID: ts.tenant, InitiativeID: uuid.MustParse(fullID), Name: fmt.Sprintf("c%d", i),
				Category: "opex", Amount: decimal.NewFromFloat(1), Currency: "USD", Period: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Recurrence: "once"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fullPath := "/v1/initiatives/" + fullID + "/costs"
	call(contractCall{as: &admin, method: "POST", path: fullPath, body: costBody("500th"), want: 201})
	call(contractCall{as: &admin, method: "POST", path: fullPath, body: costBody("501st"), want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &reader, method: "GET", path: fullPath + "?page=2&page_size=300", want: 200})
	if len(r.json(t)["data"].([]any)) != 200 {
		t.Errorf("page 2 of 500 by 300: %d rows", len(r.json(t)["data"].([]any)))
	}
	// 409: an archived initiative's costs are read-only, and still readable.
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initID, nil), 204)
	call(contractCall{as: &admin, method: "POST", path: base, body: costBody("late"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PUT", path: licencesPath, body: costBody("late"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "PATCH", path: licencesPath, body: map[string]any{"amount": 1}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "DELETE", path: licencesPath, want: 409, code: "CONFLICT"})
	call(contractCall{as: &reader, method: "GET", path: base, want: 200})

	// 413, 415 on every operation with a body.
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range ops[1:4] {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.limitsAndOutage(t, ts, admin, base, calls)

	for _, u := range cc.uncovered([]string{"costs"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
