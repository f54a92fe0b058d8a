// Package auth verifies access tokens (the service's own and external identity
// providers') and mints the service's own tokens.
package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// SelfIssuer is the `iss` of tokens the service signs itself.
const SelfIssuer = "valuecase"

type signingKey struct {
	kid     string
	private ed25519.PrivateKey
}

// KeyStore holds the service's own Ed25519 signing keys: the newest signs,
// all of them verify and are published, so tokens signed by an older key stay
// valid until it is removed from the directory.
type KeyStore struct {
	keys []signingKey // oldest first
}

// LoadKeyStore reads every *.pem key in dir, creating the directory and a
// first key when there is none.
func LoadKeyStore(dir string) (*KeyStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %w", err)
	}
	ks, err := readKeys(dir)
	if err != nil {
		return nil, err
	}
	if len(ks.keys) == 0 {
		if _, err := GenerateKey(dir); err != nil {
			return nil, err
		}
		return readKeys(dir)
	}
	return ks, nil
}

func readKeys(dir string) (*KeyStore, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.pem"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths) // names start with a UTC timestamp: oldest first
	ks := &KeyStore{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %w", err)
		}
		block, _ := pem.Decode(b)
		if block == nil {
			return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %s is not PEM", p)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %s: %w", p, err)
		}
		ed, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %s is not an Ed25519 key", p)
		}
		ks.keys = append(ks.keys, signingKey{kid: strings.TrimSuffix(filepath.Base(p), ".pem"), private: ed})
	}
	return ks, nil
}

// GenerateKey writes a new signing key into dir and returns its key id; it
// signs from the next start on.
func GenerateKey(dir string) (string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", err
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	kid := time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(suffix[:])
	path := filepath.Join(dir, kid+".pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", err
	}
	return kid, nil
}

// PublicKey returns the verification key of one of the service's own key ids.
func (ks *KeyStore) PublicKey(kid string) (ed25519.PublicKey, bool) {
	for _, k := range ks.keys {
		if k.kid == kid {
			return k.private.Public().(ed25519.PublicKey), true
		}
	}
	return nil, false
}

// Sign signs claims with the newest key.
func (ks *KeyStore) Sign(claims jwt.Claims) (string, error) {
	if len(ks.keys) == 0 {
		return "", errors.New("no signing key")
	}
	k := ks.keys[len(ks.keys)-1]
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = k.kid
	return tok.SignedString(k.private)
}

// JWKS renders the public keys as a JSON Web Key Set.
func (ks *KeyStore) JWKS() []byte {
	type jwk struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
		Alg string `json:"alg"`
		Use string `json:"use"`
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for i := len(ks.keys) - 1; i >= 0; i-- { // newest first
		k := ks.keys[i]
		set.Keys = append(set.Keys, jwk{
			Kty: "OKP", Crv: "Ed25519", Kid: k.kid, Alg: "EdDSA", Use: "sig",
			X: base64.RawURLEncoding.EncodeToString(k.private.Public().(ed25519.PublicKey)),
		})
	}
	b, _ := json.Marshal(set)
	return b
}
