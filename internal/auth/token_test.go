package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// idp is a real HTTP JWKS endpoint holding one RSA and one EC key.
type idp struct {
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
	hits atomic.Int32
	srv  *httptest.Server
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	r, _ := rsa.GenerateKey(rand.Reader, 2048)
	e, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p := &idp{rsa: r, ec: e}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	set := map[string]any{"keys": []map[string]any{
		{"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig", "n": b64(r.N.Bytes()), "e": b64(big.NewInt(int64(r.E)).Bytes())},
		{"kty": "EC", "kid": "ec-1", "alg": "ES256", "use": "sig", "crv": "P-256", "x": b64(e.X.FillBytes(make([]byte, 32))), "y": b64(e.Y.FillBytes(make([]byte, 32)))},
	}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.hits.Add(1)
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func claims(mod func(*Claims)) Claims {
	now := time.Now()
	c := Claims{OrgID: "tenant-1", Roles: []string{"Admin"}, Permissions: []string{"initiatives:read"},
		RegisteredClaims: jwt.RegisteredClaims{Subject: "user-1", Issuer: "https://idp.example", Audience: jwt.ClaimStrings{"valuecase-api"},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}}
	if mod != nil {
		mod(&c)
	}
	return c
}

func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, c Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	p := newIDP(t)
	own, err := LoadKeyStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(ctx, own, VerifierOptions{JWKSURLs: []string{p.srv.URL}, Issuer: "https://idp.example", Audience: "valuecase-api"})
	if err != nil {
		t.Fatal(err)
	}
	selfToken, err := own.Mint(MintOptions{Subject: "svc", TenantID: "tenant-1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	noneToken, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)

	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"own EdDSA token", selfToken, true},
		{"external RS256", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(nil)), true},
		{"external ES256", sign(t, jwt.SigningMethodES256, "ec-1", p.ec, claims(nil)), true},
		{"alg none", noneToken, false},
		{"HS256 with the public modulus as secret", sign(t, jwt.SigningMethodHS256, "rsa-1", p.rsa.N.Bytes(), claims(nil)), false},
		{"RS512 not allowed", sign(t, jwt.SigningMethodRS512, "rsa-1", p.rsa, claims(nil)), false},
		{"signed by a stranger's key", sign(t, jwt.SigningMethodRS256, "rsa-1", otherRSA, claims(nil)), false},
		{"expired", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute)) })), false},
		{"no exp", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.ExpiresAt = nil })), false},
		{"not yet valid", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.NotBefore = jwt.NewNumericDate(time.Now().Add(time.Hour)) })), false},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.Issuer = "https://evil.example" })), false},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.Audience = jwt.ClaimStrings{"other"} })), false},
		{"missing org_id", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.OrgID = "" })), false},
		{"missing sub", sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.Subject = "" })), false},
		{"garbage", "not.a.jwt", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(ctx, c.token)
			if (err == nil) != c.ok {
				t.Fatalf("want ok=%v, got %v", c.ok, err)
			}
		})
	}
}

func TestUnknownKeyIDsCannotStallTheServer(t *testing.T) {
	ctx := context.Background()
	p := newIDP(t)
	own, _ := LoadKeyStore(t.TempDir())
	v, err := NewVerifier(ctx, own, VerifierOptions{JWKSURLs: []string{p.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	// Let the initial fetch land, then flood with unknown key ids.
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "rsa-1", p.rsa, claims(func(c *Claims) { c.Audience = nil }))); err != nil {
		t.Fatal(err)
	}
	before := p.hits.Load()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := sign(t, jwt.SigningMethodRS256, "unknown-"+string(rune('a'+i%26)), p.rsa, claims(nil))
			if _, err := v.Verify(ctx, tok); err == nil {
				t.Error("a token with an unknown kid was accepted")
			}
		}()
	}
	wg.Wait()
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Fatalf("50 unknown-kid tokens took %v: lookups are queueing", elapsed)
	}
	if refetches := p.hits.Load() - before; refetches > 1 {
		t.Fatalf("unknown kids caused %d JWKS refetches, want at most 1", refetches)
	}
}

func TestKeyRotationKeepsOldTokensValid(t *testing.T) {
	dir := t.TempDir()
	ks1, _ := LoadKeyStore(dir)
	old, _ := ks1.Mint(MintOptions{Subject: "u", TenantID: "t", TTL: time.Hour})
	time.Sleep(1100 * time.Millisecond) // key ids are second-resolution timestamps
	if _, err := GenerateKey(dir); err != nil {
		t.Fatal(err)
	}
	ks2, _ := LoadKeyStore(dir)
	v, _ := NewVerifier(context.Background(), ks2, VerifierOptions{})
	if _, err := v.Verify(context.Background(), old); err != nil {
		t.Fatalf("token of the previous key refused after rotation: %v", err)
	}
	var set struct{ Keys []struct{ Kid string } }
	_ = json.Unmarshal(ks2.JWKS(), &set)
	if len(set.Keys) != 2 {
		t.Fatalf("want both keys published, got %d", len(set.Keys))
	}
	fresh, _ := ks2.Mint(MintOptions{Subject: "u", TenantID: "t", TTL: time.Hour})
	tok, _, _ := jwt.NewParser().ParseUnverified(fresh, &Claims{})
	if tok.Header["kid"] != set.Keys[0].Kid {
		t.Fatalf("new tokens must be signed by the newest key %s, got %v", set.Keys[0].Kid, tok.Header["kid"])
	}
}
