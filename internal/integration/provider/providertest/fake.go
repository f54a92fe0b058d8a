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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
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
	// Jira: the name of the site's epic issue type (default "Epic").
	IssueType string
	// Feed: "json" ({"data": [...], "next": ...} pages, the default), "array" (one JSON array,
	// no paging) or "csv" (one CSV document). BadRows: 0-based record indexes served broken.
	Format  string
	BadRows []int

	// OAuth makes the fake's tokens expire and adds the provider's token endpoint (see OAuth).
	OAuth *OAuth
	// IndexLag (HubSpot, Jira): a Touch becomes visible to the search only this long after it,
	// as HubSpot's search index and Jira's JQL index lag writes (HubSpot: "changes made by other
	// API calls take several seconds to propagate to the search index"). 0: at once.
	IndexLag time.Duration
}

// OAuth shapes the fake's OAuth 2.0 behaviour. The access token Options.Token and every token
// the token endpoint issues expire after TTL (by the clock) or after Calls API calls, whichever
// comes first, as real access tokens do: HubSpot's live 30 minutes (expires_in 1800, "Managing
// tokens", developers.hubspot.com), Atlassian's an hour (expires_in 3600), a Salesforce
// session as long as the connected app's session timeout (its token answer has no expires_in,
// "OAuth 2.0 Refresh Token Flow for Renewed Sessions", help.salesforce.com). The token endpoint
// takes grant_type=refresh_token with ClientID, ClientSecret (when set) and the current
// refresh token; with Rotate every refresh issues a new refresh token and refuses the old one
// (Atlassian always: "Rotating refresh tokens issue a new, limited life refresh token each time
// they are used", developer.atlassian.com "Implementing the Refresh Token Flow"; Salesforce
// when the connected app enables refresh token rotation).
type OAuth struct {
	ClientID, ClientSecret, RefreshToken string
	TTL                                  time.Duration
	Calls                                int
	ExpiresIn                            bool // the token answer carries expires_in (TTL in seconds)
	Rotate                               bool
}

// issued is an access token the fake accepts.
type issued struct {
	expires time.Time // zero: no clock limit
	calls   int       // calls made with it
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
	// Kind selects a provider's variant of Status: "daily" (HubSpot 429 policyName DAILY),
	// "concurrent" (Salesforce 403 REQUEST_LIMIT_EXCEEDED for concurrent requests; the default
	// 403 is the rolling 24-hour TotalRequests limit).
	Kind string
	// Echo makes the error body quote the request's Authorization header (and a token
	// request's form), as a careless proxy or a debugging endpoint does.
	Echo bool
}

// base is what every fake shares: the server, the request counter, failure
// injection, the token and the records' modification times.
type base struct {
	srv *httptest.Server
	URL string

	mu        sync.Mutex
	opts      Options
	requests  int
	failures  []Failure
	modified  []time.Time // per record
	indexed   []time.Time // per record: what the search sees (modified, IndexLag later)
	pending   map[int]pendingTouch
	version   int // counts the changes of indexed, for matched
	matched   matchedRecords
	tokens    map[string]*issued
	refresh   string // the refresh token the token endpoint accepts
	refreshes int
	issuedN   int
	onRequest func(n int)
}

type pendingTouch struct{ mod, visible time.Time }

// matchedRecords is the last answer of matching, valid while version is base's.
type matchedRecords struct {
	since   time.Time
	version int
	idx     []int
}

func newBase(t testing.TB, o Options, h http.Handler) *base {
	o.defaults()
	b := &base{opts: o, modified: make([]time.Time, o.Records), pending: map[int]pendingTouch{}, tokens: map[string]*issued{}}
	for i := range b.modified {
		b.modified[i] = o.Start.Add(time.Duration(i+1) * o.Step)
	}
	b.indexed = append([]time.Time(nil), b.modified...)
	if o.OAuth != nil {
		b.refresh = o.OAuth.RefreshToken
		b.issue(o.Token)
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

// Touch sets the modification time of records idx to at (visible to a search IndexLag later).
func (b *base) Touch(at time.Time, idx ...int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, i := range idx {
		b.modified[i] = at
		if b.opts.IndexLag > 0 {
			b.pending[i] = pendingTouch{mod: at, visible: time.Now().Add(b.opts.IndexLag)}
		} else {
			b.indexed[i] = at
			b.version++
		}
	}
}

// OnRequest calls fn(n) as the fake receives its n-th request (1-based), before answering it:
// a test changes records while a sync pages.
func (b *base) OnRequest(fn func(n int)) { b.mu.Lock(); defer b.mu.Unlock(); b.onRequest = fn }

// Refreshes counts the token endpoint's successful refreshes.
func (b *base) Refreshes() int { b.mu.Lock(); defer b.mu.Unlock(); return b.refreshes }

// RefreshToken is the refresh token the token endpoint accepts now.
func (b *base) RefreshToken() string { b.mu.Lock(); defer b.mu.Unlock(); return b.refresh }

// issue registers an access token (b.mu held or during construction).
func (b *base) issue(tok string) {
	it := &issued{}
	if b.opts.OAuth.TTL > 0 {
		it.expires = time.Now().Add(b.opts.OAuth.TTL)
	}
	b.tokens[tok] = it
}

// bearerOK reports whether an access token is valid now, counting the call it makes.
func (b *base) bearerOK(tok string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opts.OAuth == nil {
		return tok != "" && tok == b.opts.Token
	}
	it := b.tokens[tok]
	if it == nil || (!it.expires.IsZero() && time.Now().After(it.expires)) || (b.opts.OAuth.Calls > 0 && it.calls >= b.opts.OAuth.Calls) {
		return false
	}
	it.calls++
	return true
}

// tokenGrant checks a refresh-token grant's parameters and issues a new access token (and,
// with Rotate, a new refresh token). ok false: the grant is refused (reason for the body).
func (b *base) tokenGrant(p map[string]string, prefix string) (access, refresh string, ok bool, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.opts.OAuth
	switch {
	case o == nil:
		return "", "", false, "this fake has no OAuth app"
	case p["grant_type"] != "refresh_token":
		return "", "", false, "unsupported grant type"
	case p["client_id"] != o.ClientID || (o.ClientSecret != "" && p["client_secret"] != o.ClientSecret):
		return "", "", false, "invalid client credentials"
	case p["refresh_token"] == "" || p["refresh_token"] != b.refresh:
		return "", "", false, "unknown or invalid refresh token"
	}
	b.issuedN++
	b.refreshes++
	access = fmt.Sprintf("%s-access-%04d-%s", prefix, b.issuedN, randHex())
	b.issue(access)
	if o.Rotate {
		b.refresh = fmt.Sprintf("%s-refresh-%04d-%s", prefix, b.issuedN, randHex())
	}
	return access, b.refresh, true, ""
}

func randHex() string {
	var buf [6]byte
	_, _ = rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// tokenParams reads a token request: a form (Salesforce, HubSpot) or JSON (Atlassian).
func tokenParams(r *http.Request) map[string]string {
	out := map[string]string{}
	body, _ := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(body, &out)
		return out
	}
	form, _ := url.ParseQuery(string(body))
	for k := range form {
		out[k] = form.Get(k)
	}
	return out
}

// Records is the number of seeded records.
func (b *base) Records() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.modified) }

// count counts a request and answers a queued failure if one is due
// (true: answered). fail writes the provider-specific failure body; msg is the text to put in
// it ("" for the provider's usual one).
func (b *base) count(w http.ResponseWriter, r *http.Request, fail func(w http.ResponseWriter, f Failure, msg string)) bool {
	b.mu.Lock()
	b.requests++
	n, hook := b.requests, b.onRequest
	b.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	b.mu.Lock()
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
	msg := ""
	if f.Echo {
		msg = "upstream request failed; it carried Authorization: " + r.Header.Get("Authorization")
		if r.Method == http.MethodPost && r.Body != nil {
			body, _ := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
			msg += " and body " + string(body)
		}
	}
	fail(w, *f, msg)
	return true
}

// snapshot copies the modification times a query sees (the index's, for the search fakes).
func (b *base) snapshot() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.index()
	return append([]time.Time(nil), b.indexed...)
}

// matching is the records a query sees modified after since (every record when since is
// zero), in record order; the caller must not change it. The answer is kept until a
// record's indexed time changes: a page of a large feed costs what a page costs, as a
// provider's indexed query does, not a copy and scan of every record (a sync of 100,000
// records asked for 500 pages).
func (b *base) matching(since time.Time) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.index()
	if m := b.matched; m.idx != nil && m.version == b.version && m.since.Equal(since) {
		return m.idx
	}
	idx := modifiedAfter(b.indexed, since, false)
	b.matched = matchedRecords{since: since, version: b.version, idx: idx}
	return idx
}

// modifiedAfter is the records of mods modified after from (at or after it when inclusive;
// every record when from is zero), in record order.
func modifiedAfter(mods []time.Time, from time.Time, inclusive bool) []int {
	idx := make([]int, 0, len(mods))
	for i, m := range mods {
		if from.IsZero() || m.After(from) || inclusive && m.Equal(from) {
			idx = append(idx, i)
		}
	}
	return idx
}

// sortByModified orders the records idx by their time in mods, records of the same time by
// before (a provider's own tie-break).
func sortByModified(idx []int, mods []time.Time, before func(a, b int) bool) {
	sort.SliceStable(idx, func(a, b int) bool {
		if !mods[idx[a]].Equal(mods[idx[b]]) {
			return mods[idx[a]].Before(mods[idx[b]])
		}
		return before(idx[a], idx[b])
	})
}

// index makes the touches whose index lag has passed visible to queries. b.mu is held.
func (b *base) index() {
	now := time.Now()
	for i, p := range b.pending {
		if !now.Before(p.visible) {
			b.indexed[i] = p.mod
			delete(b.pending, i)
			b.version++
		}
	}
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
