package api_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

// newAgentsStack is the API with a Temporal client (the workflow view reads visibility) on the
// tests' dev server, outbound calls to loopback allowed (the feed fake).
func newAgentsStack(t *testing.T, plan string) *testServer {
	return newTestServer(t, plan, func(d *api.Deps) {
		d.Config.OutboundAllowPrivateNetworks = true
		d.Temporal = testenv.TemporalClient(t)
	})
}

// runRelayOnly runs the outbox relay without Temporal workers: runs are started in Temporal
// and stay running (their first task waits for a worker), which makes "listed while
// running" deterministic.
func runRelayOnly(t *testing.T, ts *testServer) (stop func()) {
	w := &worker.Worker{Config: testConfig(t), Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Relay().Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			stop()
		}
	})
	return stop
}

// listRunIDs lists the caller's runs with query q and returns id → run.
func listRunIDs(t *testing.T, ts *testServer, c caller, q string) map[string]map[string]any {
	t.Helper()
	r := ts.do(&c, "GET", "/api/v1/agents/workflows?"+q, nil)
	expect(t, r, 200)
	out := map[string]map[string]any{}
	for _, d := range r.json(t)["data"].([]any) {
		m := d.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// TestAgentsWorkflowsEndToEnd: an export and a sync started through POST
// /api/v1/agents/workflows (through the outbox) are listed while running, with their steps;
// a second export is canceled (its row says canceled at once, its run ends canceled); with
// the real worker the others complete and their rows succeed. Another tenant sees none of
// it and cannot cancel it, whatever the id.
func TestAgentsWorkflowsEndToEnd(t *testing.T) {
	ts := newAgentsStack(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Workflows e2e"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Cloud migration"))
	expect(t, r, 201)
	caseID := r.json(t)["id"].(string)
	feed := providertest.NewFeed(t, providertest.Options{Records: 4, PageSize: 2}) // rows of benefit B-0, 2025-01..04
	b := benefitBody(initID, "Feed benefit")
	b["external_key"], b["expected_start_date"] = "B-0", "2024-01-01"
	ts.createBenefit(admin, b)
	r = ts.do(&admin, "POST", "/v1/integrations", map[string]any{
		"provider": "http_feed", "name": "Finance feed", "config": map[string]any{"instance_url": feed.URL, "oauth_token": providertest.DefaultToken},
	})
	expect(t, r, 201)
	integrationID := r.json(t)["id"].(string)

	start := func(body map[string]any) map[string]any {
		t.Helper()
		r := ts.do(&admin, "POST", "/api/v1/agents/workflows", body)
		expect(t, r, 202)
		got := r.json(t)
		if r.header.Get("Location") != got["url"] || got["url"] != "/api/v1/agents/workflows/"+url.PathEscape(got["id"].(string)) {
			t.Fatalf("started: %s (Location %s)", r.body, r.header.Get("Location"))
		}
		return got
	}
	stopRelay := runRelayOnly(t, ts)
	exp := start(map[string]any{"name": "business_case_export", "input": map[string]any{"business_case_id": caseID, "format": "pdf"}})
	sync := start(map[string]any{"name": "integration_sync", "input": map[string]any{"integration_id": integrationID}})
	doomed := start(map[string]any{"name": "business_case_export", "input": map[string]any{"business_case_id": caseID, "format": "docx"}})
	if !strings.HasPrefix(exp["id"].(string), "business-case-export/"+ts.tenant.String()+"/"+caseID+"/") || exp["kind"] != "export" ||
		exp["object"].(map[string]any)["url"] != "/v1/business-cases/"+caseID {
		t.Fatalf("export start: %v", exp)
	}

	// Listed while running (no worker yet: their first task waits).
	var running map[string]map[string]any
	testenv.Eventually(t, 30*time.Second, "the three runs to be listed running", func() bool {
		running = listRunIDs(t, ts, admin, "status=running&kind=export,integration_sync")
		return running[exp["id"].(string)] != nil && running[sync["id"].(string)] != nil && running[doomed["id"].(string)] != nil
	})
	e := running[exp["id"].(string)]
	if e["kind"] != "export" || e["status"] != "running" || !strings.Contains(e["summary"].(string), "PDF export of \"Cloud migration\"") ||
		e["resource_url"] != exp["resource_url"] || e["cancelable"] != true || e["closed_at"] != nil {
		t.Errorf("running export: %v", e)
	}
	s := running[sync["id"].(string)]
	if s["kind"] != "integration_sync" || s["object"].(map[string]any)["url"] != "/v1/integrations/"+integrationID || !strings.Contains(s["summary"].(string), "Finance feed") {
		t.Errorf("running sync: %v", s)
	}
	// Filters: by object, by kind.
	if byObject := listRunIDs(t, ts, admin, "object_type=integration&object_id="+integrationID); len(byObject) != 1 || byObject[sync["id"].(string)] == nil {
		t.Errorf("object filter: %v", byObject)
	}
	if onlySyncs := listRunIDs(t, ts, admin, "kind=integration_sync"); onlySyncs[exp["id"].(string)] != nil {
		t.Errorf("kind filter lists an export: %v", onlySyncs)
	}
	// The detail says what the run waits for.
	var detail map[string]any
	testenv.Eventually(t, 10*time.Second, "the sync's detail to show the wait on a worker", func() bool {
		r = ts.do(&admin, "GET", sync["url"].(string), nil)
		expect(t, r, 200)
		detail = r.json(t)
		return len(detail["steps"].([]any)) > 0
	})
	steps := detail["steps"].([]any)
	if len(steps) != 1 || steps[0].(map[string]any)["type"] != "workflow_task" || steps[0].(map[string]any)["status"] != "scheduled" ||
		!strings.Contains(steps[0].(map[string]any)["description"].(string), "Waits for a worker") || detail["task_queue"] != "integration-syncs" {
		t.Errorf("sync detail: %s", r.body)
	}

	// Another tenant: nothing listed, 404 for each run and its cancel, whatever the id.
	other := contractTenant(t, ts, "enterprise_plus")
	if l := listRunIDs(t, ts, other, ""); len(l) != 0 {
		t.Errorf("another tenant lists %v", l)
	}
	if l := listRunIDs(t, ts, other, "object_id="+caseID); len(l) != 0 {
		t.Errorf("another tenant lists by A's object %v", l)
	}
	for _, u := range []string{exp["url"].(string), sync["url"].(string)} {
		expect(t, ts.do(&other, "GET", u, nil), 404, "NOT_FOUND")
		expect(t, ts.do(&other, "POST", u+"/cancel", nil), 404, "NOT_FOUND")
	}
	// Even an id naming the other tenant in its tenant part (a run the other tenant does not own).
	forged := strings.Replace(exp["id"].(string), ts.tenant.String(), other.tenant.String(), 1)
	expect(t, ts.do(&other, "GET", "/api/v1/agents/workflows/"+url.PathEscape(forged), nil), 404)

	// Cancel the second export: its row says canceled at once.
	r = ts.do(&admin, "POST", doomed["url"].(string)+"/cancel", nil)
	expect(t, r, 202)
	if got := r.json(t); got["cancel_requested"] != true || got["id"] != doomed["id"] {
		t.Errorf("cancel: %s", r.body)
	}
	// The row is marked by the run itself when it stops (no worker yet: still queued).
	if row := ts.do(&admin, "GET", doomed["resource_url"].(string), nil).json(t); row["status"] != "queued" {
		t.Errorf("export row before its run stopped: %v", row)
	}

	// The cancel reaches Temporal before any worker runs the export (else the export could
	// finish first and keep its outcome, as it should).
	testenv.Eventually(t, 30*time.Second, "the relay to hand the cancel to Temporal", func() bool {
		var published bool
		err := db.InTenant(t.Context(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(t.Context(), "SELECT published_at IS NOT NULL FROM outbox_events WHERE type = $1", runs.EventCancelRequested).Scan(&published)
		})
		return err == nil && published
	})

	// The real worker: the others complete, the canceled run ends canceled.
	stopRelay()
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
	runStatus := func(u string) string { return ts.do(&admin, "GET", u, nil).json(t)["status"].(string) }
	var ended []string
	testenv.Eventually(t, 60*time.Second, "the runs to end (export, sync, canceled export: completed, completed, canceled)", func() bool {
		now := []string{runStatus(exp["url"].(string)), runStatus(sync["url"].(string)), runStatus(doomed["url"].(string))}
		if !slices.Equal(now, ended) {
			t.Logf("runs: %v", now)
		}
		ended = now
		return slices.Equal(ended, []string{"completed", "completed", "canceled"})
	})
	t.Logf("runs ended: %v", ended)
	if got := ts.do(&admin, "GET", exp["resource_url"].(string), nil).json(t); got["status"] != "succeeded" {
		t.Errorf("export row: %v", got)
	}
	if got := ts.do(&admin, "GET", sync["resource_url"].(string), nil).json(t); got["status"] != "succeeded" {
		t.Errorf("sync row: %v", got)
	}
	if got := ts.do(&admin, "GET", doomed["resource_url"].(string), nil).json(t); got["status"] != "canceled" || !strings.Contains(got["error"].(string), "canceled") {
		t.Errorf("canceled export row after the worker ran: %v", got)
	}
	closed := listRunIDs(t, ts, admin, "status=completed,canceled")
	if closed[exp["id"].(string)]["closed_at"] == nil || closed[doomed["id"].(string)]["status"] != "canceled" {
		t.Errorf("closed runs: %v", closed)
	}
	// The detail of a completed export names its steps in words.
	detail = ts.do(&admin, "GET", exp["url"].(string), nil).json(t)
	var names []string
	for _, st := range detail["steps"].([]any) {
		m := st.(map[string]any)
		names = append(names, m["name"].(string))
		if m["status"] != "completed" {
			t.Errorf("step of a completed export: %v", m)
		}
	}
	if !slices.Equal(names, []string{"ExportTakeSnapshot", "ExportRender"}) {
		t.Errorf("export steps: %v", names)
	}
	// Canceling an ended run is a 409.
	expect(t, ts.do(&admin, "POST", exp["url"].(string)+"/cancel", nil), 409, "CONFLICT")
}

// TestOperatorPauseOfAScheduleShows: an operator pauses an integration's schedule in the
// Temporal UI: GET /v1/integrations/{id} says so (paused by an operator, with the note) while
// the integration stays active; a change to the integration keeps the operator's pause;
// pausing and resuming the integration takes the schedule over again. The schedule carries the
// tenant, the integration and a summary.
func TestOperatorPauseOfAScheduleShows(t *testing.T) {
	ts := newAgentsStack(t, "enterprise_plus")
	admin := ts.admin()
	feed := providertest.NewFeed(t, providertest.Options{Records: 1})
	r := ts.do(&admin, "POST", "/v1/integrations", map[string]any{
		"provider": "http_feed", "name": "Nightly feed", "config": map[string]any{"instance_url": feed.URL, "oauth_token": providertest.DefaultToken},
		"sync_schedule": map[string]any{"frequency": "daily", "at": "02:00", "timezone": "Europe/Berlin"},
	})
	expect(t, r, 201)
	id := r.json(t)["id"].(string)
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	tc := testenv.TemporalClient(t)
	runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: tc, Log: testenv.QuietLogger()})
	state := func() map[string]any {
		got := ts.do(&admin, "GET", "/v1/integrations/"+id, nil)
		expect(t, got, 200)
		m := got.json(t)
		if m["schedule_state"] == nil {
			t.Fatalf("no schedule_state: %s", got.body)
		}
		return m
	}
	testenv.Eventually(t, 30*time.Second, "the schedule to be applied", func() bool { return state()["schedule_state"].(map[string]any)["status"] == "active" })

	handle := tc.ScheduleClient().GetHandle(context.Background(), "integration-sync/"+ts.tenant.String()+"/"+id)
	desc, err := handle.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sa := desc.TypedSearchAttributes; sa.Size() != 3 || desc.Memo == nil || desc.Memo.GetFields()["summary"] == nil {
		t.Errorf("schedule search attributes %v, memo %v", sa, desc.Memo)
	}
	// The operator pauses a schedule the service has finished applying: the create's outbox event
	// handled and no update for a second (the worker's start-up reconcile also applies it).
	testenv.Eventually(t, 30*time.Second, "the integration's schedule applies to finish", func() bool {
		if countRows(t, ts, ts.tenant, `SELECT count(*) FROM outbox_events WHERE published_at IS NULL`) > 0 {
			return false
		}
		before, err := handle.Describe(context.Background())
		if err != nil {
			return false
		}
		time.Sleep(time.Second)
		after, err := handle.Describe(context.Background())
		return err == nil && after.Info.LastUpdateAt.Equal(before.Info.LastUpdateAt)
	})
	if err := handle.Pause(context.Background(), client.SchedulePauseOptions{Note: "provider maintenance until Monday"}); err != nil {
		t.Fatal(err)
	}
	// Temporal applies a pause as a patch the schedule's own workflow takes in, so a describe
	// right after it may still show the schedule running.
	var got map[string]any
	testenv.Eventually(t, 30*time.Second, "the operator's pause to show", func() bool {
		got = state()
		return got["schedule_state"].(map[string]any)["status"] == "paused"
	})
	if s := got["schedule_state"].(map[string]any); s["paused_by"] != "operator" || s["note"] != "provider maintenance until Monday" || got["state"] != "active" {
		t.Fatalf("after the operator's pause: %v", got)
	}
	// A change to the integration re-applies its schedule: the operator's pause stays.
	expect(t, ts.do(&admin, "PATCH", "/v1/integrations/"+id, map[string]any{"name": "Nightly feed (EU)"}), 200)
	testenv.Eventually(t, 30*time.Second, "the renamed schedule", func() bool {
		d, err := handle.Describe(context.Background())
		return err == nil && strings.Contains(d.Schedule.Action.(*client.ScheduleWorkflowAction).StaticSummary, "(EU)")
	})
	if s := state()["schedule_state"].(map[string]any); s["status"] != "paused" || s["paused_by"] != "operator" {
		t.Fatalf("the change undid the operator's pause: %v", s)
	}
	// Pausing the integration takes the schedule over; resuming it resumes the schedule.
	expect(t, ts.do(&admin, "PATCH", "/v1/integrations/"+id, map[string]any{"state": "paused"}), 200)
	testenv.Eventually(t, 30*time.Second, "the integration's pause", func() bool { return state()["schedule_state"].(map[string]any)["paused_by"] == "integration" })
	expect(t, ts.do(&admin, "PATCH", "/v1/integrations/"+id, map[string]any{"state": "active"}), 200)
	testenv.Eventually(t, 30*time.Second, "the schedule resumed", func() bool { return state()["schedule_state"].(map[string]any)["status"] == "active" })
}

// TestAgentsCancelAStuckSync: a sync stuck on a provider that keeps answering 503 (the fetch
// activity retrying, the step says so with the provider's answer) is canceled over REST: the
// run ends canceled, the sync row says canceled, and the integration can sync again. The
// ingestion health, with the worker polling, reports the provider's last sync.
func TestAgentsCancelAStuckSync(t *testing.T) {
	ts := newAgentsStack(t, "enterprise_plus")
	admin := ts.admin()
	feed := providertest.NewFeed(t, providertest.Options{Records: 2})
	feed.Fail(providertest.Failure{Count: 1000, Status: 503, RetryAfter: "60"})
	r := ts.do(&admin, "POST", "/v1/integrations", map[string]any{
		"provider": "http_feed", "name": "Flaky feed", "config": map[string]any{"instance_url": feed.URL, "oauth_token": providertest.DefaultToken},
	})
	expect(t, r, 201)
	integrationID := r.json(t)["id"].(string)
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})

	r = ts.do(&admin, "POST", "/api/v1/agents/workflows", map[string]any{"name": "integration_sync", "input": map[string]any{"integration_id": integrationID}})
	expect(t, r, 202)
	sync := r.json(t)
	var fetch map[string]any
	testenv.Eventually(t, 30*time.Second, "the fetch step to be retrying", func() bool {
		got := ts.do(&admin, "GET", sync["url"].(string), nil)
		if got.status != 200 { // the relay has not started it yet
			return false
		}
		d := got.json(t)
		for _, s := range d["steps"].([]any) {
			if m := s.(map[string]any); m["name"] == "IntegrationSyncFetch" && m["status"] == "retrying" {
				fetch = m
				return d["last_failure"] != nil
			}
		}
		return false
	})
	if !strings.Contains(fetch["last_failure"].(string), "503") || fetch["next_attempt_at"] == nil || !strings.Contains(fetch["description"].(string), "next attempt at") {
		t.Errorf("retrying fetch: %v", fetch)
	}

	expect(t, ts.do(&admin, "POST", sync["url"].(string)+"/cancel", nil), 202)
	testenv.Eventually(t, 30*time.Second, "the sync run canceled and its row too", func() bool {
		run := ts.do(&admin, "GET", sync["url"].(string), nil).json(t)
		row := ts.do(&admin, "GET", sync["resource_url"].(string), nil).json(t)
		return run["status"] == "canceled" && row["status"] == "canceled"
	})
	// The one-open-sync slot is free again.
	expect(t, ts.do(&admin, "POST", "/v1/integrations/"+integrationID+"/sync", nil), 202)

	// The ingestion health sees the workers and the provider's last sync.
	r = ts.do(nil, "GET", "/api/v1/ingestion/health", nil)
	expect(t, r, 200)
	h := r.json(t)
	workers := h["checks"].(map[string]any)["sync_workers"].(map[string]any)
	if h["status"] != "ok" || workers["status"] != "up" || workers["activity_pollers"].(float64) < 1 {
		t.Errorf("ingestion health: %s", r.body)
	}
	var feedHealth map[string]any
	for _, p := range h["providers"].([]any) {
		if m := p.(map[string]any); m["provider"] == "http_feed" {
			feedHealth = m
		}
	}
	if feedHealth == nil || feedHealth["active_integrations"].(float64) < 1 || feedHealth["last_sync_status"] == nil {
		t.Errorf("http_feed health: %v", h["providers"])
	}
}

// TestAgentsRedeliverAWebhookEvent: a delivery redelivered through POST
// /api/v1/agents/workflows (name webhook_redelivery) is sent again by a run on the worker: the
// receiver gets the same event id twice, the delivery log shows the attempt (trigger
// redeliver), and the run is listed completed under the webhook.
func TestAgentsRedeliverAWebhookEvent(t *testing.T) {
	ts := newAgentsStack(t, "enterprise_plus")
	admin := ts.admin()
	const secret = "redelivery-secret-0123456789"
	rc := testenv.NewReceiver(t, secret, 200)
	r := ts.do(&admin, "POST", "/v1/webhooks", map[string]any{"url": rc.URL, "events": []string{"initiative.created"}, "secret": secret})
	expect(t, r, 201)
	hookID := r.json(t)["id"].(string)
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
	ts.createInitiative(admin, map[string]any{"name": "Redelivered"})
	testenv.Eventually(t, 30*time.Second, "the first delivery", func() bool { return len(rc.Requests()) == 1 })
	list := ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries", nil).json(t)["data"].([]any)
	deliveryID := list[0].(map[string]any)["id"].(string)

	r = ts.do(&admin, "POST", "/api/v1/agents/workflows", map[string]any{"name": "webhook_redelivery", "input": map[string]any{"webhook_id": hookID, "delivery_id": deliveryID}})
	expect(t, r, 202)
	run := r.json(t)
	if run["kind"] != "webhook_redelivery" || run["resource_url"] != "/v1/webhooks/"+hookID+"/deliveries/"+deliveryID {
		t.Errorf("redelivery start: %s", r.body)
	}
	testenv.Eventually(t, 30*time.Second, "the redelivery", func() bool { return len(rc.Requests()) == 2 })
	if got := rc.Requests(); got[0].EventID != got[1].EventID || rc.SignatureErrors() != 0 {
		t.Errorf("redelivered %v, signature errors %d", got, rc.SignatureErrors())
	}
	testenv.Eventually(t, 30*time.Second, "the run listed completed", func() bool {
		l := listRunIDs(t, ts, admin, "kind=webhook_redelivery&object_type=webhook&object_id="+hookID)
		return l[run["id"].(string)] != nil && l[run["id"].(string)]["status"] == "completed"
	})
	d := ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries/"+deliveryID, nil).json(t)
	attempts := d["attempts"].([]any)
	if len(attempts) != 2 || attempts[1].(map[string]any)["trigger"] != "redeliver" {
		t.Errorf("delivery log: %v", d)
	}

	// The relay hands the same event over again (at least once): the ended run is not started
	// again, so the receiver gets nothing more.
	var data []byte
	if err := db.InTenant(t.Context(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(t.Context(), "SELECT data FROM outbox_events WHERE type = $1", runs.EventRedeliveryRequested).Scan(&data)
	}); err != nil {
		t.Fatal(err)
	}
	h := &workflows.WebhookRedeliveryEvents{Temporal: testenv.TemporalClient(t)}
	if err := h.Handle(t.Context(), outbox.Event{TenantID: ts.tenant, Type: runs.EventRedeliveryRequested, Data: data}); err != nil {
		t.Fatalf("handling the event again: %v", err)
	}
	time.Sleep(2 * time.Second)
	if n := len(rc.Requests()); n != 2 {
		t.Errorf("the event handled again sent the delivery again: %d requests", n)
	}
}
