package webhook

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Test vectors computed independently with OpenSSL:
//
//	printf '%s' "$BODY" | openssl dgst -sha256 -hmac "$SECRET" -r
//	printf '%s' "$ID.$TS.$BODY" | openssl dgst -sha256 -hmac "$SECRET" -binary | base64 -w0
//
// They are published in docs/webhooks.md; a change here is a breaking change for receivers.
const (
	vecSecret = "vc-test-secret-0123456789abcdef"
	vecID     = "8a2f3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"
	vecTS     = int64(1735689600)
	vecBody   = `{"id":"8a2f3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d","type":"initiative.created","created_at":"2025-01-01T00:00:00Z","tenant_id":"3f1e2d3c-4b5a-4968-8776-655443322110","data":{"name":"Cloud migration"}}`

	vecSignature    = "sha256=e49527b773e24cdd65ff1c8c137adccd3b710b873ecd9d0792c08bdae61dcd8a"
	vecStdSignature = "v1,G5/Ts27QEZs6wH1Do8m+/LueFtuHMBsjjJ6uJztSSHU="
	vecEmptyBodySig = "sha256=b31d84309b1066199271dcc536d440870984f9eec4200426f9e61e7b8e57e617"
)

func TestSignatureVectors(t *testing.T) {
	if got := Signature(vecSecret, []byte(vecBody)); got != vecSignature {
		t.Errorf("Signature = %s, want %s", got, vecSignature)
	}
	if got := Signature(vecSecret, nil); got != vecEmptyBodySig {
		t.Errorf("Signature(empty) = %s, want %s", got, vecEmptyBodySig)
	}
	if got := StandardSignature(vecSecret, vecID, vecTS, []byte(vecBody)); got != vecStdSignature {
		t.Errorf("StandardSignature = %s, want %s", got, vecStdSignature)
	}
}

func TestSignHeaders(t *testing.T) {
	h := http.Header{}
	SignHeaders(h, vecSecret, vecID, "initiative.created", time.Unix(vecTS, 999_000_000), []byte(vecBody))
	want := map[string]string{
		"X-Webhook-Signature": vecSignature,
		"X-Webhook-ID":        vecID,
		"X-Webhook-Event":     "initiative.created",
		"X-Webhook-Timestamp": "1735689600",
		"webhook-id":          vecID,
		"webhook-timestamp":   "1735689600",
		"webhook-signature":   vecStdSignature,
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestVerify(t *testing.T) {
	body := []byte(vecBody)
	if !Verify(vecSecret, body, vecSignature) {
		t.Fatal("valid signature rejected")
	}
	for name, c := range map[string]struct {
		secret, header string
		body           []byte
	}{
		"wrong secret":     {"another-secret-0123456789", vecSignature, body},
		"tampered body":    {vecSecret, vecSignature, append([]byte(vecBody[:len(vecBody)-2]), `x}`...)},
		"uppercase hex":    {vecSecret, "sha256=E49527B773E24CDD65FF1C8C137ADCCD3B710B873ECD9D0792C08BDAE61DCD8A", body},
		"missing prefix":   {vecSecret, vecSignature[len("sha256="):], body},
		"empty header":     {vecSecret, "", body},
		"truncated header": {vecSecret, vecSignature[:20], body},
	} {
		if Verify(c.secret, c.body, c.header) {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	body := []byte(vecBody)
	at := time.Unix(vecTS, 0)
	hdr := func(sig string, ts int64) http.Header {
		h := http.Header{}
		h.Set(HeaderStdID, vecID)
		h.Set(HeaderStdTimestamp, strconv.FormatInt(ts, 10))
		h.Set(HeaderStdSignature, sig)
		return h
	}
	if err := VerifyStandard(vecSecret, hdr(vecStdSignature, vecTS), body, 5*time.Minute, at.Add(time.Minute)); err != nil {
		t.Fatalf("valid: %v", err)
	}
	// Several signatures (key rotation): any match is enough.
	if err := VerifyStandard(vecSecret, hdr("v1,AAAA "+vecStdSignature, vecTS), body, 5*time.Minute, at); err != nil {
		t.Fatalf("multi: %v", err)
	}
	if err := VerifyStandard(vecSecret, hdr(vecStdSignature, vecTS), body, 5*time.Minute, at.Add(6*time.Minute)); !errors.Is(err, ErrBadTimestamp) {
		t.Errorf("replay after tolerance: got %v", err)
	}
	if err := VerifyStandard(vecSecret, hdr(vecStdSignature, vecTS+1), body, 5*time.Minute, at); !errors.Is(err, ErrNoMatchingSigner) {
		t.Errorf("timestamp changed: got %v", err)
	}
	if err := VerifyStandard("wrong-secret-0123456789", hdr(vecStdSignature, vecTS), body, 5*time.Minute, at); !errors.Is(err, ErrNoMatchingSigner) {
		t.Errorf("wrong secret: got %v", err)
	}
	if err := VerifyStandard(vecSecret, http.Header{}, body, 5*time.Minute, at); !errors.Is(err, ErrMissingHeaders) {
		t.Errorf("no headers: got %v", err)
	}
}
