package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manually advanced clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	starter = Limit{PerMinute: 100, Burst: 20} // emission interval 600ms
	perMin5 = Limit{PerMinute: 5, Burst: 5}    // emission interval 12s
	pro     = Limit{PerMinute: 500, Burst: 50} // emission interval 120ms
	tiny    = Limit{PerMinute: 60, Burst: 1}   // one per second, no burst
	allowed = func(rem int, reset time.Duration) Result {
		return Result{Allowed: true, Remaining: rem, ResetAfter: reset}
	}
	refused  = func(retry, reset time.Duration) Result { return Result{RetryAfter: retry, ResetAfter: reset} }
	ms       = time.Millisecond
	bg       = context.Background()
	anyLimit = starter
)

type step struct {
	advance time.Duration // before the call
	key     string        // "" means "k"
	want    Result        // Limit is filled in by the test
}

func TestMemoryAllowSequences(t *testing.T) {
	// The first 20 calls of a fresh starter key.
	var burst20 []step
	for i := range 20 {
		burst20 = append(burst20, step{want: allowed(19-i, time.Duration(i+1)*600*ms)})
	}

	tests := []struct {
		name  string
		limit Limit
		steps []step
	}{
		{
			name:  "starter: burst exhausted, refused, then refilled one request per 600ms",
			limit: starter,
			steps: append(burst20,
				step{want: refused(600*ms, 12*time.Second)},
				step{advance: 599 * ms, want: refused(1*ms, 12*time.Second-599*ms)},
				step{advance: 1 * ms, want: allowed(0, 12*time.Second)},
				step{want: refused(600*ms, 12*time.Second)},
				// Ten intervals later ten requests have been refilled;
				// this one takes one of them.
				step{advance: 6 * time.Second, want: allowed(9, 6600*ms)},
				// Once ResetAfter has passed the bucket is full: like a new key.
				step{advance: 6600 * ms, want: allowed(19, 600*ms)},
			),
		},
		{
			name:  "endpoint 5/min: burst of 5, then one every 12s",
			limit: perMin5,
			steps: []step{
				{want: allowed(4, 12*time.Second)},
				{want: allowed(3, 24*time.Second)},
				{want: allowed(2, 36*time.Second)},
				{want: allowed(1, 48*time.Second)},
				{want: allowed(0, 60*time.Second)},
				{want: refused(12*time.Second, 60*time.Second)},
				{advance: 11 * time.Second, want: refused(1*time.Second, 49*time.Second)},
				{advance: 1 * time.Second, want: allowed(0, 60*time.Second)},
				{advance: 36 * time.Second, want: allowed(2, 36*time.Second)},
			},
		},
		{
			name:  "burst 1: strictly one per interval, refusals are not counted",
			limit: tiny,
			steps: []step{
				{want: allowed(0, time.Second)},
				{advance: 500 * ms, want: refused(500*ms, 500*ms)},
				{advance: 400 * ms, want: refused(100*ms, 100*ms)},
				{advance: 100 * ms, want: allowed(0, time.Second)},
				{advance: 10 * time.Second, want: allowed(0, time.Second)},
			},
		},
		{
			name:  "keys are independent",
			limit: tiny,
			steps: []step{
				{key: "a", want: allowed(0, time.Second)},
				{key: "a", want: refused(time.Second, time.Second)},
				{key: "b", want: allowed(0, time.Second)},
				{key: "tenant-a", want: allowed(0, time.Second)},
				{advance: 300 * ms, key: "b", want: refused(700*ms, 700*ms)},
				{key: "c", want: allowed(0, time.Second)},
			},
		},
		{
			name:  "partial refill never exceeds the burst",
			limit: pro,
			steps: []step{
				{want: allowed(49, 120*ms)},
				{want: allowed(48, 240*ms)},
				{advance: time.Hour, want: allowed(49, 120*ms)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			m := NewMemory(clk.Now)
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				key := s.key
				if key == "" {
					key = "k"
				}
				got, err := m.Allow(bg, key, tt.limit)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				want := s.want
				want.Limit = tt.limit
				if got != want {
					t.Fatalf("step %d (key %s):\n got %+v\nwant %+v", i, key, got, want)
				}
			}
		})
	}
}

// Over a long run a saturated key gets exactly the sustained rate.
func TestMemorySustainedRate(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(clk.Now)
	for range starter.Burst {
		if r, _ := m.Allow(bg, "k", starter); !r.Allowed {
			t.Fatal("burst refused")
		}
	}
	n := 0
	for range 600 { // every 100ms for one minute
		clk.Advance(100 * ms)
		r, err := m.Allow(bg, "k", starter)
		if err != nil {
			t.Fatal(err)
		}
		if r.Allowed {
			n++
		} else if r.RetryAfter <= 0 || r.RetryAfter > 600*ms {
			t.Fatalf("RetryAfter = %v", r.RetryAfter)
		}
	}
	if n != starter.PerMinute {
		t.Fatalf("allowed %d in a minute after the burst, want %d", n, starter.PerMinute)
	}
}

func TestMemoryInvalid(t *testing.T) {
	m := NewMemory(nil)
	for _, l := range []Limit{
		{},
		{PerMinute: 0, Burst: 1},
		{PerMinute: 1, Burst: 0},
		{PerMinute: -5, Burst: 5},
		{PerMinute: 5, Burst: -1},
		{PerMinute: 1 << 40, Burst: 1},       // more than one per nanosecond
		{PerMinute: 1, Burst: math.MaxInt64}, // burst window overflows
	} {
		if _, err := m.Allow(bg, "k", l); !errors.Is(err, ErrInvalidLimit) {
			t.Errorf("Allow(%+v) err = %v, want ErrInvalidLimit", l, err)
		}
	}
	if m.Len() != 0 {
		t.Fatalf("invalid limits stored keys: %d", m.Len())
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := m.Allow(ctx, "k", anyLimit); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled ctx: err = %v", err)
	}
}

func TestMemorySweep(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(clk.Now)
	r1, _ := m.Allow(bg, "a", starter) // full again after 600ms
	_, _ = m.Allow(bg, "b", starter)
	r2, _ := m.Allow(bg, "b", starter) // full again after 1200ms
	if m.Len() != 2 || r1.ResetAfter != 600*ms || r2.ResetAfter != 1200*ms {
		t.Fatalf("Len %d, resets %v %v", m.Len(), r1.ResetAfter, r2.ResetAfter)
	}
	clk.Advance(600*ms - 1)
	if n := m.Sweep(); n != 0 {
		t.Fatalf("swept %d before any bucket was full", n)
	}
	clk.Advance(1)
	if n := m.Sweep(); n != 1 || m.Len() != 1 {
		t.Fatalf("swept %d, Len %d; want 1, 1", n, m.Len())
	}
	clk.Advance(600 * ms)
	if n := m.Sweep(); n != 1 || m.Len() != 0 {
		t.Fatalf("swept %d, Len %d; want 1, 0", n, m.Len())
	}
	// A swept key starts again with a full bucket.
	if r, _ := m.Allow(bg, "b", starter); r != (Result{Limit: starter, Allowed: true, Remaining: 19, ResetAfter: 600 * ms}) {
		t.Fatalf("after sweep: %+v", r)
	}
}

// Without any Sweep call, keys whose bucket is full again are dropped by
// Allow itself, so a stream of one-off keys does not grow the store.
func TestMemoryLazyEviction(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(clk.Now)
	const keys = 20000
	bound := memoryShards * (minSweepEvery + 1)
	for i := range keys {
		if _, err := m.Allow(bg, fmt.Sprintf("tenant-%d", i), starter); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second) // every earlier key is full again
		if n := m.Len(); n > bound {
			t.Fatalf("after %d keys the store holds %d, want <= %d", i+1, n, bound)
		}
	}
	// Live keys are never evicted: a key whose bucket is not full keeps its state.
	for range starter.Burst {
		_, _ = m.Allow(bg, "busy", starter)
	}
	for i := range keys {
		_, _ = m.Allow(bg, fmt.Sprintf("other-%d", i), starter)
	}
	if r, _ := m.Allow(bg, "busy", starter); r.Allowed {
		t.Fatalf("busy key lost its state: %+v", r)
	}
}

// Under contention a frozen clock admits exactly Burst requests per key.
func TestMemoryConcurrentAllow(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(clk.Now)
	keys := []string{"t1", "t2", "t3", "t4"}
	var allowedN [4]atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % len(keys)
				r, err := m.Allow(bg, keys[k], starter)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					allowedN[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range keys {
		if n := allowedN[k].Load(); n != int64(starter.Burst) {
			t.Errorf("key %s: %d allowed, want %d", keys[k], n, starter.Burst)
		}
	}
}

// refGCRA is a transcription of redis_rate v10's allowN Lua script (cost 1)
// in float64 seconds, the arithmetic Redis uses. eps absorbs float noise at
// exact boundaries, where the script's own answer depends on rounding.
type refGCRA struct{ tat map[string]float64 }

func (r *refGCRA) allow(key string, now float64, l Limit) Result {
	const eps = 1e-9
	period, rate, burst := 60.0, float64(l.PerMinute), float64(l.Burst)
	emission := period / rate
	burstOffset := emission * burst
	tat, ok := r.tat[key]
	if !ok || tat < now { // an expired Redis key is gone
		tat = now
	}
	newTAT := tat + emission
	allowAt := newTAT - burstOffset
	diff := now - allowAt
	remaining := diff / emission
	if remaining < -eps {
		return Result{Limit: l, RetryAfter: secs(-diff), ResetAfter: secs(tat - now)}
	}
	r.tat[key] = newTAT
	return Result{Limit: l, Allowed: true, Remaining: int(remaining + eps), ResetAfter: secs(newTAT - now)}
}

func secs(f float64) time.Duration { return time.Duration(math.Round(f*1e6)) * time.Microsecond }

func TestMemoryMatchesRedisRateScript(t *testing.T) {
	limits := []Limit{starter, pro, perMin5, tiny, {PerMinute: 2000, Burst: 200}, {PerMinute: 30, Burst: 30}, {PerMinute: 7, Burst: 3}}
	advances := []time.Duration{0, 0, 0, time.Microsecond, 7 * ms, 120 * ms, 599 * ms, 600 * ms, 2 * time.Second, 13 * time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, l := range limits {
		clk := newFakeClock()
		m := NewMemory(clk.Now)
		ref := &refGCRA{tat: map[string]float64{}}
		elapsed := time.Duration(0)
		for i := range 5000 {
			d := advances[rng.IntN(len(advances))]
			clk.Advance(d)
			elapsed += d
			key := []string{"a", "b"}[rng.IntN(2)]
			got, err := m.Allow(bg, key, l)
			if err != nil {
				t.Fatal(err)
			}
			want := ref.allow(key, elapsed.Seconds(), l)
			// Compare at Redis's microsecond resolution.
			got.RetryAfter = got.RetryAfter.Round(time.Microsecond)
			got.ResetAfter = got.ResetAfter.Round(time.Microsecond)
			if got != want {
				t.Fatalf("%v step %d key %s at %v:\n got %+v\nwant %+v", l, i, key, elapsed, got, want)
			}
		}
	}
}

func TestResultHeaderValues(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		r         Result
		retry     int64
		resetUnix int64
	}{
		{Result{Allowed: true, ResetAfter: 600 * ms}, 0, 1_700_000_001},
		{Result{Allowed: true, ResetAfter: 12 * time.Second}, 0, 1_700_000_012},
		{Result{RetryAfter: 1 * ms, ResetAfter: 11401 * ms}, 1, 1_700_000_012},
		{Result{RetryAfter: 12 * time.Second, ResetAfter: 60 * time.Second}, 12, 1_700_000_060},
		{Result{RetryAfter: 12*time.Second + 1, ResetAfter: 0}, 13, 1_700_000_000},
	}
	for _, tt := range tests {
		if got := tt.r.RetryAfterSeconds(); got != tt.retry {
			t.Errorf("%+v RetryAfterSeconds = %d, want %d", tt.r, got, tt.retry)
		}
		if got := tt.r.ResetUnix(now); got != tt.resetUnix {
			t.Errorf("%+v ResetUnix = %d, want %d", tt.r, got, tt.resetUnix)
		}
	}
	if got := (Limit{PerMinute: 100, Burst: 20}).String(); got != "100 req/m (burst 20)" {
		t.Errorf("String = %q", got)
	}
}
