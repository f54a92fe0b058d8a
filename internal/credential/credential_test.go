package credential

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestNewAndParse(t *testing.T) {
	tenant := uuid.New()
	for _, kind := range []string{APIKey, RefreshToken} {
		c := New(kind, tenant)
		p, ok := Parse(kind, c.Raw)
		if !ok || p.Tenant != tenant || p.ID != c.ID || p.Kind != kind || p.Raw != c.Raw {
			t.Fatalf("%s: parsed %+v from %q", kind, p, c.Raw)
		}
		if !strings.HasPrefix(c.Raw, c.Prefix()+"_") || !HasKind(kind, c.Raw) {
			t.Fatalf("%s: prefix %q of %q", kind, c.Prefix(), c.Raw)
		}
		if !Matches(c.Raw, Hash(c.Raw)) || Matches(c.Raw+"x", Hash(c.Raw)) {
			t.Fatal("hash comparison")
		}
		if New(kind, tenant).Raw == c.Raw {
			t.Fatal("two credentials alike")
		}
	}
	client, secret := NewClient(tenant)
	if p, ok := Parse(ClientID, client.Raw); !ok || p.Tenant != tenant {
		t.Fatalf("client id %q", client.Raw)
	}
	if !ValidSecret(secret) || ValidSecret(secret[:len(secret)-1]) || ValidSecret("vcs_"+strings.Repeat("A", 52)) {
		t.Fatalf("secret %q", secret)
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	tenant := uuid.New()
	good := New(APIKey, tenant).Raw
	parts := strings.Split(good, "_")
	cases := map[string]string{
		"empty":            "",
		"other kind":       strings.Replace(good, "vck_", "vcr_", 1),
		"jwt":              "eyJhbGciOiJFZERTQSJ9.e30.sig",
		"upper-case hex":   "vck_" + strings.ToUpper(parts[1]) + "_" + parts[2] + "_" + parts[3],
		"short tenant":     "vck_" + parts[1][1:] + "_" + parts[2] + "_" + parts[3],
		"bad base32":       "vck_" + parts[1] + "_" + parts[2] + "_" + strings.Repeat("1", 52),
		"short secret":     good[:len(good)-1],
		"extra part":       good + "_x",
		"non-hex tenant":   "vck_" + strings.Repeat("z", 32) + "_" + parts[2] + "_" + parts[3],
		"missing id":       "vck_" + parts[1] + "__" + parts[3],
		"client with part": "vcc_" + parts[1] + "_" + parts[2] + "_x",
	}
	for name, raw := range cases {
		kind := APIKey
		if strings.HasPrefix(name, "client") {
			kind = ClientID
		}
		if _, ok := Parse(kind, raw); ok {
			t.Errorf("%s: %q accepted", name, raw)
		}
	}
}
