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

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
)

// businessCaseBody is a valid case to create: the board template's four sections, two written.
func businessCaseBody(initiativeID, name string) map[string]any {
	return map[string]any{
		"initiative_id": initiativeID, "name": name, "template": "board_presentation",
		"sections": []string{"executive_summary", "financial_analysis", "risk_assessment", "implementation_roadmap"},
		"content": map[string]any{
			"executive_summary":  map[string]any{"title": "Why now", "body": "Cloud costs fall by a third."},
			"financial_analysis": map[string]any{"title": "Numbers", "body": "NPV positive within two years."},
		},
	}
}

// filledContent writes every section of businessCaseBody.
var filledContent = map[string]any{
	"risk_assessment":        map[string]any{"title": "Risks", "body": "Migration downtime; mitigated by a staged cut-over."},
	"implementation_roadmap": map[string]any{"title": "Roadmap", "body": "Q1 pilot, Q2 roll-out."},
}

// TestContractBusinessCases drives every business case operation through its
// success and error paths and validates every response against api/openapi.yaml.
func TestContractBusinessCases(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // negotiated limits: no per-endpoint limit in the way
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"business_cases:read"}}
	writer := caller{sub: "writer-1", tenant: ts.tenant, permissions: []string{"business_cases:read", "business_cases:write"}}
	approver := caller{sub: "approver-1", tenant: ts.tenant, permissions: []string{"business_cases:read", "business_cases:approve"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := uuid.NewString()

	initID := ts.createInitiative(admin, map[string]any{"name": "Cloud migration"})

	// 201: a draft, version 1; every listed section in content, empty until written.
	r := call(contractCall{as: &writer, method: "POST", path: "/v1/business-cases", body: businessCaseBody(initID, " Cloud case "), want: 201})
	bc := r.json(t)
	id := bc["id"].(string)
	casePath := "/v1/business-cases/" + id
	content := bc["content"].(map[string]any)
	if bc["name"] != "Cloud case" || bc["status"] != "draft" || bc["version"] != 1.0 || bc["previous_version_id"] != nil || bc["approval"] != nil ||
		bc["snapshot"] != nil || bc["created_by"] != "writer-1" || r.header.Get("Location") != casePath || len(content) != 4 ||
		content["risk_assessment"].(map[string]any)["body"] != "" || content["executive_summary"].(map[string]any)["title"] != "Why now" {
		t.Errorf("created: %s (Location %s)", r.body, r.header.Get("Location"))
	}

	// 200: list (filters) and get, with no approval round yet.
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases?initiative_id=" + initID + "&status=draft&page=1&page_size=10", want: 200})
	if data := r.json(t)["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id {
		t.Errorf("list: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases?status=approved", want: 200})
	if len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("status filter: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: casePath, want: 200})
	if g := r.json(t); g["approval_round"] != nil || g["name"] != "Cloud case" {
		t.Errorf("get: %s", r.body)
	}

	// 200 PUT replaces (content absent: none); PATCH merges content per section, null removes.
	put := businessCaseBody(initID, "Cloud case")
	put["template"], put["content"] = "cfo_view", nil
	put["id"], put["status"], put["created_at"] = "ignored", "approved", "then" // read-only fields are ignored
	r = call(contractCall{as: &writer, method: "PUT", path: casePath, body: put, want: 200})
	if m := r.json(t); m["template"] != "cfo_view" || m["status"] != "draft" || m["content"].(map[string]any)["executive_summary"].(map[string]any)["body"] != "" {
		t.Errorf("PUT: %s", r.body)
	}
	r = call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"template": "board_presentation",
		"content": map[string]any{"executive_summary": map[string]any{"title": "Why now", "body": "Cloud costs fall by a third."},
			"financial_analysis": map[string]any{"body": "NPV positive."}, "risk_assessment": nil}}, want: 200})
	if m := r.json(t)["content"].(map[string]any); m["financial_analysis"].(map[string]any)["body"] != "NPV positive." || m["executive_summary"].(map[string]any)["title"] != "Why now" {
		t.Errorf("PATCH content: %s", r.body)
	}
	// Dropping a section from the list drops its text; listing it again starts empty.
	call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"sections": []string{"executive_summary", "risk_assessment", "implementation_roadmap"}}, want: 200})
	r = call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"sections": []string{"executive_summary", "financial_analysis", "risk_assessment", "implementation_roadmap"}}, want: 200})
	if r.json(t)["content"].(map[string]any)["financial_analysis"].(map[string]any)["body"] != "" {
		t.Errorf("text of a dropped section came back: %s", r.body)
	}

	// 422: rules (internal/businesscase) and body types, each naming its field.
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field, code  string
		docRejects   bool
	}{
		{"POST", "/v1/business-cases", map[string]any{"name": "x", "template": "cfo_view", "sections": []string{"executive_summary"}}, "initiative_id", "required", false},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": missing, "name": "x", "template": "cfo_view", "sections": []string{"executive_summary"}}, "initiative_id", "invalid_value", false},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "memo", "sections": []string{"executive_summary"}}, "template", "invalid_value", true},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "cfo_view", "sections": []string{"appendix"}}, "sections[0]", "invalid_value", true},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "cfo_view", "sections": []string{}}, "sections", "required", true},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": " ", "template": "cfo_view", "sections": []string{"executive_summary"}}, "name", "required", true},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "cfo_view", "sections": []string{"executive_summary"},
			"content": map[string]any{"risk_assessment": map[string]any{"body": "x"}}}, "content.risk_assessment", "not_allowed", false},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "cfo_view", "sections": []string{"executive_summary"},
			"content": map[string]any{"executive_summary": map[string]any{"body": strings.Repeat("b", 20001)}}}, "content.executive_summary.body", "too_long", true},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "cfo_view", "sections": []string{"executive_summary"},
			"content": map[string]any{"executive_summary": map[string]any{"text": "x"}}}, "content.executive_summary.text", "unknown_field", true},
		{"POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "x", "template": "cfo_view", "sections": []string{"executive_summary"}, "colour": "red"}, "colour", "unknown_field", true},
		{"PUT", casePath, map[string]any{"name": "x", "sections": []string{"executive_summary"}}, "template", "required", true},
		{"PUT", casePath, map[string]any{"name": "x", "template": "cfo_view", "sections": []string{"executive_summary"}, "initiative_id": missing}, "initiative_id", "invalid_value", false},
		{"PATCH", casePath, map[string]any{"sections": "executive_summary"}, "sections", "invalid_type", true},
		{"PATCH", casePath, map[string]any{"name": nil}, "name", "required", false},
		{"POST", casePath + "/approve", map[string]any{"notes": "fine"}, "approval_level", "required", false},
		{"POST", casePath + "/approve", map[string]any{"approval_level": "ceo"}, "approval_level", "invalid_value", true},
		{"POST", casePath + "/reject", map[string]any{"approval_level": "director"}, "notes", "required", false},
		{"POST", casePath + "/reject", map[string]any{"notes": strings.Repeat("n", 2001)}, "notes", "too_long", true},
		// The decision request: typed, bounded, named field by field, never echoed.
		{"PATCH", casePath, map[string]any{"decision_request": "approve it"}, "decision_request", "invalid_type", true},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"amount": 5}}, "decision_request.ask", "required", true},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Approve\u0000 it"}}, "decision_request.ask", "invalid_value", false},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": strings.Repeat("a", 301)}}, "decision_request.ask", "too_long", true},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "currency": "USD"}}, "decision_request.currency", "not_allowed", false},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "amount": 100}}, "decision_request.currency", "required", false},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "amount": -1, "currency": "USD"}}, "decision_request.amount", "out_of_range", true},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "amount": 10.005, "currency": "USD"}}, "decision_request.amount", "invalid_value", false},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "amount": "100", "currency": "USD"}}, "decision_request.amount", "invalid_type", true},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "decide_by": "Friday"}}, "decision_request.decide_by", "invalid_format", false},
		{"PATCH", casePath, map[string]any{"decision_request": map[string]any{"ask": "Fund it", "owner": "me"}}, "decision_request.owner", "unknown_field", true},
	} {
		r := call(contractCall{as: &admin, method: c.method, path: c.path, body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.docRejects, docSkip: !c.docRejects})
		if r.status == 422 {
			e := r.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any)
			if e["field"] != c.field || e["code"] != c.code {
				t.Errorf("%s %s %v: first error %v, want %s/%s", c.method, c.path, c.body, e, c.field, c.code)
			}
		}
	}

	// Validation lists what blocks approval; approving then is 409 naming the problems.
	r = call(contractCall{as: &reader, method: "GET", path: casePath + "/validation", want: 200})
	v := r.json(t)
	var codes []string
	for _, p := range v["problems"].([]any) {
		pm := p.(map[string]any)
		codes = append(codes, fmt.Sprint(pm["code"], ":", pm["section"]))
	}
	if v["can_approve"] != false || strings.Join(codes, ",") != "empty_content:financial_analysis,empty_content:risk_assessment,empty_content:implementation_roadmap,no_benefits:financial_analysis,no_costs:financial_analysis" {
		t.Errorf("validation: %s", r.body)
	}
	r = call(contractCall{as: &approver, method: "POST", path: casePath + "/approve", body: map[string]any{"approval_level": "director"}, want: 409, code: "CONFLICT"})
	if msg := r.json(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "section risk_assessment has no text") || !strings.Contains(msg, "at least one cost") {
		t.Errorf("blocked approval does not name the problems: %s", msg)
	}

	// Submit → pending (twice: 409); reject with notes → rejected, editable again.
	r = call(contractCall{as: &writer, method: "POST", path: casePath + "/submit", want: 200})
	if m := r.json(t); m["status"] != "pending_approval" || m["submitted_by"] != "writer-1" || m["submitted_at"] == nil {
		t.Errorf("submit: %s", r.body)
	}
	call(contractCall{as: &writer, method: "POST", path: casePath + "/submit", want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &approver, method: "POST", path: casePath + "/reject", body: map[string]any{"notes": "No figures yet.", "approval_level": "director"}, want: 200})
	if m := r.json(t); m["status"] != "rejected" || m["approval"].(map[string]any)["decision"] != "rejected" || m["approval"].(map[string]any)["notes"] != "No figures yet." ||
		m["approval"].(map[string]any)["by"] != "approver-1" || m["snapshot"] != nil {
		t.Errorf("reject: %s", r.body)
	}
	call(contractCall{as: &approver, method: "POST", path: casePath + "/reject", body: map[string]any{"notes": "again"}, want: 409, code: "CONFLICT"})

	// Fill the case and give the initiative a benefit and a cost: nothing blocks any more.
	call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"content": map[string]any{
		"financial_analysis": map[string]any{"title": "Numbers", "body": "NPV positive within two years."},
		"risk_assessment":    filledContent["risk_assessment"], "implementation_roadmap": filledContent["implementation_roadmap"]}}, want: 200})
	ts.createBenefit(admin, benefitBody(initID, "Hosting savings"))
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Migration", "category": "capex", "amount": 50000, "currency": "EUR", "period": monthsAgo(24)}), 201)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	r = call(contractCall{as: &reader, method: "GET", path: casePath + "/validation", want: 200})
	if v := r.json(t); v["can_approve"] != true || len(v["problems"].([]any)) != 0 {
		t.Errorf("validation of a complete case: %s", r.body)
	}

	// The decision request: stored exactly, returned in the currency's minor
	// units, replaced whole by a PATCH, null removes it.
	ask := map[string]any{"ask": "Approve the migration budget", "amount": 1500000.5, "currency": "EUR", "decide_by": "2026-09-30",
		"recommendation": "Approve: the case pays back in 20 months."}
	r = call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"decision_request": ask}, want: 200})
	if got := mustJSON(t, r.json(t)["decision_request"]); got != mustJSON(t, ask) {
		t.Errorf("decision request %s, want %s", got, mustJSON(t, ask))
	}
	r = call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"decision_request": nil}, want: 200})
	if r.json(t)["decision_request"] != nil {
		t.Errorf("decision request not removed: %s", r.body)
	}
	r = call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"decision_request": map[string]any{"ask": "Approve"}}, want: 200})
	if got := mustJSON(t, r.json(t)["decision_request"]); got != `{"amount":null,"ask":"Approve","currency":null,"decide_by":null,"recommendation":null}` {
		t.Errorf("minimal decision request %s", got)
	}
	call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"decision_request": ask}, want: 200})

	// 200 approve (from rejected): locked, with the figures frozen.
	r = call(contractCall{as: &approver, method: "POST", path: casePath + "/approve", body: map[string]any{"approval_level": "board", "notes": "Go."}, want: 200})
	approved := r.json(t)
	snap, _ := approved["snapshot"].(map[string]any)
	if approved["status"] != "approved" || approved["approval"].(map[string]any)["level"] != "board" || snap == nil ||
		snap["total_costs"] != 50000.0 || snap["base_currency"] != "EUR" || snap["benefits_count"] != 1.0 || snap["total_benefits"].(float64) <= 0 ||
		mustJSON(t, approved["decision_request"]) != mustJSON(t, ask) {
		t.Errorf("approve: %s", r.body)
	}
	// Frozen with the case: the request cannot change once approved.
	call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"decision_request": map[string]any{"ask": "More"}}, want: 409, code: "CONFLICT"})
	// 409: approving again, editing, deleting, submitting, rejecting an approved case.
	call(contractCall{as: &approver, method: "POST", path: casePath + "/approve", body: map[string]any{"approval_level": "board"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "PUT", path: casePath, body: businessCaseBody(initID, "Changed"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "PATCH", path: casePath, body: map[string]any{"name": "Changed"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "DELETE", path: casePath, want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "POST", path: casePath + "/submit", want: 409, code: "CONFLICT"})
	call(contractCall{as: &approver, method: "POST", path: casePath + "/reject", body: map[string]any{"notes": "late"}, want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &reader, method: "GET", path: casePath + "/validation", want: 200})
	if v := r.json(t); v["can_approve"] != false || v["status"] != "approved" {
		t.Errorf("validation of an approved case: %s", r.body)
	}

	// The approved numbers never move: a new cost changes the initiative, not the snapshot.
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Licences", "category": "opex", "amount": 7000, "currency": "EUR", "period": monthsAgo(12)}), 201)
	r = call(contractCall{as: &reader, method: "GET", path: casePath, want: 200})
	if got, _ := json.Marshal(r.json(t)["snapshot"]); string(got) != mustJSON(t, snap) {
		t.Errorf("snapshot moved:\n%s\nwas\n%s", got, mustJSON(t, snap))
	}

	// Versions: a new draft (version 2) copied from the approved case, editable.
	r = call(contractCall{as: &writer, method: "POST", path: casePath + "/versions", want: 201})
	v2 := r.json(t)
	v2Path := "/v1/business-cases/" + v2["id"].(string)
	if v2["version"] != 2.0 || v2["previous_version_id"] != id || v2["status"] != "draft" || v2["snapshot"] != nil || v2["approval"] != nil ||
		v2["name"] != "Cloud case" || r.header.Get("Location") != v2Path ||
		v2["content"].(map[string]any)["implementation_roadmap"].(map[string]any)["body"] != "Q1 pilot, Q2 roll-out." ||
		mustJSON(t, v2["decision_request"]) != mustJSON(t, ask) {
		t.Errorf("new version: %s", r.body)
	}
	call(contractCall{as: &writer, method: "PATCH", path: v2Path, body: map[string]any{"name": "Cloud case 2027"}, want: 200})
	// A version of the older one still takes the next number of the lineage.
	r = call(contractCall{as: &writer, method: "POST", path: casePath + "/versions", want: 201})
	v3 := r.json(t)
	if v3["version"] != 3.0 || v3["previous_version_id"] != id {
		t.Errorf("third version: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: v2Path + "/versions", want: 200})
	lineage := r.json(t)["data"].([]any)
	if len(lineage) != 3 || lineage[0].(map[string]any)["id"] != id || lineage[1].(map[string]any)["name"] != "Cloud case 2027" || lineage[2].(map[string]any)["version"] != 3.0 {
		t.Errorf("lineage: %s", r.body)
	}
	// 204: a draft version goes; twice is 404.
	call(contractCall{as: &writer, method: "DELETE", path: "/v1/business-cases/" + v3["id"].(string), want: 204})
	call(contractCall{as: &writer, method: "DELETE", path: "/v1/business-cases/" + v3["id"].(string), want: 404, code: "NOT_FOUND"})

	// Idempotency-Key on the triggers: a retried version POST gets the first answer (no second
	// copy); the key reused for another request (another case's path, another trigger) is 422.
	r = call(contractCall{as: &writer, method: "POST", path: casePath + "/versions", headers: []string{"Idempotency-Key", "bc-version-1"}, want: 201})
	again := call(contractCall{as: &writer, method: "POST", path: casePath + "/versions", headers: []string{"Idempotency-Key", "bc-version-1"}, want: 201})
	if again.header.Get("Idempotent-Replayed") != "true" || again.json(t)["id"] != r.json(t)["id"] {
		t.Errorf("replayed version: %s (Idempotent-Replayed %q), first %s", again.body, again.header.Get("Idempotent-Replayed"), r.body)
	}
	call(contractCall{as: &writer, method: "POST", path: v2Path + "/versions", headers: []string{"Idempotency-Key", "bc-version-1"}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &writer, method: "POST", path: v2Path + "/submit", headers: []string{"Idempotency-Key", "bc-version-1"}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &writer, method: "DELETE", path: "/v1/business-cases/" + r.json(t)["id"].(string), want: 204})

	// 400: query, body, tenant header; 401; 403 without the permission, and per operation.
	for _, q := range []string{"page=0", "page_size=201", "status=open", "initiative_id=nope", "sort=name"} {
		call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases?" + q, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	}
	call(contractCall{as: &writer, method: "POST", path: "/v1/business-cases", body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &writer, method: "PATCH", path: v2Path + "?x=1", body: map[string]any{}, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	draftPath := v2Path
	ops := []struct {
		method, path string
		body         any
		need         caller // a caller of the tenant that lacks the permission
	}{
		{"GET", "/v1/business-cases", nil, nobody},
		{"POST", "/v1/business-cases", businessCaseBody(initID, "op"), reader},
		{"GET", draftPath, nil, nobody},
		{"PUT", draftPath, businessCaseBody(initID, "op"), reader},
		{"PATCH", draftPath, map[string]any{}, approver},
		{"DELETE", draftPath, nil, approver},
		{"POST", draftPath + "/submit", nil, approver},
		{"POST", draftPath + "/approve", map[string]any{"approval_level": "manager"}, writer},
		{"POST", draftPath + "/reject", map[string]any{"notes": "n"}, writer},
		{"GET", draftPath + "/validation", nil, nobody},
		{"GET", draftPath + "/versions", nil, nobody},
		{"POST", draftPath + "/versions", nil, reader},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &op.need, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
	}

	// 404: unknown ids in any form, and another tenant's case (as that tenant sees it: not there).
	for _, op := range ops {
		if !strings.Contains(op.path, draftPath) {
			continue
		}
		for _, p := range []string{strings.Replace(op.path, draftPath, "/v1/business-cases/"+missing, 1), strings.Replace(op.path, draftPath, "/v1/business-cases/nope", 1)} {
			call(contractCall{as: &admin, method: op.method, path: p, body: op.body, want: 404, code: "NOT_FOUND"})
		}
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, want: 404, code: "NOT_FOUND"})
	}
	r = call(contractCall{as: &other, method: "GET", path: "/v1/business-cases", want: 200})
	if n := len(r.json(t)["data"].([]any)); n != 0 {
		t.Errorf("another tenant sees %d business cases", n)
	}
	// Another tenant cannot build a case on this tenant's initiative either.
	call(contractCall{as: &other, method: "POST", path: "/v1/business-cases", body: businessCaseBody(initID, "intruder"), want: 422, code: "VALIDATION_ERROR"})

	// 409: 50 business cases per initiative (48 stored directly, then through the API).
	fullID := ts.createInitiative(admin, map[string]any{"name": "Full"})
	err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		for i := range 48 {
			id := uuid.New()
			if _, err := db.Q.BusinessCaseCreate(ctx, tx, dbsqlc.BusinessCaseCreateParams{TenantID: ts.tenant, ID: id, InitiativeID: uuid.MustParse(fullID), LineageID: id, Version: 1,
				Name: fmt.Sprintf("c%d", i), Template: "cfo_view", Sections: []string{"executive_summary"}, Content: []byte("{}"), CreatedBy: "seed"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r = call(contractCall{as: &writer, method: "POST", path: "/v1/business-cases", body: businessCaseBody(fullID, "49th"), want: 201})
	forty9 := "/v1/business-cases/" + r.json(t)["id"].(string)
	call(contractCall{as: &writer, method: "POST", path: forty9 + "/versions", want: 201}) // the 50th
	call(contractCall{as: &writer, method: "POST", path: "/v1/business-cases", body: businessCaseBody(fullID, "51st"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "POST", path: forty9 + "/versions", want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/business-cases?initiative_id=" + fullID + "&page=2&page_size=30", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 50.0 || len(r.json(t)["data"].([]any)) != 20 {
		t.Errorf("page 2 of 50 by 30: %s", r.body)
	}

	// 409: an archived initiative's cases are read-only (and still readable); approval is blocked.
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initID, nil), 204)
	call(contractCall{as: &writer, method: "POST", path: "/v1/business-cases", body: businessCaseBody(initID, "late"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "PATCH", path: v2Path, body: map[string]any{"name": "late"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "POST", path: v2Path + "/versions", want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &reader, method: "GET", path: v2Path + "/validation", want: 200})
	if !strings.Contains(string(r.body), `"initiative_archived"`) {
		t.Errorf("validation of a case of an archived initiative: %s", r.body)
	}
	call(contractCall{as: &approver, method: "POST", path: v2Path + "/approve", body: map[string]any{"approval_level": "manager"}, want: 409, code: "CONFLICT"})

	// 413, 415 on every operation with a body.
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range ops {
		if op.body == nil || op.method == "GET" {
			continue
		}
		call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.preconditions(t, admin, calls) // ETag: 304 and the 409 of a stale If-Match
	cc.limitsAndOutage(t, ts, admin, "/v1/business-cases", calls)

	for _, u := range cc.uncovered([]string{"business-cases"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBusinessCaseCreateLimit: POST /v1/business-cases allows 10 per minute (spec section 8).
func TestBusinessCaseCreateLimit(t *testing.T) {
	ts := contractFrozenServer(newTestServer(t, "enterprise")) // a limiter clock that stands still: no refill mid-test
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Rate"})
	for i := range 10 {
		expect(t, ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, fmt.Sprintf("c%d", i))), 201)
	}
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "11th"))
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	expect(t, ts.do(&admin, "GET", "/v1/business-cases", nil), 200) // other routes are not held back
}

// TestBusinessCaseEventsReachAReceiver: approving and rejecting deliver
// business_case.approved / business_case.rejected, signed, to a subscribed
// receiver; submitting sends nothing to webhooks (an internal event).
func TestBusinessCaseEventsReachAReceiver(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	ts.createWebhook(admin, rc.URL+"/hooks", "business_case.approved", "business_case.rejected")

	initID := ts.createInitiative(admin, map[string]any{"name": "Evented"})
	ts.createBenefit(admin, benefitBody(initID, "Savings"))
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 1000, "currency": "EUR", "period": monthsAgo(6)}), 201)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	body := businessCaseBody(initID, "Evented case")
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r := ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	path := "/v1/business-cases/" + r.json(t)["id"].(string)
	expect(t, ts.do(&admin, "POST", path+"/submit", nil), 200)
	expect(t, ts.do(&admin, "POST", path+"/reject", map[string]any{"notes": "Sharpen the risks."}), 200)
	expect(t, ts.do(&admin, "POST", path+"/submit", nil), 200)
	expect(t, ts.do(&admin, "POST", path+"/approve", map[string]any{"approval_level": "executive"}), 200)

	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{ts.srv.Webhooks}, Log: testenv.QuietLogger()}
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "two deliveries", func() bool { return len(rc.Requests()) >= 2 })
	// Deliveries run concurrently: each type once, in any order.
	got := rc.Requests()
	approvedHooks, rejectedHooks := rc.OfType("business_case.approved"), rc.OfType("business_case.rejected")
	if len(got) != 2 || len(approvedHooks) != 1 || len(rejectedHooks) != 1 || rc.SignatureErrors() != 0 {
		t.Fatalf("%d deliveries: %d approved, %d rejected (bad signatures %d)", len(got), len(approvedHooks), len(rejectedHooks), rc.SignatureErrors())
	}
	// Each body is a WebhookEvent whose data is a BusinessCase (api/openapi.yaml).
	schemas := contractLoadSpec(t).doc.Components.Schemas
	for _, g := range got {
		var doc map[string]any
		if err := json.Unmarshal(g.Body, &doc); err != nil {
			t.Fatal(err)
		}
		if err := schemas["WebhookEvent"].Value.VisitJSON(doc, contractSchemaOptions()...); err != nil {
			t.Errorf("%s body does not match WebhookEvent: %v", g.Type, err)
		}
		if err := schemas["BusinessCase"].Value.VisitJSON(doc["data"], contractSchemaOptions()...); err != nil {
			t.Errorf("%s data does not match BusinessCase: %v", g.Type, err)
		}
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(approvedHooks[0].Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Data["name"] != "Evented case" || env.Data["status"] != "approved" || env.Data["approval"].(map[string]any)["level"] != "executive" || env.Data["snapshot"] == nil {
		t.Errorf("approved event data: %s", approvedHooks[0].Body)
	}
	env.Data = nil
	if err := json.Unmarshal(rejectedHooks[0].Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Data["status"] != "rejected" || env.Data["approval"].(map[string]any)["notes"] != "Sharpen the risks." {
		t.Errorf("rejected event data: %s", rejectedHooks[0].Body)
	}
}

// raceStatuses sends n requests at once and counts their statuses.
func raceStatuses(n int, send func(i int) int) map[int]int {
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { statuses <- send(i) })
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	return count
}

// TestBusinessCaseConcurrentApprovalsAndLimit: simultaneous approvals of one
// case serialise on its row lock (one 200, the rest 409, one event), and
// simultaneous creates never pass the 50 per initiative.
func TestBusinessCaseConcurrentApprovalsAndLimit(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	ctx := context.Background()
	initID := ts.createInitiative(admin, map[string]any{"name": "Race"})
	ts.createBenefit(admin, benefitBody(initID, "Savings"))
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 1000, "currency": "EUR", "period": monthsAgo(6)}), 201)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	body := businessCaseBody(initID, "Raced")
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r := ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	path := "/v1/business-cases/" + r.json(t)["id"].(string)

	const n = 6
	got := raceStatuses(n, func(int) int {
		return ts.do(&admin, "POST", path+"/approve", map[string]any{"approval_level": "board"}).status
	})
	if got[200] != 1 || got[409] != n-1 {
		t.Fatalf("approvals %v, want one 200 and %d 409", got, n-1)
	}
	var events int
	err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT count(*) FROM outbox_events WHERE type = 'business_case.approved'").Scan(&events)
	})
	if err != nil || events != 1 {
		t.Fatalf("%d approved events (%v), want 1", events, err)
	}

	// 1 case exists; 60 creates at once: exactly 49 more fit.
	got = raceStatuses(60, func(i int) int {
		return ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, fmt.Sprintf("c%d", i))).status
	})
	if got[201] != 49 || got[409] != 11 {
		t.Fatalf("creates %v, want 49 201 and 11 409", got)
	}
}
