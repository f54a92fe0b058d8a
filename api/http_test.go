package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/ratelimit"
)

func TestRequestIDIsEchoedOrGenerated(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	r := ts.do(&admin, "GET", "/v1/initiatives/nope", nil, "X-Request-ID", "client-abc-123")
	if r.header.Get("X-Request-ID") != "client-abc-123" || r.json(t)["error"].(map[string]any)["request_id"] != "client-abc-123" {
		t.Fatalf("client request id not echoed: %v %s", r.header, r.body)
	}
	r = ts.do(&admin, "GET", "/v1/initiatives/nope", nil)
	if id := r.header.Get("X-Request-ID"); len(id) < 16 || r.json(t)["error"].(map[string]any)["request_id"] != id {
		t.Fatalf("generated request id missing or not in the body: %q %s", id, r.body)
	}
	// Regression: any printable ASCII is echoed, as documented, space included.
	r = ts.do(&admin, "GET", "/v1/initiatives/nope", nil, "X-Request-ID", "a b")
	if r.header.Get("X-Request-ID") != "a b" || r.json(t)["error"].(map[string]any)["request_id"] != "a b" {
		t.Fatalf("a printable request id with a space was not echoed: %v %s", r.header, r.body)
	}
	// Control characters, non-ASCII and ids over 128 characters are replaced, not echoed.
	for _, bad := range []string{"a\tb", "caf\u00e9", strings.Repeat("x", 129)} {
		r = ts.do(&admin, "GET", "/v1/initiatives/nope", nil, "X-Request-ID", bad)
		if got := r.header.Get("X-Request-ID"); got == bad || len(got) < 16 {
			t.Fatalf("request id %q: answered %q", bad, got)
		}
	}
	r = ts.do(&admin, "GET", "/v1/initiatives/nope", nil, "X-Request-ID", strings.Repeat("x", 128))
	if r.header.Get("X-Request-ID") != strings.Repeat("x", 128) {
		t.Fatal("a 128-character request id was not echoed")
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	expect(t, ts.do(nil, "GET", "/nope", nil), 404, "NOT_FOUND")
	expect(t, ts.do(&admin, "GET", "/v1/nope", nil), 404, "NOT_FOUND")
	r := ts.do(&admin, "PATCH", "/v1/initiatives", map[string]any{})
	expect(t, r, 405, "NOT_FOUND")
	if r.header.Get("Allow") == "" {
		t.Fatal("405 without Allow")
	}
}

func TestBodyOver5MBIsRefused(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	// fasthttp refuses the body before any handler runs, so this needs a real listener.
	addr := ts.listen()
	// The server answers from the declared length, before reading the body,
	// as a client with Expect: 100-continue would see it.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/initiatives HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Tenant-ID: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		ts.token(admin), admin.tenant, api.MaxBodyBytes+1)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, header: res.Header, body: b}
	expect(t, r, 413, "INVALID_PARAMETER")
	if r.json(t)["error"].(map[string]any)["request_id"] == "" {
		t.Fatalf("413 without a request id: %s", b)
	}
	if r.header.Get("X-RateLimit-Limit") == "" {
		t.Fatalf("413 without rate-limit headers: %v", r.header)
	}
}

func TestWrongContentType(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", `name=x`, "Content-Type", "application/x-www-form-urlencoded"), 415, "INVALID_PARAMETER")
}

func TestPanicIsA500WithoutInternals(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	ts.srv.App().Get("/boom", func(*fiber.Ctx) error { panic("secret internal detail") })
	r := ts.do(nil, "GET", "/boom", nil)
	expect(t, r, 500, "INTERNAL_ERROR")
	if bytes.Contains(r.body, []byte("secret")) || bytes.Contains(r.body, []byte("goroutine")) {
		t.Fatalf("panic details leaked: %s", r.body)
	}
}

func TestCORSOnlyForAllowedOrigins(t *testing.T) {
	ts := newTestServer(t, "enterprise", func(d *api.Deps) { d.Config.CORSAllowedOrigins = []string{"https://app.example.com"} })
	r := ts.do(nil, "OPTIONS", "/v1/initiatives", nil, "Origin", "https://app.example.com", "Access-Control-Request-Method", "POST")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "X-Tenant-ID") {
		t.Fatalf("preflight for an allowed origin: %d %v", r.status, r.header)
	}
	r = ts.do(nil, "OPTIONS", "/v1/initiatives", nil, "Origin", "https://evil.example.com", "Access-Control-Request-Method", "POST")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS headers for a foreign origin: %v", r.header)
	}
	admin := ts.admin()
	r = ts.do(&admin, "GET", "/v1/initiatives", nil, "Origin", "https://evil.example.com")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("simple request from a foreign origin got CORS headers: %v", r.header)
	}
}

func TestRateLimitHeadersAndPlanLimits(t *testing.T) {
	ts := newTestServer(t, "starter") // 100/min, burst 20
	admin := ts.admin()
	var last response
	for i := range 20 {
		last = ts.do(&admin, "GET", "/v1/initiatives", nil)
		expect(t, last, 200)
		if got := last.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(19-i) {
			t.Fatalf("request %d: remaining %s, want %d", i+1, got, 19-i)
		}
	}
	if last.header.Get("X-RateLimit-Limit") != "100" {
		t.Fatalf("limit header = %s", last.header.Get("X-RateLimit-Limit"))
	}
	reset, _ := strconv.ParseInt(last.header.Get("X-RateLimit-Reset"), 10, 64)
	if now := time.Now().Unix(); reset <= now || reset > now+60 {
		t.Fatalf("X-RateLimit-Reset %d is not a near-future Unix time", reset)
	}
	r := ts.do(&admin, "GET", "/v1/initiatives", nil)
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra < 1 || r.header.Get("X-RateLimit-Retry-After") != r.header.Get("Retry-After") {
		t.Fatalf("429 Retry-After = %q, X-RateLimit-Retry-After = %q", r.header.Get("Retry-After"), r.header.Get("X-RateLimit-Retry-After"))
	}
	// Another tenant has its own allowance.
	other := admin
	other.tenant = dbtest.NewTenant(t, ts.pool, "starter")
	expect(t, ts.do(&other, "GET", "/v1/initiatives", nil), 200)
}

func TestPerEndpointLimitAndEnterprisePlus(t *testing.T) {
	ts := newTestServer(t, "enterprise") // 2000/min, but POST /v1/initiatives is 10/min
	admin := ts.admin()
	for i := range 10 {
		ts.createInitiative(admin, map[string]any{"name": "n" + strconv.Itoa(i)})
	}
	r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "eleventh"})
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("X-RateLimit-Limit") != "10" {
		t.Fatalf("headers should report the endpoint limit: %v", r.header)
	}
	expect(t, ts.do(&admin, "GET", "/v1/initiatives", nil), 200) // other routes unaffected

	// Enterprise Plus: the negotiated values replace the per-endpoint limits.
	plus := admin
	plus.tenant = dbtest.NewTenant(t, ts.pool, "enterprise_plus") // 10000/min burst 1000 in dbtest
	for i := range 12 {
		ts.createInitiative(plus, map[string]any{"name": "p" + strconv.Itoa(i)})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	conc := ratelimit.NewMemoryConcurrency()
	ts := newTestServer(t, "starter", func(d *api.Deps) { d.Concurrency = conc })
	admin := ts.admin()
	// Hold the tenant's 5 slots, then the next request is refused.
	var releases []func()
	for range 5 {
		rel, ok, _ := conc.Acquire(t.Context(), "tenant:"+ts.tenant.String(), 5)
		if !ok {
			t.Fatal("could not take a slot")
		}
		releases = append(releases, rel)
	}
	expect(t, ts.do(&admin, "GET", "/v1/initiatives", nil), 429, "RATE_LIMIT_EXCEEDED")
	for _, r := range releases {
		r()
	}
	expect(t, ts.do(&admin, "GET", "/v1/initiatives", nil), 200)
}

func TestHealthMetricsJWKS(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	r := ts.do(nil, "GET", "/health", nil)
	expect(t, r, 200)
	if r.json(t)["checks"].(map[string]any)["postgres"].(map[string]any)["status"] != "up" {
		t.Fatalf("health: %s", r.body)
	}
	admin := ts.admin()
	ts.do(&admin, "GET", "/v1/initiatives", nil)
	r = ts.do(nil, "GET", "/metrics", nil)
	expect(t, r, 200)
	if !bytes.Contains(r.body, []byte(`valuecase_http_requests_total{method="GET",route="/v1/initiatives",status="200"} 1`)) ||
		!bytes.Contains(r.body, []byte("valuecase_http_request_duration_seconds_bucket")) {
		t.Fatalf("metrics lack the request: %s", r.body)
	}
	r = ts.do(nil, "GET", "/.well-known/jwks.json", nil)
	expect(t, r, 200)
	if keys := r.json(t)["keys"].([]any); len(keys) != 1 || keys[0].(map[string]any)["alg"] != "EdDSA" {
		t.Fatalf("jwks: %s", r.body)
	}
}

// Metric labels must not alias Fiber's reused request buffers: after mixed
// traffic every scrape still succeeds and counts each route under its own method.
func TestMetricsSurviveMixedTraffic(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	addr := ts.listen()
	base := "http://" + addr
	send := func(method, path, body string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ts.token(admin))
		req.Header.Set("X-Tenant-ID", admin.tenant.String())
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	// Alternate methods on the same keep-alive connections (fasthttp reuses their buffers),
	// from a few clients at once.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				send("GET", "/v1/initiatives", "")
				send("POST", "/v1/initiatives", fmt.Sprintf(`{"name":"m%d-%d"}`, w, i))
			}
		}()
	}
	wg.Wait()
	for range 3 {
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("/metrics after mixed traffic: %d %s", res.StatusCode, b)
		}
		if !bytes.Contains(b, []byte(`valuecase_http_requests_total{method="POST",route="/v1/initiatives",status="201"} 20`)) ||
			!bytes.Contains(b, []byte(`valuecase_http_requests_total{method="GET",route="/v1/initiatives",status="200"} 20`)) {
			t.Fatalf("counts by method are wrong:\n%s", b)
		}
	}
}

func TestHealthIs503WhenPostgresIsDown(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	ts.pool.Close()
	r := ts.do(nil, "GET", "/health", nil)
	expect(t, r, 503)
	if r.json(t)["status"] != "down" {
		t.Fatalf("health: %s", r.body)
	}
}
