package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

// hsCfg reads without a lookback: the tests of exact increments; the lookback has its own.
func hsCfg(u string) map[string]any {
	return map[string]any{"instance_url": u, "page_size": 200, "lookback_minutes": 0}
}

func TestHubSpotPagesEveryDealOnceWithOwnerEmails(t *testing.T) {
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 1000})
	r := drain(t, newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token()), "")
	got := ids(t, r.items)
	// Each page after the first starts at the last time read (the deal read there comes again
	// and is dropped): 200 + 4×199 + 4.
	if len(got) != 1000 || r.pages != 6 {
		t.Fatalf("%d deals in %d pages, want 1000 in 6", len(got), r.pages)
	}
	// One client lists the owners once (7 owners, one page of 500).
	if hs.OwnerRequests() != 1 || hs.Requests() != 7 {
		t.Fatalf("owner requests %d, all requests %d; want 1 and 7", hs.OwnerRequests(), hs.Requests())
	}
	for _, i := range []int{0, 1, 9, 10, 999} {
		want := provider.InitiativeFields{Name: fmt.Sprintf("Deal %d", i), Segment: providertest.DealTypes[i%2]}
		if i%10 != 9 {
			want.Owner = fmt.Sprintf("rep%d@example.com", i%7)
		}
		if i%3 != 0 {
			want.Description = fmt.Sprintf("Deal %d description", i)
		}
		it := got[providertest.HubSpotID(i)]
		if it.Initiative == nil || *it.Initiative != want || !it.ModifiedAt.Equal(hs.Modified(i)) {
			t.Fatalf("deal %d: %+v at %s, want %+v", i, it.Initiative, it.ModifiedAt, want)
		}
	}
	if want := hs.Modified(999).Format("2006-01-02T15:04:05.000Z07:00"); r.watermark != want {
		t.Fatalf("watermark %s, want %s", r.watermark, want)
	}
}

// HubSpot's search stops at 10,000 results a query: the client opens a new
// window at the watermark and skips the deals it already gave at that
// millisecond (here ten deals share the boundary's time).
func TestHubSpotPagesPastTheSearchCapByWatermark(t *testing.T) {
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 10_500})
	tie := hs.Modified(9995)
	hs.Touch(tie, 9996, 9997, 9998, 9999, 10000, 10001, 10002, 10003, 10004)
	r := drain(t, newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token()), "")
	if got := ids(t, r.items); len(got) != 10_500 {
		t.Fatalf("%d distinct deals, want 10500", len(got))
	}
	if r.pages != 53 {
		t.Fatalf("%d pages, want 53 (50 in the first window, 3 after it)", r.pages)
	}
}

func TestHubSpotIncremental(t *testing.T) {
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 300})
	c := newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token())
	first := drain(t, c, "")
	later := hs.Modified(299).Add(90 * time.Minute)
	hs.Touch(later, 5, 6)
	second := drain(t, c, first.watermark)
	got := ids(t, second.items)
	// GTE: the deal at the old watermark (299) comes again, with the two touched.
	if len(got) != 3 || got[providertest.HubSpotID(5)].Initiative == nil || got[providertest.HubSpotID(299)].Initiative == nil {
		t.Fatalf("incremental: %v", keys(got))
	}
	if second.watermark != later.Format("2006-01-02T15:04:05.000Z07:00") {
		t.Fatalf("watermark %s", second.watermark)
	}
}

func TestHubSpotErrors(t *testing.T) {
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 10})
	ctx := context.Background()

	_, err := newClient(t, provider.HubSpot, hsCfg(hs.URL), "pat-na1-wrong").Fetch(ctx, "", "")
	wantUnauthorized(t, err, "pat-na1-wrong")
	if !strings.Contains(err.Error(), "INVALID_AUTHENTICATION") {
		t.Fatalf("the error does not carry HubSpot's category: %v", err)
	}

	c := newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token())
	hs.Fail(providertest.Failure{Count: 1, Status: 429, RetryAfter: "2"})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 429, 2*time.Second)
	if !strings.Contains(err.Error(), "RATE_LIMIT SECONDLY") {
		t.Fatalf("the 429 does not say which limit: %v", err)
	}

	hs.Fail(providertest.Failure{Count: 1, Status: 502})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 502, 0)

	// Without the owners scope the deals still come, owners unmapped.
	hs.SetNoOwnersScope(true)
	p, err := newClient(t, provider.HubSpot, hsCfg(hs.URL), hs.Token()).Fetch(ctx, "", "")
	if err != nil || len(p.Items) != 10 || p.Items[0].Initiative.Owner != "" {
		t.Fatalf("no owners scope: %v %+v", err, p.Items)
	}
}

// 450 deals modified in the same millisecond, pages of 100: more than a page share the time,
// and the search returns them in no id order; every deal is read exactly once.
func TestHubSpotManyDealsInOneMillisecond(t *testing.T) {
	hs := providertest.NewHubSpot(t, providertest.Options{Records: 600})
	same := make([]int, 450)
	for i := range same {
		same[i] = i + 100
	}
	hs.Touch(providertest.DefaultStart.Add(time.Hour), same...)
	cfg := hsCfg(hs.URL)
	cfg["page_size"] = 100
	r := drain(t, newClient(t, provider.HubSpot, cfg, hs.Token()), "")
	if got := ids(t, r.items); len(got) != 600 {
		t.Fatalf("%d distinct deals, want 600", len(got))
	}
	if want := hs.Modified(599).Format("2006-01-02T15:04:05.000Z07:00"); r.watermark != want {
		t.Fatalf("watermark %s, want %s", r.watermark, want)
	}
}
