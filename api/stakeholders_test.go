package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// stakeholderBody is a valid stakeholder of the initiative to create.
func stakeholderBody(initiativeID, email string) map[string]any {
	return map[string]any{"initiative_id": initiativeID, "name": "Someone", "email": email, "influence": "medium", "interest": "medium"}
}

// daysAgo is the UTC calendar date n days before today, as YYYY-MM-DD.
func daysAgo(n int) string { return time.Now().UTC().AddDate(0, 0, -n).Format(time.DateOnly) }

// names lists the "name" of each element of a list response's data, in order.
func names(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, d := range r.json(t)["data"].([]any) {
		out = append(out, d.(map[string]any)["name"].(string))
	}
	return out
}

// TestContractStakeholders drives the stakeholder and engagement operations
// through their success and error paths and validates every response against
// api/openapi.yaml.
func TestContractStakeholders(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // negotiated limits: no per-endpoint limit in the way
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"stakeholders:read"}}
	writer := caller{sub: "writer-1", tenant: ts.tenant, permissions: []string{"stakeholders:read", "stakeholders:write"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "initiatives:write"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := uuid.NewString()

	initA := ts.createInitiative(admin, map[string]any{"name": "Stakeholders A"})
	initB := ts.createInitiative(admin, map[string]any{"name": "Stakeholders B"})

	// 201: trimmed name and role, e-mail as sent, derived fields of a stakeholder never engaged.
	r := call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", want: 201, body: map[string]any{
		"initiative_id": initA, "name": " Ana Silva ", "email": "Ana.Silva@Example.com", "role": " CFO ", "department": "Finance",
		"influence": "critical", "interest": "high", "notes": "Signs the budget",
	}})
	ana := r.json(t)
	anaPath := "/v1/stakeholders/" + ana["id"].(string)
	if ana["name"] != "Ana Silva" || ana["email"] != "Ana.Silva@Example.com" || ana["role"] != "CFO" || ana["department"] != "Finance" ||
		ana["quadrant"] != "manage_closely" || ana["engagement_count"] != 0.0 || ana["last_engagement_at"] != nil || ana["sentiment"] != nil ||
		ana["sentiment_trend"] != "insufficient_data" || ana["at_risk"] != false || ana["at_risk_reason"] != nil || ana["initiative_id"] != initA ||
		r.header.Get("Location") != anaPath {
		t.Errorf("created: %s (Location %s)", r.body, r.header.Get("Location"))
	}
	// 201: a blank role is none; the read-only fields of a response may be sent back.
	r = call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", want: 201, body: map[string]any{
		"initiative_id": initA, "name": "Bo Lund", "email": "bo@example.com", "role": "   ", "department": nil, "influence": "low", "interest": "high",
		"id": "x", "quadrant": "monitor", "at_risk": true, "created_at": "then", "engagement_count": 9,
	}})
	bo := r.json(t)
	boPath := "/v1/stakeholders/" + bo["id"].(string)
	if bo["role"] != nil || bo["department"] != nil || bo["quadrant"] != "keep_informed" || bo["engagement_count"] != 0.0 || bo["notes"] != "" {
		t.Errorf("second: %s", r.body)
	}
	// 409 ALREADY_EXISTS: the same address in another case in the same initiative; another initiative may have it.
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(initA, "ana.silva@EXAMPLE.com"), want: 409, code: "ALREADY_EXISTS"})
	r = call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", want: 201, body: map[string]any{
		"initiative_id": initB, "name": "Ana Silva", "email": "ana.silva@example.com", "influence": "high", "interest": "low",
	}})
	anaB := r.json(t)
	if anaB["quadrant"] != "keep_satisfied" {
		t.Errorf("keep_satisfied: %s", r.body)
	}

	// 201 engagements: the answer carries the stakeholder after it; back-dated ones land in date order.
	engage := func(path, typ, sentiment, date string) map[string]any {
		t.Helper()
		r := call(contractCall{as: &writer, method: "POST", path: path + "/engagement", want: 201,
			body: map[string]any{"type": typ, "sentiment": sentiment, "date": date, "notes": "n"}})
		return r.json(t)
	}
	e := engage(anaPath, "meeting", "positive", daysAgo(10))
	s := e["stakeholder"].(map[string]any)
	if e["type"] != "meeting" || e["date"] != daysAgo(10) || e["recorded_by"] != "writer-1" || e["stakeholder_id"] != ana["id"] ||
		s["engagement_count"] != 1.0 || s["sentiment"] != "positive" || s["last_engagement_at"] != daysAgo(10) || s["at_risk"] != false ||
		s["sentiment_trend"] != "insufficient_data" {
		t.Errorf("first engagement: %v", e)
	}
	s = engage(anaPath, "call", "cautious", daysAgo(2))["stakeholder"].(map[string]any)
	if s["sentiment"] != "cautious" || s["sentiment_trend"] != "declining" || s["at_risk"] != true || s["at_risk_reason"] != "negative_sentiment" {
		t.Errorf("powerful and cautious: %v", s)
	}
	s = engage(anaPath, "email", "positive", daysAgo(30))["stakeholder"].(map[string]any) // back-dated: the latest stays cautious
	if s["engagement_count"] != 3.0 || s["sentiment"] != "cautious" || s["last_engagement_at"] != daysAgo(2) || s["at_risk_reason"] != "negative_sentiment" {
		t.Errorf("back-dated: %v", s)
	}
	for _, step := range [][2]string{{"positive", daysAgo(20)}, {"neutral", daysAgo(10)}, {"negative", daysAgo(5)}} {
		s = engage(boPath, "survey", step[0], step[1])["stakeholder"].(map[string]any)
	}
	if s["sentiment_trend"] != "declining" || s["at_risk"] != true || s["at_risk_reason"] != "declining_sentiment" {
		t.Errorf("low influence, declining to negative: %v", s)
	}
	s = engage("/v1/stakeholders/"+anaB["id"].(string), "presentation", "positive", daysAgo(50))["stakeholder"].(map[string]any)
	if s["at_risk"] != true || s["at_risk_reason"] != "not_engaged" || s["sentiment_trend"] != "insufficient_data" {
		t.Errorf("high influence, last engaged 50 days ago: %v", s)
	}
	// Today is allowed.
	engage(boPath, "other", "negative", daysAgo(0))

	// 200 GET: the same derived fields.
	r = call(contractCall{as: &reader, method: "GET", path: anaPath, want: 200})
	if m := r.json(t); m["engagement_count"] != 3.0 || m["at_risk_reason"] != "negative_sentiment" || m["created_at"] != ana["created_at"] {
		t.Errorf("GET: %s", r.body)
	}
	// 200 engagements: newest first, paginated.
	r = call(contractCall{as: &reader, method: "GET", path: anaPath + "/engagements?page_size=2", want: 200})
	var dates []string
	for _, d := range r.json(t)["data"].([]any) {
		dates = append(dates, d.(map[string]any)["date"].(string))
	}
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); !slices.Equal(dates, []string{daysAgo(2), daysAgo(10)}) || p["total"] != 3.0 || p["total_pages"] != 2.0 {
		t.Errorf("engagements: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: anaPath + "/engagements?page=5&page_size=500", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 3.0 || len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("past the last page: %s", r.body)
	}

	// 200 lists and their filters.
	carl := call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", want: 201, body: map[string]any{
		"initiative_id": initA, "name": "Carl 100%_Sure", "email": "carl@example.com", "department": "IT Ops", "influence": "medium", "interest": "low",
	}}).json(t)
	list := func(query string, want ...string) {
		t.Helper()
		r := call(contractCall{as: &reader, method: "GET", path: "/v1/stakeholders?" + query, want: 200})
		if got := names(t, r); !slices.Equal(got, want) {
			t.Errorf("?%s: %v, want %v", query, got, want)
		}
	}
	list("sort=name&order=asc", "Ana Silva", "Ana Silva", "Bo Lund", "Carl 100%_Sure")
	list("", "Carl 100%_Sure", "Ana Silva", "Bo Lund", "Ana Silva") // newest first
	list("initiative_id="+initA+"&sort=name&order=asc", "Ana Silva", "Bo Lund", "Carl 100%_Sure")
	list("initiative_id="+initB, "Ana Silva")
	list("initiative_id=" + missing)
	list("initiative_id=nope")
	list("influence=critical", "Ana Silva")
	list("interest=high&sort=name&order=desc", "Bo Lund", "Ana Silva")
	list("quadrant=manage_closely", "Ana Silva")
	list("quadrant=keep_satisfied", "Ana Silva")
	list("quadrant=keep_informed", "Bo Lund")
	list("quadrant=monitor", "Carl 100%_Sure")
	list("quadrant=monitor&influence=critical") // an impossible combination: nothing
	list("quadrant=keep_satisfied&initiative_id=" + initA)
	list("at_risk=true&sort=name&order=asc", "Ana Silva", "Ana Silva", "Bo Lund")
	list("at_risk=false", "Carl 100%_Sure")
	list("at_risk=true&initiative_id="+initB, "Ana Silva")
	list("q=SILVA&initiative_id="+initA, "Ana Silva")
	list("q=it%20ops", "Carl 100%_Sure") // department
	list("q=cfo", "Ana Silva")           // role
	list("q=100%25_", "Carl 100%_Sure")  // % and _ match themselves
	list("q=a%25a")
	list("q=_o_")
	list("sort=last_engagement_at&order=asc", "Carl 100%_Sure", "Ana Silva", "Ana Silva", "Bo Lund") // never engaged first
	list("sort=last_engagement_at&order=desc", "Bo Lund", "Ana Silva", "Ana Silva", "Carl 100%_Sure")
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/stakeholders?page=2&page_size=3&sort=name&order=asc", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 4.0 || p["total_pages"] != 2.0 || !slices.Equal(names(t, r), []string{"Carl 100%_Sure"}) {
		t.Errorf("page 2: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/stakeholders?page=9&at_risk=true", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 3.0 || len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("past the last page, filtered: %s", r.body)
	}

	// The initiative detail summarises with the same definitions.
	r = ts.do(&admin, "GET", "/v1/initiatives/"+initA, nil)
	expect(t, r, 200)
	var detail struct {
		Stakeholders []struct {
			ID, Quadrant string
			AtRisk       bool `json:"at_risk"`
		}
		Metrics struct {
			Count  int `json:"stakeholders_count"`
			AtRisk int `json:"stakeholders_at_risk"`
		}
	}
	if err := json.Unmarshal(r.body, &detail); err != nil {
		t.Fatal(err)
	}
	if detail.Metrics.Count != 3 || detail.Metrics.AtRisk != 2 || len(detail.Stakeholders) != 3 {
		t.Errorf("detail: %s", r.body)
	}
	for _, d := range detail.Stakeholders {
		m := ts.do(&reader, "GET", "/v1/stakeholders/"+d.ID, nil).json(t)
		if m["quadrant"] != d.Quadrant || m["at_risk"] != d.AtRisk {
			t.Errorf("detail says %s/%v, the stakeholder %v/%v", d.Quadrant, d.AtRisk, m["quadrant"], m["at_risk"])
		}
	}

	// 200 PUT: replaces; role, department and notes cleared; engagements kept; influence
	// low makes cautious no longer a risk, and the at_risk filter follows at once.
	r = call(contractCall{as: &writer, method: "PUT", path: anaPath, want: 200, body: map[string]any{
		"initiative_id": initA, "name": "Ana Silva", "email": "ana.silva@example.com", "influence": "low", "interest": "high",
	}})
	if m := r.json(t); m["role"] != nil || m["department"] != nil || m["notes"] != "" || m["email"] != "ana.silva@example.com" || m["engagement_count"] != 3.0 ||
		m["quadrant"] != "keep_informed" || m["at_risk"] != false || m["at_risk_reason"] != nil || m["created_at"] != ana["created_at"] {
		t.Errorf("PUT: %s", r.body)
	}
	list("at_risk=true&initiative_id="+initA, "Bo Lund")
	// 200 PATCH: only what is sent; null clears role; the filter follows influence back up.
	r = call(contractCall{as: &writer, method: "PATCH", path: anaPath, want: 200, body: map[string]any{"influence": "high", "role": "CFO"}})
	if m := r.json(t); m["role"] != "CFO" || m["interest"] != "high" || m["at_risk_reason"] != "negative_sentiment" || m["name"] != "Ana Silva" {
		t.Errorf("PATCH: %s", r.body)
	}
	list("at_risk=true&initiative_id="+initA+"&sort=name&order=asc", "Ana Silva", "Bo Lund")
	r = call(contractCall{as: &writer, method: "PATCH", path: anaPath, want: 200, body: map[string]any{"role": nil, "notes": "x"}})
	if m := r.json(t); m["role"] != nil || m["notes"] != "x" {
		t.Errorf("PATCH null: %s", r.body)
	}
	// 409 ALREADY_EXISTS on update too.
	call(contractCall{as: &writer, method: "PATCH", path: anaPath, body: map[string]any{"email": "BO@example.com"}, want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &writer, method: "PUT", path: boPath, body: map[string]any{"name": "Bo", "email": "Ana.Silva@example.com", "influence": "low", "interest": "low"}, want: 409, code: "ALREADY_EXISTS"})
	// Not engaged: a critical stakeholder added 50 days ago and never engaged (the date set in the
	// database; the next write of the record recomputes when the list counts it at risk).
	dora := call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", want: 201, body: map[string]any{
		"initiative_id": initB, "name": "Dora", "email": "dora@example.com", "influence": "critical", "interest": "low",
	}}).json(t)
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE stakeholders SET created_at = now() - interval '50 days' WHERE id = $1", dora["id"])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r = call(contractCall{as: &writer, method: "PATCH", path: "/v1/stakeholders/" + dora["id"].(string), body: map[string]any{"notes": "never met"}, want: 200})
	if m := r.json(t); m["at_risk"] != true || m["at_risk_reason"] != "not_engaged" {
		t.Errorf("never engaged for 50 days: %s", r.body)
	}
	list("at_risk=true&initiative_id="+initB+"&sort=name&order=asc", "Ana Silva", "Dora")

	// 422: rules (internal/stakeholder) and body types, each naming its field.
	longLabel := strings.Repeat("r", 101)
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field, code  string
		docRejects   bool
	}{
		{"POST", "/v1/stakeholders", map[string]any{"name": "x", "email": "x@example.com", "influence": "low", "interest": "low"}, "initiative_id", "required", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "email": "x@example.com", "influence": "low", "interest": "low"}, "name", "required", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "  ", "email": "x@example.com", "influence": "low", "interest": "low"}, "name", "required", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "influence": "low", "interest": "low"}, "email", "required", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "not an address", "influence": "low", "interest": "low"}, "email", "invalid_format", false},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "Ana <ana@example.com>", "influence": "low", "interest": "low"}, "email", "invalid_format", false},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": strings.Repeat("a", 250) + "@b.co", "influence": "low", "interest": "low"}, "email", "too_long", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "huge", "interest": "low"}, "influence", "invalid_value", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "low", "interest": "critical"}, "interest", "invalid_value", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "High", "interest": "low"}, "influence", "invalid_value", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": 3, "interest": "low"}, "influence", "invalid_type", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "low", "interest": "low", "role": longLabel}, "role", "too_long", false},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "low", "interest": "low", "department": "Ops\nEMEA"}, "department", "invalid_value", false},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "low", "interest": "low", "notes": strings.Repeat("n", 10_001)}, "notes", "too_long", true},
		{"POST", "/v1/stakeholders", map[string]any{"initiative_id": initA, "name": "x", "email": "x@example.com", "influence": "low", "interest": "low", "phone": "1"}, "phone", "unknown_field", true},
		{"PUT", boPath, map[string]any{"name": "x", "email": "x@example.com", "influence": "low"}, "interest", "required", true},
		{"PUT", boPath, map[string]any{"name": "x", "email": "x@example.com", "influence": "low", "interest": "low", "initiative_id": initB}, "initiative_id", "invalid_value", false},
		{"PATCH", boPath, map[string]any{"influence": nil}, "influence", "required", true},
		{"PATCH", boPath, map[string]any{"email": "bo@"}, "email", "invalid_format", false},
		{"PATCH", boPath, map[string]any{"initiative_id": missing}, "initiative_id", "invalid_value", false},
		{"POST", boPath + "/engagement", map[string]any{"type": "lunch", "sentiment": "positive", "date": daysAgo(1)}, "type", "invalid_value", true},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "angry", "date": daysAgo(1)}, "sentiment", "invalid_value", true},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "neutral"}, "date", "required", true},
		{"POST", boPath + "/engagement", map[string]any{"sentiment": "neutral", "date": daysAgo(1)}, "type", "required", true},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "neutral", "date": "2026-02-30"}, "date", "invalid_format", false},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "neutral", "date": "yesterday"}, "date", "invalid_format", true},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "neutral", "date": daysAgo(-2)}, "date", "in_future", false},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "neutral", "date": "1999-12-31"}, "date", "too_early", false},
		{"POST", boPath + "/engagement", map[string]any{"type": "call", "sentiment": "neutral", "date": daysAgo(1), "mood": "ok"}, "mood", "unknown_field", true},
	} {
		r := call(contractCall{as: &writer, method: c.method, path: c.path, body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.docRejects, docSkip: !c.docRejects})
		if r.status == 422 {
			e := r.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any)
			if e["field"] != c.field || e["code"] != c.code {
				t.Errorf("%s %v: first error %v, want %s/%s", c.method, c.body, e, c.field, c.code)
			}
		}
	}
	// Every failure of the rules at once.
	r = call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", want: 422, docSkip: true, body: map[string]any{
		"initiative_id": initA, "name": "x", "email": "x", "influence": "x", "interest": "x", "role": "a\tb",
	}})
	if n := len(r.json(t)["error"].(map[string]any)["errors"].([]any)); n != 4 {
		t.Errorf("want 4 errors: %s", r.body)
	}
	if m := ts.do(&reader, "GET", boPath, nil).json(t); m["name"] != "Bo Lund" || m["engagement_count"] != 4.0 {
		t.Errorf("refused writes changed the stakeholder: %v", m)
	}

	// 400: query, body, tenant header.
	for q, docRejects := range map[string]bool{
		"page=0": true, "page_size=501": true, "sort=email": true, "order=up": true, "influence=huge": true, "interest=critical": true,
		"quadrant=key_players": true, "at_risk=yes": true, "q=": true, "q=" + strings.Repeat("x", 101): true,
		"colour=red": false, "influence=low&influence=high": false,
	} {
		// The document does not forbid unknown or repeated parameters; the API does.
		call(contractCall{as: &reader, method: "GET", path: "/v1/stakeholders?" + q, want: 400, code: "INVALID_PARAMETER", docRejects: docRejects, docSkip: !docRejects})
	}
	call(contractCall{as: &reader, method: "GET", path: anaPath + "/engagements?page_size=501", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &reader, method: "GET", path: anaPath + "?x=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", body: `[1]`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &writer, method: "PATCH", path: anaPath + "?x=1", body: map[string]any{}, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &writer, method: "PUT", path: anaPath, body: `{"name":"x"} {}`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "DELETE", path: anaPath + "?force=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &writer, method: "POST", path: anaPath + "/engagement", body: `{"type":"call",}`, want: 400, code: "INVALID_PARAMETER", docSkip: true})

	engagementBody := map[string]any{"type": "call", "sentiment": "neutral", "date": daysAgo(1)}
	ops := []struct {
		method, path string
		body         any
		perm         string // the permission it needs beyond stakeholders:read
	}{
		{"GET", "/v1/stakeholders", nil, ""},
		{"POST", "/v1/stakeholders", stakeholderBody(initA, "op@example.com"), "write"},
		{"GET", anaPath, nil, ""},
		{"PUT", anaPath, map[string]any{"name": "Ana Silva", "email": "ana.silva@example.com", "influence": "high", "interest": "high"}, "write"},
		{"PATCH", anaPath, map[string]any{}, "write"},
		{"DELETE", "/v1/stakeholders/" + carl["id"].(string), nil, "delete"},
		{"POST", anaPath + "/engagement", engagementBody, "write"},
		{"GET", anaPath + "/engagements", nil, ""},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &nobody, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		// A token of another tenant naming this one.
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
		switch op.perm {
		case "write":
			call(contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		case "delete": // stakeholders:write does not delete
			call(contractCall{as: &writer, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		}
	}

	// 404: unknown stakeholders in any form; unknown, malformed and other tenants' initiatives.
	for _, p := range []string{"/v1/stakeholders/" + missing, "/v1/stakeholders/nope"} {
		call(contractCall{as: &admin, method: "GET", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PUT", path: p, body: ops[3].body, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PATCH", path: p, body: map[string]any{"notes": "x"}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "DELETE", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "POST", path: p + "/engagement", body: engagementBody, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "GET", path: p + "/engagements", want: 404, code: "NOT_FOUND"})
	}
	theirs := ts.createInitiative(other, map[string]any{"name": "Theirs"})
	for _, id := range []string{missing, "nope", theirs} {
		call(contractCall{as: &admin, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(id, "new@example.com"), want: 404, code: "NOT_FOUND"})
	}
	// Tenant isolation: the other tenant sees none of this tenant's stakeholders and cannot touch them.
	call(contractCall{as: &other, method: "GET", path: anaPath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "GET", path: anaPath + "/engagements", want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "PATCH", path: anaPath, body: map[string]any{"notes": "pwned"}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "DELETE", path: anaPath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "POST", path: anaPath + "/engagement", body: engagementBody, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(initA, "intruder@example.com"), want: 404, code: "NOT_FOUND"})
	r = call(contractCall{as: &other, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(theirs, "ana.silva@example.com"), want: 201})
	for _, q := range []string{"", "?initiative_id=" + initA, "?q=cfo"} {
		r = call(contractCall{as: &other, method: "GET", path: "/v1/stakeholders" + q, want: 200})
		if got := names(t, r); (q == "" && len(got) != 1) || (q != "" && len(got) != 0) {
			t.Errorf("the other tenant lists %v for %q", got, q)
		}
	}
	if m := ts.do(&reader, "GET", anaPath, nil).json(t); m["notes"] != "x" {
		t.Errorf("the other tenant changed the stakeholder: %v", m)
	}

	// 204, then gone with its engagements.
	call(contractCall{as: &admin, method: "DELETE", path: boPath, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: boPath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &reader, method: "GET", path: boPath + "/engagements", want: 404, code: "NOT_FOUND"})
	var left int
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT count(*) FROM stakeholder_engagements WHERE stakeholder_id = $1", bo["id"]).Scan(&left)
	}); err != nil || left != 0 {
		t.Errorf("%d engagements left of a removed stakeholder (%v)", left, err)
	}

	// 409: 500 stakeholders per initiative (499 stored directly, the 500th and 501st through the API).
	fullID := ts.createInitiative(admin, map[string]any{"name": "Full"})
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		for i := range 499 {
			if _, err := db.Q.StakeholderCreate(ctx, tx, dbsqlc.StakeholderCreateParams{TenantID: ts.tenant, InitiativeID: uuid.MustParse(fullID),
				Name: fmt.Sprintf("s%d", i), Email: fmt.Sprintf("s%d@example.com", i), Influence: "low", Interest: "low"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(fullID, "s500@example.com"), want: 201})
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(fullID, "s501@example.com"), want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &reader, method: "GET", path: "/v1/stakeholders?initiative_id=" + fullID + "&page=2&page_size=300", want: 200})
	if len(r.json(t)["data"].([]any)) != 200 {
		t.Errorf("page 2 of 500 by 300: %d rows", len(r.json(t)["data"].([]any)))
	}
	// 409: 10,000 engagements per stakeholder (the count set directly).
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE stakeholders SET engagement_count = 10000 WHERE id = $1", anaB["id"])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders/" + anaB["id"].(string) + "/engagement", body: engagementBody, want: 409, code: "CONFLICT"})

	// 409: an archived initiative's stakeholders are read-only, and still readable.
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+initA, nil), 204)
	call(contractCall{as: &writer, method: "POST", path: "/v1/stakeholders", body: stakeholderBody(initA, "late@example.com"), want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "PUT", path: anaPath, body: ops[3].body, want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "PATCH", path: anaPath, body: map[string]any{"notes": "late"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "DELETE", path: anaPath, want: 409, code: "CONFLICT"})
	call(contractCall{as: &writer, method: "POST", path: anaPath + "/engagement", body: engagementBody, want: 409, code: "CONFLICT"})
	call(contractCall{as: &reader, method: "GET", path: anaPath, want: 200})
	call(contractCall{as: &reader, method: "GET", path: anaPath + "/engagements", want: 200})

	// 413, 415 on every operation with a body.
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range ops {
		if op.body == nil {
			continue
		}
		call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// Every engagement logged through the API is one stakeholder.engagement event whose data matches the document.
	contractCheckEvents(t, cc.spec, ts, map[string]int{"stakeholder.engagement": 8})

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.preconditions(t, admin, calls) // ETag: 304 and the 409 of a stale If-Match
	cc.limitsAndOutage(t, ts, admin, "/v1/stakeholders", calls)

	for _, u := range cc.uncovered([]string{"stakeholders"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// TestStakeholderEngagementWebhook: logging an engagement reaches a real
// subscribed receiver, signed, with the engagement and the stakeholder after it.
func TestStakeholderEngagementWebhook(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	ts.createWebhook(admin, rc.URL, "stakeholder.engagement")
	initID := ts.createInitiative(admin, map[string]any{"name": "Engaged"})
	r := ts.do(&admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initID, "name": "Ana", "email": "ana@example.com", "influence": "high", "interest": "high"})
	expect(t, r, 201)
	id := r.json(t)["id"].(string)
	r = ts.do(&admin, "POST", "/v1/stakeholders/"+id+"/engagement", map[string]any{"type": "meeting", "sentiment": "negative", "date": daysAgo(3), "notes": "budget doubts"})
	expect(t, r, 201)
	logged := r.json(t)
	// A refused engagement emits nothing.
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders/"+id+"/engagement", map[string]any{"type": "meeting", "sentiment": "negative", "date": daysAgo(-2)}), 422)

	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{ts.srv.Webhooks}, Log: testenv.QuietLogger()}
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rc.Requests()
	if len(got) != 1 || got[0].Type != "stakeholder.engagement" || rc.SignatureErrors() != 0 {
		t.Fatalf("receiver saw %+v (bad signatures %d)", got, rc.SignatureErrors())
	}
	var event struct {
		ID, Type string
		TenantID string `json:"tenant_id"`
		Data     map[string]any
	}
	if err := json.Unmarshal(got[0].Body, &event); err != nil {
		t.Fatal(err)
	}
	s, _ := event.Data["stakeholder"].(map[string]any)
	if event.ID != got[0].EventID || event.Type != "stakeholder.engagement" || event.TenantID != ts.tenant.String() || event.Data["id"] != logged["id"] ||
		event.Data["notes"] != "budget doubts" || event.Data["date"] != daysAgo(3) || s == nil || s["id"] != id || s["initiative_id"] != initID ||
		s["at_risk_reason"] != "negative_sentiment" || s["engagement_count"] != 1.0 {
		t.Errorf("event: %s", got[0].Body)
	}
}

// TestStakeholderConcurrentWrites: engagements logged at the same time on two
// stakeholders of one initiative all count, and the summary is the latest by
// date whatever order they commit in; the same address sent at once in
// different cases makes one stakeholder.
func TestStakeholderConcurrentWrites(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Race"})
	var ids []string
	for _, email := range []string{"a@example.com", "b@example.com"} {
		r := ts.do(&admin, "POST", "/v1/stakeholders", stakeholderBody(initID, email))
		expect(t, r, 201)
		ids = append(ids, r.json(t)["id"].(string))
	}
	const n = 8
	statuses := make(chan int, 2*n)
	var wg sync.WaitGroup
	for _, id := range ids {
		for i := range n {
			sentiment := "positive"
			if i == 0 { // the newest by date, whenever it commits
				sentiment = "negative"
			}
			wg.Go(func() {
				statuses <- ts.do(&admin, "POST", "/v1/stakeholders/"+id+"/engagement", map[string]any{"type": "call", "sentiment": sentiment, "date": daysAgo(i)}).status
			})
		}
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != 201 {
			t.Fatalf("an engagement answered %d", s)
		}
	}
	for _, id := range ids {
		m := ts.do(&admin, "GET", "/v1/stakeholders/"+id, nil).json(t)
		if m["engagement_count"] != float64(n) || m["sentiment"] != "negative" || m["last_engagement_at"] != daysAgo(0) || m["sentiment_trend"] != "declining" {
			t.Errorf("after %d concurrent engagements: %v", n, m)
		}
	}

	created := make(chan int, n)
	for i := range n {
		wg.Go(func() {
			email := "Same@Example.com"
			if i%2 == 1 {
				email = strings.ToLower(email)
			}
			created <- ts.do(&admin, "POST", "/v1/stakeholders", stakeholderBody(initID, email)).status
		})
	}
	wg.Wait()
	close(created)
	count := map[int]int{}
	for s := range created {
		count[s]++
	}
	if count[201] != 1 || count[409] != n-1 {
		t.Errorf("statuses %v, want one 201 and %d 409", count, n-1)
	}
}
