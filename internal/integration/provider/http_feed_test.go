package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/webhook"
)

func feedCfg(u string) map[string]any { return map[string]any{"instance_url": u} }

func TestFeedJSONPagesEveryRowOnce(t *testing.T) {
	f := providertest.NewFeed(t, providertest.Options{Records: 1000, PageSize: 200})
	c := newClient(t, provider.HTTPFeed, feedCfg(f.URL), f.Token())
	r := drain(t, c, "")
	if r.pages != 5 || len(r.items) != 1000 {
		t.Fatalf("pages %d items %d, want 5 and 1000", r.pages, len(r.items))
	}
	got := ids(t, r.items)
	for i := 0; i < 1000; i++ {
		k, p, v, e := providertest.FeedRow(i)
		it, ok := got[k+"/"+p]
		if !ok {
			t.Fatalf("row %d (%s/%s) missing", i, k, p)
		}
		want := provider.ActualFields{BenefitKey: k, Period: p, Value: v, EvidenceURL: e}
		if it.Actual == nil || *it.Actual != want || it.Initiative != nil || it.Project != nil {
			t.Fatalf("row %d: %+v, want %+v", i, it.Actual, want)
		}
	}
	if f.Requests() != 5 {
		t.Fatalf("%d requests, want 5", f.Requests())
	}
	if r.watermark != "" {
		t.Fatalf("watermark %q without since_param, want none", r.watermark)
	}
}

func TestOpenFeedWithoutToken(t *testing.T) {
	f := providertest.NewFeed(t, providertest.Options{Records: 5, Format: "array"})
	f.SetNoAuth(true)
	if r := drain(t, newClient(t, provider.HTTPFeed, feedCfg(f.URL), ""), ""); len(ids(t, r.items)) != 5 {
		t.Fatalf("%d rows", len(r.items))
	}
}

func TestFeedCSVAndArrayByContentType(t *testing.T) {
	for _, format := range []string{"csv", "array"} {
		t.Run(format, func(t *testing.T) {
			f := providertest.NewFeed(t, providertest.Options{Records: 300, Format: format})
			r := drain(t, newClient(t, provider.HTTPFeed, feedCfg(f.URL), f.Token()), "")
			if r.pages != 1 || len(ids(t, r.items)) != 300 {
				t.Fatalf("pages %d items %d", r.pages, len(r.items))
			}
			k, p, v, e := providertest.FeedRow(42)
			if a := ids(t, r.items)[k+"/"+p].Actual; a.Value != v || a.EvidenceURL != e {
				t.Fatalf("row 42: %+v", a)
			}
		})
	}
}

func TestFeedBadRowsAreInvalidItemsWithRowNumbers(t *testing.T) {
	bad := []int{3, 4, 5, 6, 250}
	for _, format := range []string{"json", "csv"} {
		t.Run(format, func(t *testing.T) {
			f := providertest.NewFeed(t, providertest.Options{Records: 300, PageSize: 100, Format: format, BadRows: bad})
			r := drain(t, newClient(t, provider.HTTPFeed, feedCfg(f.URL), f.Token()), "")
			var invalid []string
			good := 0
			for _, it := range r.items {
				if it.Invalid != "" {
					invalid = append(invalid, it.Invalid)
				} else {
					good++
				}
			}
			if good != 295 || len(invalid) != 5 {
				t.Fatalf("good %d invalid %d: %q", good, len(invalid), invalid)
			}
			// Row numbers count data rows from 1 across pages (record i is row i+1); CSV adds the line (header is line 1).
			want := map[string][]string{
				"json": {
					`row 4: value must be a number`,
					`row 5: period "2025-13" is not a month YYYY-MM`,
					`row 6: value "12,5" is not a decimal number`,
					`row 7: benefit_key is missing`,
					`row 251: benefit_key is missing`,
				},
				"csv": {
					`row 4 (line 5): has 2 fields, the header has 4`,
					`row 5 (line 6): period "2025-13" is not a month YYYY-MM`,
					`row 6 (line 7): value "abc" is not a decimal number`,
					`row 7 (line 8): benefit_key is empty`,
					`row 251 (line 252): benefit_key is empty`,
				},
			}[format]
			for i, w := range want {
				if !strings.HasPrefix(invalid[i], w) {
					t.Errorf("invalid[%d] = %q, want prefix %q", i, invalid[i], w)
				}
			}
		})
	}
}

func TestFeedSinceParamAndWatermark(t *testing.T) {
	f := providertest.NewFeed(t, providertest.Options{Records: 100, PageSize: 30})
	cfg := map[string]any{"instance_url": f.URL, "since_param": "since"}
	c := newClient(t, provider.HTTPFeed, cfg, f.Token())
	before := time.Now().UTC().Add(-2 * time.Second)
	first := drain(t, c, "")
	wm, err := time.Parse(time.RFC3339, first.watermark)
	if len(first.items) != 100 || err != nil || wm.Before(before.Truncate(time.Second)) {
		t.Fatalf("first sync: %d items, watermark %q (%v)", len(first.items), first.watermark, err)
	}
	// Records 10 and 20 change after the first sync: only they come again.
	f.Touch(wm.Add(time.Minute), 10, 20)
	again := drain(t, c, first.watermark)
	got := ids(t, again.items)
	k10, p10, _, _ := providertest.FeedRow(10)
	k20, p20, _, _ := providertest.FeedRow(20)
	if len(got) != 2 || got[k10+"/"+p10].Actual == nil || got[k20+"/"+p20].Actual == nil {
		t.Fatalf("incremental sync: %v", got)
	}
	if again.watermark < first.watermark {
		t.Fatalf("watermark went back: %s → %s", first.watermark, again.watermark)
	}
}

func TestFeedErrors(t *testing.T) {
	f := providertest.NewFeed(t, providertest.Options{Records: 10})
	ctx := context.Background()

	_, err := newClient(t, provider.HTTPFeed, feedCfg(f.URL), "wrong-token").Fetch(ctx, "", "")
	wantUnauthorized(t, err, "wrong-token")

	c := newClient(t, provider.HTTPFeed, feedCfg(f.URL), f.Token())
	f.Fail(providertest.Failure{Count: 1, Status: 429, RetryAfter: "2"})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 429, 2*time.Second)

	f.Fail(providertest.Failure{Count: 1, Status: 503})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 503, 0)

	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	f.Fail(providertest.Failure{Count: 1, Status: 502, RetryAfter: at})
	_, err = c.Fetch(ctx, "", "")
	var re *provider.RetryableError
	if !errors.As(err, &re) || re.After < 85*time.Second || re.After > 91*time.Second {
		t.Fatalf("HTTP-date Retry-After: %v", err)
	}

	if p, err := c.Fetch(ctx, "", ""); err != nil || len(p.Items) != 10 {
		t.Fatalf("after the failures: %v, %d items", err, len(p.Items))
	}
}

func TestFeedMalformedAndOversizedBodies(t *testing.T) {
	cases := map[string]struct {
		ctype, body string
		size        int
		want        string
	}{
		"truncated json": {"application/json", `{"data":[{"benefit_key":"a"`, 0, "feed JSON is malformed"},
		"no data":        {"application/json", `{"rows":[]}`, 0, `no "data" array`},
		"html":           {"text/html", `<html>login</html>`, 0, `Content-Type "text/html"`},
		"csv header":     {"text/csv", "key,month,amount\nx,2025-01,1\n", 0, `column "key"`},
		"oversized":      {"application/json", "", provider.MaxBodyBytes + 10, "larger than"},
		"foreign next":   {"application/json", `{"data":[],"next":"https://elsewhere.example.com/feed?page=2"}`, 0, "must stay on"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				if tc.size > 0 {
					_, _ = w.Write([]byte("["))
					chunk := []byte(strings.Repeat(" ", 64<<10))
					for n := 1; n < tc.size; n += len(chunk) {
						_, _ = w.Write(chunk)
					}
					return
				}
				_, _ = fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			_, err := newClient(t, provider.HTTPFeed, feedCfg(srv.URL), "").Fetch(context.Background(), "", "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// Through the webhook client (the SSRF guard at dial time), a feed on a
// loopback address is refused for good, not retried.
func TestFeedRefusedAddressIsPermanent(t *testing.T) {
	f := providertest.NewFeed(t, providertest.Options{Records: 1})
	guarded := webhook.NewClient(webhook.ClientOptions{}).HTTP
	c, err := provider.New(provider.HTTPFeed, feedCfg(f.URL), provider.Credentials{AccessToken: f.Token()}, guarded, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Fetch(context.Background(), "", "")
	var re *provider.RetryableError
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err %v, want a permanent refusal", err)
	}
	if f.Requests() != 0 {
		t.Fatal("the request reached the feed")
	}
}

func TestRedirectIsAClearError(t *testing.T) {
	srv := httptest.NewServer(http.RedirectHandler("https://login.example.com/sso", http.StatusFound))
	defer srv.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c, _ := provider.New(provider.HTTPFeed, feedCfg(srv.URL), provider.Credentials{}, noFollow, nil)
	_, err := c.Fetch(context.Background(), "", "")
	if err == nil || !strings.Contains(err.Error(), `redirect (302) to "https://login.example.com/sso"`) {
		t.Fatalf("err %v", err)
	}
}

// Broken CSV quoting is a bad row, not a crash or an aborted feed; the rows
// around it come through. (An unterminated quote runs to the end of the
// document, as CSV defines, so it is the last row reported.)
func TestFeedCSVQuotingErrorsAreInvalidRows(t *testing.T) {
	body := "\ufeffPeriod,Benefit_Key,value\r\n2025-01,a,1\r\n2025-02,b\"x,2\r\n\r\n2025-03,c,3.5\r\n2025-04,\"d,4\r\n2025-05,e,5\r\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		_, _ = fmt.Fprint(w, body)
	}))
	defer srv.Close()
	p, err := newClient(t, provider.HTTPFeed, feedCfg(srv.URL), "").Fetch(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range p.Items {
		if it.Invalid != "" {
			got = append(got, it.Invalid)
		} else {
			got = append(got, it.ExternalID+"="+it.Actual.Value)
		}
	}
	want := []string{
		"a/2025-01=1",
		`row 2 (line 3): bare " in non-quoted-field`,
		"c/2025-03=3.5",
		`row 4 (line 6): extraneous or missing " in quoted-field`,
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
