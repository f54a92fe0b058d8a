package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on what is read back from a receiver.
const (
	MaxResponseRead    = 64 << 10 // bytes of response body read at most
	MaxResponseSnippet = 1 << 10  // bytes of response body kept in the delivery log
)

// Outcome classifies an attempt.
type Outcome string

const (
	// OutcomeDelivered: the receiver answered 2xx.
	OutcomeDelivered Outcome = "delivered"
	// OutcomeGone: the receiver answered 410 Gone; the subscription is disabled at once.
	OutcomeGone Outcome = "gone"
	// OutcomeFailed: anything else (non-2xx including 3xx, timeout, connection
	// error, refused destination). Retried on the schedule.
	OutcomeFailed Outcome = "failed"
)

// Target is where one subscription's deliveries go.
type Target struct {
	URL    string
	Secret string
}

// Attempt is the result of one delivery attempt, as stored in the delivery log.
type Attempt struct {
	StartedAt       time.Time
	StatusCode      int // 0 when no response was received
	Latency         time.Duration
	Error           string // empty on success; safe to show to the subscription's admin
	ResponseSnippet string // first 1 KB of the response body, valid UTF-8, NUL-free
	Outcome         Outcome
}

// Deliver makes one attempt: it POSTs p.Body to t.URL with the signature
// headers, waits at most c.Timeout for the answer and reads at most
// MaxResponseRead bytes of the response body. It never returns an error: every
// failure is an Attempt with Outcome failed and an Error text.
func Deliver(ctx context.Context, c *Client, t Target, p Payload) Attempt {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultAttemptTimeout
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "Valuecase-Webhooks/1"
	}

	start := now()
	a := Attempt{StartedAt: start, Outcome: OutcomeFailed}
	if len(p.Body) > MaxPayloadBytes {
		a.Error = "payload exceeds 1 MB"
		return a
	}
	// Latency is measured on the monotonic clock (whatever c.Now is) from
	// before the deadline is set, so an attempt that timed out reports at
	// least the timeout.
	mono := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(p.Body))
	if err != nil {
		a.Error = "invalid target url"
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", ua)
	SignHeaders(req.Header, t.Secret, p.EventID, p.EventType, start, p.Body)

	resp, err := c.HTTP.Do(req)
	if err != nil {
		a.Latency = time.Since(mono)
		a.Error = describeError(ctx, err, timeout)
		return a
	}
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, MaxResponseRead))
	resp.Body.Close()
	a.Latency = time.Since(mono)
	a.StatusCode = resp.StatusCode
	a.ResponseSnippet = Snippet(body, MaxResponseSnippet)

	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		// The status decides; a body that timed out mid-read after a 2xx
		// still counts as delivered (the receiver has accepted the event).
		a.Outcome = OutcomeDelivered
	case resp.StatusCode == http.StatusGone:
		a.Outcome = OutcomeGone
		a.Error = "receiver answered 410 Gone"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		a.Error = fmt.Sprintf("receiver answered %d; redirects are not followed", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			a.Error += " (Location: " + Snippet([]byte(loc), 256) + ")"
		}
	default:
		a.Error = fmt.Sprintf("receiver answered %d", resp.StatusCode)
	}
	if readErr != nil && a.Outcome == OutcomeFailed {
		a.Error += "; reading the response failed: " + describeError(ctx, readErr, timeout)
	}
	return a
}

// describeError turns a transport error into a short text for the delivery
// log, without Go's nested "Post \"url\": ..." prefixes.
func describeError(ctx context.Context, err error, timeout time.Duration) string {
	if re, ok := isRefused(err); ok {
		return re.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return fmt.Sprintf("timed out after %s", timeout)
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	var ue interface{ Unwrap() error }
	msg := err.Error()
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			msg = inner.Error()
		}
	}
	return "connection error: " + Snippet([]byte(msg), 512)
}

// Snippet returns at most max bytes of b as valid UTF-8 without NUL bytes
// (PostgreSQL text cannot hold NUL): a rune cut at the limit is dropped,
// invalid sequences become U+FFFD.
func Snippet(b []byte, max int) string {
	if len(b) > max {
		b = b[:max]
		// Drop a rune cut in half by the limit.
		if i := lastRuneStart(b); !utf8.FullRune(b[i:]) {
			b = b[:i]
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
