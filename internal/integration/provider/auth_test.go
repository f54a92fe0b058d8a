package provider_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

var app = providertest.OAuth{ClientID: "3MVG9-client-id-0001", ClientSecret: "client-secret-5f2e9a", RefreshToken: "5Aep861-refresh-0001"}

func appCreds(access string) provider.Credentials {
	return provider.Credentials{AccessToken: access, RefreshToken: app.RefreshToken, ClientID: app.ClientID, ClientSecret: app.ClientSecret}
}

func newOAuthClient(t *testing.T, name string, cfg map[string]any, store *provider.MemoryTokens) provider.Client {
	t.Helper()
	c, err := provider.New(name, cfg, store.Current(), hc, store)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A Salesforce session that expires mid-sync (after 2 calls) is renewed with the refresh
// token, the page asked again, and the rotated refresh token is what the store keeps.
func TestSalesforceRenewsAnExpiredSessionAndKeepsTheRotatedRefreshToken(t *testing.T) {
	o := app
	o.Calls, o.Rotate = 2, true
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 1000, OAuth: &o})
	store := provider.NewMemoryTokens(appCreds(sf.Token()))
	r := drain(t, newOAuthClient(t, provider.Salesforce, sfCfg(sf.URL), store), "")
	if len(ids(t, r.items)) != 1000 || r.pages != 5 {
		t.Fatalf("%d items in %d pages", len(r.items), r.pages)
	}
	if sf.Refreshes() != 2 || store.Grants != 2 {
		t.Fatalf("refreshes %d (store %d), want 2: a token lasts 2 calls, 5 pages", sf.Refreshes(), store.Grants)
	}
	if got := store.Current(); got.RefreshToken != sf.RefreshToken() || got.RefreshToken == app.RefreshToken {
		t.Fatalf("the store keeps refresh token %q, the org accepts %q", got.RefreshToken, sf.RefreshToken())
	}
}

// A token whose expires_in is about to run out is renewed before it is used: no 401.
func TestHubSpotRenewsBeforeExpiry(t *testing.T) {
	o := app
	o.TTL, o.ExpiresIn = 30*time.Minute, true
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 300, OAuth: &o})
	creds := appCreds(hs.Token())
	creds.ExpiresAt = time.Now().Add(20 * time.Second) // within the refresh margin
	store := provider.NewMemoryTokens(creds)
	cfg := hsCfg(hs.URL)
	cfg["owner_property"] = ""
	r := drain(t, newOAuthClient(t, provider.HubSpot, cfg, store), "")
	if len(ids(t, r.items)) != 300 {
		t.Fatalf("%d items", len(r.items))
	}
	if hs.Refreshes() != 1 || hs.Requests() != 1+r.pages {
		t.Fatalf("refreshes %d, requests %d for %d pages: want one refresh before the first call and no refused call", hs.Refreshes(), hs.Requests(), r.pages)
	}
	if exp := store.Current().ExpiresAt; time.Until(exp) < 29*time.Minute {
		t.Fatalf("the new token's expiry %s does not follow expires_in", exp)
	}
}

// Jira OAuth 2.0 (3LO): through the gateway path of the cloud id found by
// accessible-resources; the rotating refresh token is stored; a reused one is refused and
// that (only that) is ErrUnauthorized.
func TestJiraOAuthThroughTheGateway(t *testing.T) {
	o := app
	o.Calls, o.Rotate, o.TTL = 3, true, time.Hour
	j := providertest.NewJira(t, providertest.Options{Records: 250, OAuth: &o})
	cfg := map[string]any{"auth": "oauth", "instance_url": j.URL, "gateway_url": j.URL, "token_url": j.URL + "/oauth/token",
		"initiative_id": initiativeID, "page_size": 50, "lookback_minutes": 0}
	stale := appCreds(j.Token())
	store := provider.NewMemoryTokens(stale)
	r := drain(t, newOAuthClient(t, provider.Jira, cfg, store), "")
	if len(ids(t, r.items)) != 250 {
		t.Fatalf("%d items", len(r.items))
	}
	if j.Refreshes() < 1 || store.Current().RefreshToken != j.RefreshToken() {
		t.Fatalf("refreshes %d; stored refresh token %q, accepted %q", j.Refreshes(), store.Current().RefreshToken, j.RefreshToken())
	}
	// A client that still holds the first refresh token (not stored after rotation) is refused.
	stale.AccessToken = "expired-access-token"
	_, err := newOAuthClient(t, provider.Jira, cfg, provider.NewMemoryTokens(stale)).Fetch(context.Background(), "", "")
	wantUnauthorized(t, err, app.RefreshToken)

	// The site URL refuses a 3LO token: Basic auth with a Bearer token would not work there.
	basic := map[string]any{"auth": "basic", "instance_url": j.URL, "email": j.Email(), "initiative_id": initiativeID}
	_, err = newClient(t, provider.Jira, basic, "not-the-api-token").Fetch(context.Background(), "", "")
	wantUnauthorized(t, err, "not-the-api-token")
}

// Two syncs of one integration whose token was refused refresh once: the second finds the
// first one's token (a second refresh would spend the rotated refresh token twice).
func TestConcurrentClientsRefreshOnce(t *testing.T) {
	o := app
	o.Rotate = true
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 10, OAuth: &o})
	store := provider.NewMemoryTokens(appCreds("an-expired-session-token"))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = newOAuthClient(t, provider.Salesforce, sfCfg(sf.URL), store).Fetch(context.Background(), "", "")
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if sf.Refreshes() != 1 {
		t.Fatalf("%d refreshes, want 1", sf.Refreshes())
	}
}

// A deal modified while a sync pages moves to the end; the keyset paging reads every deal.
func TestHubSpotDealModifiedWhilePagingIsNotSkipped(t *testing.T) {
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 1000})
	hs.OnRequest(func(n int) {
		if n == 4 { // the 3rd search page (the owners list was request 2)
			hs.Touch(providertest.DefaultStart.Add(48*time.Hour), 50)
		}
	})
	cfg := hsCfg(hs.URL)
	cfg["page_size"] = 100
	r := drain(t, newClient(t, provider.HubSpot, cfg, hs.Token()), "")
	seen := map[string]bool{}
	for _, it := range r.items {
		seen[it.ExternalID] = true
	}
	for i := range 1000 {
		if !seen[providertest.HubSpotID(i)] {
			t.Fatalf("deal %d was skipped (%d distinct of 1000)", i, len(seen))
		}
	}
}

// The search index shows a modification late: the next sync's lookback reads it.
func TestLookbackReadsWhatTheIndexShowedLate(t *testing.T) {
	const lag = 300 * time.Millisecond
	for _, tc := range []struct {
		name  string
		start func() (touch func(time.Time, ...int), client func(lookback int) provider.Client, id func(int) string, first time.Time)
	}{
		{"hubspot", func() (func(time.Time, ...int), func(int) provider.Client, func(int) string, time.Time) {
			hs := providertest.NewHubSpot(t, providertest.Options{Records: 10, IndexLag: lag})
			return hs.Touch, func(lb int) provider.Client {
				cfg := hsCfg(hs.URL)
				cfg["lookback_minutes"] = lb
				return newClient(t, provider.HubSpot, cfg, hs.Token())
			}, providertest.HubSpotID, hs.Modified(9)
		}},
		{"jira", func() (func(time.Time, ...int), func(int) provider.Client, func(int) string, time.Time) {
			j := providertest.NewJira(t, providertest.Options{Records: 10, IndexLag: lag})
			return j.Touch, func(lb int) provider.Client {
				cfg := jiraCfg(j)
				cfg["lookback_minutes"] = lb
				return newClient(t, provider.Jira, cfg, j.Token())
			}, providertest.JiraID, j.Modified(9)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			touch, client, id, last := tc.start()
			at := last.Add(time.Hour)
			touch(at.Add(2*time.Minute), 5) // committed second, indexed first
			time.Sleep(lag + 50*time.Millisecond)
			touch(at, 3) // modified earlier, still being indexed when the next sync reads
			mid := drain(t, client(5), last.Format(time.RFC3339))
			if wm := mid.watermark; wm != at.Add(2*time.Minute).Format(time.RFC3339) && wm != at.Add(2*time.Minute).Format("2006-01-02T15:04:05.000Z07:00") {
				t.Fatalf("watermark %s", wm)
			}
			time.Sleep(lag + 50*time.Millisecond)
			without := drain(t, client(0), mid.watermark)
			with := drain(t, client(5), mid.watermark)
			has := func(r run) bool {
				for _, it := range r.items {
					if it.ExternalID == id(3) {
						return true
					}
				}
				return false
			}
			if has(without) {
				t.Fatal("without a lookback the late record was read: the fake's index does not lag")
			}
			if !has(with) {
				t.Fatalf("the 5-minute lookback missed the record indexed late: %d items", len(with.items))
			}
		})
	}
}

func TestDailyLimitsAreRateLimited(t *testing.T) {
	ctx := context.Background()
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 5})
	c := newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token())
	hs.Fail(providertest.Failure{Count: 1, Status: 429, Kind: "daily"})
	if _, err := c.Fetch(ctx, "", ""); !isRateLimited(err) {
		t.Fatalf("DAILY: %T %v", err, err)
	}
	hs.Fail(providertest.Failure{Count: 1, Status: 429, RetryAfter: "1"})
	_, err := c.Fetch(ctx, "", "")
	wantRetryable(t, err, 429, time.Second)
}

func isRateLimited(err error) bool {
	_, ok := errors.AsType[*provider.RateLimitedError](err)
	return ok
}

// Whatever a provider echoes (the Authorization header, a token request's form), no
// credential reaches an error: not as sent, not base64 (Basic), not URL-encoded (a form).
func TestProviderErrorsNeverQuoteCredentials(t *testing.T) {
	ctx := context.Background()
	secretsOf := func(c provider.Credentials, extra ...string) []string {
		out := append([]string{c.AccessToken, c.RefreshToken, c.ClientSecret, c.APIToken, url.QueryEscape(c.ClientSecret)}, extra...)
		return out
	}
	check := func(t *testing.T, err error, secrets []string) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		if !strings.Contains(err.Error(), "[REDACTED]") {
			t.Fatalf("the error does not show the echo was redacted: %v", err)
		}
		for _, s := range secrets {
			if s != "" && strings.Contains(err.Error(), s) {
				t.Fatalf("the error quotes %q: %v", s, err)
			}
		}
	}
	t.Run("feed 500 echoing the bearer token", func(t *testing.T) {
		f := providertest.NewFeed(t, providertest.Options{Records: 5})
		f.Fail(providertest.Failure{Count: 1, Status: 500, Echo: true})
		_, err := newClient(t, provider.HTTPFeed, feedCfg(f.URL), f.Token()).Fetch(ctx, "", "")
		check(t, err, []string{f.Token()})
		if _, ok := errors.AsType[*provider.RetryableError](err); !ok {
			t.Fatalf("the redacted error lost its kind: %T", err)
		}
	})
	t.Run("salesforce token endpoint echoing the refresh form", func(t *testing.T) {
		o := app
		o.Calls = 1
		sf := providertest.NewSalesforce(t, providertest.Options{Records: 500, OAuth: &o})
		sf.Fail(providertest.Failure{Skip: 2, Count: 1, Status: 500, Echo: true}) // page 2: 401, then the token request
		creds := appCreds(sf.Token())
		c := newOAuthClient(t, provider.Salesforce, sfCfg(sf.URL), provider.NewMemoryTokens(creds))
		p, err := c.Fetch(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Fetch(ctx, "", p.Next)
		check(t, err, secretsOf(creds))
	})
	t.Run("jira basic echoing the credentials", func(t *testing.T) {
		j := providertest.NewJira(t, providertest.Options{Records: 5})
		j.Fail(providertest.Failure{Count: 1, Status: 400, Echo: true})
		_, err := newClient(t, provider.Jira, jiraCfg(j), j.Token()).Fetch(ctx, "", "")
		pair := j.Email() + ":" + j.Token()
		check(t, err, []string{j.Token(), pair, base64.StdEncoding.EncodeToString([]byte(pair))})
	})
	t.Run("hubspot 401 echo is still unauthorized", func(t *testing.T) {
		hs := providertest.NewHubSpot(t, providertest.Options{Records: 5})
		hs.Fail(providertest.Failure{Count: 1, Status: 401, Echo: true})
		_, err := newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token()).Fetch(ctx, "", "")
		check(t, err, []string{hs.Token()})
		wantUnauthorized(t, err, hs.Token())
	})
	_ = fmt.Sprint
}
