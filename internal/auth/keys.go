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
	"sync"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// SelfIssuer is the `iss` of tokens the service signs itself.
const SelfIssuer = "valuecase"

type signingKey struct {
	kid     string
	created time.Time // from the key id; zero when the file name is not one GenerateKey made
	private ed25519.PrivateKey
}

// KeyActivationDelay is how long a new key is published before it signs,
// when a process sets it (the API and the token command do): every instance
// reloads the directory within a minute (see Reload), so each one can verify
// a new key's tokens before any instance issues them.
const KeyActivationDelay = 2 * time.Minute

// KeyStore holds the service's own Ed25519 signing keys: the newest signs,
// all of them verify and are published, so tokens signed by an older key stay
// valid until it is removed from the directory.
type KeyStore struct {
	dir string
	mu  sync.RWMutex
	// keys, oldest first
	keys []signingKey
	// ActivationDelay: the newest key older than this signs (the oldest key
	// when none is). Zero: the newest key signs at once. Set before use.
	ActivationDelay time.Duration
}

// LoadKeyStore reads every *.pem key in dir, creating the directory and a
// first key when there is none.
func LoadKeyStore(dir string) (*KeyStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %w", err)
	}
	ks, err := readKeys(dir)
	if err != nil || len(ks.keys) > 0 {
		return ks, err
	}
	// Processes started together on an empty directory (the API, a worker, the
	// token command) must agree on one first key, or a token signed by one is
	// unknown to another until its next reload: the first to hold the lock
	// creates it, the others read it.
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("AUTH_SIGNING_KEYS_DIR: %w", err)
	}
	defer unlock()
	if ks, err = readKeys(dir); err != nil || len(ks.keys) > 0 {
		return ks, err
	}
	if _, err := GenerateKey(dir); err != nil {
		return nil, err
	}
	return readKeys(dir)
}

// lockDir takes an exclusive advisory lock on dir's lock file, waiting for
// another process that holds it.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

func readKeys(dir string) (*KeyStore, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.pem"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths) // names start with a UTC timestamp: oldest first
	ks := &KeyStore{dir: dir}
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
		kid := strings.TrimSuffix(filepath.Base(p), ".pem")
		ks.keys = append(ks.keys, signingKey{kid: kid, created: KeyCreated(kid), private: ed})
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
	// Written under a name readKeys skips, then renamed: a process reading the
	// directory meanwhile sees the whole key or none of it.
	tmp, err := os.CreateTemp(dir, ".new-key-*") // mode 0600
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, kid+".pem")); err != nil {
		return "", err
	}
	return kid, nil
}

// KeyCreated is the creation time written into a key id by GenerateKey
// (zero for other names).
func KeyCreated(kid string) time.Time {
	ts, _, _ := strings.Cut(kid, "-")
	t, err := time.Parse("20060102T150405Z", ts)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Reload re-reads the key directory, so keys added (rotate) or removed
// (prune) by another process take effect without a restart. A directory that
// has become empty or unreadable keeps the keys already loaded.
func (ks *KeyStore) Reload() error {
	if ks.dir == "" {
		return nil
	}
	fresh, err := readKeys(ks.dir)
	if err != nil {
		return err
	}
	if len(fresh.keys) == 0 {
		return errors.New("AUTH_SIGNING_KEYS_DIR: no keys left; keeping the loaded ones")
	}
	ks.mu.Lock()
	ks.keys = fresh.keys
	ks.mu.Unlock()
	return nil
}

// KeyInfo describes one key of the store.
type KeyInfo struct {
	KID     string    `json:"kid"`
	Created time.Time `json:"created"`
	Signing bool      `json:"signing"`
}

// Keys lists the loaded keys, oldest first.
func (ks *KeyStore) Keys() []KeyInfo {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	signer := ks.signerLocked(time.Now())
	out := make([]KeyInfo, len(ks.keys))
	for i, k := range ks.keys {
		out[i] = KeyInfo{KID: k.kid, Created: k.created, Signing: i == signer}
	}
	return out
}

// signerLocked is the index of the key that signs at now.
func (ks *KeyStore) signerLocked(now time.Time) int {
	if len(ks.keys) == 0 {
		return -1
	}
	for i := len(ks.keys) - 1; i >= 0; i-- {
		if ks.ActivationDelay <= 0 || !ks.keys[i].created.After(now.Add(-ks.ActivationDelay)) {
			return i
		}
	}
	return 0
}

// PruneKeys deletes from dir every key whose successor has been signing for
// longer than retiredFor (so no unexpired token it signed remains, when
// retiredFor exceeds the longest token lifetime). The newest key is never
// deleted, nor a key whose successor's age is unknown. It returns the
// deleted key ids.
func PruneKeys(dir string, activationDelay, retiredFor time.Duration, now time.Time) ([]string, error) {
	ks, err := readKeys(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for i := 0; i+1 < len(ks.keys); i++ {
		next := ks.keys[i+1].created
		if next.IsZero() || !now.After(next.Add(activationDelay+retiredFor)) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, ks.keys[i].kid+".pem")); err != nil {
			return removed, err
		}
		removed = append(removed, ks.keys[i].kid)
	}
	return removed, nil
}

// PublicKey returns the verification key of one of the service's own key ids.
func (ks *KeyStore) PublicKey(kid string) (ed25519.PublicKey, bool) {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	for _, k := range ks.keys {
		if k.kid == kid {
			return k.private.Public().(ed25519.PublicKey), true
		}
	}
	return nil, false
}

// Sign signs claims with the newest key (past its activation delay).
func (ks *KeyStore) Sign(claims jwt.Claims) (string, error) {
	ks.mu.RLock()
	i := ks.signerLocked(time.Now())
	var k signingKey
	if i >= 0 {
		k = ks.keys[i]
	}
	ks.mu.RUnlock()
	if i < 0 {
		return "", errors.New("no signing key")
	}
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
	ks.mu.RLock()
	defer ks.mu.RUnlock()
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
