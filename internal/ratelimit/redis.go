package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// LeaseTTL is how long a concurrency lease lives in Redis when its instance
// never releases it (the instance died): longer than any request may run
// (the API's read plus write timeouts), short enough that a dead instance's
// slots come back within minutes.
const LeaseTTL = 2 * time.Minute

// retryRedisAfter is how long the store keeps using its in-process fallback
// after a Redis error before it tries Redis again, so that a Redis that hangs
// costs one timeout per second at most, not one per request.
const retryRedisAfter = time.Second

var quietRedisLogs sync.Once

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// ParseRedisURL validates a redis:// or rediss:// URL and returns the client
// options it stands for.
func ParseRedisURL(raw string) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("want a redis:// or rediss:// URL such as redis://127.0.0.1:6379/0")
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return opt, nil
}

// Redis is a Store and a ConcurrencyLimiter shared by every API instance
// that uses the same Redis: the rate limits are redis_rate's GCRA (the same
// arithmetic as Memory, so the observable behaviour is the same), and a
// concurrency slot is a lease in a sorted set (member = lease id, score =
// expiry) that expires on its own when its instance dies.
//
// When Redis fails (unreachable, timeout) the call is answered by the
// in-process stores instead, a warning is logged once per outage, and Redis
// is tried again after a second: a request is never refused because Redis is
// down. Ping reports Redis's state for /health.
type Redis struct {
	rdb      *redis.Client
	limiter  *redis_rate.Limiter
	memory   *Memory
	memConc  *MemoryConcurrency
	log      *slog.Logger
	leaseTTL time.Duration

	downUntil atomic.Int64 // unix nanos: skip Redis until then
	down      atomic.Bool  // an outage is being reported (warning logged)
}

var (
	_ Store              = (*Redis)(nil)
	_ ConcurrencyLimiter = (*Redis)(nil)
)

// NewRedis returns a store on the Redis at rawURL. It does not connect yet;
// a Redis that is down at start is a fallback like any other outage.
func NewRedis(rawURL string, log *slog.Logger) (*Redis, error) {
	opt, err := ParseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	// Fail fast: a limit check is on every request's path.
	opt.DialTimeout = 500 * time.Millisecond
	opt.ReadTimeout = 500 * time.Millisecond
	opt.WriteTimeout = 500 * time.Millisecond
	opt.MaxRetries = 0
	opt.DialerRetries = 1
	opt.DialerRetryTimeout = 10 * time.Millisecond
	if log == nil {
		log = slog.Default()
	}
	// go-redis logs each failed dial on its own: the store reports an outage
	// once (a warning), the library's lines go to debug.
	quietRedisLogs.Do(func() { redis.SetLogger(redisLogger{log}) })
	rdb := redis.NewClient(opt)
	return &Redis{
		rdb: rdb, limiter: redis_rate.NewLimiter(rdb),
		memory: NewMemory(nil), memConc: NewMemoryConcurrency(),
		log: log, leaseTTL: LeaseTTL,
	}, nil
}

// Close closes the Redis connections.
func (r *Redis) Close() error { return r.rdb.Close() }

// Ping checks Redis now (for /health), whatever the fallback state.
func (r *Redis) Ping(ctx context.Context) error {
	err := r.rdb.Ping(ctx).Err()
	if err == nil {
		r.recovered()
	}
	return err
}

// Degraded reports whether the last Redis call failed (limits are then per process).
func (r *Redis) Degraded() bool { return r.down.Load() }

func (r *Redis) usable() bool { return time.Now().UnixNano() >= r.downUntil.Load() }

// failed records a Redis error: the caller falls back to the in-process store.
func (r *Redis) failed(ctx context.Context, op string, err error) {
	r.downUntil.Store(time.Now().Add(retryRedisAfter).UnixNano())
	if r.down.CompareAndSwap(false, true) {
		r.log.WarnContext(ctx, "Redis unreachable: rate and concurrency limits fall back to this process until it answers again",
			"op", op, "error", err.Error())
	}
}

func (r *Redis) recovered() {
	if r.down.Load() && r.down.CompareAndSwap(true, false) {
		r.downUntil.Store(0)
		r.log.Info("Redis answers again: rate and concurrency limits are shared across instances")
	}
}

// redisFailure is true for errors that mean "Redis did not answer", as
// opposed to the caller's context ending.
func redisFailure(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil
}

// Allow is Store.Allow on Redis (redis_rate), or on the in-process store
// while Redis is unreachable.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := l.Validate(); err != nil {
		return Result{}, err
	}
	if r.usable() {
		res, err := r.limiter.Allow(ctx, key, redis_rate.Limit{Rate: l.PerMinute, Burst: l.Burst, Period: time.Minute})
		if err == nil {
			r.recovered()
			out := Result{Limit: l, Allowed: res.Allowed > 0, Remaining: res.Remaining, ResetAfter: max(res.ResetAfter, 0)}
			if !out.Allowed {
				out.RetryAfter = max(res.RetryAfter, time.Nanosecond)
			}
			return out, nil
		}
		if !redisFailure(ctx, err) {
			return Result{}, ctx.Err()
		}
		r.failed(ctx, "allow", err)
	}
	return r.memory.Allow(ctx, key, l)
}

// acquireScript takes a lease if fewer than ARGV[1] unexpired leases exist.
// KEYS[1] the set; ARGV: max, ttl ms, lease id. Time is Redis's own clock,
// so instances with skewed clocks agree.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`)

func concurrencyKey(key string) string { return "conc:" + key }

// Acquire is ConcurrencyLimiter.Acquire with a lease in Redis, or in process
// while Redis is unreachable.
func (r *Redis) Acquire(ctx context.Context, key string, max int) (func(), bool, error) {
	if err := ctx.Err(); err != nil {
		return noRelease, false, err
	}
	if max <= 0 {
		return noRelease, false, fmt.Errorf("%w: concurrency must be positive, got %d", ErrInvalidLimit, max)
	}
	if r.usable() {
		var b [12]byte
		_, _ = rand.Read(b[:])
		lease := hex.EncodeToString(b[:])
		ok, err := acquireScript.Run(ctx, r.rdb, []string{concurrencyKey(key)}, max, r.leaseTTL.Milliseconds(), lease).Int()
		if err == nil {
			r.recovered()
			if ok == 0 {
				return noRelease, false, nil
			}
			var released atomic.Bool
			return func() {
				if !released.CompareAndSwap(false, true) {
					return
				}
				// Released even when the request's context is over; a failure
				// leaves the lease to expire.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
				defer cancel()
				if err := r.rdb.ZRem(rctx, concurrencyKey(key), lease).Err(); err != nil {
					r.failed(rctx, "release", err)
				}
			}, true, nil
		}
		if !redisFailure(ctx, err) {
			return noRelease, false, ctx.Err()
		}
		r.failed(ctx, "acquire", err)
	}
	return r.memConc.Acquire(ctx, key, max)
}

// Leases returns the number of unexpired leases held in Redis for key.
func (r *Redis) Leases(ctx context.Context, key string) (int, error) {
	now := time.Now().UnixMilli()
	n, err := r.rdb.ZCount(ctx, concurrencyKey(key), fmt.Sprint(now), "+inf").Result()
	return int(n), err
}
