package provider_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

// sfCfg reads without a lookback: the tests of exact increments; the lookback has its own.
func sfCfg(u string) map[string]any {
	return map[string]any{"instance_url": u, "page_size": 200, "lookback_minutes": 0}
}

func TestSalesforcePagesEveryOpportunityOnce(t *testing.T) {
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 1000})
	r := drain(t, newClient(t, provider.Salesforce, sfCfg(sf.URL), sf.Token()), "")
	if r.pages != 5 || sf.Requests() != 5 {
		t.Fatalf("pages %d requests %d, want 5 batches of 200", r.pages, sf.Requests())
	}
	got := ids(t, r.items)
	if len(got) != 1000 {
		t.Fatalf("%d opportunities, want 1000", len(got))
	}
	for _, i := range []int{0, 1, 24, 999} {
		it := got[providertest.SalesforceID(i)]
		want := provider.InitiativeFields{
			Name:     fmt.Sprintf("Opportunity %d", i),
			Industry: providertest.Industries[i%5],
			Segment:  providertest.Segments[i%3],
			Owner:    fmt.Sprintf("rep%d@example.com", i%7),
		}
		if i%25 == 24 {
			want.Industry = "" // no Account
		}
		if i%3 != 0 {
			want.Description = fmt.Sprintf("Deal %d for account %d", i, i%50)
		}
		if it.Initiative == nil || *it.Initiative != want || !it.ModifiedAt.Equal(sf.Modified(i)) {
			t.Fatalf("record %d: %+v at %s, want %+v at %s", i, it.Initiative, it.ModifiedAt, want, sf.Modified(i))
		}
	}
	if want := sf.Modified(999).Format(time.RFC3339); r.watermark != want {
		t.Fatalf("watermark %s, want the largest SystemModstamp %s", r.watermark, want)
	}
}

func TestSalesforceIncrementalFromTheWatermark(t *testing.T) {
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 500})
	c := newClient(t, provider.Salesforce, sfCfg(sf.URL), sf.Token())
	first := drain(t, c, "")
	later := sf.Modified(499).Add(time.Hour)
	sf.Touch(later, 7, 300)
	second := drain(t, c, first.watermark)
	got := ids(t, second.items)
	// >= on whole seconds: the record at the old watermark (499) comes again, with the two touched.
	if len(got) != 3 || got[providertest.SalesforceID(7)].Initiative == nil || got[providertest.SalesforceID(300)].Initiative == nil || got[providertest.SalesforceID(499)].Initiative == nil {
		t.Fatalf("incremental: %d items %v", len(got), keys(got))
	}
	if second.watermark != later.Format(time.RFC3339) {
		t.Fatalf("watermark %s, want %s", second.watermark, later.Format(time.RFC3339))
	}
}

func TestSalesforceExpiredLocatorRestartsFromTheWatermark(t *testing.T) {
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 600})
	c := newClient(t, provider.Salesforce, sfCfg(sf.URL), sf.Token())
	p1, err := c.Fetch(context.Background(), "", "")
	if err != nil || p1.Next == "" {
		t.Fatal(err)
	}
	sf.ExpireLocators()
	seen := ids(t, p1.Items)
	cursor := p1.Next
	for cursor != "" {
		p, err := c.Fetch(context.Background(), "", cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			seen[it.ExternalID] = it // the boundary second may come twice; the set is what matters
		}
		cursor = p.Next
	}
	if len(seen) != 600 {
		t.Fatalf("%d distinct opportunities after the locator expired, want 600", len(seen))
	}
}

func TestSalesforceErrors(t *testing.T) {
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 10})
	ctx := context.Background()

	_, err := newClient(t, provider.Salesforce, sfCfg(sf.URL), "expired-token").Fetch(ctx, "", "")
	wantUnauthorized(t, err, "expired-token")
	if !strings.Contains(err.Error(), "INVALID_SESSION_ID") {
		t.Fatalf("the error does not carry Salesforce's code: %v", err)
	}

	c := newClient(t, provider.Salesforce, sfCfg(sf.URL), sf.Token())
	sf.Fail(providertest.Failure{Count: 1, Status: 403})
	_, err = c.Fetch(ctx, "", "")
	if _, ok := errors.AsType[*provider.RateLimitedError](err); !ok { // TotalRequests: the rolling 24-hour allowance
		t.Fatalf("TotalRequests: want a RateLimitedError, got %T %v", err, err)
	}
	sf.Fail(providertest.Failure{Count: 1, Status: 403, Kind: "concurrent"})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 403, 0) // ConcurrentRequests clears within seconds

	sf.Fail(providertest.Failure{Count: 1, Status: 503, RetryAfter: "2"})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 503, 2*time.Second)

	bad := sfCfg(sf.URL)
	bad["industry_field"] = "Industry__c"
	_, err = newClient(t, provider.Salesforce, bad, sf.Token()).Fetch(ctx, "", "")
	if err == nil || !strings.Contains(err.Error(), "INVALID_FIELD") || !strings.Contains(err.Error(), "No such column 'Industry__c'") {
		t.Fatalf("unknown mapped field: %v", err)
	}

	if _, err := c.Fetch(ctx, "not a time", ""); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("bad since: %v", err)
	}
	if _, err := c.Fetch(ctx, "", "garbage"); err == nil {
		t.Fatal("a garbage cursor was accepted")
	}
}

func keys(m map[string]provider.Item) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A record that cannot become an initiative (no name in the mapped field)
// is an Invalid item with the reason; the page goes on.
func TestSalesforceUnmappableRecordsAreInvalidItems(t *testing.T) {
	sf := providertest.NewSalesforce(t, providertest.Options{Records: 3})
	cfg := sfCfg(sf.URL)
	cfg["name_field"] = "Segment__c" // null on every fake record
	p, err := newClient(t, provider.Salesforce, cfg, sf.Token()).Fetch(context.Background(), "", "")
	if err != nil || len(p.Items) != 3 {
		t.Fatal(err)
	}
	want := "Opportunity " + providertest.SalesforceID(1) + " has no Segment__c (the initiative's name)"
	if p.Items[1].Invalid != want || p.Items[1].Initiative != nil || p.Items[1].ExternalID != providertest.SalesforceID(1) {
		t.Fatalf("%+v, want Invalid %q", p.Items[1], want)
	}
}
