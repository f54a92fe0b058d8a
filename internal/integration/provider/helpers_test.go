package provider_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/integration/provider"
)

var hc = &http.Client{Timeout: 10 * time.Second}

type run struct {
	items     []provider.Item
	pages     int
	watermark string
}

// drain fetches every page from since, as a sync does.
func drain(t *testing.T, c provider.Client, since string) run {
	t.Helper()
	var r run
	cursor := ""
	for {
		p, err := c.Fetch(context.Background(), since, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", r.pages+1, err)
		}
		r.pages++
		r.items = append(r.items, p.Items...)
		if p.Watermark != "" {
			r.watermark = p.Watermark
		}
		if p.Next == "" {
			return r
		}
		if r.pages > 100_000 {
			t.Fatal("no end of pages")
		}
		cursor = p.Next
	}
}

func newClient(t *testing.T, name string, cfg map[string]any, token string) provider.Client {
	t.Helper()
	c, err := provider.New(name, cfg, creds(name, cfg, token), hc, nil)
	if err != nil {
		t.Fatalf("New(%s): %v", name, err)
	}
	return c
}

// ids returns the external ids, failing on a duplicate or an invalid item.
func ids(t *testing.T, items []provider.Item) map[string]provider.Item {
	t.Helper()
	out := map[string]provider.Item{}
	for _, it := range items {
		if it.Invalid != "" {
			t.Fatalf("unexpected invalid item: %s", it.Invalid)
		}
		if _, dup := out[it.ExternalID]; dup {
			t.Fatalf("duplicate item %s", it.ExternalID)
		}
		out[it.ExternalID] = it
	}
	return out
}

func wantRetryable(t *testing.T, err error, status int, after time.Duration) {
	t.Helper()
	var re *provider.RetryableError
	if !errors.As(err, &re) {
		t.Fatalf("want a RetryableError, got %T %v", err, err)
	}
	if re.Status != status || re.After != after {
		t.Fatalf("RetryableError{Status:%d After:%s}, want %d and %s", re.Status, re.After, status, after)
	}
}

func wantUnauthorized(t *testing.T, err error, token string) {
	t.Helper()
	if !errors.Is(err, provider.ErrUnauthorized) {
		t.Fatalf("want ErrUnauthorized, got %T %v", err, err)
	}
	if token != "" && strings.Contains(err.Error(), token) {
		t.Fatalf("the error shows the token: %v", err)
	}
}

// creds are the credentials a test's token stands for: the Jira API token with auth basic,
// else the access token.
func creds(name string, cfg map[string]any, token string) provider.Credentials {
	if name == provider.Jira && cfg["email"] != nil && cfg["auth"] != "oauth" {
		return provider.Credentials{APIToken: token}
	}
	return provider.Credentials{AccessToken: token}
}
