package api_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

var oauthApp = providertest.OAuth{ClientID: "3MVG9-e2e-client-0001", ClientSecret: "e2e-client-secret-7c1d", RefreshToken: "5Aep861-e2e-refresh-0001"}

// outboxData is the tenant's outbox event payloads of one type.
func outboxData(t *testing.T, st *integrationStack, typ string) []string {
	var out []string
	err := db.InTenant(t.Context(), st.pool, st.tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(t.Context(), "SELECT data::text FROM outbox_events WHERE type = $1 ORDER BY seq", typ)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// startLoggedWorker runs a worker whose Temporal client logs into the stack's log too (the SDK
// logs every activity failure there, as the production worker's client does).
func startLoggedWorker(t *testing.T, st *integrationStack) {
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	cfg.TemporalAddress, cfg.TemporalNamespace = testenv.TemporalAddress(t), "default"
	tc, err := worker.DialTemporal(cfg, st.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	runWorker(t, &worker.Worker{Config: cfg, Pool: st.pool, Temporal: tc, Log: st.log})
}

// noSecretIn fails when any of secrets appears in any of the texts.
func noSecretIn(t *testing.T, where string, texts []string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for _, x := range texts {
			if s != "" && strings.Contains(x, s) {
				t.Fatalf("%s carries the secret %q", where, s)
			}
		}
	}
}

// TestIntegrationScheduledSalesforceSyncOutlivesItsTokens: a Salesforce integration on OAuth
// credentials (access token, refresh token, client id and secret) whose fake org expires a
// session after 2 s or 2 calls and rotates its refresh token on every refresh. Its Temporal
// Schedule fires syncs on the real worker for longer than two token lifetimes: every sync
// succeeds, no 401 reaches the history, each refresh stores the rotated refresh token (the org
// refuses a reused one). Then the org's daily limit (REQUEST_LIMIT_EXCEEDED TotalRequests)
// ends a sync as rate_limited with the next firing as next_try_at and the watermark kept, and
// the schedule skips firings until then. No secret is returned, logged or put in an event.
func TestIntegrationScheduledSalesforceSyncOutlivesItsTokens(t *testing.T) {
	st := newIntegrationStack(t)
	admin := st.admin()
	o := oauthApp
	o.TTL, o.Calls, o.Rotate = 2*time.Second, 2, true
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 450, OAuth: &o})
	secrets := []string{sf.Token(), o.RefreshToken, o.ClientSecret}

	r := st.do(&admin, "POST", "/v1/integrations", map[string]any{
		"provider": "salesforce", "name": "Salesforce EMEA",
		"config": map[string]any{"instance_url": sf.URL, "page_size": 200, "oauth_token": sf.Token(),
			"refresh_token": o.RefreshToken, "client_id": o.ClientID, "client_secret": o.ClientSecret},
		// Daily, twelve hours away: the test fires the schedule itself, and no firing of the
		// calendar lands in the test.
		"sync_schedule": map[string]any{"frequency": "daily", "at": time.Now().UTC().Add(12 * time.Hour).Format("15:04")},
	})
	expect(t, r, 201)
	bodies := []string{string(r.body)}
	in := r.json(t)
	if fmt.Sprint(in["secrets_set"]) != "[client_id client_secret oauth_token refresh_token]" {
		t.Fatalf("secrets_set %v", in["secrets_set"])
	}
	id := in["id"].(string)
	base := "/v1/integrations/" + id

	st.startWorker(t)
	tc := testenv.TemporalClient(t)
	handle := tc.ScheduleClient().GetHandle(t.Context(), workflows.IntegrationScheduleID(st.tenant.String(), id))
	testenv.Eventually(t, 30*time.Second, "the integration's schedule to exist", func() bool {
		_, err := handle.Describe(t.Context())
		return err == nil
	})
	history := func() []any {
		h := st.do(&admin, "GET", base+"/syncs?page_size=100", nil)
		expect(t, h, 200)
		bodies = append(bodies, string(h.body))
		return h.json(t)["data"].([]any)
	}
	fire := func(n int) map[string]any {
		t.Helper()
		if err := handle.Trigger(t.Context(), client.ScheduleTriggerOptions{Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP}); err != nil {
			t.Fatal(err)
		}
		var last map[string]any
		testenv.Eventually(t, 60*time.Second, fmt.Sprintf("scheduled sync %d to finish", n), func() bool {
			h := history()
			if len(h) < n {
				return false
			}
			last = h[0].(map[string]any)
			return last["finished_at"] != nil
		})
		return last
	}

	// Fire until the tokens have been refreshed three times (how many syncs that takes depends on
	// how fast each runs); every sync on the way must succeed.
	start := time.Now()
	for n := 1; n <= 4 || sf.Refreshes() < 3; n++ {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d refreshes over %s with tokens of %s / %d calls", sf.Refreshes(), time.Since(start), o.TTL, o.Calls)
		}
		s := fire(n)
		c := counts(s)
		if s["status"] != "succeeded" || s["trigger"] != "schedule" || s["error"] != nil || (n == 1 && c["created"] != 450) {
			t.Fatalf("scheduled sync %d: %v", n, s)
		}
		time.Sleep(700 * time.Millisecond)
	}
	for _, s := range history() {
		if e := s.(map[string]any)["error"]; e != nil {
			t.Fatalf("a sync carries an error: %v", e)
		}
	}
	got := st.do(&admin, "GET", base, nil).json(t)
	if got["state"] != "active" || got["last_error"] != nil {
		t.Fatalf("integration after the syncs: %v", got)
	}
	watermark := got["watermark"]

	// The org's daily allowance is spent: rate_limited, next try at the next firing, watermark kept.
	sf.Fail(providertest.Failure{Count: 1, Status: 403})
	n := len(history()) + 1
	s := fire(n)
	got = st.do(&admin, "GET", base, nil).json(t)
	if s["status"] != "rate_limited" || !strings.Contains(fmt.Sprint(s["error"]), "REQUEST_LIMIT_EXCEEDED") || s["next_try_at"] == nil || s["next_try_at"] != got["next_sync_at"] {
		t.Fatalf("rate-limited sync (next try: the next firing, %v): %v", got["next_sync_at"], s)
	}
	if got["watermark"] != watermark || got["state"] != "active" {
		t.Fatalf("after the daily limit: %v (watermark was %v)", got, watermark)
	}
	// A firing before next_try_at is skipped: no new sync.
	if err := handle.Trigger(t.Context(), client.ScheduleTriggerOptions{Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if h := history(); len(h) != n {
		t.Fatalf("a firing before next_try_at ran a sync: %d syncs, want %d", len(h), n)
	}

	bodies = append(bodies, string(st.do(&admin, "GET", base, nil).body))
	noSecretIn(t, "a response", bodies, secrets...)
	noSecretIn(t, "an event", append(outboxData(t, st, "integration.sync_completed"), outboxData(t, st, "integration.sync_failed")...), secrets...)
	noSecretIn(t, "the log", []string{st.logs.String()}, append(secrets, sf.RefreshToken())...)
}

// TestIntegrationJiraBasicAndOAuthSyncs: one Jira site synced twice: with an API token as
// Basic email:api_token at the site URL, and with an OAuth 2.0 (3LO) token through the
// gateway path of the cloud id found by accessible-resources, refreshed (and its refresh token
// rotated) when the fake expires it mid-sync.
func TestIntegrationJiraBasicAndOAuthSyncs(t *testing.T) {
	st := newIntegrationStack(t)
	admin := st.admin()
	o := oauthApp
	o.Calls, o.Rotate, o.TTL = 2, true, time.Hour
	j := providertest.NewJira(t, providertest.Options{Records: 120, OAuth: &o})
	basicInit := st.createInitiative(admin, map[string]any{"name": "Epics by API token"})
	oauthInit := st.createInitiative(admin, map[string]any{"name": "Epics by OAuth"})
	st.startWorker(t)

	for _, tc := range []struct {
		name   string
		config map[string]any
	}{
		{"basic", map[string]any{"instance_url": j.URL, "email": j.Email(), "api_token": j.Token(), "initiative_id": basicInit, "page_size": 50}},
		{"oauth", map[string]any{"auth": "oauth", "instance_url": j.URL, "gateway_url": j.URL, "token_url": j.URL + "/oauth/token",
			"oauth_token": j.Token(), "refresh_token": o.RefreshToken, "client_id": o.ClientID, "client_secret": o.ClientSecret,
			"initiative_id": oauthInit, "page_size": 50}},
	} {
		r := st.do(&admin, "POST", "/v1/integrations", map[string]any{"provider": "jira", "name": "Jira " + tc.name, "config": tc.config})
		expect(t, r, 201)
		if auth := r.json(t)["config"].(map[string]any)["auth"]; auth != tc.name {
			t.Fatalf("%s: config auth %v", tc.name, auth)
		}
		id := r.json(t)["id"].(string)
		r = st.do(&admin, "POST", "/v1/integrations/"+id+"/sync", nil)
		expect(t, r, 202)
		done := st.waitSync(t, admin, r.json(t)["status_url"].(string), 60*time.Second)
		if c := counts(done); done["status"] != "succeeded" || c["created"] != 120 || c["fetched"] != 120 {
			t.Fatalf("%s sync: %v", tc.name, done)
		}
	}
	if j.Refreshes() < 1 {
		t.Fatal("the OAuth sync never refreshed its token, which lasts 2 calls")
	}
	noSecretIn(t, "the log", []string{st.logs.String()}, j.Token(), o.RefreshToken, o.ClientSecret, j.RefreshToken())
}

// TestIntegrationProviderEchoNeverLeaksSecrets: providers answer errors that quote the
// credentials they received (a feed's 500 echoing "Authorization: Bearer <token>", Jira's
// 400 echoing the Basic header). The sync history's error, the integration.sync_failed event
// in the outbox and the worker's log carry none of them (nor the base64 Basic credentials),
// and say that something was redacted.
func TestIntegrationProviderEchoNeverLeaksSecrets(t *testing.T) {
	st := newIntegrationStack(t)
	admin := st.admin()
	const feedToken = "feed-secret-token-echoed-9f8e7d"
	feed := providertest.NewFeed(t, providertest.Options{Records: 12, Token: feedToken})
	feed.Fail(providertest.Failure{Count: 100, Status: 500, RetryAfter: "1", Echo: true})
	j := providertest.NewJira(t, providertest.Options{Records: 5})
	j.Fail(providertest.Failure{Count: 100, Status: 400, Echo: true})
	initID := st.createInitiative(admin, map[string]any{"name": "Echo epics"})
	pair := j.Email() + ":" + j.Token()
	secrets := []string{feedToken, j.Token(), pair, base64.StdEncoding.EncodeToString([]byte(pair))}
	startLoggedWorker(t, st)

	var bodies []string
	for _, body := range []map[string]any{
		{"provider": "http_feed", "name": "Echoing feed", "config": map[string]any{"instance_url": feed.URL, "oauth_token": feedToken}},
		{"provider": "jira", "name": "Echoing Jira", "config": map[string]any{"instance_url": j.URL, "email": j.Email(), "api_token": j.Token(), "initiative_id": initID}},
	} {
		r := st.do(&admin, "POST", "/v1/integrations", body)
		expect(t, r, 201)
		id := r.json(t)["id"].(string)
		r = st.do(&admin, "POST", "/v1/integrations/"+id+"/sync", nil)
		expect(t, r, 202)
		done := st.waitSync(t, admin, r.json(t)["status_url"].(string), 90*time.Second)
		if done["status"] != "failed" || !strings.Contains(fmt.Sprint(done["error"]), "[REDACTED]") {
			t.Fatalf("%s: %v", body["name"], done)
		}
		h := st.do(&admin, "GET", "/v1/integrations/"+id+"/syncs", nil)
		bodies = append(bodies, string(h.body))
	}
	events := outboxData(t, st, "integration.sync_failed")
	if len(events) != 2 || !strings.Contains(strings.Join(events, ""), "[REDACTED]") {
		t.Fatalf("sync_failed events: %v", events)
	}
	if !strings.Contains(st.logs.String(), "Activity error") || !strings.Contains(st.logs.String(), "[REDACTED]") {
		t.Error("the worker log shows no activity failure (the log check would prove nothing)")
	}
	noSecretIn(t, "the sync history", bodies, secrets...)
	noSecretIn(t, "the sync_failed event", events, secrets...)
	noSecretIn(t, "the log", []string{st.logs.String()}, secrets...)
}

// TestIntegrationSecretsAreWriteOnly: the OAuth secrets are taken out of config, named in
// secrets_set and never returned (create, GET, list, PATCH, audit events); a PATCH without a
// secret keeps it, one sent as null erases it; a refresh token without the client id its
// grant needs, or a secret another provider takes, is a 422 naming the key; moving
// instance_url without sending the token again is a 422 (write-only secrets cannot be
// redirected to another host).
func TestIntegrationSecretsAreWriteOnly(t *testing.T) {
	st := newIntegrationStack(t)
	admin := st.admin()
	sf := providertest.NewSalesforce(t, providertest.Options{})
	secrets := []string{"00DFAKE!access-token-write-only", "5Aep861-refresh-write-only", "3MVG9-client-write-only", "client-secret-write-only"}
	var bodies []string
	call := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		r := st.do(&admin, method, path, body)
		expect(t, r, status)
		bodies = append(bodies, string(r.body))
		return r.json(t)
	}

	bad := call("POST", "/v1/integrations", map[string]any{"provider": "salesforce", "name": "No client",
		"config": map[string]any{"instance_url": sf.URL, "refresh_token": secrets[1]}}, 422)
	if !strings.Contains(fmt.Sprint(bad), "config.client_id") {
		t.Fatalf("refresh token without client id: %v", bad)
	}
	bad = call("POST", "/v1/integrations", map[string]any{"provider": "hubspot", "name": "Wrong key",
		"config": map[string]any{"instance_url": sf.URL, "api_token": secrets[0]}}, 422)
	if !strings.Contains(fmt.Sprint(bad), "config.api_token") {
		t.Fatalf("api_token on hubspot: %v", bad)
	}

	in := call("POST", "/v1/integrations", map[string]any{"provider": "salesforce", "name": "Write-only",
		"config": map[string]any{"instance_url": sf.URL, "oauth_token": secrets[0], "refresh_token": secrets[1], "client_id": secrets[2], "client_secret": secrets[3]}}, 201)
	base := "/v1/integrations/" + in["id"].(string)
	if fmt.Sprint(in["secrets_set"]) != "[client_id client_secret oauth_token refresh_token]" {
		t.Fatalf("secrets_set %v", in["secrets_set"])
	}
	got := call("PATCH", base, map[string]any{"config": map[string]any{"page_size": 500}}, 200)
	if fmt.Sprint(got["secrets_set"]) != fmt.Sprint(in["secrets_set"]) || got["config"].(map[string]any)["page_size"] != float64(500) {
		t.Fatalf("PATCH without secrets: %v", got)
	}
	got = call("PATCH", base, map[string]any{"config": map[string]any{"refresh_token": nil, "client_secret": nil}}, 200)
	if fmt.Sprint(got["secrets_set"]) != "[client_id oauth_token]" {
		t.Fatalf("secrets erased by null: %v", got["secrets_set"])
	}
	// Sending the stored credentials to another address needs them sent again.
	other := providertest.NewSalesforce(t, providertest.Options{})
	moved := call("PATCH", base, map[string]any{"config": map[string]any{"instance_url": other.URL}}, 422)
	if !strings.Contains(fmt.Sprint(moved), "config.oauth_token") || strings.Contains(fmt.Sprint(moved), "config.client_id") {
		t.Fatalf("instance_url moved without the token: %v", moved)
	}
	got = call("PATCH", base, map[string]any{"config": map[string]any{"instance_url": other.URL, "oauth_token": "00DFAKE!moved-token-0002"}}, 200)
	if got["config"].(map[string]any)["instance_url"] != other.URL || got["oauth_token_hint"] != "****0002" {
		t.Fatalf("moved with the token: %v", got)
	}
	call("GET", base, nil, 200)
	call("GET", "/v1/integrations", nil, 200)
	call("GET", "/v1/audit-events?resource_type=integration", nil, 200)
	noSecretIn(t, "a response", bodies, secrets...)
	noSecretIn(t, "the log", []string{st.logs.String()}, secrets...)
}
