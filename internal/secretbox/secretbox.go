// Package secretbox encrypts secrets at rest (webhook signing secrets,
// integration tokens) with AES-256-GCM under the key in SECRETS_KEY.
//
// Sealed format: 1 version byte (1) | 12-byte random nonce | ciphertext+tag.
// The caller passes associated data naming where the secret belongs (e.g.
// "webhook:<tenant>:<id>"), so a ciphertext copied to another row or tenant
// does not decrypt.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

const version = 1

// ErrDecrypt means a sealed value is malformed, was sealed under another key
// or belongs to other associated data.
var ErrDecrypt = errors.New("secretbox: cannot decrypt (wrong key, wrong record or corrupted)")

// Box seals and opens secrets. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
	// Development is true when no SECRETS_KEY was given and the fixed
	// development key is in use: fine on a laptop, never in production.
	Development bool
}

// New builds a Box from SECRETS_KEY: the standard base64 encoding of 32 random
// bytes (e.g. `openssl rand -base64 32`). Empty selects a fixed development key.
func New(secretsKey string) (*Box, error) {
	var key []byte
	dev := false
	if s := strings.TrimSpace(secretsKey); s == "" {
		k := sha256.Sum256([]byte("valuecase development secrets key; set SECRETS_KEY outside local development"))
		key, dev = k[:], true
	} else {
		var err error
		if key, err = base64.StdEncoding.DecodeString(s); err != nil || len(key) != 32 {
			return nil, errors.New("SECRETS_KEY: want the base64 encoding of 32 bytes (openssl rand -base64 32)")
		}
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("SECRETS_KEY: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("SECRETS_KEY: %w", err)
	}
	return &Box{aead: aead, Development: dev}, nil
}

// Seal encrypts plaintext bound to ad.
func (b *Box) Seal(plaintext, ad []byte) ([]byte, error) {
	out := make([]byte, 1+b.aead.NonceSize(), 1+b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return b.aead.Seal(out, out[1:], plaintext, ad), nil
}

// Open decrypts a value made by Seal with the same ad.
func (b *Box) Open(sealed, ad []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(sealed) < 1+ns+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrDecrypt
	}
	pt, err := b.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], ad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

// hintLen is how many trailing characters of a secret its hint shows, and
// hintMinLen how long a secret must be for that: 4 characters of a shorter
// one give too much of it away.
const (
	hintLen    = 4
	hintMinLen = 16
)

// Hint is what an API shows of a sealed secret instead of the secret (webhook
// secrets, integration tokens): "****" and its last 4 characters when it has
// at least 16, else "****" alone.
func Hint(secret string) string {
	r := []rune(secret)
	if len(r) < hintMinLen {
		return "****"
	}
	return "****" + string(r[len(r)-hintLen:])
}
