package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// MaxPayloadBytes is the largest envelope body delivered (spec section 8:
// "webhook payload 1 MB", read as 1 MiB). Larger events are refused, not cut.
const MaxPayloadBytes = 1 << 20

// ErrPayloadTooLarge is returned when an envelope marshals to more than MaxPayloadBytes.
var ErrPayloadTooLarge = errors.New("webhook: payload exceeds 1 MB")

// EventTest is the type of the event POST /v1/webhooks/{id}/test sends to
// one subscription, whatever its events list. It cannot be subscribed to;
// the subscribable types are outbox.EventTypes (spec section 6).
const EventTest = "webhook.test"

// Envelope is the JSON body of every delivery:
//
//	{"id":"<event id>","type":"initiative.created","created_at":"2025-01-02T03:04:05.123456Z",
//	 "tenant_id":"<tenant id>","data":{...}}
//
// id is the outbox event id: the same for every attempt and every
// subscription, so receivers dedupe on it. created_at is when the event
// committed (UTC, RFC 3339 with fractional seconds), not when it was sent.
type Envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	TenantID  string          `json:"tenant_id"`
	Data      json.RawMessage `json:"data"`
}

// Payload is an envelope marshalled once: the exact bytes that are signed and
// sent to every subscription and on every attempt.
type Payload struct {
	EventID   string
	EventType string
	Body      []byte
}

// NewPayload marshals e. Data must be valid JSON (nil becomes {}); the result
// must not exceed MaxPayloadBytes.
func NewPayload(e Envelope) (Payload, error) {
	if e.ID == "" || e.Type == "" || e.TenantID == "" {
		return Payload{}, errors.New("webhook: envelope needs id, type and tenant_id")
	}
	if len(e.Data) == 0 {
		e.Data = json.RawMessage(`{}`)
	}
	if len(e.Data) > MaxPayloadBytes {
		return Payload{}, ErrPayloadTooLarge
	}
	e.CreatedAt = e.CreatedAt.UTC()
	body, err := json.Marshal(e)
	if err != nil {
		return Payload{}, fmt.Errorf("webhook: marshal envelope: %w", err)
	}
	if len(body) > MaxPayloadBytes {
		return Payload{}, ErrPayloadTooLarge
	}
	return Payload{EventID: e.ID, EventType: e.Type, Body: body}, nil
}
