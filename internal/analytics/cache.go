package analytics

// The analysed reports kept per tenant data version. A report depends only
// on the tenant's rows (every input table bumps the tenant's version when
// it commits: migration 00040), the current month and the typed parameters;
// not on the caller (analytics:read sees the whole tenant). So a report
// computed at version v, month m and parameters p is the answer to every
// later request at (v, m, p): the cache is exact, never stale.
//
// A stored report must be of one version only: the operations read in READ
// COMMITTED, each statement at its own snapshot, so a commit between two of
// them could mix versions. The cache reads the version before and after
// computing and stores only when both agree (a commit in between moves it:
// the version row commits with the data). A transaction that itself wrote
// an input (uncommitted, not yet counted) neither reads nor fills the cache.

import (
	"container/list"
	"context"
	"encoding/json"
	"math"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/finance"
)

// DefaultCacheBytes is ANALYTICS_CACHE_MB's default, in bytes.
const DefaultCacheBytes = 32 << 20

// typedReportFactor is how much more memory a typed report holds than its
// JSON encoding (decimals and slices of structs against digits in a text):
// its size in the cache is its JSON length times this.
const typedReportFactor = 3

// cacheKey is what a report depends on.
type cacheKey struct {
	tenant  uuid.UUID
	version int64
	month   finance.Month // the current month (Scope.Now's)
	kind    string        // the analysis
	params  string        // its typed parameters, as JSON
}

type cacheEntry struct {
	key    cacheKey
	report any
	size   int64 // its estimated bytes
}

// flight is one computation of a key that concurrent misses wait on.
type flight struct {
	done   chan struct{}
	report any
	err    error
	stored bool // computed at one version: waiters of the same version may take it
}

// reportCache is an LRU of reports bounded by their estimated bytes, with
// its computations in flight.
type reportCache struct {
	mu      sync.Mutex
	max     int64      // bytes
	size    int64      // of the entries held
	order   *list.List // of *cacheEntry, most recent first
	entries map[cacheKey]*list.Element
	flights map[cacheKey]*flight
}

func newReportCache(max int64) *reportCache {
	return &reportCache{max: max, order: list.New(), entries: map[cacheKey]*list.Element{}, flights: map[cacheKey]*flight{}}
}

// reports is the process's cache of every analysis that caches.
var reports = newReportCache(DefaultCacheBytes)

// SetCacheBytes bounds the process's report cache to about n bytes of
// reports (0: no cache); reports beyond it are dropped, least recently used
// first.
func SetCacheBytes(n int64) {
	reports.mu.Lock()
	defer reports.mu.Unlock()
	reports.max = max(n, 0)
	reports.trim()
}

func (c *reportCache) trim() {
	for c.size > c.max {
		c.remove(c.order.Back())
	}
}

func (c *reportCache) remove(e *list.Element) {
	ce := e.Value.(*cacheEntry)
	c.order.Remove(e)
	delete(c.entries, ce.key)
	c.size -= ce.size
}

// sizeOf estimates the bytes a report holds: a rendering its length, a
// typed report its JSON length times typedReportFactor.
func sizeOf(report any) int64 {
	if b, ok := report.([]byte); ok {
		return int64(len(b))
	}
	b, err := json.Marshal(report)
	if err != nil {
		return math.MaxInt64 // unknown: not kept
	}
	return int64(len(b)) * typedReportFactor
}

// put stores a report and drops the tenant's reports of older versions
// (no request reads them again).
func (c *reportCache) put(k cacheKey, report any, size int64) {
	if size > c.max/4 { // one report may not push out most of the others
		return
	}
	if e, ok := c.entries[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	for e := c.order.Front(); e != nil; {
		next := e.Next()
		if old := e.Value.(*cacheEntry).key; old.tenant == k.tenant && old.version < k.version {
			c.remove(e)
		}
		e = next
	}
	c.entries[k] = c.order.PushFront(&cacheEntry{key: k, report: report, size: size})
	c.size += size
	c.trim()
}

// cachedKinds are the analyses that cache (set at package init, read-only after).
var cachedKinds = map[string]bool{}

// cached is operation run through the cache: kind names the analysis
// (one kind per operation); the report it returns is shared, read-only.
func cached[P, R any](kind string, operation func(context.Context, pgx.Tx, Scope, P) (R, error)) func(context.Context, pgx.Tx, Scope, P) (R, error) {
	cachedKinds[kind] = true
	return func(ctx context.Context, tx pgx.Tx, scope Scope, p P) (R, error) {
		r, err := reports.do(ctx, tx, scope, kind, p, func() (any, error) { return operation(ctx, tx, scope, p) })
		if err != nil {
			var zero R
			return zero, err
		}
		return r.(R), nil
	}
}

// Rendered is render's rendering (the API's JSON body) of the report of
// analysis kind with parameters p, kept in the cache beside the reports
// under the same rules when the analysis caches (else rendered every time):
// render is called on a miss and must read the report in tx (through the
// operation) and render only it.
func Rendered[P any](ctx context.Context, tx pgx.Tx, scope Scope, kind string, p P, render func() ([]byte, error)) ([]byte, error) {
	if !cachedKinds[kind] {
		return render()
	}
	r, err := reports.do(ctx, tx, scope, kind+" rendered", p, func() (any, error) { return render() })
	if err != nil {
		return nil, err
	}
	return r.([]byte), nil
}

// do answers from the cache or computes (once for concurrent misses of a
// key) and stores the report when the version did not move meanwhile.
func (c *reportCache) do(ctx context.Context, tx pgx.Tx, scope Scope, kind string, params any, compute func() (any, error)) (any, error) {
	v, err := db.Q.AnalyticsDataVersion(ctx, tx, scope.Tenant)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	off := c.max == 0
	c.mu.Unlock()
	if v.Pending || off {
		return compute()
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	k := cacheKey{tenant: scope.Tenant, version: v.Version, month: scope.current(), kind: kind, params: string(p)}
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.order.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*cacheEntry).report, nil
	}
	if f, ok := c.flights[k]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.stored { // exactly version k.version's report
			return f.report, nil
		}
		return compute() // it failed or saw a later version: this request's own answer
	}
	f := &flight{done: make(chan struct{})}
	c.flights[k] = f
	c.mu.Unlock()

	report, err := compute()
	stored, size := false, int64(0)
	if err == nil {
		after, verr := db.Q.AnalyticsDataVersion(ctx, tx, scope.Tenant)
		stored = verr == nil && after.Version == v.Version
	}
	if stored {
		size = sizeOf(report) // outside the lock: a large report's encoding takes a while
	}
	c.mu.Lock()
	delete(c.flights, k)
	if stored {
		c.put(k, report, size)
	}
	f.report, f.err, f.stored = report, err, stored
	c.mu.Unlock()
	close(f.done)
	return report, err
}
