// Package webhook holds the pure parts of outbound webhook delivery: the event
// envelope, request signing and verification, subscription URL validation, the
// SSRF-safe HTTP client and a single delivery attempt. Persistence, fan-out and
// timed retries live elsewhere (db/, the outbox relay, workflows/webhookretry.go).
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names set on every delivery.
const (
	HeaderSignature = "X-Webhook-Signature" // sha256=<lowercase hex HMAC-SHA256(secret, body)>
	HeaderEventID   = "X-Webhook-ID"        // the event id; stable across attempts and redeliveries
	HeaderEventType = "X-Webhook-Event"     // the event type, e.g. initiative.created
	HeaderTimestamp = "X-Webhook-Timestamp" // unix seconds of this attempt, same value as webhook-timestamp

	// Standard Webhooks (https://www.standardwebhooks.com) headers.
	HeaderStdID        = "webhook-id"
	HeaderStdTimestamp = "webhook-timestamp"
	HeaderStdSignature = "webhook-signature" // v1,<base64 HMAC-SHA256(secret, id "." timestamp "." body)>
)

// Signature returns the X-Webhook-Signature value for body: "sha256=" followed
// by the lowercase hex HMAC-SHA256 of the exact body bytes keyed with secret.
func Signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// StandardSignature returns the webhook-signature value of the Standard
// Webhooks scheme: "v1," + base64 (standard alphabet, padded) of
// HMAC-SHA256 over `id + "." + timestamp + "." + body`.
//
// Key choice: Standard Webhooks derives the HMAC key by base64-decoding a
// "whsec_"-prefixed secret. Our subscribers choose a plain 16–256 character
// secret instead, so the key here is the raw UTF-8 bytes of the secret, exactly
// as for X-Webhook-Signature. A receiver using a Standard Webhooks library must
// pass it the secret as "whsec_" + base64(secret) to get the same key.
func StandardSignature(secret, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SignHeaders sets the signature and identification headers of one attempt.
// ts is the attempt time; each attempt is signed anew with its own timestamp,
// while eventID stays the same so receivers can dedupe.
func SignHeaders(h http.Header, secret, eventID, eventType string, ts time.Time, body []byte) {
	unix := ts.Unix()
	sec := strconv.FormatInt(unix, 10)
	h.Set(HeaderSignature, Signature(secret, body))
	h.Set(HeaderEventID, eventID)
	h.Set(HeaderEventType, eventType)
	h.Set(HeaderTimestamp, sec)
	// Standard Webhooks headers are lowercase by definition; Go canonicalises
	// header names on the wire anyway (HTTP header names are case-insensitive).
	h.Set(HeaderStdID, eventID)
	h.Set(HeaderStdTimestamp, sec)
	h.Set(HeaderStdSignature, StandardSignature(secret, eventID, unix, body))
}

// Verify reports whether header (the X-Webhook-Signature value) is the valid
// signature of body under secret. It compares in constant time. Receivers may
// copy this function: it needs only the standard library.
//
//	func Verify(secret string, body []byte, header string) bool {
//		mac := hmac.New(sha256.New, []byte(secret))
//		mac.Write(body)
//		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
//		return hmac.Equal([]byte(want), []byte(header))
//	}
func Verify(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(Signature(secret, body)), []byte(header))
}

// Errors returned by VerifyStandard.
var (
	ErrMissingHeaders   = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature")
	ErrBadTimestamp     = errors.New("webhook: timestamp malformed or outside the tolerance")
	ErrNoMatchingSigner = errors.New("webhook: no matching signature")
)

// VerifyStandard checks the Standard Webhooks headers of a request: the
// timestamp must lie within tolerance of now (replay protection; 5 minutes is
// the usual choice) and one of the space-separated "v1,<sig>" entries of
// webhook-signature must match. Comparison is constant time. Receivers should
// also remember webhook-id values they have processed to drop duplicates.
func VerifyStandard(secret string, h http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	id, tsText, sigs := h.Get(HeaderStdID), h.Get(HeaderStdTimestamp), h.Get(HeaderStdSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return ErrBadTimestamp
	}
	want := []byte(StandardSignature(secret, id, ts, body))
	ok := 0
	for _, s := range strings.Fields(sigs) {
		// Loop over every entry, without an early exit, so timing does not
		// reveal which entry matched.
		ok |= subtle.ConstantTimeCompare(want, []byte(s))
	}
	if ok != 1 {
		return ErrNoMatchingSigner
	}
	return nil
}
