package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestConcurrencyAcquireRelease(t *testing.T) {
	c := NewMemoryConcurrency()
	acquire := func(key string, max int, wantOK bool) func() {
		t.Helper()
		release, ok, err := c.Acquire(bg, key, max)
		if err != nil || ok != wantOK || release == nil {
			t.Fatalf("Acquire(%s, %d) = ok %v err %v release nil %v; want ok %v", key, max, ok, err, release == nil, wantOK)
		}
		return release
	}

	r1 := acquire("t1", 2, true)
	r2 := acquire("t1", 2, true)
	refusedRelease := acquire("t1", 2, false)
	acquire("t2", 2, true) // other keys are independent
	if got := c.InFlight("t1"); got != 2 {
		t.Fatalf("InFlight = %d, want 2", got)
	}

	refusedRelease() // a refused Acquire's release is a no-op
	if got := c.InFlight("t1"); got != 2 {
		t.Fatalf("after no-op release InFlight = %d, want 2", got)
	}

	r1()
	r1() // a second call must not free a slot held by someone else
	if got := c.InFlight("t1"); got != 1 {
		t.Fatalf("after double release InFlight = %d, want 1", got)
	}
	r3 := acquire("t1", 2, true)
	acquire("t1", 2, false)

	// A lower max (plan downgrade) applies at once to new requests.
	acquire("t1", 1, false)

	r2()
	r3()
	if got := c.InFlight("t1"); got != 0 {
		t.Fatalf("InFlight = %d, want 0", got)
	}
	if got := c.Len(); got != 1 { // only t2 is still held
		t.Fatalf("Len = %d, want 1 (released keys must be dropped)", got)
	}
}

func TestConcurrencyErrors(t *testing.T) {
	c := NewMemoryConcurrency()
	for _, max := range []int{0, -1} {
		release, ok, err := c.Acquire(bg, "k", max)
		if !errors.Is(err, ErrInvalidLimit) || ok || release == nil {
			t.Errorf("max %d: ok %v err %v", max, ok, err)
		}
		release()
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	release, ok, err := c.Acquire(ctx, "k", 5)
	if !errors.Is(err, context.Canceled) || ok || release == nil {
		t.Fatalf("canceled ctx: ok %v err %v", ok, err)
	}
	release()
	if c.Len() != 0 {
		t.Fatalf("Len = %d after failed acquires", c.Len())
	}
}

// Many goroutines hammer a few keys: the number in flight never exceeds max,
// every slot is returned, and double releases do no harm.
func TestConcurrencyRace(t *testing.T) {
	c := NewMemoryConcurrency()
	const max, goroutines, rounds = 5, 64, 300
	keys := []string{"a", "b", "c"}
	var inFlight [3]atomic.Int64
	var peak [3]atomic.Int64
	var granted, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				k := (g + i) % len(keys)
				release, ok, err := c.Acquire(bg, keys[k], max)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					refused.Add(1)
					release()
					continue
				}
				granted.Add(1)
				n := inFlight[k].Add(1)
				runtime.Gosched() // hold the slot a little so others contend
				for {
					p := peak[k].Load()
					if n <= p || peak[k].CompareAndSwap(p, n) {
						break
					}
				}
				if n > max {
					t.Errorf("key %s: %d in flight, max %d", keys[k], n, max)
				}
				inFlight[k].Add(-1)
				release()
				if i%3 == 0 {
					release()
				}
			}
		})
	}
	wg.Wait()
	for k, key := range keys {
		if got := c.InFlight(key); got != 0 {
			t.Errorf("key %s: %d still in flight", key, got)
		}
		if p := peak[k].Load(); p > max {
			t.Errorf("key %s: peak %d > %d", key, p, max)
		}
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d, want 0", c.Len())
	}
	if granted.Load() == 0 {
		t.Error("nothing was granted")
	}
	t.Logf("granted %d, refused %d", granted.Load(), refused.Load())
}

// While max slots are held, every concurrent Acquire is refused; once they
// are released, exactly max succeed again.
func TestConcurrencyFullUnderContention(t *testing.T) {
	c := NewMemoryConcurrency()
	const max = 5
	var releases []func()
	for range max {
		r, ok, _ := c.Acquire(bg, "k", max)
		if !ok {
			t.Fatal("slot refused")
		}
		releases = append(releases, r)
	}
	tryAll := func() (granted []func()) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				r, ok, err := c.Acquire(bg, "k", max)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					granted = append(granted, r)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return granted
	}
	if g := tryAll(); len(g) != 0 {
		t.Fatalf("%d acquired while full", len(g))
	}
	var wg sync.WaitGroup
	for _, r := range releases {
		wg.Go(func() { r(); r() }) // concurrent double release
	}
	wg.Wait()
	g := tryAll()
	if len(g) != max {
		t.Fatalf("%d acquired after release, want %d", len(g), max)
	}
	for _, r := range g {
		r()
	}
	if c.Len() != 0 {
		t.Fatalf("Len = %d", c.Len())
	}
}

func ExampleMemoryConcurrency() {
	c := NewMemoryConcurrency()
	release, ok, _ := c.Acquire(context.Background(), "tenant-1", 5)
	defer release()
	fmt.Println(ok, c.InFlight("tenant-1"))
	// Output: true 1
}
