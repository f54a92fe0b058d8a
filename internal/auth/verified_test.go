package auth

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A token verified once is served from the cache, yet removing its signing
// key from the directory stops it at the next reload, as without a cache, and
// a caller changing the claims it got does not change what the next caller gets.
func TestVerifiedTokensStopWithTheirKey(t *testing.T) {
	dir := t.TempDir()
	old := writeKeyAt(t, dir, time.Now().Add(-time.Hour))
	ks, err := LoadKeyStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewVerifier(context.Background(), ks, VerifierOptions{})
	tok, err := ks.Mint(MintOptions{Subject: "u1", TenantID: "t1", Permissions: []string{"initiatives:read"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c, err := v.Verify(context.Background(), tok)
		if err != nil || c.Subject != "u1" || !c.Self || c.Permissions[0] != "initiatives:read" {
			t.Fatalf("verify %d: %+v %v", i, c, err)
		}
		c.Subject, c.Permissions = "someone else", nil
	}
	if _, ok := v.verified.get(sha256Of(tok), time.Now()); !ok {
		t.Fatal("a verified token is not cached: the test would not test the cache")
	}
	// A second key arrives and the first is deleted (a compromised key taken out).
	writeKeyAt(t, dir, time.Now().Add(-10*time.Minute))
	if err := os.Remove(filepath.Join(dir, old+".pem")); err != nil {
		t.Fatal(err)
	}
	if err := ks.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("a token of a removed key still verifies (served from the cache)")
	}
}

// Only tokens that verified are cached, and never past their expiry.
func TestVerifiedCacheBounds(t *testing.T) {
	ks, _ := LoadKeyStore(t.TempDir())
	v, _ := NewVerifier(context.Background(), ks, VerifierOptions{})
	if _, err := v.Verify(context.Background(), "not.a.token"); err == nil {
		t.Fatal("garbage verified")
	}
	if len(v.verified.entries) != 0 {
		t.Fatalf("a refused token was cached: %d entries", len(v.verified.entries))
	}
	tok, _ := ks.Mint(MintOptions{Subject: "u1", TenantID: "t1", TTL: 10 * time.Second})
	now := time.Now()
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.verified.get(sha256Of(tok), now.Add(11*time.Second)); ok {
		t.Error("cached past the token's expiry")
	}
	long, _ := ks.Mint(MintOptions{Subject: "u2", TenantID: "t1", TTL: time.Hour})
	if _, err := v.Verify(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.verified.get(sha256Of(long), now.Add(verifiedFor+time.Second)); ok {
		t.Error("cached for longer than a minute")
	}
}
