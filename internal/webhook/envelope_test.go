package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewPayload(t *testing.T) {
	created := time.Date(2025, 1, 1, 1, 0, 0, 123456000, time.FixedZone("CET", 3600))
	p, err := NewPayload(Envelope{
		ID: vecID, Type: "initiative.created", CreatedAt: created,
		TenantID: "3f1e2d3c-4b5a-4968-8776-655443322110",
		Data:     json.RawMessage(`{ "name" : "Cloud migration" }`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"8a2f3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d","type":"initiative.created","created_at":"2025-01-01T00:00:00.123456Z","tenant_id":"3f1e2d3c-4b5a-4968-8776-655443322110","data":{"name":"Cloud migration"}}`
	if string(p.Body) != want {
		t.Errorf("body\n got %s\nwant %s", p.Body, want)
	}
	if p.EventID != vecID || p.EventType != "initiative.created" {
		t.Errorf("ids: %+v", p)
	}

	empty, err := NewPayload(Envelope{ID: "e", Type: EventTest, TenantID: "t"})
	if err != nil || !bytes.HasSuffix(empty.Body, []byte(`"data":{}}`)) {
		t.Errorf("nil data: %s %v", empty.Body, err)
	}
	if _, err := NewPayload(Envelope{Type: EventTest, TenantID: "t"}); err == nil {
		t.Error("missing id accepted")
	}
	if _, err := NewPayload(Envelope{ID: "e", Type: EventTest, TenantID: "t", Data: json.RawMessage(`{`)}); err == nil {
		t.Error("invalid data accepted")
	}
}

func TestNewPayloadSizeLimit(t *testing.T) {
	env := func(n int) Envelope {
		return Envelope{ID: "e", Type: EventTest, TenantID: "t", Data: json.RawMessage(`"` + strings.Repeat("a", n) + `"`)}
	}
	ok, err := NewPayload(env(MaxPayloadBytes - 200))
	if err != nil || len(ok.Body) > MaxPayloadBytes {
		t.Fatalf("just under 1 MB: len %d err %v", len(ok.Body), err)
	}
	if _, err := NewPayload(env(MaxPayloadBytes - 20)); !errors.Is(err, ErrPayloadTooLarge) {
		t.Errorf("envelope over 1 MB: %v", err)
	}
	if _, err := NewPayload(env(MaxPayloadBytes + 1)); !errors.Is(err, ErrPayloadTooLarge) {
		t.Errorf("data over 1 MB: %v", err)
	}
}
