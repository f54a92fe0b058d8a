package api_test

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/testenv"
)

// withRedis makes the server count its limits in the Redis at url.
func withRedis(t *testing.T, url string) func(*api.Deps) {
	return func(d *api.Deps) {
		r, err := ratelimit.NewRedis(url, testenv.QuietLogger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		d.Limits, d.Concurrency = r, r
	}
}

// secondInstance is another API process on the same database (and, through
// mod, the same Redis): same signing keys, own in-process state.
func secondInstance(t *testing.T, ts *testServer, mod ...func(*api.Deps)) *testServer {
	t.Helper()
	verifier, err := auth.NewVerifier(t.Context(), ts.keys, auth.VerifierOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deps := ts.srv.Deps
	deps.Verifier = verifier
	deps.Registry = nil
	deps.Webhooks = nil
	deps.Limits, deps.Concurrency = ratelimit.NewMemory(nil), ratelimit.NewMemoryConcurrency()
	for _, m := range mod {
		m(&deps)
	}
	return &testServer{t: t, srv: api.New(deps), pool: ts.pool, keys: ts.keys, tenant: ts.tenant}
}

// negotiatedTenant is an enterprise_plus tenant with a tiny negotiated limit:
// 1 request per minute sustained, a burst of `burst`.
func negotiatedTenant(t *testing.T, ts *testServer, burst int32) caller {
	t.Helper()
	return negotiatedTenantConc(t, ts, 1, burst, 5)
}

func negotiatedTenantConc(t *testing.T, ts *testServer, rpm, burst, conc int32) caller {
	t.Helper()
	tn, err := db.Q.TenantCreate(context.Background(), ts.pool, dbsqlc.TenantCreateParams{
		Name: "Negotiated", Plan: "enterprise_plus", RequestsPerMinute: &rpm, Burst: &burst, MaxConcurrent: &conc})
	if err != nil {
		t.Fatal(err)
	}
	c := ts.admin()
	c.tenant = tn.ID
	return c
}

// Two API servers on one Redis: the tenant's burst is exact across them;
// Redis killed: both still answer and /health says degraded.
func TestScaleOutSharedBurstAndRedisOutage(t *testing.T) {
	redis := testenv.StartRedis(t)
	a := newTestServer(t, "starter", withRedis(t, redis.URL()))
	b := secondInstance(t, a, withRedis(t, redis.URL()))
	const burst = 6
	c := negotiatedTenant(t, a, burst)

	for i := range burst {
		s := a
		if i%2 == 1 {
			s = b
		}
		r := s.do(&c, "GET", "/v1/initiatives", nil)
		expect(t, r, 200)
		if got := r.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(burst-1-i) {
			t.Fatalf("request %d: X-RateLimit-Remaining %s, want %d (one bucket across both servers)", i+1, got, burst-1-i)
		}
	}
	for _, s := range []*testServer{a, b} {
		r := s.do(&c, "GET", "/v1/initiatives", nil)
		expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
			t.Fatalf("Retry-After %q, want 1..60 s", r.header.Get("Retry-After"))
		}
	}
	for _, s := range []*testServer{a, b} {
		h := s.do(nil, "GET", "/health", nil)
		expect(t, h, 200)
		if m := h.json(t); m["status"] != "ok" || m["checks"].(map[string]any)["redis"].(map[string]any)["status"] != "up" {
			t.Fatalf("health with Redis up: %s", h.body)
		}
	}

	redis.Kill()
	for i, s := range []*testServer{a, b} {
		// Never refused because Redis is down: each process counts on its own.
		expect(t, s.do(&c, "GET", "/v1/initiatives", nil), 200)
		expect(t, s.do(&c, "POST", "/v1/initiatives", map[string]any{"name": "During the outage " + strconv.Itoa(i)}), 201)
		h := s.do(nil, "GET", "/health", nil)
		expect(t, h, 200)
		m := h.json(t)
		if m["status"] != "degraded" || m["checks"].(map[string]any)["redis"].(map[string]any)["status"] != "down" {
			t.Fatalf("health with Redis down: %s", h.body)
		}
	}
	// The in-process fallback still enforces the burst per process.
	for range burst {
		a.do(&c, "GET", "/v1/initiatives", nil)
	}
	expect(t, a.do(&c, "GET", "/v1/initiatives", nil), 429, "RATE_LIMIT_EXCEEDED")
}

// The concurrency cap is one set of leases across servers: a request in flight
// on A takes the tenant's only slot for B too, and gives it back when it ends.
func TestScaleOutSharedConcurrency(t *testing.T) {
	redis := testenv.StartRedis(t)
	a := newTestServer(t, "starter", allowPrivate, withRedis(t, redis.URL()))
	b := secondInstance(t, a, withRedis(t, redis.URL()))
	c := negotiatedTenantConc(t, a, 10000, 1000, 1)
	rc := newHookReceiver(t, 200)
	hookID := a.createWebhook(c, rc.URL, "initiative.created")["id"].(string)

	entered, release := make(chan struct{}), make(chan struct{})
	rc.SetHandler(func(w http.ResponseWriter, r *http.Request) bool {
		close(entered)
		<-release
		return false
	})
	done := make(chan response, 1)
	go func() { done <- a.do(&c, "POST", "/v1/webhooks/"+hookID+"/test", nil) }()
	<-entered // A's request holds the slot while the receiver waits
	r := b.do(&c, "GET", "/v1/initiatives", nil)
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("Retry-After") != "1" || !strings.Contains(string(r.body), "concurrent") {
		t.Fatalf("not the concurrency refusal: %v %s", r.header, r.body)
	}
	close(release)
	expect(t, <-done, 200)
	expect(t, b.do(&c, "GET", "/v1/initiatives", nil), 200) // the lease was given back
	expect(t, a.do(&c, "GET", "/v1/initiatives", nil), 200)
}

// X-Forwarded-For names the client only when the direct peer is a trusted proxy.
func TestTrustedProxies(t *testing.T) {
	remaining := func(ts *testServer, xff string) int {
		t.Helper()
		r := ts.do(nil, "GET", "/v1/initiatives", nil, "X-Forwarded-For", xff)
		expect(t, r, 401)
		n, err := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("no X-RateLimit-Remaining: %v", r.header)
		}
		return n
	}
	// app.Test's peer is 0.0.0.0: trusted here, not in the default config.
	trusting := newTestServer(t, "starter", func(d *api.Deps) {
		d.Config.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("10.0.0.0/8")}
	})
	first := remaining(trusting, "203.0.113.7")
	if got := remaining(trusting, "203.0.113.7"); got != first-1 {
		t.Fatalf("same client: remaining %d then %d", first, got)
	}
	if got := remaining(trusting, "198.51.100.9"); got != first {
		t.Fatalf("another client behind the proxy shares a bucket: %d", got)
	}
	// A client-written entry on the left is ignored; trusted hops on the right are skipped.
	if got := remaining(trusting, "198.51.100.9, 203.0.113.7, 10.1.2.3"); got != first-2 {
		t.Fatalf("forged left-most entry or trusted hop not handled: %d, want %d", got, first-2)
	}

	direct := newTestServer(t, "starter")
	first = remaining(direct, "203.0.113.7")
	if got := remaining(direct, "198.51.100.9"); got != first-1 {
		t.Fatalf("an untrusted peer's X-Forwarded-For was believed: %d", got)
	}
}
