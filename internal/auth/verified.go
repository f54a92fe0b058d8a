package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// verifiedCache remembers tokens whose signature and claims Verify checked,
// so a client sending the same token on every request pays the signature
// check (~70 µs of Ed25519, a fifth of the API's CPU on GET /v1/initiatives)
// once a minute, not per request. Entries are keyed by the token's SHA-256,
// hold only tokens that verified, and live until the token expires or a
// minute passes, whichever is first; a hit of the service's own token is
// honoured only while its key is still in the key store, so a key removed
// from AUTH_SIGNING_KEYS_DIR stops its tokens at the next reload, cache or
// not. An external provider's key that its JWKS drops stops verifying within
// the minute.
type verifiedCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]verifiedToken
}

type verifiedToken struct {
	claims Claims
	kid    string
	until  time.Time
}

const (
	verifiedFor    = time.Minute
	verifiedMaxLen = 10_000 // entries; a full cache drops its expired entries, then everything
)

func (c *verifiedCache) get(key [sha256.Size]byte, now time.Time) (verifiedToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.until) {
		return verifiedToken{}, false
	}
	return e, true
}

func (c *verifiedCache) put(key [sha256.Size]byte, e verifiedToken, now time.Time) {
	if until := now.Add(verifiedFor); e.until.After(until) {
		e.until = until
	}
	if !now.Before(e.until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[[sha256.Size]byte]verifiedToken{}
	}
	if len(c.entries) >= verifiedMaxLen {
		for k, old := range c.entries {
			if !now.Before(old.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= verifiedMaxLen {
			clear(c.entries)
		}
	}
	c.entries[key] = e
}

func sha256Of(raw string) [sha256.Size]byte { return sha256.Sum256([]byte(raw)) }
