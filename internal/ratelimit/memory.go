package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// memoryShards is the number of independently locked parts of a Memory or
// MemoryConcurrency. A power of two so a mask picks the shard.
const memoryShards = 64

// minSweepEvery is the smallest number of operations on a shard between two
// sweeps of that shard, so that tiny maps are not swept on every call.
const minSweepEvery = 64

// Memory is an in-process GCRA Store. It is safe for concurrent use: keys are
// spread over 64 shards, each with its own mutex, so unrelated tenants rarely
// contend. It starts no goroutines.
//
// Per key it keeps one int64, the theoretical arrival time (TAT) of the next
// request. A key whose TAT is not after "now" has a full bucket again and is
// indistinguishable from an unknown key, so it can be dropped (Redis drops it
// through the key's expiry).
//
// Eviction is lazy and amortised: each shard counts the Allow calls it has
// served and, once that count reaches the number of keys the shard kept at
// its previous sweep (at least 64), sweeps the shard, deleting every key whose
// bucket is full again. A sweep of n keys thus follows at least n/2 calls
// (O(1) amortised per call), and a shard holds at most its live keys at the
// last sweep plus the keys touched since, i.e. at most 2*live+64. A shard whose map shrank to under a quarter is copied into
// a new map, since Go maps keep their peak size. Sweep does the same for all shards at once, for callers
// that want to reclaim memory on a timer or in tests.
type Memory struct {
	clock  func() time.Time
	epoch  time.Time
	seed   maphash.Seed
	shards [memoryShards]memoryShard
}

type memoryShard struct {
	mu         sync.Mutex
	tat        map[string]int64 // nanoseconds since Memory.epoch
	sinceSweep int              // Allow calls since the last sweep
	sweepEvery int              // sweep again after this many calls
	_          [32]byte         // keep shards on separate cache lines
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-process store reading the time from clock
// (time.Now when nil). Times are measured relative to the first reading, so
// with time.Now the store uses the monotonic clock and is immune to wall
// clock steps.
func NewMemory(clock func() time.Time) *Memory {
	if clock == nil {
		clock = time.Now
	}
	m := &Memory{clock: clock, seed: maphash.MakeSeed()}
	m.epoch = clock()
	for i := range m.shards {
		m.shards[i].tat = make(map[string]int64)
		m.shards[i].sweepEvery = minSweepEvery
	}
	return m
}

func (m *Memory) now() int64 { return int64(m.clock().Sub(m.epoch)) }

func (m *Memory) shard(key string) *memoryShard {
	return &m.shards[maphash.String(m.seed, key)&(memoryShards-1)]
}

// Allow admits one request for key under l if the key's bucket has room,
// counting it, and reports the state of the bucket. See Store.
func (m *Memory) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := l.Validate(); err != nil {
		return Result{}, err
	}
	interval := int64(l.EmissionInterval())
	burstOffset := interval * int64(l.Burst)
	now := m.now()

	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()

	tat, ok := s.tat[key]
	if !ok || tat < now {
		tat = now
	}
	newTAT := tat + interval
	allowAt := newTAT - burstOffset
	diff := now - allowAt

	var res Result
	if diff < 0 {
		// Refused: the state is left as it is (a refused request is not
		// counted), exactly like the Lua script.
		res = Result{
			Limit:      l,
			Allowed:    false,
			Remaining:  0,
			RetryAfter: time.Duration(-diff),
			ResetAfter: time.Duration(tat - now),
		}
	} else {
		s.tat[key] = newTAT
		res = Result{
			Limit:      l,
			Allowed:    true,
			Remaining:  int(diff / interval),
			RetryAfter: 0,
			ResetAfter: time.Duration(newTAT - now),
		}
	}

	s.sinceSweep++
	if s.sinceSweep >= s.sweepEvery {
		s.sweepLocked(now)
	}
	return res, nil
}

// Sweep deletes every key whose bucket is full again and returns how many it
// deleted. Calling it is optional: Allow sweeps each shard on its own in
// amortised O(1).
func (m *Memory) Sweep() int {
	now := m.now()
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.sweepLocked(now)
		s.mu.Unlock()
	}
	return n
}

func (s *memoryShard) sweepLocked(now int64) int {
	before := len(s.tat)
	for k, tat := range s.tat {
		if tat <= now {
			delete(s.tat, k)
		}
	}
	after := len(s.tat)
	s.sinceSweep = 0
	s.sweepEvery = max(after, minSweepEvery)
	// Go maps never shrink: after a burst of many keys, copy the survivors
	// into a right-sized map so the memory goes back too.
	if before >= 4*minSweepEvery && after < before/4 {
		fresh := make(map[string]int64, after)
		for k, tat := range s.tat {
			fresh[k] = tat
		}
		s.tat = fresh
	}
	return before - after
}

// Len returns the number of keys currently held, including keys whose bucket
// is already full again but that have not been swept yet.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.tat)
		s.mu.Unlock()
	}
	return n
}
