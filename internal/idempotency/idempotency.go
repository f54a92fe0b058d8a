// Package idempotency holds the rules of the Idempotency-Key header (Stripe's
// semantics): which keys are valid, what makes two requests "the same", and
// what to do with a request whose key was seen before. The API middleware
// stores and replays the answers.
package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Header is the request header carrying the key; ReplayedHeader marks a replayed answer.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
	MaxKeyLength   = 255
)

// TTL is how long an answer is kept and replayed.
const TTL = 24 * time.Hour

// AbandonedAfter is how long a request may stay in flight after its
// transaction committed early; a key still in flight after that belongs to a
// process that died, and a retry runs the request again.
const AbandonedAfter = 5 * time.Minute

var (
	// ErrInvalidKey: the key is empty, longer than 255 bytes or not printable ASCII (400).
	ErrInvalidKey = errors.New("the Idempotency-Key header must be 1 to 255 printable ASCII characters")
	// ErrMismatch: the key was used for a different request (422).
	ErrMismatch = errors.New("this Idempotency-Key was already used with a different request (method, path, caller or body); use a new key for a new request")
	// ErrInFlight: a request with this key is still running (409).
	ErrInFlight = errors.New("a request with this Idempotency-Key is still being processed; retry once it has finished")
)

// ValidKey checks a key: 1 to 255 printable ASCII characters (space included).
func ValidKey(key string) error {
	if key == "" || len(key) > MaxKeyLength {
		return ErrInvalidKey
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return ErrInvalidKey
		}
	}
	return nil
}

// Hash identifies a request: method, path with query, caller and body. A JSON
// body is compared by value (key order and whitespace do not matter), any
// other body byte for byte.
func Hash(method, pathAndQuery, caller string, body []byte) []byte {
	h := sha256.New()
	for _, part := range []string{method, pathAndQuery, caller} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(canonical(body))
	return h.Sum(nil)
}

func canonical(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return body
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return body
	}
	return b
}

// Stored is a key's record as the store holds it.
type Stored struct {
	RequestHash []byte
	Status      int // 0: still in flight
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Action is what to do with an incoming request that carries a key.
type Action int

const (
	Run    Action = iota // first use (or the old record expired or was abandoned): run it and store the answer
	Replay               // the same request finished before: send the stored answer
)

// Decide applies the rules to a request whose key has a stored record
// (found false: none). It returns ErrMismatch or ErrInFlight for refusals.
// Run with found true means the stored record must be discarded first.
func Decide(s Stored, found bool, hash []byte, now time.Time) (Action, error) {
	if !found || !now.Before(s.ExpiresAt) {
		return Run, nil
	}
	if !bytes.Equal(s.RequestHash, hash) {
		return Run, ErrMismatch
	}
	if s.Status == 0 {
		if now.Sub(s.CreatedAt) < AbandonedAfter {
			return Run, ErrInFlight
		}
		return Run, nil
	}
	return Replay, nil
}

// Stores reports whether an answer with this status is stored. An answer of
// 400 or more rolled its transaction back (nothing changed), so it is not
// stored and a retry runs again — unless the change committed before the
// answer was known (committedEarly), when the answer is stored whatever it is.
func Stores(status int, committedEarly bool) bool {
	return committedEarly || status < 400
}

// KeepHeader reports whether a response header belongs to the stored answer.
// Headers that describe this delivery rather than the answer (request id,
// rate-limit state, CORS, framing) are set afresh on a replay.
func KeepHeader(name string) bool {
	n := http.CanonicalHeaderKey(name)
	switch n {
	case "X-Request-Id", "Retry-After", "Date", "Server", "Content-Length", "Connection",
		"Transfer-Encoding", "Vary", "Keep-Alive", ReplayedHeader:
		return false
	}
	return !strings.HasPrefix(n, "X-Ratelimit-") && !strings.HasPrefix(n, "Access-Control-")
}
