package api_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
)

// syncedBuffer is a log sink shared by the API and the worker.
type syncedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// integrationStack is an API server (private outbound addresses allowed: the fakes listen on
// loopback) logging at debug level into logs, and a way to run workers on the dev server.
type integrationStack struct {
	*testServer
	logs *syncedBuffer
	log  *slog.Logger
}

func newIntegrationStack(t *testing.T) *integrationStack {
	logs := &syncedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := newTestServer(t, "enterprise_plus", func(d *api.Deps) {
		d.Config.OutboundAllowPrivateNetworks = true
		d.Log = log
	})
	return &integrationStack{testServer: ts, logs: logs, log: log}
}

// startWorker runs a worker (relay + Temporal workers) until the returned stop is called.
func (st *integrationStack) startWorker(t *testing.T) (stop func()) {
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	return runWorker(t, &worker.Worker{Config: cfg, Pool: st.pool, Temporal: testenv.TemporalClient(t), Log: st.log})
}

// waitSync polls a sync's status URL until it finished.
func (st *integrationStack) waitSync(t *testing.T, c caller, statusURL string, within time.Duration) map[string]any {
	t.Helper()
	var got map[string]any
	testenv.Eventually(t, within, "sync "+statusURL+" to finish", func() bool {
		got = st.do(&c, "GET", statusURL, nil).json(t)
		s := got["status"]
		return s == "succeeded" || s == "partial" || s == "failed"
	})
	return got
}

func counts(s map[string]any) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s["counts"].(map[string]any) {
		out[k] = v.(float64)
	}
	return out
}

// feedBenefits creates the benefits the fake feed's rows name (B-0 … B-<n-1>, external keys).
func feedBenefits(st *integrationStack, admin caller, n int) map[string]string {
	initID := st.createInitiative(admin, map[string]any{"name": "Finance feed " + uuid.NewString()[:8]})
	ids := map[string]string{}
	for i := range n {
		b := benefitBody(initID, fmt.Sprintf("Benefit %d", i))
		b["external_key"] = fmt.Sprintf("B-%d", i)
		b["expected_start_date"] = "2024-01-01"
		ids[b["external_key"].(string)] = st.createBenefit(admin, b)
	}
	return ids
}

// outboxTypes counts the tenant's outbox events by type.
func outboxTypes(t *testing.T, st *integrationStack) map[string]int {
	out := map[string]int{}
	err := db.InTenant(t.Context(), st.pool, st.tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(t.Context(), "SELECT type, count(*) FROM outbox_events GROUP BY type")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var typ string
			var n int
			if err := rows.Scan(&typ, &n); err != nil {
				return err
			}
			out[typ] = n
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIntegrationHTTPFeedEndToEnd: an http_feed integration (bearer token, JSON pages) synced
// on the dev server writes the feed's rows as benefit actuals with their evidence URLs and
// source integration/<id>; a bad row makes the sync partial with the row named; a second sync
// changes nothing; the feed refusing the token (401) puts the integration in error
// (needs_reauth) and a new token brings it back. Another tenant sees none of it, and the
// token appears in no response and no log line.
func TestIntegrationHTTPFeedEndToEnd(t *testing.T) {
	st := newIntegrationStack(t)
	admin := st.admin()
	const token = "feed-secret-token-7f3a9c2e51"
	feed := providertest.NewFeed(t, providertest.Options{Records: 36, PageSize: 10, Token: token, BadRows: []int{7}})
	keys := feedBenefits(st, admin, 3)

	var bodies []string
	call := func(c caller, method, path string, body any, status int) map[string]any {
		t.Helper()
		r := st.do(&c, method, path, body)
		expect(t, r, status)
		bodies = append(bodies, string(r.body))
		if status == 204 {
			return nil
		}
		return r.json(t)
	}
	in := call(admin, "POST", "/v1/integrations", map[string]any{
		"provider": "http_feed", "name": "Finance BI feed",
		"config":        map[string]any{"instance_url": feed.URL, "oauth_token": token},
		"sync_schedule": map[string]any{"frequency": "daily", "at": "02:00", "timezone": "Europe/Berlin"},
	}, 201)
	if in["oauth_token_set"] != true || in["oauth_token_hint"] != "****"+token[len(token)-4:] || in["state"] != "active" || in["next_sync_at"] == nil {
		t.Fatalf("created integration: %v", in)
	}
	if _, ok := in["config"].(map[string]any)["oauth_token"]; ok {
		t.Fatalf("config carries the token: %v", in["config"])
	}
	id := in["id"].(string)
	base := "/v1/integrations/" + id

	// Queued before any worker runs; a second trigger names the first.
	first := call(admin, "POST", base+"/sync", nil, 202)
	if first["status"] != "queued" || first["trigger"] != "manual" {
		t.Fatalf("queued sync: %v", first)
	}
	r := st.do(&admin, "POST", base+"/sync", nil)
	expect(t, r, 409, "CONFLICT")
	if !strings.Contains(string(r.body), first["id"].(string)) {
		t.Errorf("409 does not name the running sync: %s", r.body)
	}

	// Another tenant: 404 everywhere.
	other := contractTenant(t, st.testServer, "enterprise_plus")
	for _, p := range []string{base, base + "/syncs", first["status_url"].(string)} {
		expect(t, st.do(&other, "GET", p, nil), 404)
	}
	expect(t, st.do(&other, "POST", base+"/sync", nil), 404)
	expect(t, st.do(&other, "PATCH", base, map[string]any{"state": "paused"}), 404)
	expect(t, st.do(&other, "DELETE", base, nil), 404)
	if l := st.do(&other, "GET", "/v1/integrations", nil).json(t); len(l["data"].([]any)) != 0 {
		t.Errorf("another tenant lists %v", l["data"])
	}

	st.startWorker(t)
	done := st.waitSync(t, admin, first["status_url"].(string), 60*time.Second)
	c := counts(done)
	// 36 rows: row 7 is broken; 35 good rows of B-0..B-2, one per benefit and month of 2025.
	if done["status"] != "partial" || c["fetched"] != 36 || c["created"] != 35 || c["failed"] != 1 || c["updated"] != 0 || done["pages"] != float64(4) {
		t.Fatalf("first sync: %v", done)
	}
	errs := done["errors"].([]any)
	if len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]), "8") {
		t.Errorf("the broken row (row 8, 1-based) is not named: %v", errs)
	}
	// The actuals carry the feed's values, evidence URLs and the integration as source.
	acts := call(admin, "GET", "/v1/benefits/"+keys["B-1"]+"/actuals?page_size=50", nil, 200)["data"].([]any)
	if len(acts) != 12 {
		t.Fatalf("B-1 has %d actuals, want 12", len(acts))
	}
	for _, a := range acts {
		m := a.(map[string]any)
		month := 0
		if _, err := fmt.Sscanf(m["period"].(string), "2025-%d", &month); err != nil {
			t.Fatalf("actual %v: period: %v", m, err)
		}
		i := 12 + month - 1
		_, _, value, evidence := providertest.FeedRow(i)
		if fmt.Sprintf("%.2f", m["value"].(float64)) != value || m["source"] != "integration/"+id {
			t.Errorf("actual %v: want value %s, source integration/%s", m, value, id)
		}
		if (evidence == "" && m["evidence_url"] != nil) || (evidence != "" && m["evidence_url"] != evidence) {
			t.Errorf("actual %v: want evidence %q", m, evidence)
		}
	}

	// Again: nothing changes.
	again := call(admin, "POST", base+"/sync", nil, 202)
	done = st.waitSync(t, admin, again["status_url"].(string), 60*time.Second)
	if c := counts(done); c["created"] != 0 || c["updated"] != 0 || c["unchanged"] != 35 || c["failed"] != 1 {
		t.Fatalf("second sync: %v", done)
	}

	// The feed now refuses the token: the sync fails and the integration needs a new one.
	feed.SetToken("rotated-token-0000000000")
	refused := call(admin, "POST", base+"/sync", nil, 202)
	done = st.waitSync(t, admin, refused["status_url"].(string), 60*time.Second)
	if done["status"] != "failed" || !strings.Contains(fmt.Sprint(done["error"]), "needs_reauth") {
		t.Fatalf("sync after 401: %v", done)
	}
	got := call(admin, "GET", base, nil, 200)
	if got["state"] != "error" || got["last_error"] != "needs_reauth" || got["next_sync_at"] != nil {
		t.Fatalf("integration after 401: %v", got)
	}
	expect(t, st.do(&admin, "POST", base+"/sync", nil), 409, "CONFLICT")
	// PATCH without a token keeps the old one (and the error); a new token reactivates.
	got = call(admin, "PATCH", base, map[string]any{"name": "Finance BI feed (EU)"}, 200)
	if got["state"] != "error" || got["oauth_token_hint"] != in["oauth_token_hint"] {
		t.Fatalf("PATCH without token: %v", got)
	}
	got = call(admin, "PATCH", base, map[string]any{"config": map[string]any{"oauth_token": "rotated-token-0000000000"}}, 200)
	if got["state"] != "active" || got["last_error"] != nil || got["oauth_token_hint"] != "****0000" {
		t.Fatalf("PATCH with a new token: %v", got)
	}
	ok := call(admin, "POST", base+"/sync", nil, 202)
	if done = st.waitSync(t, admin, ok["status_url"].(string), 60*time.Second); done["status"] != "partial" {
		t.Fatalf("sync with the new token: %v", done)
	}
	hist := call(admin, "GET", base+"/syncs?page_size=2", nil, 200)
	if p := hist["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != float64(4) || len(hist["data"].([]any)) != 2 {
		t.Errorf("history: %v", hist["meta"])
	}

	// Disconnect: 204, token erased, no more syncs.
	call(admin, "DELETE", base, nil, 204)
	got = call(admin, "GET", base, nil, 200)
	if got["state"] != "disconnected" || got["oauth_token_set"] != false || got["oauth_token_hint"] != nil {
		t.Fatalf("disconnected: %v", got)
	}
	expect(t, st.do(&admin, "POST", base+"/sync", nil), 409)
	expect(t, st.do(&admin, "PUT", base, map[string]any{"name": "x", "config": map[string]any{"instance_url": feed.URL}}), 409)

	ev := outboxTypes(t, st)
	if ev["integration.sync_completed"] != 3 || ev["integration.sync_failed"] != 1 {
		t.Errorf("sync events: %v", ev)
	}
	for _, tok := range []string{token, "rotated-token-0000000000"} {
		for _, b := range bodies {
			if strings.Contains(b, tok) {
				t.Fatalf("a response carries the token: %s", b)
			}
		}
		if strings.Contains(st.logs.String(), tok) {
			t.Fatalf("the log carries the token")
		}
	}
	if !strings.Contains(st.logs.String(), "/v1/integrations") {
		t.Error("the logs captured nothing of the API (the token check would prove nothing)")
	}
}

// TestIntegrationSyncResumesAfterWorkerDies: a worker dies while fetching page k+1 of a
// 12-page feed; a new worker resumes from the last written page: pages 1..k are not fetched
// again, every row is written exactly once and the sync counts add up. Twice: a `valuecase
// worker` process killed with SIGKILL (the page's attempt is retried once its heartbeat times
// out), and an in-process worker stopped (the attempt fails on its cancelled context).
func TestIntegrationSyncResumesAfterWorkerDies(t *testing.T) {
	t.Run("process killed", func(t *testing.T) {
		syncThroughWorkerDeath(t, func(t *testing.T, st *integrationStack) func() {
			return startWorkerProcess(t, st.testServer, "OUTBOUND_ALLOW_PRIVATE_NETWORKS=true")
		})
	})
	t.Run("worker stopped", func(t *testing.T) {
		syncThroughWorkerDeath(t, func(t *testing.T, st *integrationStack) func() { return st.startWorker(t) })
	})
}

func syncThroughWorkerDeath(t *testing.T, start func(t *testing.T, st *integrationStack) (die func())) {
	st := newIntegrationStack(t)
	admin := st.admin()
	const records, pageSize, k = 240, 20, 5
	feed := providertest.NewFeed(t, providertest.Options{Records: records, PageSize: pageSize})
	feedBenefits(st, admin, records/12)

	// A gate in front of the feed: request k+1 hangs until released (the worker dies meanwhile).
	var served atomic.Int32
	release := make(chan struct{})
	seen := map[string]int{}
	var mu sync.Mutex
	target, _ := url.Parse(feed.URL)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.RawQuery]++
		mu.Unlock()
		if served.Add(1) == k+1 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		u := *target
		u.RawQuery = r.URL.RawQuery
		req, _ := http.NewRequestWithContext(r.Context(), "GET", u.String(), nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		// The fake's next links point at itself: keep them on the gate.
		body = bytes.ReplaceAll(body, []byte(target.Scheme+"://"+target.Host), []byte("http://"+r.Host))
		for k, v := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(gate.Close)
	feedURL := gate.URL + target.Path

	in := st.do(&admin, "POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Gated feed",
		"config": map[string]any{"instance_url": feedURL, "oauth_token": feed.Token()}})
	expect(t, in, 201)
	id := in.json(t)["id"].(string)
	r := st.do(&admin, "POST", "/v1/integrations/"+id+"/sync", nil)
	expect(t, r, 202)
	statusURL := r.json(t)["status_url"].(string)

	die := start(t, st)
	testenv.Eventually(t, 60*time.Second, "the fetch of page k+1 to hang", func() bool { return served.Load() >= k+1 })
	die() // the worker dies with page k+1 in flight
	mid := st.do(&admin, "GET", statusURL, nil).json(t)
	if mid["status"] != "running" || mid["pages"] != float64(k) || counts(mid)["created"] != k*pageSize {
		t.Fatalf("after the worker died: %v", mid)
	}
	close(release)

	st.startWorker(t)
	done := st.waitSync(t, admin, statusURL, 90*time.Second)
	c := counts(done)
	if done["status"] != "succeeded" || c["fetched"] != records || c["created"] != records || c["updated"] != 0 || c["unchanged"] != 0 || done["pages"] != float64(records/pageSize) {
		t.Fatalf("resumed sync: %v", done)
	}
	var rows int
	if err := db.InTenant(t.Context(), st.pool, st.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(t.Context(), "SELECT count(*) FROM benefit_actuals WHERE source = $1", "integration/"+id).Scan(&rows)
	}); err != nil {
		t.Fatal(err)
	}
	if rows != records {
		t.Errorf("%d actuals written, want %d", rows, records)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("feed requests by query: %v", seen)
	if seen[fmt.Sprintf("page=%d", k+1)] != 2 {
		t.Errorf("page %d fetched %d times, want twice (the dead worker's try and the resumed one)", k+1, seen[fmt.Sprintf("page=%d", k+1)])
	}
	for q, n := range seen {
		if n > 1 && served.Load() > 0 && !strings.Contains(q, fmt.Sprintf("page=%d", k+1)) && !(k == 0 && q == "") {
			t.Errorf("page %q fetched %d times: a written page was fetched again", q, n)
		}
	}
}

// TestIntegrationSyncRetriesRateLimits: the feed answers 429 with Retry-After: 1, then 503, on
// the second page; the sync waits and retries that page (not the first one again) and
// succeeds with every row written once.
func TestIntegrationSyncRetriesRateLimits(t *testing.T) {
	st := newIntegrationStack(t)
	admin := st.admin()
	feed := providertest.NewFeed(t, providertest.Options{Records: 24, PageSize: 10})
	feedBenefits(st, admin, 2)
	feed.Fail(providertest.Failure{Skip: 1, Count: 1, Status: 429, RetryAfter: "1"})
	feed.Fail(providertest.Failure{Skip: 0, Count: 1, Status: 503})
	r := st.do(&admin, "POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Throttled feed",
		"config": map[string]any{"instance_url": feed.URL, "oauth_token": feed.Token()}})
	expect(t, r, 201)
	id := r.json(t)["id"].(string)
	r = st.do(&admin, "POST", "/v1/integrations/"+id+"/sync", nil)
	expect(t, r, 202)
	start := time.Now() // before the worker can make its first request: the Retry-After wait is all after it
	st.startWorker(t)
	done := st.waitSync(t, admin, r.json(t)["status_url"].(string), 60*time.Second)
	if c := counts(done); done["status"] != "succeeded" || c["created"] != 24 || c["fetched"] != 24 || done["pages"] != float64(3) {
		t.Fatalf("throttled sync: %v", done)
	}
	if n := feed.Requests(); n != 5 { // 3 pages + the 429 + the 503
		t.Errorf("%d feed requests, want 5", n)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the sync finished in %s: Retry-After: 1 was not honoured", d)
	}
}
