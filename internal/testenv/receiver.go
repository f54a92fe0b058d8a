package testenv

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/webhook"
)

// Receiver is a real HTTP webhook receiver: it verifies each request's
// signature with its secret, records what it got, and answers a settable
// status (or lets a handler answer).
type Receiver struct {
	*httptest.Server
	secret   string
	mu       sync.Mutex
	got      []Received
	status   int
	handler  func(w http.ResponseWriter, r *http.Request) bool
	badSigns int
}

// Received is one request a Receiver got.
type Received struct {
	EventID string // the envelope's id
	Type    string // the envelope's type
	Body    []byte
	At      time.Time
}

// NewReceiver starts a receiver for deliveries signed with secret, closed with the test.
func NewReceiver(t testing.TB, secret string, status int) *Receiver {
	rc := &Receiver{secret: secret, status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env webhook.Envelope
		_ = json.Unmarshal(body, &env)
		rc.mu.Lock()
		if !webhook.Verify(rc.secret, body, r.Header.Get(webhook.HeaderSignature)) || env.ID != r.Header.Get(webhook.HeaderEventID) {
			rc.badSigns++
		}
		rc.got = append(rc.got, Received{EventID: env.ID, Type: env.Type, Body: body, At: time.Now()})
		h, status := rc.handler, rc.status
		rc.mu.Unlock()
		if h != nil && h(w, r) {
			return
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "ok from receiver")
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Requests returns what the receiver got so far, in order.
func (rc *Receiver) Requests() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// OfType returns the requests carrying events of the type.
func (rc *Receiver) OfType(eventType string) []Received {
	var out []Received
	for _, r := range rc.Requests() {
		if r.Type == eventType {
			out = append(out, r)
		}
	}
	return out
}

// SetStatus changes the status later requests get.
func (rc *Receiver) SetStatus(status int) {
	rc.mu.Lock()
	rc.status = status
	rc.mu.Unlock()
}

// SetHandler lets h answer later requests; h returns false to leave the answer to the status.
func (rc *Receiver) SetHandler(h func(w http.ResponseWriter, r *http.Request) bool) {
	rc.mu.Lock()
	rc.handler = h
	rc.mu.Unlock()
}

// SignatureErrors counts requests whose signature or event id header did not match.
func (rc *Receiver) SignatureErrors() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.badSigns
}

// Eventually polls cond until it holds, failing the test when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// QuietLogger is the logger of tests: it discards everything.
func QuietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
