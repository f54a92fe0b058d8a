package idempotency

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidKey(t *testing.T) {
	for _, k := range []string{"a", "order-2026-11-23 #1", strings.Repeat("k", 255), "~!@"} {
		if err := ValidKey(k); err != nil {
			t.Errorf("%q refused", k)
		}
	}
	for _, k := range []string{"", strings.Repeat("k", 256), "tab\there", "é", "nl\n", "\x7f"} {
		if !errors.Is(ValidKey(k), ErrInvalidKey) {
			t.Errorf("%q accepted", k)
		}
	}
}

func TestHash(t *testing.T) {
	base := Hash("POST", "/v1/initiatives", "u1", []byte(`{"name":"A","budget":1.10}`))
	if !bytes.Equal(base, Hash("POST", "/v1/initiatives", "u1", []byte(" {\"budget\":1.10, \"name\":\"A\"}\n"))) {
		t.Error("JSON key order or whitespace changed the hash")
	}
	for name, h := range map[string][]byte{
		"body":     Hash("POST", "/v1/initiatives", "u1", []byte(`{"name":"B","budget":1.10}`)),
		"number":   Hash("POST", "/v1/initiatives", "u1", []byte(`{"name":"A","budget":1.1}`)),
		"path":     Hash("POST", "/v1/benefits", "u1", []byte(`{"name":"A","budget":1.10}`)),
		"query":    Hash("POST", "/v1/initiatives?x=1", "u1", []byte(`{"name":"A","budget":1.10}`)),
		"caller":   Hash("POST", "/v1/initiatives", "u2", []byte(`{"name":"A","budget":1.10}`)),
		"boundary": Hash("POST", "/v1/initiatives", "u", []byte(`1{"name":"A","budget":1.10}`)),
	} {
		if bytes.Equal(base, h) {
			t.Errorf("a different %s gives the same hash", name)
		}
	}
	if !bytes.Equal(Hash("POST", "/p", "u", []byte("not json")), Hash("POST", "/p", "u", []byte("not json"))) ||
		bytes.Equal(Hash("POST", "/p", "u", []byte("not json")), Hash("POST", "/p", "u", []byte("not json "))) {
		t.Error("non-JSON bodies are not compared byte for byte")
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	h, other := []byte{1}, []byte{2}
	done := Stored{RequestHash: h, Status: 201, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(23 * time.Hour)}
	cases := []struct {
		name  string
		s     Stored
		found bool
		hash  []byte
		want  Action
		err   error
	}{
		{"first use", Stored{}, false, h, Run, nil},
		{"same request", done, true, h, Replay, nil},
		{"different request", done, true, other, Run, ErrMismatch},
		{"expired", Stored{RequestHash: h, Status: 201, ExpiresAt: now}, true, other, Run, nil},
		{"in flight", Stored{RequestHash: h, CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}, true, h, Run, ErrInFlight},
		{"in flight, other body", Stored{RequestHash: h, CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}, true, other, Run, ErrMismatch},
		{"abandoned", Stored{RequestHash: h, CreatedAt: now.Add(-AbandonedAfter), ExpiresAt: now.Add(time.Hour)}, true, h, Run, nil},
	}
	for _, c := range cases {
		a, err := Decide(c.s, c.found, c.hash, now)
		if a != c.want || !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("%s: %v %v, want %v %v", c.name, a, err, c.want, c.err)
		}
	}
}

func TestStoresAndHeaders(t *testing.T) {
	if !Stores(201, false) || Stores(422, false) || !Stores(502, true) {
		t.Error("Stores")
	}
	for _, h := range []string{"Content-Type", "Location", "Deprecation", "Link"} {
		if !KeepHeader(h) {
			t.Errorf("%s dropped", h)
		}
	}
	for _, h := range []string{"X-Request-ID", "X-RateLimit-Remaining", "Retry-After", "Access-Control-Allow-Origin", "Content-Length", "Idempotent-Replayed"} {
		if KeepHeader(h) {
			t.Errorf("%s kept", h)
		}
	}
}
