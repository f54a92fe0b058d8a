package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// MemoryConcurrency is an in-process ConcurrencyLimiter: one counter of
// requests in flight per key, in 64 independently locked shards. A key is
// deleted when its counter drops to zero, so memory is proportional to the
// keys with requests in flight. It is safe for concurrent use.
type MemoryConcurrency struct {
	seed   maphash.Seed
	shards [memoryShards]concurrencyShard
}

type concurrencyShard struct {
	mu       sync.Mutex
	inFlight map[string]int
	_        [48]byte // keep shards on separate cache lines
}

var _ ConcurrencyLimiter = (*MemoryConcurrency)(nil)

// NewMemoryConcurrency returns an empty in-process concurrency limiter.
func NewMemoryConcurrency() *MemoryConcurrency {
	c := &MemoryConcurrency{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].inFlight = make(map[string]int)
	}
	return c
}

func noRelease() {}

func (c *MemoryConcurrency) shard(key string) *concurrencyShard {
	return &c.shards[maphash.String(c.seed, key)&(memoryShards-1)]
}

// Acquire takes one of max slots for key if one is free. See
// ConcurrencyLimiter.
func (c *MemoryConcurrency) Acquire(ctx context.Context, key string, max int) (func(), bool, error) {
	if err := ctx.Err(); err != nil {
		return noRelease, false, err
	}
	if max <= 0 {
		return noRelease, false, fmt.Errorf("%w: concurrency must be positive, got %d", ErrInvalidLimit, max)
	}
	s := c.shard(key)
	s.mu.Lock()
	n := s.inFlight[key]
	if n >= max {
		s.mu.Unlock()
		return noRelease, false, nil
	}
	s.inFlight[key] = n + 1
	s.mu.Unlock()

	var released atomic.Bool
	return func() {
		if !released.CompareAndSwap(false, true) {
			return
		}
		s.mu.Lock()
		if n := s.inFlight[key] - 1; n > 0 {
			s.inFlight[key] = n
		} else {
			delete(s.inFlight, key)
		}
		s.mu.Unlock()
	}, true, nil
}

// InFlight returns the number of slots currently held for key.
func (c *MemoryConcurrency) InFlight(key string) int {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[key]
}

// Len returns the number of keys with at least one slot held.
func (c *MemoryConcurrency) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.inFlight)
		s.mu.Unlock()
	}
	return n
}
