package secretbox

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	b, err := New(key)
	if err != nil || b.Development {
		t.Fatalf("New: %v dev=%v", err, b.Development)
	}
	ad := []byte("webhook:t1:w1")
	s1, err := b.Seal([]byte("my-signing-secret-123"), ad)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := b.Seal([]byte("my-signing-secret-123"), ad)
	if bytes.Equal(s1, s2) {
		t.Error("two seals of the same secret are equal: nonce reuse")
	}
	if bytes.Contains(s1, []byte("my-signing-secret")) {
		t.Error("plaintext visible in sealed value")
	}
	pt, err := b.Open(s1, ad)
	if err != nil || string(pt) != "my-signing-secret-123" {
		t.Fatalf("Open: %q %v", pt, err)
	}
	if _, err := b.Open(s1, []byte("webhook:t2:w1")); !errors.Is(err, ErrDecrypt) {
		t.Errorf("other record's ad: %v", err)
	}
	other, _ := New(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 32)))
	if _, err := other.Open(s1, ad); !errors.Is(err, ErrDecrypt) {
		t.Errorf("other key: %v", err)
	}
	tampered := append([]byte(nil), s1...)
	tampered[len(tampered)-1] ^= 1
	if _, err := b.Open(tampered, ad); !errors.Is(err, ErrDecrypt) {
		t.Errorf("tampered: %v", err)
	}
	for _, bad := range [][]byte{nil, {1}, append([]byte{2}, s1[1:]...)} {
		if _, err := b.Open(bad, ad); !errors.Is(err, ErrDecrypt) {
			t.Errorf("malformed %v: %v", bad, err)
		}
	}
}

func TestNewKeys(t *testing.T) {
	dev, err := New("")
	if err != nil || !dev.Development {
		t.Fatalf("empty key: %v", err)
	}
	// The development key is fixed: values survive restarts.
	s, _ := dev.Seal([]byte("x"), nil)
	dev2, _ := New("  ")
	if pt, err := dev2.Open(s, nil); err != nil || string(pt) != "x" {
		t.Errorf("development key not stable: %v", err)
	}
	for _, bad := range []string{"not base64!", base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		if _, err := New(bad); err == nil || !strings.Contains(err.Error(), "SECRETS_KEY") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A hint shows the last 4 characters only of a secret long enough that they give little away.
func TestHint(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "****",
		"abcd":                "****",
		"abcdefghijklmno":     "****", // 15
		"abcdefghijklmnop":    "****mnop",
		"ÄÖÜäöüßÄÖÜäöüßé":     "****", // 15 characters, 30 bytes
		"ÄÖÜäöüßÄÖÜäöüßéè":    "****üßéè",
		"contract-token-3456": "****3456",
	} {
		if got := Hint(in); got != want {
			t.Errorf("Hint(%q) = %q, want %q", in, got, want)
		}
	}
}
