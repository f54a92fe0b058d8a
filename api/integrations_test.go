package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

// TestContractIntegrations drives every integration operation through its success and error
// paths and validates every response against api/openapi.yaml.
func TestContractIntegrations(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "initiatives:write", "webhooks:manage"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := "/v1/integrations/" + uuid.NewString()
	feed := providertest.NewFeed(t, providertest.Options{Records: 1})
	const token = "contract-token-abcdef123456"

	// 201: a feed on a daily schedule in Berlin; the token is sealed, only its hint comes back.
	r := call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 201, body: map[string]any{
		"provider": "http_feed", "name": " Finance feed ", "config": map[string]any{"instance_url": feed.URL, "oauth_token": token},
		"sync_schedule": map[string]any{"frequency": "daily", "at": "02:00", "timezone": "Europe/Berlin"},
	}})
	in := r.json(t)
	path := "/v1/integrations/" + in["id"].(string)
	sched := in["sync_schedule"].(map[string]any)
	if in["name"] != "Finance feed" || in["state"] != "active" || in["oauth_token_set"] != true || in["oauth_token_hint"] != "****3456" ||
		sched["frequency"] != "daily" || sched["at"] != "02:00" || sched["timezone"] != "Europe/Berlin" || in["next_sync_at"] == nil ||
		r.header.Get("Location") != path || strings.Contains(string(r.body), token) || in["config"].(map[string]any)["format"] != "auto" {
		t.Errorf("created: %s (Location %s)", r.body, r.header.Get("Location"))
	}
	// 201: jira mapped to an initiative of the tenant; hubspot with its default instance URL; a paused manual one.
	initID := ts.createInitiative(admin, map[string]any{"name": "Epics land here"})
	jira := call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 201, body: map[string]any{
		"provider": "jira", "name": "Jira", "config": map[string]any{"instance_url": "https://example.atlassian.net", "initiative_id": initID, "email": "a@example.com"},
		"sync_schedule": map[string]any{"frequency": "weekly", "day_of_week": "monday", "at": "06:30", "timezone": "America/New_York"},
	}}).json(t)
	if s := jira["sync_schedule"].(map[string]any); s["day_of_week"] != "monday" || jira["oauth_token_set"] != false || jira["oauth_token_hint"] != nil {
		t.Errorf("jira: %v", jira)
	}
	hub := call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 201, body: map[string]any{
		"provider": "hubspot", "name": "HubSpot", "config": map[string]any{"oauth_token": "pat-na1-xyz"}, "state": "paused",
	}}).json(t)
	if hub["config"].(map[string]any)["instance_url"] != "https://api.hubapi.com" || hub["state"] != "paused" || hub["sync_schedule"].(map[string]any)["frequency"] != "manual" || hub["next_sync_at"] != nil {
		t.Errorf("hubspot: %v", hub)
	}

	// 409 ALREADY_EXISTS: the name, regardless of case.
	call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 409, code: "ALREADY_EXISTS", body: map[string]any{
		"provider": "http_feed", "name": "FINANCE FEED", "config": map[string]any{"instance_url": feed.URL}}})

	// 422: provider, config and schedule are validated.
	for name, body := range map[string]map[string]any{
		"unknown provider": {"provider": "sap", "name": "x", "config": map[string]any{}},
		"unknown key":      {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL, "colour": "red"}},
		"no instance_url":  {"provider": "salesforce", "name": "x", "config": map[string]any{}},
		"bad scheme":       {"provider": "salesforce", "name": "x", "config": map[string]any{"instance_url": "ftp://x.example.com"}},
		"jira initiative":  {"provider": "jira", "name": "x", "config": map[string]any{"instance_url": "https://e.atlassian.net", "initiative_id": uuid.NewString()}},
		"timezone":         {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL}, "sync_schedule": map[string]any{"frequency": "daily", "timezone": "Mars/Olympus"}},
		"at on hourly":     {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL}, "sync_schedule": map[string]any{"frequency": "hourly", "at": "02:00", "timezone": "UTC"}},
		"weekly, no day":   {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL}, "sync_schedule": map[string]any{"frequency": "weekly", "timezone": "UTC"}},
		"bad at":           {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL}, "sync_schedule": map[string]any{"frequency": "daily", "at": "24:00", "timezone": "UTC"}},
		"frequency":        {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL}, "sync_schedule": map[string]any{"frequency": "yearly", "timezone": "UTC"}},
		"token type":       {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL, "oauth_token": 7}},
		"no config":        {"provider": "http_feed", "name": "x"},
		"state":            {"provider": "http_feed", "name": "x", "config": map[string]any{"instance_url": feed.URL}, "state": "error"},
	} {
		r := call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", body: body, want: 422, code: "VALIDATION_ERROR", docSkip: true})
		if strings.Contains(string(r.body), `"errors":null`) {
			t.Errorf("%s: no field errors: %s", name, r.body)
		}
	}

	// 200 GET and the lists.
	got := call(contractCall{as: &admin, method: "GET", path: path, want: 200}).json(t)
	if got["id"] != in["id"] || got["oauth_token_hint"] != "****3456" {
		t.Errorf("GET: %v", got)
	}
	listed := func(q string) int {
		t.Helper()
		return len(call(contractCall{as: &admin, method: "GET", path: "/v1/integrations" + q, want: 200}).json(t)["data"].([]any))
	}
	if n, p, f := listed(""), listed("?state=paused"), listed("?provider=jira&page_size=1"); n != 3 || p != 1 || f != 1 {
		t.Errorf("lists: all %d, paused %d, jira %d", n, p, f)
	}

	// 200 PUT: without a token the stored one stays; the provider cannot change (422).
	r = call(contractCall{as: &admin, method: "PUT", path: path, want: 200, body: map[string]any{
		"name": "Finance feed", "config": map[string]any{"instance_url": feed.URL, "format": "json"},
		"sync_schedule": map[string]any{"frequency": "every_15_minutes", "timezone": "Asia/Kolkata"}, "id": "ignored", "oauth_token_set": false,
	}})
	if m := r.json(t); m["oauth_token_hint"] != "****3456" || m["config"].(map[string]any)["format"] != "json" || m["sync_schedule"].(map[string]any)["at"] != nil {
		t.Errorf("PUT: %s", r.body)
	}
	call(contractCall{as: &admin, method: "PUT", path: path, want: 422, code: "VALIDATION_ERROR", docSkip: true, body: map[string]any{
		"provider": "jira", "name": "Finance feed", "config": map[string]any{"instance_url": feed.URL}}})
	// 200 PATCH: config keys merge, a null removes one.
	r = call(contractCall{as: &admin, method: "PATCH", path: path, want: 200, body: map[string]any{"config": map[string]any{"format": nil, "since_param": "since"}}})
	if c := r.json(t)["config"].(map[string]any); c["format"] != "auto" || c["since_param"] != "since" || c["instance_url"] != feed.URL {
		t.Errorf("PATCH merge: %s", r.body)
	}
	call(contractCall{as: &admin, method: "PATCH", path: path, want: 409, code: "ALREADY_EXISTS", body: map[string]any{"name": "jira"}})
	call(contractCall{as: &admin, method: "PATCH", path: path, want: 422, code: "VALIDATION_ERROR", body: map[string]any{"sync_schedule": map[string]any{"frequency": "daily", "timezone": "Local"}}, docSkip: true})

	// 202: a manual sync; a second one is a 409 naming the first; the history and the status URL show it.
	r = call(contractCall{as: &admin, method: "POST", path: path + "/sync", want: 202})
	sync := r.json(t)
	if sync["status"] != "queued" || sync["trigger"] != "manual" || r.header.Get("Location") != sync["status_url"] || sync["requested_by"] != admin.sub {
		t.Errorf("sync: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "POST", path: path + "/sync", want: 409, code: "CONFLICT"})
	if !strings.Contains(string(r.body), sync["id"].(string)) {
		t.Errorf("409 does not name the open sync: %s", r.body)
	}
	call(contractCall{as: &admin, method: "POST", path: "/v1/integrations/" + hub["id"].(string) + "/sync", want: 409, code: "CONFLICT"}) // paused
	call(contractCall{as: &admin, method: "POST", path: path + "/sync", body: `{}`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	h := call(contractCall{as: &admin, method: "GET", path: path + "/syncs", want: 200}).json(t)
	if d := h["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != sync["id"] {
		t.Errorf("history: %v", h)
	}
	call(contractCall{as: &admin, method: "GET", path: sync["status_url"].(string), want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/integrations/" + jira["id"].(string) + "/syncs/" + sync["id"].(string), want: 404, code: "NOT_FOUND"})

	// 409: at most 10 active integrations (2 active so far; 8 more, then the 11th).
	for i := range 8 {
		call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 201, body: map[string]any{
			"provider": "http_feed", "name": fmt.Sprintf("feed %d", i), "config": map[string]any{"instance_url": feed.URL}}})
	}
	call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 409, code: "CONFLICT", body: map[string]any{
		"provider": "http_feed", "name": "eleventh", "config": map[string]any{"instance_url": feed.URL}}})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/integrations/" + hub["id"].(string), want: 409, code: "CONFLICT", body: map[string]any{"state": "active"}})
	call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", want: 201, body: map[string]any{
		"provider": "http_feed", "name": "eleventh", "config": map[string]any{"instance_url": feed.URL}, "state": "paused"}})

	// 404: unknown ids and another tenant's integration.
	for _, c := range []contractCall{
		{as: &admin, method: "GET", path: missing}, {as: &admin, method: "PUT", path: missing, body: map[string]any{"name": "x", "config": map[string]any{}}},
		{as: &admin, method: "PATCH", path: missing, body: map[string]any{}}, {as: &admin, method: "DELETE", path: missing},
		{as: &admin, method: "GET", path: missing + "/syncs"}, {as: &admin, method: "POST", path: missing + "/sync"},
		{as: &admin, method: "GET", path: missing + "/syncs/" + uuid.NewString()},
		{as: &other, method: "GET", path: path}, {as: &other, method: "GET", path: sync["status_url"].(string)},
		{as: &other, method: "PATCH", path: path, body: map[string]any{"state": "paused"}}, {as: &other, method: "POST", path: path + "/sync"},
		{as: &other, method: "DELETE", path: path}, {as: &other, method: "GET", path: path + "/syncs"},
	} {
		c.want, c.code = 404, "NOT_FOUND"
		call(c)
	}

	// 400: query parameters.
	call(contractCall{as: &admin, method: "GET", path: "/v1/integrations?page_size=101", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: "/v1/integrations?state=broken", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: path + "/syncs?page=0", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: path + "?x=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "GET", path: sync["status_url"].(string) + "?x=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: "/v1/integrations", body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})

	ops := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/integrations", nil},
		{"POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "ops", "config": map[string]any{"instance_url": feed.URL}}},
		{"GET", path, nil},
		{"PUT", path, map[string]any{"name": "Finance feed", "config": map[string]any{"instance_url": feed.URL}}},
		{"PATCH", path, map[string]any{"name": "Finance feed"}},
		{"DELETE", path, nil},
		{"GET", path + "/syncs", nil},
		{"GET", sync["status_url"].(string), nil},
		{"POST", path + "/sync", nil},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &nobody, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
	}
	// 413, 415 on every operation with a body.
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range ops {
		if op.body == nil {
			continue
		}
		call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// 204: disconnected, the token erased in the database too; then 409 for changes and syncs.
	call(contractCall{as: &admin, method: "DELETE", path: path, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: path, want: 204})
	var sealed []byte
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT token_sealed FROM integrations WHERE id = $1", in["id"]).Scan(&sealed)
	}); err != nil || sealed != nil {
		t.Errorf("token after DELETE: %x (%v)", sealed, err)
	}
	call(contractCall{as: &admin, method: "PATCH", path: path, want: 409, code: "CONFLICT", body: map[string]any{"state": "active"}})
	call(contractCall{as: &admin, method: "PUT", path: path, want: 409, code: "CONFLICT", body: ops[3].body})
	if m := call(contractCall{as: &admin, method: "GET", path: path, want: 200}).json(t); m["state"] != "disconnected" || m["disconnected_at"] == nil {
		t.Errorf("after DELETE: %v", m)
	}

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.limitsAndOutage(t, ts, admin, "/v1/integrations", calls)

	for _, u := range cc.uncovered([]string{"integrations"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
