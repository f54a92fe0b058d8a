package ratelimit

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/testenv"
)

func newRedisStore(t *testing.T, url string, log *slog.Logger) *Redis {
	t.Helper()
	r, err := NewRedis(url, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// Two instances on one Redis share one bucket: the burst is exact across them.
func TestRedisBurstExactAcrossInstances(t *testing.T) {
	srv := testenv.StartRedis(t)
	a, b := newRedisStore(t, srv.URL(), nil), newRedisStore(t, srv.URL(), nil)
	l := Limit{PerMinute: 60, Burst: 10}
	ctx := context.Background()
	for i := range l.Burst {
		s := a
		if i%2 == 1 {
			s = b
		}
		res, err := s.Allow(ctx, "tenant:x", l)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Allowed || res.Remaining != l.Burst-1-i || res.RetryAfter != 0 {
			t.Fatalf("request %d: %+v, want allowed with %d remaining", i+1, res, l.Burst-1-i)
		}
	}
	for _, s := range []*Redis{a, b} {
		res, err := s.Allow(ctx, "tenant:x", l)
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed || res.Remaining != 0 || res.RetryAfterSeconds() < 1 || res.RetryAfter > time.Second {
			t.Fatalf("burst+1: %+v, want refused with a retry within 1 s", res)
		}
	}
	// Another key is untouched.
	if res, _ := b.Allow(ctx, "tenant:y", l); !res.Allowed || res.Remaining != l.Burst-1 {
		t.Fatalf("other key: %+v", res)
	}
	if a.Degraded() || b.Degraded() {
		t.Fatal("degraded with Redis up")
	}
	if _, err := a.Allow(ctx, "k", Limit{}); err == nil {
		t.Fatal("invalid limit accepted")
	}
}

// Leases are shared, released, and expire when their instance never releases them.
func TestRedisConcurrencyLeases(t *testing.T) {
	srv := testenv.StartRedis(t)
	a, b := newRedisStore(t, srv.URL(), nil), newRedisStore(t, srv.URL(), nil)
	ctx := context.Background()
	relA, ok, err := a.Acquire(ctx, "tenant:x", 2)
	if err != nil || !ok {
		t.Fatalf("first: %v %v", ok, err)
	}
	relB, ok, _ := b.Acquire(ctx, "tenant:x", 2)
	if !ok {
		t.Fatal("second refused")
	}
	if _, ok, _ := a.Acquire(ctx, "tenant:x", 2); ok {
		t.Fatal("third admitted over the shared limit of 2")
	}
	if n, _ := a.Leases(ctx, "tenant:x"); n != 2 {
		t.Fatalf("leases = %d, want 2", n)
	}
	relB()
	relB() // twice releases once
	rel, ok, _ := a.Acquire(ctx, "tenant:x", 2)
	if !ok {
		t.Fatal("a released slot was not reusable")
	}
	rel()
	relA()
	if n, _ := a.Leases(ctx, "tenant:x"); n != 0 {
		t.Fatalf("leases after release = %d", n)
	}
	// A dead instance: leases taken and never released expire.
	dead := newRedisStore(t, srv.URL(), nil)
	dead.leaseTTL = 300 * time.Millisecond
	for range 2 {
		if _, ok, _ := dead.Acquire(ctx, "tenant:x", 2); !ok {
			t.Fatal("refused")
		}
	}
	if _, ok, _ := a.Acquire(ctx, "tenant:x", 2); ok {
		t.Fatal("admitted while the dead instance's leases live")
	}
	time.Sleep(400 * time.Millisecond)
	if _, ok, _ := a.Acquire(ctx, "tenant:x", 2); !ok {
		t.Fatal("the dead instance's leases did not expire")
	}
	if _, _, err := a.Acquire(ctx, "k", 0); err == nil {
		t.Fatal("max 0 accepted")
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Redis down: every call is still answered (in process), a warning is logged
// once, Ping fails; Redis back: shared again.
func TestRedisDownFallsBack(t *testing.T) {
	srv := testenv.StartRedis(t)
	var logs syncBuf
	r := newRedisStore(t, srv.URL(), slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()
	l := Limit{PerMinute: 60, Burst: 3}
	if res, err := r.Allow(ctx, "k", l); err != nil || !res.Allowed {
		t.Fatalf("%+v %v", res, err)
	}
	srv.Kill()
	for i := range 3 {
		res, err := r.Allow(ctx, "k", l)
		if err != nil {
			t.Fatalf("call %d with Redis down: %v", i, err)
		}
		// The fallback starts its own bucket: the limit is still enforced per process.
		if res.Allowed != (i < 3) {
			t.Fatalf("call %d: %+v", i, res)
		}
		rel, ok, err := r.Acquire(ctx, "k", 1)
		if err != nil || !ok {
			t.Fatalf("acquire with Redis down: %v %v", ok, err)
		}
		rel()
	}
	if res, _ := r.Allow(ctx, "k", l); res.Allowed {
		t.Fatal("the fallback does not enforce the burst")
	}
	if !r.Degraded() || r.Ping(ctx) == nil {
		t.Fatal("not degraded with Redis down")
	}
	if n := strings.Count(logs.String(), "Redis unreachable"); n != 1 {
		t.Fatalf("warning logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestParseRedisURL(t *testing.T) {
	for _, ok := range []string{"redis://127.0.0.1:6379/0", "rediss://user:pw@redis.example.com:6380/2", "redis://localhost"} {
		if _, err := ParseRedisURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:6379", "http://redis:6379", "redis://", "redis://h:6379/x", "::"} {
		if _, err := ParseRedisURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// BenchmarkRedisAllow measures one shared limit check (a round trip to a
// local Redis running redis_rate's script); BenchmarkMemoryAllowOneKey the
// in-process check, for comparison.
func BenchmarkRedisAllow(b *testing.B) {
	srv := testenv.StartRedis(b)
	r, err := NewRedis(srv.URL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	l := Limit{PerMinute: 1 << 30, Burst: 1 << 20}
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Allow(ctx, "tenant:bench", l); err != nil {
				b.Fatal(err)
			}
		}
	})
	if r.Degraded() {
		b.Fatal("fell back")
	}
}

func BenchmarkRedisAcquireRelease(b *testing.B) {
	srv := testenv.StartRedis(b)
	r, err := NewRedis(srv.URL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rel, ok, err := r.Acquire(ctx, "tenant:bench", 1000)
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			rel()
		}
	})
}

func BenchmarkMemoryAllowOneKey(b *testing.B) {
	m := NewMemory(nil)
	l := Limit{PerMinute: 1 << 30, Burst: 1 << 20}
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = m.Allow(ctx, "tenant:bench", l)
		}
	})
}
