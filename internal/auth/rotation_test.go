package auth

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, &Claims{})
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Header["kid"].(string)
}

// writeKeyAt writes a key whose id says it was created at the given time.
func writeKeyAt(t *testing.T, dir string, at time.Time) string {
	t.Helper()
	tmp := t.TempDir()
	kid, err := GenerateKey(tmp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(tmp, kid+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	kid = at.UTC().Format("20060102T150405Z") + kid[len("20060102T150405Z"):]
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return kid
}

func TestActivationDelayAndReload(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := writeKeyAt(t, dir, now.Add(-48*time.Hour))
	ks, err := LoadKeyStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ks.ActivationDelay = KeyActivationDelay
	before, _ := ks.Mint(MintOptions{Subject: "u", TenantID: "t", TTL: time.Hour})

	// Rotation in another process: the running store publishes the key after Reload, but
	// signs with it only once the activation delay has passed.
	fresh := writeKeyAt(t, dir, now)
	if err := ks.Reload(); err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []struct{ Kid string } }
	_ = json.Unmarshal(ks.JWKS(), &set)
	if len(set.Keys) != 2 || set.Keys[0].Kid != fresh {
		t.Fatalf("JWKS after reload: %+v", set)
	}
	tok, _ := ks.Mint(MintOptions{Subject: "u", TenantID: "t", TTL: time.Hour})
	if kidOf(t, tok) != old {
		t.Fatalf("a key younger than the activation delay signed")
	}
	ks.ActivationDelay = 0
	tok, _ = ks.Mint(MintOptions{Subject: "u", TenantID: "t", TTL: time.Hour})
	if kidOf(t, tok) != fresh {
		t.Fatalf("the newest key should sign once active")
	}
	v, _ := NewVerifier(context.Background(), ks, VerifierOptions{})
	for _, tk := range []string{before, tok} {
		if c, err := v.Verify(context.Background(), tk); err != nil || !c.Self {
			t.Fatalf("token refused after rotation: %v", err)
		}
	}
	info := ks.Keys()
	if len(info) != 2 || info[0].Signing || !info[1].Signing {
		t.Fatalf("Keys(): %+v", info)
	}
}

func TestPruneKeys(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	k1 := writeKeyAt(t, dir, now.Add(-72*time.Hour))
	k2 := writeKeyAt(t, dir, now.Add(-30*time.Hour)) // k1 retired 30h ago
	k3 := writeKeyAt(t, dir, now.Add(-2*time.Hour))  // k2 retired 2h ago
	removed, err := PruneKeys(dir, KeyActivationDelay, 24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != k1 {
		t.Fatalf("removed %v, want only %s", removed, k1)
	}
	ks, _ := LoadKeyStore(dir)
	if info := ks.Keys(); len(info) != 2 || info[0].KID != k2 || info[1].KID != k3 {
		t.Fatalf("left: %+v", info)
	}
	// The newest key is never removed, however old.
	removed, _ = PruneKeys(dir, 0, time.Hour, now.Add(1000*time.Hour))
	if len(removed) != 1 || removed[0] != k2 {
		t.Fatalf("removed %v, want %s", removed, k2)
	}
}

func TestReloadKeepsKeysWhenDirectoryEmpties(t *testing.T) {
	dir := t.TempDir()
	ks, _ := LoadKeyStore(dir)
	paths, _ := filepath.Glob(filepath.Join(dir, "*.pem"))
	for _, p := range paths {
		_ = os.Remove(p)
	}
	if err := ks.Reload(); err == nil {
		t.Fatal("reload of an empty directory should report it")
	}
	if _, err := ks.Mint(MintOptions{Subject: "u", TenantID: "t", TTL: time.Minute}); err != nil {
		t.Fatalf("keys lost: %v", err)
	}
}

func TestSelfAndSessionClaims(t *testing.T) {
	ks, _ := LoadKeyStore(t.TempDir())
	v, _ := NewVerifier(context.Background(), ks, VerifierOptions{})
	tok, _ := ks.Mint(MintOptions{Subject: "c", TenantID: "t", ClientID: "vcc_x", SessionID: "s-1", TTL: time.Minute})
	c, err := v.Verify(context.Background(), tok)
	if err != nil || !c.Self || c.ClientID != "vcc_x" || c.SessionID != "s-1" {
		t.Fatalf("claims %+v, %v", c, err)
	}
}
