package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
)

const hookSecret = "subscriber-secret-0123456789"

// allowPrivate lets webhooks target httptest receivers (loopback), as OUTBOUND_ALLOW_PRIVATE_NETWORKS=true does.
func allowPrivate(d *api.Deps) { d.Config.OutboundAllowPrivateNetworks = true }

// newHookReceiver is a real receiver of deliveries signed with hookSecret.
func newHookReceiver(t *testing.T, status int) *testenv.Receiver {
	return testenv.NewReceiver(t, hookSecret, status)
}

func (ts *testServer) createWebhook(c caller, url string, events ...string) map[string]any {
	ts.t.Helper()
	r := ts.do(&c, "POST", "/v1/webhooks", map[string]any{"url": url, "events": events, "secret": hookSecret})
	expect(ts.t, r, 201)
	return r.json(ts.t)
}

func TestWebhookCRUD(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)

	r := ts.do(&admin, "POST", "/v1/webhooks", map[string]any{
		"url": rc.URL + "/hooks", "events": []string{"initiative.created", "initiative.created", "initiative.status_changed"}, "secret": hookSecret,
	})
	expect(t, r, 201)
	w := r.json(t)
	id := w["id"].(string)
	if strings.Contains(string(r.body), hookSecret) || w["secret_hint"] != "****6789" {
		t.Errorf("the secret leaked or the hint is wrong: %s", r.body)
	}
	if r.header.Get("Location") != "/v1/webhooks/"+id || w["active"] != true || w["last_delivery"] != nil {
		t.Errorf("create: %s %s", r.header.Get("Location"), r.body)
	}
	if ev := w["events"].([]any); len(ev) != 2 {
		t.Errorf("duplicates not dropped: %v", ev)
	}

	r = ts.do(&admin, "GET", "/v1/webhooks/"+id, nil)
	expect(t, r, 200)
	if strings.Contains(string(r.body), hookSecret) {
		t.Error("GET returned the secret")
	}
	// The secret is stored encrypted, not in clear.
	var sealed []byte
	if err := ts.pool.QueryRow(context.Background(), "SELECT set_config('app.tenant_id', $1, false)", ts.tenant.String()).Scan(new(string)); err != nil {
		t.Fatal(err)
	}
	_ = ts.pool.QueryRow(context.Background(), "SELECT secret_sealed FROM webhooks WHERE id = $1", id).Scan(&sealed)
	if len(sealed) == 0 || strings.Contains(string(sealed), hookSecret) {
		t.Errorf("secret stored in clear or not at all: %d bytes", len(sealed))
	}

	// Switch off, then re-enable through PUT.
	r = ts.do(&admin, "PATCH", "/v1/webhooks/"+id, map[string]any{"active": false})
	expect(t, r, 200)
	if m := r.json(t); m["active"] != false || m["disabled_at"] == nil || !strings.Contains(m["disabled_reason"].(string), "admin-1") {
		t.Errorf("switch off: %s", r.body)
	}
	r = ts.do(&admin, "PUT", "/v1/webhooks/"+id, map[string]any{"url": rc.URL + "/v2", "events": []string{"user.invited"}, "active": true})
	expect(t, r, 200)
	if m := r.json(t); m["active"] != true || m["disabled_at"] != nil || m["disabled_reason"] != nil || m["url"] != rc.URL+"/v2" || m["secret_hint"] != "****6789" {
		t.Errorf("re-enable: %s", r.body)
	}
	// PUT without active keeps the state; a new secret changes the hint.
	r = ts.do(&admin, "PUT", "/v1/webhooks/"+id, map[string]any{"url": rc.URL, "events": []string{"user.invited"}, "secret": "another-secret-abcdefgh"})
	expect(t, r, 200)
	if m := r.json(t); m["active"] != true || m["secret_hint"] != "****efgh" {
		t.Errorf("PUT: %s", r.body)
	}

	// Another tenant cannot see it.
	other := contractTenant(t, ts, "enterprise")
	expect(t, ts.do(&other, "GET", "/v1/webhooks/"+id, nil), 404, "NOT_FOUND")
	r = ts.do(&other, "GET", "/v1/webhooks", nil)
	expect(t, r, 200)
	if len(r.json(t)["data"].([]any)) != 0 {
		t.Error("another tenant's webhooks are listed")
	}

	expect(t, ts.do(&admin, "DELETE", "/v1/webhooks/"+id, nil), 204)
	expect(t, ts.do(&admin, "GET", "/v1/webhooks/"+id, nil), 404, "NOT_FOUND")
}

func TestWebhookValidation(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // private networks NOT allowed; no per-endpoint limit
	admin := ts.admin()
	ok := map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"initiative.created"}, "secret": hookSecret}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for name, c := range map[string]struct {
		body  map[string]any
		field string
		text  string
	}{
		"unknown event":     {with("events", []string{"initiative.created", "initiative.deleted"}), "events[1]", "is not a known event type"},
		"test event":        {with("events", []string{"webhook.test"}), "events[0]", "is not a known event type"},
		"empty events":      {with("events", []string{}), "events", "at least one"},
		"events not array":  {with("events", "initiative.created"), "events", "array"},
		"no events":         {with("events", nil), "events", "required"},
		"short secret":      {with("secret", "short"), "secret", "16 to 256"},
		"long secret":       {with("secret", strings.Repeat("s", 257)), "secret", "at most 256"},
		"no secret":         {with("secret", nil), "secret", "required"},
		"ftp url":           {with("url", "ftp://example.com/x"), "url", "http or https"},
		"relative url":      {with("url", "/hooks"), "url", "http or https"},
		"userinfo":          {with("url", "https://u:p@93.184.216.34/"), "url", "user information"},
		"long url":          {with("url", "https://93.184.216.34/"+strings.Repeat("a", 2048)), "url", "at most 2048"},
		"loopback":          {with("url", "http://127.0.0.1:8080/hook"), "url", "loopback address"},
		"localhost":         {with("url", "http://localhost/hook"), "url", "resolves to"},
		"metadata":          {with("url", "http://169.254.169.254/latest"), "url", "link-local"},
		"private":           {with("url", "http://10.1.2.3/"), "url", "private"},
		"ipv6 loopback":     {with("url", "http://[::1]/"), "url", "loopback"},
		"active not a bool": {with("active", "yes"), "active", "true or false"},
		"unknown field":     {with("colour", "red"), "colour", "not a field"},
	} {
		r := ts.do(&admin, "POST", "/v1/webhooks", c.body)
		if r.status != 422 {
			t.Errorf("%s: status %d %s", name, r.status, r.body)
			continue
		}
		var e struct {
			Error struct {
				Errors []struct{ Field, Message string }
			}
		}
		_ = json.Unmarshal(r.body, &e)
		found := false
		for _, fe := range e.Error.Errors {
			found = found || (fe.Field == c.field && strings.Contains(fe.Message, c.text))
		}
		if !found {
			t.Errorf("%s: want %s ~ %q, got %s", name, c.field, c.text, r.body)
		}
	}
	// The read-only fields of a GET body are accepted and ignored.
	r := ts.do(&admin, "POST", "/v1/webhooks", with("secret_hint", "****x"))
	expect(t, r, 201)

	// At most 20 per tenant.
	for range 19 {
		expect(t, ts.do(&admin, "POST", "/v1/webhooks", ok), 201)
	}
	expect(t, ts.do(&admin, "POST", "/v1/webhooks", ok), 409, "CONFLICT")

	// admin:config is required.
	reader := caller{sub: "r", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	expect(t, ts.do(&reader, "GET", "/v1/webhooks", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "POST", "/v1/webhooks/"+uuid.NewString()+"/test", nil), 403, "AUTHORIZATION_ERROR")
}

func TestWebhookCreateRateLimit(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	bad := map[string]any{"url": "ftp://x"}
	for i := range 20 {
		if r := ts.do(&admin, "POST", "/v1/webhooks", bad); r.status != 422 {
			t.Fatalf("request %d: %d", i+1, r.status)
		}
	}
	r := ts.do(&admin, "POST", "/v1/webhooks", bad)
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
}

// TestWebhookEndToEnd: an initiative created through the API reaches a
// subscribed receiver through the outbox relay, appears in the deliveries log
// and can be redelivered; /test answers with the attempt's outcome.
func TestWebhookEndToEnd(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	hook := ts.createWebhook(admin, rc.URL, "initiative.created")
	hookID := hook["id"].(string)
	ts.createInitiative(admin, map[string]any{"name": "Webhooks end to end"})

	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{ts.srv.Webhooks}, Log: testenv.QuietLogger()}
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rc.Requests()
	if len(got) != 1 || got[0].Type != "initiative.created" || rc.SignatureErrors() != 0 {
		t.Fatalf("receiver saw %+v (bad signatures %d)", got, rc.SignatureErrors())
	}
	eventID := got[0].EventID

	r := ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries", nil)
	expect(t, r, 200)
	var list struct {
		Data []struct {
			ID, EventID, EventType, Status string
			Attempts                       []struct {
				Attempt         int
				Trigger         string
				StatusCode      *int `json:"status_code"`
				ResponseSnippet string
			}
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 || list.Data[0].Status != "delivered" || len(list.Data[0].Attempts) != 1 || *list.Data[0].Attempts[0].StatusCode != 200 {
		t.Fatalf("deliveries: %s", r.body)
	}
	deliveryID := list.Data[0].ID
	if !strings.Contains(string(r.body), `"event_id":"`+eventID+`"`) || !strings.Contains(string(r.body), `"response_snippet":"ok from receiver"`) {
		t.Errorf("deliveries body: %s", r.body)
	}

	r = ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries?status=failed", nil)
	expect(t, r, 200)
	if strings.Contains(string(r.body), deliveryID) {
		t.Error("status filter ignored")
	}
	expect(t, ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries?status=nope", nil), 400, "INVALID_PARAMETER")
	expect(t, ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries?colour=red", nil), 400, "INVALID_PARAMETER")

	// Redeliver: same event id, one more attempt.
	r = ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/deliveries/"+deliveryID+"/redeliver", nil)
	expect(t, r, 200)
	res := r.json(t)
	if res["outcome"] != "delivered" || res["attempt"] != float64(2) || res["event_id"] != eventID || res["delivery_status"] != "delivered" {
		t.Errorf("redeliver: %s", r.body)
	}
	if got = rc.Requests(); len(got) != 2 || got[1].EventID != eventID {
		t.Errorf("redelivery: %+v", got)
	}
	expect(t, ts.do(&admin, "GET", "/v1/webhooks/"+hookID+"/deliveries/"+deliveryID, nil), 200)
	expect(t, ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/deliveries/"+uuid.NewString()+"/redeliver", nil), 404, "NOT_FOUND")

	// Test event: the outcome comes back in the response, 500 included.
	rc.SetStatus(500)
	r = ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/test", nil)
	expect(t, r, 200)
	res = r.json(t)
	if res["outcome"] != "failed" || res["status_code"] != float64(500) || res["event_type"] != "webhook.test" || res["error"] != "receiver answered 500" {
		t.Errorf("test: %s", r.body)
	}
	if got = rc.Requests(); got[len(got)-1].Type != "webhook.test" {
		t.Errorf("last request %+v", got[len(got)-1])
	}
	r = ts.do(&admin, "GET", "/v1/webhooks/"+hookID, nil)
	if m := r.json(t); m["active"] != true || m["last_delivery"].(map[string]any)["status"] != "failed" {
		t.Errorf("a failed test must not disable; last_delivery is the test: %s", r.body)
	}
	expect(t, ts.do(&admin, "POST", "/v1/webhooks/"+uuid.NewString()+"/test", nil), 404, "NOT_FOUND")
	expect(t, ts.do(&admin, "POST", "/v1/webhooks/not-an-id/test", nil), 404, "NOT_FOUND")
}

// TestWebhookTestDoesNotHoldAConnection: a receiver that hangs does not keep a
// database connection: other requests go on while /test waits.
func TestWebhookTestDoesNotHoldAConnection(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	hookID := ts.createWebhook(admin, hang.URL, "initiative.created")["id"].(string)

	max := int(ts.pool.Config().MaxConns)
	done := make(chan response, max)
	for range max {
		go func() { done <- ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/test", nil) }()
	}
	time.Sleep(300 * time.Millisecond) // all tests are waiting on the receiver now
	start := time.Now()
	r := ts.do(&admin, "GET", "/v1/webhooks", nil)
	if r.status != 200 || time.Since(start) > 2*time.Second {
		t.Errorf("with %d tests waiting, a list took %s: %d", max, time.Since(start), r.status)
	}
	release <- struct{}{}
	for range max - 1 {
		release <- struct{}{}
	}
	for range max {
		if r := <-done; r.status != 200 {
			t.Errorf("test: %d %s", r.status, r.body)
		}
	}
}

// TestContractWebhooks drives every webhook operation through its success and
// error statuses and validates each response against openapi.yaml.
func TestContractWebhooks(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate) // negotiated limits: no per-endpoint limit in the way
	cc := newContractClient(t, ts)
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	rc := newHookReceiver(t, 200)
	missing := uuid.NewString()
	big := `{"url":"` + strings.Repeat("a", 6<<20) + `"}`
	good := map[string]any{"url": rc.URL + "/hook", "events": []string{"initiative.created"}, "secret": hookSecret}

	r := cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/webhooks", body: good, want: 201})
	id := r.json(t)["id"].(string)
	hook := "/v1/webhooks/" + id
	cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/webhooks?page=1&page_size=10&active=true", want: 200})
	cc.call(t, contractCall{as: &admin, method: "GET", path: hook, want: 200})
	cc.call(t, contractCall{as: &admin, method: "PUT", path: hook, body: map[string]any{"url": rc.URL, "events": []string{"initiative.created", "user.invited"}, "active": true}, want: 200})
	cc.call(t, contractCall{as: &admin, method: "PATCH", path: hook, body: map[string]any{"secret": "another-secret-abcdefgh"}, want: 200})
	r = cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/test", want: 200})
	delivery := r.json(t)["delivery_id"].(string)
	cc.call(t, contractCall{as: &admin, method: "GET", path: hook + "/deliveries?status=delivered&event_type=webhook.test", want: 200})
	cc.call(t, contractCall{as: &admin, method: "GET", path: hook + "/deliveries/" + delivery, want: 200})
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/deliveries/" + delivery + "/redeliver", want: 200})

	// 400: bad query, missing X-Tenant-ID.
	cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/webhooks?active=maybe", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	cc.call(t, contractCall{as: &admin, method: "GET", path: hook + "/deliveries?status=lost", want: 400, code: "INVALID_PARAMETER", docRejects: true})
	cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/webhooks", body: `{"url":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	ops := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/webhooks", nil},
		{"POST", "/v1/webhooks", good},
		{"GET", hook, nil},
		{"PUT", hook, good},
		{"PATCH", hook, map[string]any{}},
		{"POST", hook + "/test", nil},
		{"GET", hook + "/deliveries", nil},
		{"GET", hook + "/deliveries/" + delivery, nil},
		{"POST", hook + "/deliveries/" + delivery + "/redeliver", nil},
		{"DELETE", hook, nil},
	}
	for _, op := range ops {
		cc.call(t, contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		cc.call(t, contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		cc.call(t, contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
	}
	// 404: unknown ids, any form.
	for _, p := range []string{"/v1/webhooks/" + missing, "/v1/webhooks/not-an-id"} {
		cc.call(t, contractCall{as: &admin, method: "GET", path: p, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "PUT", path: p, body: good, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "PATCH", path: p, body: map[string]any{}, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "DELETE", path: p, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "POST", path: p + "/test", want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "GET", path: p + "/deliveries", want: 404, code: "NOT_FOUND"})
	}
	cc.call(t, contractCall{as: &admin, method: "GET", path: hook + "/deliveries/" + missing, want: 404, code: "NOT_FOUND"})
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/deliveries/" + missing + "/redeliver", want: 404, code: "NOT_FOUND"})

	// 413, 415, 422.
	for _, op := range []struct{ method, path string }{{"POST", "/v1/webhooks"}, {"PUT", hook}, {"PATCH", hook}} {
		cc.call(t, contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		cc.call(t, contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
		cc.call(t, contractCall{as: &admin, method: op.method, path: op.path, body: map[string]any{"url": rc.URL, "events": []string{"initiative.deleted"}, "secret": hookSecret}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
		cc.call(t, contractCall{as: &admin, method: op.method, path: op.path, body: map[string]any{"url": rc.URL, "events": []string{"initiative.created"}, "secret": "short"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	}

	// Idempotency-Key on the triggers: replayed, 422 when reused for another request, 409 in flight.
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/test", headers: []string{"Idempotency-Key", "contract-test"}, want: 200})
	if r := cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/test", headers: []string{"Idempotency-Key", "contract-test"}, want: 200}); r.header.Get("Idempotent-Replayed") != "true" {
		t.Error("the retried test event was not replayed")
	}
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/deliveries/" + delivery + "/redeliver", headers: []string{"Idempotency-Key", "contract-test"}, want: 422, code: "VALIDATION_ERROR"})
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/deliveries/" + delivery + "/redeliver", headers: []string{"Idempotency-Key", "contract-redeliver"}, want: 200})
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/test", headers: []string{"Idempotency-Key", "contract-redeliver"}, want: 422, code: "VALIDATION_ERROR"})
	holder, err := db.BeginTenant(context.Background(), ts.pool, ts.tenant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(context.Background(), `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "idempotency/"+ts.tenant.String()+"/held"); err != nil {
		t.Fatal(err)
	}
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/test", headers: []string{"Idempotency-Key", "held"}, want: 409, code: "CONFLICT"})
	_ = holder.Rollback(context.Background())

	// 409: the 21st webhook; a redelivery while attempt 1 is in flight.
	for range 19 {
		cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/webhooks", body: good, want: 201})
	}
	cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/webhooks", body: good, want: 409, code: "CONFLICT"})
	var pending string
	if err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type) VALUES ($1, $2, gen_random_uuid(), 'initiative.created') RETURNING id", ts.tenant, id).Scan(&pending)
	}); err != nil {
		t.Fatal(err)
	}
	cc.call(t, contractCall{as: &admin, method: "POST", path: hook + "/deliveries/" + pending + "/redeliver", want: 409, code: "CONFLICT"})
	var conditional []contractCall // ETag: 304 and the 409 of a stale If-Match, while the hook exists
	for _, op := range ops {
		conditional = append(conditional, contractCall{method: op.method, path: op.path, body: op.body})
	}
	cc.preconditions(t, admin, conditional)
	cc.call(t, contractCall{as: &admin, method: "DELETE", path: hook, want: 204})

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.limitsAndOutage(t, ts, admin, "/v1/webhooks", calls)

	for _, u := range cc.uncovered([]string{"webhooks"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
