package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

const testSecret = "receiver-secret-0123456789"

func testPayload(t *testing.T) Payload {
	t.Helper()
	p, err := NewPayload(Envelope{
		ID: "evt-1", Type: "initiative.created", CreatedAt: time.Unix(vecTS, 0),
		TenantID: "tenant-1", Data: json.RawMessage(`{"name":"x"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// privateClient may reach httptest servers (loopback), as OUTBOUND_ALLOW_PRIVATE_NETWORKS=true does.
func privateClient(timeout time.Duration) *Client {
	return NewClient(ClientOptions{AllowPrivate: true, Timeout: timeout})
}

func TestDeliverSuccessSignedRequest(t *testing.T) {
	p := testPayload(t)
	var got atomic.Pointer[http.Request]
	var gotBody atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r)
		gotBody.Store(b)
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "thanks")
	}))
	defer srv.Close()

	a := Deliver(context.Background(), privateClient(5*time.Second), Target{URL: srv.URL + "/hook", Secret: testSecret}, p)
	if a.Outcome != OutcomeDelivered || a.StatusCode != 202 || a.Error != "" || a.ResponseSnippet != "thanks" {
		t.Fatalf("attempt: %+v", a)
	}
	if a.Latency <= 0 || a.StartedAt.IsZero() {
		t.Errorf("latency/start not recorded: %+v", a)
	}
	r, body := got.Load(), gotBody.Load().([]byte)
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("method %s content-type %s", r.Method, r.Header.Get("Content-Type"))
	}
	if string(body) != string(p.Body) {
		t.Errorf("body changed in transit")
	}
	if !Verify(testSecret, body, r.Header.Get("X-Webhook-Signature")) {
		t.Errorf("X-Webhook-Signature does not verify: %s", r.Header.Get("X-Webhook-Signature"))
	}
	if err := VerifyStandard(testSecret, r.Header, body, 5*time.Minute, time.Now()); err != nil {
		t.Errorf("Standard Webhooks verification: %v", err)
	}
	if r.Header.Get("X-Webhook-ID") != "evt-1" || r.Header.Get("webhook-id") != "evt-1" ||
		r.Header.Get("X-Webhook-Event") != "initiative.created" ||
		r.Header.Get("X-Webhook-Timestamp") != r.Header.Get("webhook-timestamp") {
		t.Errorf("id/event/timestamp headers: %v", r.Header)
	}
}

func TestDeliverOutcomes(t *testing.T) {
	p := testPayload(t)
	for _, c := range []struct {
		status  int
		outcome Outcome
		errPart string
	}{
		{200, OutcomeDelivered, ""},
		{204, OutcomeDelivered, ""},
		{500, OutcomeFailed, "receiver answered 500"},
		{404, OutcomeFailed, "receiver answered 404"},
		{429, OutcomeFailed, "receiver answered 429"},
		{410, OutcomeGone, "410 Gone"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, "status body")
		}))
		a := Deliver(context.Background(), privateClient(5*time.Second), Target{URL: srv.URL, Secret: testSecret}, p)
		srv.Close()
		if a.Outcome != c.outcome || a.StatusCode != c.status || !strings.Contains(a.Error, c.errPart) {
			t.Errorf("status %d: %+v", c.status, a)
		}
		if c.status != 204 && a.ResponseSnippet != "status body" {
			t.Errorf("status %d: snippet %q", c.status, a.ResponseSnippet)
		}
	}
}

// A receiver that does not answer in time: the attempt fails as a timeout and
// reports about the timeout as its latency, never less, however long the
// attempt took before sending (signing the largest payload takes a while).
// The lower bound holds by construction (the latency counts from before the
// deadline is set), so the test does not race the clock.
func TestDeliverTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select { // hang past the client's timeout
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)

	large := testPayload(t)
	large.Body = append(bytes.Repeat([]byte(" "), MaxPayloadBytes-len(large.Body)), large.Body...)
	for name, p := range map[string]Payload{"small": testPayload(t), "largest": large} {
		const timeout = 200 * time.Millisecond
		start := time.Now()
		a := Deliver(context.Background(), privateClient(timeout), Target{URL: srv.URL, Secret: testSecret}, p)
		took := time.Since(start)
		if a.Outcome != OutcomeFailed || a.StatusCode != 0 || a.Error != "timed out after 200ms" {
			t.Errorf("%s: attempt %+v", name, a)
		}
		if a.Latency < timeout || a.Latency > took || took > timeout+3*time.Second {
			t.Errorf("%s: latency %s, call %s; want at least the %s timeout and about it", name, a.Latency, took, timeout)
		}
	}
}

func TestDeliverDefaultTimeoutIs30s(t *testing.T) {
	if c := NewClient(ClientOptions{}); c.Timeout != 30*time.Second {
		t.Errorf("default timeout %s", c.Timeout)
	}
}

func TestDeliverDoesNotFollowRedirects(t *testing.T) {
	var followed atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
	}))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/next", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()

	a := Deliver(context.Background(), privateClient(5*time.Second), Target{URL: srv.URL, Secret: testSecret}, testPayload(t))
	if a.Outcome != OutcomeFailed || a.StatusCode != 307 || !strings.Contains(a.Error, "redirects are not followed") {
		t.Errorf("attempt: %+v", a)
	}
	if followed.Load() != 0 {
		t.Error("redirect was followed")
	}
}

func TestDeliverHugeAndEndlessBodies(t *testing.T) {
	chunk := []byte(strings.Repeat("é", 1000)) // 2-byte runes: the 1 KB cut falls mid-rune unless handled
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		for { // never ends: only the read cap makes Deliver return
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()

	start := time.Now()
	a := Deliver(context.Background(), privateClient(10*time.Second), Target{URL: srv.URL, Secret: testSecret}, testPayload(t))
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("endless body read for %s", el)
	}
	if a.Outcome != OutcomeFailed || a.StatusCode != 500 || a.Error != "receiver answered 500" {
		t.Errorf("attempt: %+v", a)
	}
	if len(a.ResponseSnippet) > MaxResponseSnippet || len(a.ResponseSnippet) < MaxResponseSnippet-4 || !utf8.ValidString(a.ResponseSnippet) {
		t.Errorf("snippet: %d bytes, valid %v", len(a.ResponseSnippet), utf8.ValidString(a.ResponseSnippet))
	}
	if strings.ContainsRune(a.ResponseSnippet, utf8.RuneError) {
		t.Error("snippet ends in a broken rune")
	}
}

func TestDeliverRefusesNonPublicDestinations(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	c := NewClient(ClientOptions{Timeout: 5 * time.Second}) // private networks not allowed
	for url, reason := range map[string]string{
		srv.URL:                                    "loopback",
		"http://localhost:" + port + "/":           "loopback", // a name resolving to loopback
		"http://[::1]:" + port + "/":               "loopback",
		"http://[::ffff:127.0.0.1]:" + port + "/":  "loopback",
		"http://10.11.12.13/":                      "private",
		"http://192.168.0.1:8080/":                 "private",
		"http://169.254.169.254/latest/meta-data/": "link-local",
		"http://100.64.0.1/":                       "carrier-grade NAT",
		"http://0.0.0.0:" + port + "/":             "unspecified",
	} {
		a := Deliver(context.Background(), c, Target{URL: url, Secret: testSecret}, testPayload(t))
		if a.Outcome != OutcomeFailed || a.StatusCode != 0 || !strings.Contains(a.Error, "refused ("+reason+" address)") {
			t.Errorf("%s: %+v", url, a)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("receiver was reached %d times", hits.Load())
	}

	// allowPrivate=true lets loopback through.
	a := Deliver(context.Background(), privateClient(5*time.Second), Target{URL: srv.URL, Secret: testSecret}, testPayload(t))
	if a.Outcome != OutcomeDelivered || hits.Load() != 1 {
		t.Errorf("allowPrivate: %+v, hits %d", a, hits.Load())
	}
}

func TestDeliverConnectionError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	a := Deliver(context.Background(), privateClient(5*time.Second), Target{URL: url, Secret: testSecret}, testPayload(t))
	if a.Outcome != OutcomeFailed || a.StatusCode != 0 || !strings.HasPrefix(a.Error, "connection error: ") || strings.Contains(a.Error, "Post ") {
		t.Errorf("attempt: %+v", a)
	}
}

func TestSnippet(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"},          // é cut in half: dropped
		{"h\x00i", 10, "h\uFFFDi"}, // NUL replaced (PostgreSQL text)
		{"a\xffb", 10, "a\uFFFDb"}, // invalid byte replaced
		{"€uro", 3, "€"},
		{"€uro", 2, ""},
	} {
		if got := Snippet([]byte(c.in), c.max); got != c.want {
			t.Errorf("Snippet(%q,%d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
