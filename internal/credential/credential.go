// Package credential makes and checks the service's opaque credentials: API
// keys, refresh tokens and service-client secrets.
//
// A credential names its kind and tenant in clear, then a public id and a
// secret:
//
//	vck_<tenant: 32 hex>_<id: 10 base32>_<secret: 52 base32>   API key
//	vcr_<tenant: 32 hex>_<id: 10 base32>_<secret: 52 base32>   refresh token
//	vcc_<tenant: 32 hex>_<id: 10 base32>                       service client id (public)
//	vcs_<secret: 52 base32>                                    service client secret
//
// The tenant lets endpoints without X-Tenant-ID (token, refresh) open the
// right tenant's transaction, where row-level security applies as everywhere,
// and lets a key presented to another tenant be told apart (403) from a bad key
// (401). The id finds the row; the secret (32 random bytes) is never stored:
// only the SHA-256 of the whole credential is, compared in constant time.
package credential

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// Kinds of credential, the prefix before the first underscore.
const (
	APIKey       = "vck"
	RefreshToken = "vcr"
	ClientID     = "vcc"
	ClientSecret = "vcs"
)

const (
	idBytes     = 6  // 10 base32 characters (48 bits, of which 50 shown): finds the row, not secret
	secretBytes = 32 // 52 base32 characters: 256 bits
	idLen       = 10
	secretLen   = 52
	tenantLen   = 32
)

var enc = base32.StdEncoding.WithPadding(base32.NoPadding)

func random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return strings.ToLower(enc.EncodeToString(b))
}

func tenantPart(t uuid.UUID) string { return hex.EncodeToString(t[:]) }

// Parsed is a well-formed credential with a tenant and an id.
type Parsed struct {
	Kind   string
	Tenant uuid.UUID
	ID     string // public id, the row's lookup key
	Raw    string
}

// Prefix is the credential's public part, shown in lists: kind, tenant and id.
func (p Parsed) Prefix() string { return p.Kind + "_" + tenantPart(p.Tenant) + "_" + p.ID }

// New makes a secret credential (API key or refresh token) for a tenant.
func New(kind string, tenant uuid.UUID) Parsed {
	id := random(idBytes)[:idLen]
	raw := kind + "_" + tenantPart(tenant) + "_" + id + "_" + random(secretBytes)
	return Parsed{Kind: kind, Tenant: tenant, ID: id, Raw: raw}
}

// NewClient makes a service client's public id and its secret.
func NewClient(tenant uuid.UUID) (client Parsed, secret string) {
	id := random(idBytes)[:idLen]
	client = Parsed{Kind: ClientID, Tenant: tenant, ID: id}
	client.Raw = client.Prefix()
	return client, ClientSecret + "_" + random(secretBytes)
}

// Parse checks the shape of a credential of the given kind. It does not check
// that it exists; ok is false for anything malformed.
func Parse(kind, raw string) (Parsed, bool) {
	parts := strings.Split(raw, "_")
	want := 4
	if kind == ClientID {
		want = 3
	}
	if len(parts) != want || parts[0] != kind || len(parts[1]) != tenantLen || len(parts[2]) != idLen {
		return Parsed{}, false
	}
	tb, err := hex.DecodeString(parts[1])
	if err != nil || strings.ToLower(parts[1]) != parts[1] {
		return Parsed{}, false
	}
	if !isBase32(parts[2]) || (want == 4 && (len(parts[3]) != secretLen || !isBase32(parts[3]))) {
		return Parsed{}, false
	}
	return Parsed{Kind: kind, Tenant: uuid.UUID(tb), ID: parts[2], Raw: raw}, true
}

// ValidSecret reports whether s has the shape of a client secret.
func ValidSecret(s string) bool {
	rest, ok := strings.CutPrefix(s, ClientSecret+"_")
	return ok && len(rest) == secretLen && isBase32(rest)
}

// HasKind reports whether raw starts like a credential of kind (e.g. to tell
// an API key from a JWT in the Authorization header).
func HasKind(kind, raw string) bool { return strings.HasPrefix(raw, kind+"_") }

func isBase32(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

// Hash is what is stored: the SHA-256 of the whole credential.
func Hash(raw string) []byte {
	h := sha256.Sum256([]byte(raw))
	return h[:]
}

// Matches compares a presented credential with a stored hash in constant time.
func Matches(raw string, stored []byte) bool {
	return subtle.ConstantTimeCompare(Hash(raw), stored) == 1
}
