package api_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
)

func initiativeCount(t *testing.T, ts *testServer, c caller) int {
	t.Helper()
	r := ts.do(&c, "GET", "/v1/initiatives?page_size=100", nil)
	expect(t, r, 200)
	return len(r.json(t)["data"].([]any))
}

// Stripe's semantics: same key + same request → the first answer again; same
// key + different request → 422; bad key → 400; errors are not stored.
func TestIdempotencyKeyReplay(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	body := map[string]any{"name": "Idempotent launch", "description": "once"}

	first := ts.do(&admin, "POST", "/v1/initiatives", body, "Idempotency-Key", "create-launch-1")
	expect(t, first, 201)
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("a first answer is marked replayed")
	}
	// The same body with its keys in another order and other whitespace is the same request.
	again := ts.do(&admin, "POST", "/v1/initiatives", `{ "description": "once", "name": "Idempotent launch" }`, "Idempotency-Key", "create-launch-1")
	expect(t, again, 201)
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) ||
		again.header.Get("Location") != first.header.Get("Location") || again.header.Get("Content-Type") != first.header.Get("Content-Type") {
		t.Fatalf("not the first answer replayed:\n%v %s\n%v %s", first.header, first.body, again.header, again.body)
	}
	if again.header.Get("X-Request-ID") == first.header.Get("X-Request-ID") || again.header.Get("X-RateLimit-Remaining") == "" {
		t.Fatal("a replay must carry its own request id and rate-limit state")
	}
	if n := initiativeCount(t, ts, admin); n != 1 {
		t.Fatalf("%d initiatives after a retried create, want 1", n)
	}

	// Same key, different body (or path, or caller): 422, nothing created.
	r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Another"}, "Idempotency-Key", "create-launch-1")
	expect(t, r, 422, "VALIDATION_ERROR")
	if errs := r.json(t)["error"].(map[string]any)["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["field"] != "Idempotency-Key" {
		t.Fatalf("422 does not name the header: %s", r.body)
	}
	other := admin
	other.sub = "admin-2"
	expect(t, ts.do(&other, "POST", "/v1/initiatives", body, "Idempotency-Key", "create-launch-1"), 422, "VALIDATION_ERROR")
	if n := initiativeCount(t, ts, admin); n != 1 {
		t.Fatalf("%d initiatives after refused reuses, want 1", n)
	}

	// Keys: 1-255 printable ASCII.
	for _, bad := range []string{strings.Repeat("k", 256), "clé", "tab\tkey"} {
		expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Bad key"}, "Idempotency-Key", bad), 400, "INVALID_PARAMETER")
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Long key"}, "Idempotency-Key", strings.Repeat("k", 255)), 201)

	// An error answer changed nothing and is not stored: the retry runs again.
	invalid := map[string]any{"name": ""}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", invalid, "Idempotency-Key", "fix-me"), 422, "VALIDATION_ERROR")
	r = ts.do(&admin, "POST", "/v1/initiatives", invalid, "Idempotency-Key", "fix-me")
	expect(t, r, 422, "VALIDATION_ERROR")
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("an error answer was stored and replayed")
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Fixed"}, "Idempotency-Key", "fix-me"), 201)

	// Other methods ignore the header (PUT, PATCH and DELETE are idempotent by definition).
	id := first.json(t)["id"].(string)
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"description": "twice"}, "Idempotency-Key", "create-launch-1"), 200)

	// After 24 h the key is free again.
	if err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'create-launch-1'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "A day later"}, "Idempotency-Key", "create-launch-1"), 201)
}

// Keys are per tenant: the same key in another tenant is another request.
func TestIdempotencyKeyTenantIsolation(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	a := ts.admin()
	b := negotiatedTenant(t, ts, 100)
	r1 := ts.do(&a, "POST", "/v1/initiatives", map[string]any{"name": "Shared key"}, "Idempotency-Key", "k1")
	r2 := ts.do(&b, "POST", "/v1/initiatives", map[string]any{"name": "Shared key"}, "Idempotency-Key", "k1")
	expect(t, r1, 201)
	expect(t, r2, 201)
	if r2.header.Get("Idempotent-Replayed") != "" || r1.json(t)["id"] == r2.json(t)["id"] {
		t.Fatal("another tenant's answer was replayed")
	}
	// B's different body under the same key is B's business only.
	expect(t, ts.do(&b, "POST", "/v1/initiatives", map[string]any{"name": "Other"}, "Idempotency-Key", "k1"), 422)
	expect(t, ts.do(&a, "POST", "/v1/initiatives", map[string]any{"name": "Shared key"}, "Idempotency-Key", "k1"), 201)
}

// A duplicate that arrives while the first request is in flight gets 409.
func TestIdempotencyKeyInFlight(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	body := map[string]any{"name": "Concurrent"}

	// Deterministic: another transaction holds the key's lock, as a running first request does.
	holder, err := db.BeginTenant(context.Background(), ts.pool, ts.tenant)
	if err != nil {
		t.Fatal(err)
	}
	var locked bool
	if err := holder.QueryRow(context.Background(), `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`,
		"idempotency/"+ts.tenant.String()+"/dup").Scan(&locked); err != nil || !locked {
		t.Fatalf("lock: %v %v", locked, err)
	}
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", body, "Idempotency-Key", "dup"), 409, "CONFLICT")
	_ = holder.Rollback(context.Background())
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", body, "Idempotency-Key", "dup"), 201)

	// Real concurrency: 8 identical requests at once create exactly one initiative;
	// each answer is the creation, its replay, or 409.
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	replayed := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Race"}, "Idempotency-Key", "race")
			statuses[i], replayed[i] = r.status, r.header.Get("Idempotent-Replayed") == "true"
		})
	}
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch {
		case s == 201 && !replayed[i]:
			created++
		case s == 201 || s == 409:
		default:
			t.Fatalf("unexpected status %d", s)
		}
	}
	if created != 1 {
		t.Fatalf("%d requests created, want exactly 1 (statuses %v)", created, statuses)
	}
	if c := initiativeCount(t, ts, admin); c != 2 {
		t.Fatalf("%d initiatives, want 2", c)
	}
}

// A trigger that commits before it answers (the webhook test event waits on
// the receiver after its write): a retry with the key replays the outcome and
// the receiver is called once.
func TestIdempotencyKeyCommittedEarly(t *testing.T) {
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 500)
	hookID := ts.createWebhook(admin, rc.URL, "initiative.created")["id"].(string)

	first := ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/test", nil, "Idempotency-Key", "ping-1")
	expect(t, first, 200)
	if first.json(t)["outcome"] != "failed" {
		t.Fatalf("test event: %s", first.body)
	}
	rc.SetStatus(200)
	again := ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/test", nil, "Idempotency-Key", "ping-1")
	expect(t, again, 200)
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("not replayed: %v %s", again.header, again.body)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Fatalf("receiver called %d times, want 1", n)
	}
	// Without a key, the trigger runs each time.
	expect(t, ts.do(&admin, "POST", "/v1/webhooks/"+hookID+"/test", nil), 200)
	if n := len(rc.Requests()); n != 2 {
		t.Fatalf("receiver called %d times, want 2", n)
	}
}
