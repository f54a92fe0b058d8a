// Package providertest holds fake servers of the integration providers
// (Salesforce, HubSpot, Jira, an HTTP feed) for tests and the bench. Each is
// an httptest server that answers the way the real API answers (paths, paging
// tokens, field names, error bodies, 401 on a bad token, 429 with
// Retry-After and 5xx on demand) over N deterministic seeded records, and
// counts the requests it served.
//
// t may be nil (a bench): then call Close. Record i (0-based) was last modified at Start + (i+1)*Step (defaults
// 2026-01-01T00:00:00Z and one minute), so "records modified after T" is easy
// to compute in a test; Touch moves records to a later time.
package providertest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// DefaultToken is the token a fake accepts when Options.Token is "".
const DefaultToken = "fake-token-0123456789"

// DefaultStart is the Options.Start default.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options seeds and shapes a fake.
type Options struct {
	Records  int           // seeded records (default 0)
	PageSize int           // the largest page the fake answers (0: the real API's maximum)
	Token    string        // the accepted token (default DefaultToken)
	Start    time.Time     // see the package doc (default DefaultStart)
	Step     time.Duration // see the package doc (default one minute)

	// HubSpot: the search API's cap on after+limit (default 10,000 as HubSpot).
	SearchCap int
	// Jira: the user's time zone, as /rest/api/3/myself reports it (default "Europe/Berlin");
	// JQL date literals are read in it, as Jira does. Email: the account email for Basic auth
	// (default "sync@example.com").
	TimeZone string
	Email    string
	// Feed: "json" ({"data": [...], "next": ...} pages, the default), "array" (one JSON array,
	// no paging) or "csv" (one CSV document). BadRows: 0-based record indexes served broken.
	Format  string
	BadRows []int
}

func (o *Options) defaults() {
	if o.Token == "" {
		o.Token = DefaultToken
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	if o.Step == 0 {
		o.Step = time.Minute
	}
}

// Failure makes the fake answer Count requests with Status (after letting
// Skip requests through). RetryAfter is sent as the Retry-After header when
// not "".
type Failure struct {
	Skip       int
	Count      int
	Status     int
	RetryAfter string
}

// base is what every fake shares: the server, the request counter, failure
// injection, the token and the records' modification times.
type base struct {
	srv *httptest.Server
	URL string

	mu       sync.Mutex
	opts     Options
	requests int
	failures []Failure
	modified []time.Time // per record
}

func newBase(t testing.TB, o Options, h http.Handler) *base {
	o.defaults()
	b := &base{opts: o, modified: make([]time.Time, o.Records)}
	for i := range b.modified {
		b.modified[i] = o.Start.Add(time.Duration(i+1) * o.Step)
	}
	b.srv = httptest.NewServer(h)
	b.URL = b.srv.URL
	if t != nil {
		t.Cleanup(b.srv.Close)
	}
	return b
}

// Close stops the server (tests need not: it closes at cleanup).
func (b *base) Close() { b.srv.Close() }

// Token is the token the fake accepts.
func (b *base) Token() string { b.mu.Lock(); defer b.mu.Unlock(); return b.opts.Token }

// SetToken changes the accepted token (the old one now gets 401).
func (b *base) SetToken(tok string) { b.mu.Lock(); defer b.mu.Unlock(); b.opts.Token = tok }

// Requests is how many requests the fake served (failed ones included).
func (b *base) Requests() int { b.mu.Lock(); defer b.mu.Unlock(); return b.requests }

// Fail queues a failure (see Failure).
func (b *base) Fail(f Failure) { b.mu.Lock(); defer b.mu.Unlock(); b.failures = append(b.failures, f) }

// Modified is record i's modification time.
func (b *base) Modified(i int) time.Time { b.mu.Lock(); defer b.mu.Unlock(); return b.modified[i] }

// Touch sets the modification time of records idx to at.
func (b *base) Touch(at time.Time, idx ...int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, i := range idx {
		b.modified[i] = at
	}
}

// Records is the number of seeded records.
func (b *base) Records() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.modified) }

// count counts a request and answers a queued failure if one is due
// (true: answered). fail writes the provider-specific failure body.
func (b *base) count(w http.ResponseWriter, fail func(w http.ResponseWriter, status int)) bool {
	b.mu.Lock()
	b.requests++
	var f *Failure
	if len(b.failures) > 0 {
		head := &b.failures[0]
		if head.Skip > 0 {
			head.Skip--
		} else {
			cp := *head
			f = &cp
			head.Count--
			if head.Count <= 0 {
				b.failures = b.failures[1:]
			}
		}
	}
	b.mu.Unlock()
	if f == nil {
		return false
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	fail(w, f.Status)
	return true
}

// snapshot copies the modification times (for one query).
func (b *base) snapshot() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.modified...)
}

func (b *base) isBad(i int) bool {
	for _, x := range b.opts.BadRows {
		if x == i {
			return true
		}
	}
	return false
}

func bearer(r *http.Request) string {
	const p = "Bearer "
	h := r.Header.Get("Authorization")
	if len(h) > len(p) && h[:len(p)] == p {
		return h[len(p):]
	}
	return ""
}

func atoiDefault(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}
