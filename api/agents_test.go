package api_test

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
)

// blackHoleTemporal is a Temporal address that accepts connections and never answers (a
// frontend that hangs): calls wait until their deadline.
func blackHoleTemporal(t *testing.T) client.Client {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	c, err := client.NewLazyClient(client.Options{HostPort: ln.Addr().String(), Namespace: "default", Logger: nil})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestContractAgents drives every operation of the workflow view through its statuses on a
// real database and the tests' Temporal dev server, and checks each answer against
// openapi.yaml: 202 starts by name (idempotent), 200 list and detail (by permission per
// kind), 202 and 409 cancel, 400/401/403/404/422 refusals, 503 with Retry-After when Temporal
// hangs, 429 over the plan limit, and the coverage of every documented status.
func TestContractAgents(t *testing.T) {
	ts := newAgentsStack(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"business_cases:read"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{"stakeholders:read"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	const base = "/api/v1/agents/workflows"

	initID := ts.createInitiative(admin, map[string]any{"name": "Agents contract"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Board pack"))
	expect(t, r, 201)
	caseID := r.json(t)["id"].(string)
	feed := providertest.NewFeed(t, providertest.Options{Records: 2})
	r = ts.do(&admin, "POST", "/v1/integrations", map[string]any{
		"provider": "http_feed", "name": "Contract feed", "config": map[string]any{"instance_url": feed.URL, "oauth_token": providertest.DefaultToken},
	})
	expect(t, r, 201)
	integrationID := r.json(t)["id"].(string)
	exportInput := map[string]any{"business_case_id": caseID, "format": "pdf"}

	// --- POST: 202, idempotent; 401, 403, 404, 409, 422, 400 ---
	key := uuid.NewString()
	r = call(contractCall{as: &reader, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": exportInput}, headers: []string{"Idempotency-Key", key}, want: 202})
	exp := r.json(t)
	if exp["kind"] != "export" || exp["status"] != "queued" || r.header.Get("Location") != exp["url"] ||
		!strings.HasPrefix(exp["resource_url"].(string), "/v1/business-cases/"+caseID+"/exports/") {
		t.Errorf("export start: %s", r.body)
	}
	r = call(contractCall{as: &reader, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": exportInput}, headers: []string{"Idempotency-Key", key}, want: 202})
	if r.header.Get("Idempotent-Replayed") != "true" || r.json(t)["id"] != exp["id"] {
		t.Errorf("replay: %s %v", r.body, r.header)
	}
	r = call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "integration_sync", "input": map[string]any{"integration_id": integrationID}}, want: 202})
	sync := r.json(t)
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "integration_sync", "input": map[string]any{"integration_id": integrationID}}, want: 409, code: "CONFLICT"})
	r = call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "rm -rf"}, want: 422, code: "VALIDATION_ERROR"})
	if !strings.Contains(string(r.body), "integration_sync, business_case_export, webhook_redelivery") || strings.Contains(string(r.body), "rm -rf") {
		t.Errorf("unknown name: %s", r.body)
	}
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": map[string]any{"business_case_id": caseID}}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": map[string]any{"business_case_id": caseID, "format": "pdf", "colour": "red"}}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": "pdf"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": map[string]any{"business_case_id": uuid.NewString(), "format": "pdf"}}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": exportInput}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "POST", path: base, body: map[string]any{"name": "webhook_redelivery", "input": map[string]any{"webhook_id": uuid.NewString(), "delivery_id": uuid.NewString()}}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &reader, method: "POST", path: base, body: map[string]any{"name": "integration_sync", "input": map[string]any{"integration_id": integrationID}}, want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: nil, method: "POST", path: base, body: map[string]any{"name": "integration_sync"}, want: 401, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: base, body: "{", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: base, body: "<xml/>", headers: []string{"Content-Type", "application/xml"}, want: 415, docSkip: true})
	call(contractCall{as: &admin, method: "POST", path: base, body: `{"name":"` + strings.Repeat("x", api.MaxBodyBytes) + `"}`, want: 413, network: true, code: "INVALID_PARAMETER", docSkip: true})

	// --- GET list and detail: the relay starts the runs (no worker: they stay running) ---
	stopRelay := runRelayOnly(t, ts)
	testenv.Eventually(t, 30*time.Second, "both runs listed", func() bool {
		l := listRunIDs(t, ts, admin, "status=running")
		return l[exp["id"].(string)] != nil && l[sync["id"].(string)] != nil
	})
	stopRelay()
	r = call(contractCall{as: &reader, method: "GET", path: base + "?page_size=1", want: 200})
	l := r.json(t)
	if d := l["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != exp["id"] {
		t.Errorf("a business_cases:read caller sees only exports: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "GET", path: base + "?page_size=1&status=running", want: 200})
	next, _ := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	if next == "" {
		t.Fatalf("page 1 of 2 has no next_cursor: %s", r.body)
	}
	first := r.json(t)["data"].([]any)[0].(map[string]any)["id"]
	r = call(contractCall{as: &admin, method: "GET", path: base + "?page_size=1&status=running&cursor=" + url.QueryEscape(next), want: 200})
	if second := r.json(t)["data"].([]any); len(second) != 1 || second[0].(map[string]any)["id"] == first {
		t.Errorf("page 2: %s", r.body)
	}
	call(contractCall{as: &admin, method: "GET", path: base + "?page_size=1&status=completed&cursor=" + url.QueryEscape(next), want: 400, code: "INVALID_PARAMETER"})
	call(contractCall{as: &admin, method: "GET", path: base + "?cursor=bm90LWEtY3Vyc29y", want: 400, code: "INVALID_PARAMETER"})
	call(contractCall{as: &admin, method: "GET", path: base + "?kind=everything", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "GET", path: base + "?started_after=yesterday", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: base + "?object_id=42", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	call(contractCall{as: &reader, method: "GET", path: base + "?kind=integration_sync", want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &nobody, method: "GET", path: base, want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: nil, method: "GET", path: base, want: 401, code: "AUTHORIZATION_ERROR"})
	if l := listRunIDs(t, ts, other, ""); len(l) != 0 {
		t.Errorf("another tenant lists %v", l)
	}

	r = call(contractCall{as: &reader, method: "GET", path: exp["url"].(string), want: 200})
	if d := r.json(t); d["id"] != exp["id"] || d["workflow_type"] != "BusinessCaseExportWorkflow" || d["status"] != "running" {
		t.Errorf("detail: %s", r.body)
	}
	call(contractCall{as: &reader, method: "GET", path: sync["url"].(string), want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &other, method: "GET", path: exp["url"].(string), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: base + "/" + url.PathEscape("business-case-export/"+ts.tenant.String()+"/nope"), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: base + "/" + strings.Repeat("x", 500), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: exp["url"].(string) + "?verbose=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: nil, method: "GET", path: exp["url"].(string), want: 401})
	call(contractCall{as: &nobody, method: "GET", path: exp["url"].(string), want: 403})

	// --- cancel: 202 by a reader (who may start exports); 403 for a sync; 404; 409 once ended ---
	call(contractCall{as: &other, method: "POST", path: exp["url"].(string) + "/cancel", want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &reader, method: "POST", path: sync["url"].(string) + "/cancel", want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: nil, method: "POST", path: sync["url"].(string) + "/cancel", want: 401})
	call(contractCall{as: &admin, method: "POST", path: sync["url"].(string) + "/cancel", body: map[string]any{"why": "stuck"}, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	r = call(contractCall{as: &reader, method: "POST", path: exp["url"].(string) + "/cancel", headers: []string{"Idempotency-Key", uuid.NewString()}, want: 202})
	if got := r.json(t); got["cancel_requested"] != true || got["id"] != exp["id"] {
		t.Errorf("cancel: %s", r.body)
	}
	// An operator terminates the sync in the Temporal UI: it is listed terminated, with why,
	// and canceling it is a 409.
	if err := testenv.TemporalClient(t).TerminateWorkflow(context.Background(), sync["id"].(string), "", "stuck on a provider outage"); err != nil {
		t.Fatal(err)
	}
	r = call(contractCall{as: &admin, method: "GET", path: base + "?status=terminated", want: 200})
	if d := r.json(t)["data"].([]any); len(d) != 1 || !strings.Contains(d[0].(map[string]any)["last_failure"].(string), "stuck on a provider outage") {
		t.Errorf("terminated: %s", r.body)
	}
	call(contractCall{as: &admin, method: "POST", path: sync["url"].(string) + "/cancel", want: 409, code: "CONFLICT"})

	// --- 503 with Retry-After when Temporal does not answer in time ---
	hung := newTestServer(t, "enterprise_plus", func(d *api.Deps) {
		d.Temporal = blackHoleTemporal(t)
		d.Config.WorkflowsTimeout = 300 * time.Millisecond
	})
	hungAdmin := hung.admin()
	hungCC := cc.on(hung)
	for _, c := range []contractCall{
		{method: "GET", path: base},
		{method: "GET", path: exp["url"].(string)},
		{method: "POST", path: exp["url"].(string) + "/cancel"},
	} {
		c.as, c.want, c.code = &hungAdmin, 503, "SERVICE_UNAVAILABLE"
		start := time.Now()
		r := hungCC.call(t, c)
		if r.header.Get("Retry-After") == "" || time.Since(start) > 5*time.Second {
			t.Errorf("%s %s: 503 without Retry-After or after %s", c.method, c.path, time.Since(start))
		}
	}

	// --- the public health paths ---
	r = call(contractCall{method: "GET", path: "/api/v1/health", want: 200})
	if h := r.json(t); h["checks"].(map[string]any)["temporal"].(map[string]any)["status"] != "up" {
		t.Errorf("/api/v1/health: %s", r.body)
	}
	r = hungCC.call(t, contractCall{method: "GET", path: "/api/v1/ingestion/health", want: 503}) // Temporal does not answer
	if h := r.json(t); h["status"] != "down" || h["checks"].(map[string]any)["temporal"].(map[string]any)["status"] != "down" {
		t.Errorf("/api/v1/ingestion/health with Temporal hanging: %s", r.body)
	}
	call(contractCall{method: "GET", path: "/api/v1/ingestion/health", headers: []string{"X-Padding", strings.Repeat("h", 17<<10)}, want: 431, code: "INVALID_PARAMETER", network: true})
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	stopWorker := runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
	testenv.Eventually(t, 30*time.Second, "the ingestion health with workers polling", func() bool {
		return ts.do(nil, "GET", "/api/v1/ingestion/health", nil).status == 200
	})
	call(contractCall{method: "GET", path: "/api/v1/ingestion/health", want: 200})
	stopWorker()

	// --- 429 over the plan limit, then 503 with the database gone ---
	cc.limitsAndOutage(t, ts, admin, base, []contractCall{
		{method: "GET", path: base},
		{method: "POST", path: base, body: map[string]any{"name": "business_case_export", "input": exportInput}},
		{method: "GET", path: exp["url"].(string)},
		{method: "POST", path: exp["url"].(string) + "/cancel"},
	})
	if missing := cc.uncovered([]string{"workflows", "ingestion"}, 500); len(missing) > 0 {
		t.Errorf("statuses never seen: %v", missing)
	}
}

// GET /v1/integrations/{id} asks Temporal for its schedule's state (schedule_state). With
// Temporal hanging (WORKFLOWS_TIMEOUT 3 s) or refusing connections it still answers 200 with
// the integration, schedule_state says "unknown", and the answer comes within the schedule
// state's own budget, not the workflow view's deadline.
func TestIntegrationScheduleStateWhenTemporalIsDown(t *testing.T) {
	refusing := func(t *testing.T) client.Client {
		c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	for name, temporal := range map[string]func(*testing.T) client.Client{"hanging": blackHoleTemporal, "refusing": refusing} {
		t.Run(name, func(t *testing.T) {
			const workflowsTimeout = 3 * time.Second
			ts := newTestServer(t, "enterprise_plus", func(d *api.Deps) {
				d.Temporal = temporal(t)
				d.Config.WorkflowsTimeout = workflowsTimeout
				d.Config.OutboundAllowPrivateNetworks = true
			})
			admin := ts.admin()
			feed := providertest.NewFeed(t, providertest.Options{Records: 1})
			r := ts.do(&admin, "POST", "/v1/integrations", map[string]any{
				"provider": "http_feed", "name": "Feed during an outage", "config": map[string]any{"instance_url": feed.URL, "oauth_token": providertest.DefaultToken},
				"sync_schedule": map[string]any{"frequency": "daily", "at": "02:00", "timezone": "UTC"},
			})
			expect(t, r, 201)
			id := r.json(t)["id"].(string)
			start := time.Now()
			r = ts.do(&admin, "GET", "/v1/integrations/"+id, nil)
			took := time.Since(start)
			expect(t, r, 200)
			in := r.json(t)
			if in["id"] != id || in["state"] != "active" || in["next_sync_at"] == nil {
				t.Errorf("the integration itself: %s", r.body)
			}
			if st, _ := in["schedule_state"].(map[string]any); st["status"] != "unknown" || st["paused_by"] != nil {
				t.Errorf("schedule_state with Temporal %s: %s", name, r.body)
			}
			if took >= workflowsTimeout {
				t.Errorf("answered after %s: waited the workflow view's deadline, not the schedule state's budget (%s)", took, runs.ScheduleStateBudget)
			}
		})
	}
}
