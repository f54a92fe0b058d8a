// Package ratelimit holds the mechanics of the API's limits (spec section 8):
// a GCRA request-rate limiter, a concurrency limiter, the plan tiers and the
// per-endpoint limits. It knows nothing about HTTP; the API middleware keys
// the stores by tenant (and tenant+endpoint) and writes the headers.
//
// The rate limiter follows github.com/go-redis/redis_rate/v10 (GCRA, the
// "perform_gcra_ratelimit" Lua script) so that a Redis-backed Store can
// replace the in-process Memory store with the same observable behaviour:
//
//	redis_rate.Limit{Rate: l.PerMinute, Burst: l.Burst, Period: time.Minute}
//
// with one deliberate difference in Result: RetryAfter is 0 (not -1) when a
// request is allowed, and Allowed is a bool (redis_rate returns the count 0/1).
// A Redis store must translate these two fields.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalidLimit is returned (wrapped) for a limit that cannot be enforced:
// a non-positive rate, burst or concurrency, or values so large that the
// arithmetic would overflow.
var ErrInvalidLimit = errors.New("ratelimit: invalid limit")

// Limit is a sustained rate of PerMinute requests per minute with a bucket
// of Burst requests that refills at the sustained rate (GCRA). A fresh key
// may make Burst requests at once; after that one request is admitted every
// EmissionInterval (one minute / PerMinute).
type Limit struct {
	PerMinute int
	Burst     int
}

// maxBurstOffset bounds Burst*EmissionInterval so that the nanosecond
// arithmetic of the memory store cannot overflow (about 73 years).
const maxBurstOffset = math.MaxInt64 / 4

// EmissionInterval is the time it takes to refill one request: one minute
// divided by PerMinute (truncated to the nanosecond). It is 0 for an invalid
// limit.
func (l Limit) EmissionInterval() time.Duration {
	if l.PerMinute <= 0 {
		return 0
	}
	return time.Minute / time.Duration(l.PerMinute)
}

// Validate reports whether the limit can be enforced. Use it for negotiated
// (Enterprise Plus) values before storing them.
func (l Limit) Validate() error {
	if l.PerMinute <= 0 {
		return fmt.Errorf("%w: requests per minute must be positive, got %d", ErrInvalidLimit, l.PerMinute)
	}
	if l.Burst <= 0 {
		return fmt.Errorf("%w: burst must be positive, got %d", ErrInvalidLimit, l.Burst)
	}
	t := int64(l.EmissionInterval())
	if t <= 0 {
		return fmt.Errorf("%w: %d requests per minute is more than one per nanosecond", ErrInvalidLimit, l.PerMinute)
	}
	if int64(l.Burst) > maxBurstOffset/t {
		return fmt.Errorf("%w: burst %d at %d per minute is too large", ErrInvalidLimit, l.Burst, l.PerMinute)
	}
	return nil
}

// String renders the limit like redis_rate does, e.g. "100 req/m (burst 20)".
func (l Limit) String() string {
	return fmt.Sprintf("%d req/m (burst %d)", l.PerMinute, l.Burst)
}

// Result is the outcome of one Allow call.
type Result struct {
	// Limit is the limit the decision was made with.
	Limit Limit
	// Allowed reports whether the request is admitted (and was counted).
	// A refused request is not counted.
	Allowed bool
	// Remaining is how many more requests would be admitted right now
	// (0 when refused).
	Remaining int
	// RetryAfter is the time until the next request would be admitted;
	// 0 when allowed (redis_rate uses -1 there).
	RetryAfter time.Duration
	// ResetAfter is the time until the bucket is full again, i.e. until
	// Remaining would equal Burst-1 for the next request (the key's state
	// is then indistinguishable from a fresh key).
	ResetAfter time.Duration
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, the value for
// the Retry-After and X-RateLimit-Retry-After headers: 0 when allowed, at
// least 1 when refused.
func (r Result) RetryAfterSeconds() int64 {
	return ceilSeconds(r.RetryAfter)
}

// ResetUnix is the Unix time (seconds, rounded up) at which the bucket is
// full again, given the time the decision was made: the value for
// X-RateLimit-Reset.
func (r Result) ResetUnix(now time.Time) int64 {
	at := now.Add(r.ResetAfter)
	s := at.Unix()
	if at.Nanosecond() > 0 {
		s++
	}
	return s
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Store decides, per key, whether one more request is admitted under l.
// Implementations must be safe for concurrent use. Allow returns an error
// wrapping ErrInvalidLimit when l.Validate fails, and ctx.Err() when ctx is
// already done (as a networked store would).
type Store interface {
	Allow(ctx context.Context, key string, l Limit) (Result, error)
}

// ConcurrencyLimiter bounds the number of requests in flight per key.
//
// Acquire never waits: ok is false when max requests are already in flight
// for key. release is never nil; call it (typically deferred) when the
// request ends. It is a no-op when ok is false or err is non-nil, and
// calling it more than once releases only once. err wraps ErrInvalidLimit
// when max <= 0, or is ctx.Err() when ctx is already done.
type ConcurrencyLimiter interface {
	Acquire(ctx context.Context, key string, max int) (release func(), ok bool, err error)
}
