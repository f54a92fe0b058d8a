package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
)

// identityIDP is an external identity provider: a real JWKS endpoint and a key
// that signs sign-in tokens, as the token-exchange grant receives them.
type identityIDP struct {
	t    *testing.T
	priv ed25519.PrivateKey
	srv  *httptest.Server
}

func newIdentityIDP(t *testing.T) *identityIDP {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(map[string]any{"keys": []map[string]any{{
		"kty": "OKP", "crv": "Ed25519", "kid": "idp-1", "alg": "EdDSA", "use": "sig",
		"x": base64.RawURLEncoding.EncodeToString(pub),
	}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(srv.Close)
	return &identityIDP{t: t, priv: priv, srv: srv}
}

// sign issues an identity-provider token for the caller.
func (p *identityIDP) sign(c caller, email string, ttl time.Duration) string {
	p.t.Helper()
	now := time.Now()
	claims := auth.Claims{
		OrgID: c.tenant.String(), Roles: nonNilList(c.roles), Permissions: nonNilList(c.permissions), Email: email,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: "https://idp.example", Subject: c.sub,
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = "idp-1"
	s, err := tok.SignedString(p.priv)
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func nonNilList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newIdentityServer is newTestServer (enterprise_plus, so the plan limits stay
// out of the way) whose verifier also trusts the identity provider.
func newIdentityServer(t *testing.T) (*testServer, *identityIDP) {
	t.Helper()
	idp := newIdentityIDP(t)
	ts := newTestServer(t, "enterprise_plus", func(d *api.Deps) {
		v, err := auth.NewVerifier(t.Context(), d.Keys, auth.VerifierOptions{JWKSURLs: []string{idp.srv.URL}})
		if err != nil {
			t.Fatal(err)
		}
		d.Verifier = v
	})
	return ts, idp
}

// doRaw sends a request with exactly the given headers (no caller token).
func (ts *testServer) doRaw(method, path string, body any, headers ...string) response {
	ts.t.Helper()
	return ts.do(nil, method, path, body, headers...)
}

// doBearer sends a request with an access token (or key) and the server's tenant.
func (ts *testServer) doBearer(bearer, method, path string, body any, headers ...string) response {
	ts.t.Helper()
	h := append([]string{"Authorization", "Bearer " + bearer, "X-Tenant-ID", ts.tenant.String()}, headers...)
	return ts.do(nil, method, path, body, h...)
}

// doKey sends a request authenticated by an API key in X-API-Key.
func (ts *testServer) doKey(key, method, path string, body any, headers ...string) response {
	ts.t.Helper()
	h := append([]string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, headers...)
	return ts.do(nil, method, path, body, h...)
}

// postForm posts application/x-www-form-urlencoded parameters.
func (ts *testServer) postForm(path string, v url.Values, headers ...string) response {
	ts.t.Helper()
	h := append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)
	return ts.do(nil, "POST", path, v.Encode(), h...)
}

// exchange signs the caller in through the token-exchange grant.
func (ts *testServer) exchange(idp *identityIDP, c caller, email string) (access, refresh string) {
	ts.t.Helper()
	r := ts.doRaw("POST", "/v1/auth/token", map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(c, email, time.Hour),
	})
	expect(ts.t, r, 200)
	m := r.json(ts.t)
	return m["access_token"].(string), m["refresh_token"].(string)
}

// refresh exchanges a refresh token.
func (ts *testServer) refresh(token string) response {
	ts.t.Helper()
	return ts.doRaw("POST", "/v1/auth/refresh", map[string]any{"refresh_token": token})
}

// inTenant runs SQL checks in the server's tenant.
func (ts *testServer) inTenant(fn func(tx pgx.Tx) error) {
	ts.t.Helper()
	if err := db.InTenant(context.Background(), ts.pool, ts.tenant, fn); err != nil {
		ts.t.Fatal(err)
	}
}

// userBySubject reads a user row.
func (ts *testServer) userBySubject(sub string) dbsqlc.User {
	ts.t.Helper()
	var u dbsqlc.User
	ts.inTenant(func(tx pgx.Tx) error {
		var err error
		u, err = db.Q.UserGetBySubject(context.Background(), tx, dbsqlc.UserGetBySubjectParams{TenantID: ts.tenant, Subject: &sub})
		return err
	})
	return u
}

// events lists the tenant's outbox events of one type.
func (ts *testServer) events(eventType string) []map[string]any {
	ts.t.Helper()
	var out []map[string]any
	ts.inTenant(func(tx pgx.Tx) error {
		rows, err := db.Q.OutboxListByTenant(context.Background(), tx, ts.tenant)
		for _, r := range rows {
			if r.Type == eventType {
				var m map[string]any
				_ = json.Unmarshal(r.Data, &m)
				out = append(out, m)
			}
		}
		return err
	})
	return out
}

// makeStoredAdmin provisions the caller's user and stores the Admin role for it.
func (ts *testServer) makeStoredAdmin(c caller) string {
	ts.t.Helper()
	expect(ts.t, ts.do(&c, "GET", "/v1/users", nil), 200)
	u := ts.userBySubject(c.sub)
	expect(ts.t, ts.do(&c, "PATCH", "/v1/users/"+u.ID.String(), map[string]any{"roles": []string{"Admin"}}), 200)
	return u.ID.String()
}

// otherTenant makes a second tenant in the server's database.
func (ts *testServer) otherTenant() uuid.UUID {
	ts.t.Helper()
	t, err := db.Q.TenantCreate(context.Background(), ts.pool, dbsqlc.TenantCreateParams{Name: "Other " + uuid.NewString()[:8], Plan: "enterprise"})
	if err != nil {
		ts.t.Fatal(err)
	}
	return t.ID
}
