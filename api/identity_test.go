package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/internal/auth"
)

func TestIdentityUsersInviteListGetPatch(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()

	r := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "ada@example.com", "name": "Ada", "roles": []string{"Manager"}})
	expect(t, r, 201)
	u := r.json(t)
	if u["status"] != "invited" || u["email"] != "ada@example.com" || u["subject"] != nil || r.header.Get("Location") != "/v1/users/"+u["id"].(string) {
		t.Fatalf("invited user: %v %v", u, r.header)
	}
	ev := ts.events("user.invited")
	if len(ev) != 1 || ev[0]["user"].(map[string]any)["id"] != u["id"] || ev[0]["invited_by"] != admin.sub {
		t.Fatalf("user.invited events: %v", ev)
	}

	// Duplicates, whatever the case, and bad input.
	expect(t, ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "ADA@example.com"}), 409, "ALREADY_EXISTS")
	expect(t, ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "not-an-address"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "Bob <bob@example.com>"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "POST", "/v1/users", map[string]any{}), 422, "VALIDATION_ERROR")
	bad := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "b@example.com", "roles": []string{"Viewer", "Wizard"}})
	expect(t, bad, 422, "VALIDATION_ERROR")
	if !strings.Contains(string(bad.body), `roles[1]`) || !strings.Contains(string(bad.body), `Wizard`) {
		t.Fatalf("unknown role not named: %s", bad.body)
	}
	// The admin's own user exists too (provisioned on its first request).
	expect(t, ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "cy@example.com"}), 201)

	list := ts.do(&admin, "GET", "/v1/users", nil).json(t)
	if n := list["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; n != float64(3) {
		t.Fatalf("total users %v: %v", n, list)
	}
	cases := []struct {
		query string
		want  int
	}{
		{"status=invited", 2},
		{"status=active", 1},
		{"status=deactivated", 0},
		{"role=Manager", 1},
		{"role=Manager&status=active", 0},
		{"page_size=1&page=2", 1},
		{"page=9", 0},
	}
	for _, c := range cases {
		got := ts.do(&admin, "GET", "/v1/users?"+c.query, nil)
		expect(t, got, 200)
		if n := len(got.json(t)["data"].([]any)); n != c.want {
			t.Errorf("GET /v1/users?%s: %d users, want %d", c.query, n, c.want)
		}
	}
	expect(t, ts.do(&admin, "GET", "/v1/users?status=gone", nil), 400, "INVALID_PARAMETER")
	expect(t, ts.do(&admin, "GET", "/v1/users?colour=red", nil), 400, "INVALID_PARAMETER")

	id := u["id"].(string)
	expect(t, ts.do(&admin, "GET", "/v1/users/"+id, nil), 200)
	expect(t, ts.do(&admin, "GET", "/v1/users/00000000-0000-0000-0000-000000000000", nil), 404, "NOT_FOUND")
	expect(t, ts.do(&admin, "GET", "/v1/users/nope", nil), 404, "NOT_FOUND")

	p := ts.do(&admin, "PATCH", "/v1/users/"+id, map[string]any{"name": "Ada L.", "roles": []string{"Analyst", "Viewer"}})
	expect(t, p, 200)
	if got := p.json(t); got["name"] != "Ada L." || fmt.Sprint(got["roles"]) != "[Analyst Viewer]" {
		t.Fatalf("after PATCH: %v", got)
	}
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+id, map[string]any{"roles": []string{"Nope"}}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+id, map[string]any{"status": "active", "colour": "x"}), 422, "VALIDATION_ERROR")
}

func TestIdentityInvitedUserBecomesActiveOnFirstSignIn(t *testing.T) {
	ts, idp := newIdentityServer(t)
	admin := ts.admin()
	r := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "Grace@Example.com", "roles": []string{"Manager"}})
	expect(t, r, 201)
	id := r.json(t)["id"].(string)

	// Direct use of an identity-provider token: the invitation is claimed by e-mail
	// (case-insensitive) and the stored Manager role grants what the token does not.
	grace := caller{sub: "idp|grace", tenant: ts.tenant}
	tok := idp.sign(grace, "grace@example.com", time.Hour)
	expect(t, ts.doBearer(tok, "GET", "/v1/initiatives", nil), 200)
	expect(t, ts.doBearer(tok, "POST", "/v1/initiatives", map[string]any{"name": "Graces"}), 201)
	expect(t, ts.doBearer(tok, "GET", "/v1/users", nil), 403, "AUTHORIZATION_ERROR")

	got := ts.do(&admin, "GET", "/v1/users/"+id, nil).json(t)
	if got["status"] != "active" || got["subject"] != "idp|grace" {
		t.Fatalf("after first sign-in: %v", got)
	}
	// One user, not two.
	if n := ts.do(&admin, "GET", "/v1/users?status=active", nil).json(t)["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; n != float64(2) {
		t.Fatalf("active users %v, want 2 (admin and grace)", n)
	}

	// The same through the token exchange.
	r = ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "lin@example.com", "roles": []string{"Viewer"}})
	expect(t, r, 201)
	lin := caller{sub: "idp|lin", tenant: ts.tenant}
	access, _ := ts.exchange(idp, lin, "lin@example.com")
	expect(t, ts.doBearer(access, "GET", "/v1/initiatives", nil), 200)
	expect(t, ts.doBearer(access, "POST", "/v1/initiatives", map[string]any{"name": "Lins"}), 403, "AUTHORIZATION_ERROR")
	if u := ts.userBySubject("idp|lin"); u.Status != "active" || u.ID.String() != r.json(t)["id"] {
		t.Fatalf("lin after exchange: %+v", u)
	}

	// A deactivated invitation is not turned into a fresh active user by signing in.
	r = ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "mal@example.com"})
	expect(t, ts.do(&admin, "POST", "/v1/users/"+r.json(t)["id"].(string)+"/deactivate", nil), 200)
	mal := caller{sub: "idp|mal", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	expect(t, ts.doBearer(idp.sign(mal, "mal@example.com", time.Hour), "GET", "/v1/initiatives", nil), 403, "AUTHORIZATION_ERROR")
}

func TestIdentityDeactivationTakesEffectOnTheNextRequest(t *testing.T) {
	ts, idp := newIdentityServer(t)
	admin := ts.admin()
	ts.makeStoredAdmin(admin)

	bob := caller{sub: "idp|bob", tenant: ts.tenant, roles: []string{"Manager"}}
	access, refresh := ts.exchange(idp, bob, "bob@example.com")
	direct := idp.sign(bob, "bob@example.com", time.Hour)
	own := ts.token(caller{sub: bob.sub, tenant: ts.tenant, roles: bob.roles})
	for _, tok := range []string{access, direct, own} {
		expect(t, ts.doBearer(tok, "GET", "/v1/initiatives", nil), 200)
	}
	id := ts.userBySubject(bob.sub).ID.String()

	r := ts.do(&admin, "POST", "/v1/users/"+id+"/deactivate", nil)
	expect(t, r, 200)
	if r.json(t)["status"] != "deactivated" {
		t.Fatalf("after deactivate: %s", r.body)
	}
	ev := ts.events("user.deactivated")
	if len(ev) != 1 || ev[0]["user"].(map[string]any)["id"] != id || ev[0]["sessions_ended"] != float64(1) {
		t.Fatalf("user.deactivated events: %v", ev)
	}
	// Every unexpired token of bob is refused on its very next request, and the refresh token is dead.
	for _, tok := range []string{access, direct, own} {
		expect(t, ts.doBearer(tok, "GET", "/v1/initiatives", nil), 403, "AUTHORIZATION_ERROR")
	}
	expect(t, ts.refresh(refresh), 401, "AUTHORIZATION_ERROR")
	r = ts.doRaw("POST", "/v1/auth/token", map[string]any{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(bob, "", time.Hour)})
	expect(t, r, 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&admin, "POST", "/v1/users/"+id+"/deactivate", nil), 409, "CONFLICT")

	// Reactivated: tokens issued before the deactivation stay dead; new sign-ins work.
	time.Sleep(1100 * time.Millisecond) // iat has second resolution
	expect(t, ts.do(&admin, "POST", "/v1/users/"+id+"/reactivate", nil), 200)
	expect(t, ts.do(&admin, "POST", "/v1/users/"+id+"/reactivate", nil), 409, "CONFLICT")
	expect(t, ts.doBearer(direct, "GET", "/v1/initiatives", nil), 401, "AUTHORIZATION_ERROR")
	expect(t, ts.doBearer(idp.sign(bob, "", time.Hour), "GET", "/v1/initiatives", nil), 200)
}

func TestIdentityLastAdminIsProtected(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	adminID := ts.makeStoredAdmin(admin)

	expect(t, ts.do(&admin, "POST", "/v1/users/"+adminID+"/deactivate", nil), 409, "CONFLICT")
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+adminID, map[string]any{"roles": []string{"Viewer"}}), 409, "CONFLICT")
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+adminID, map[string]any{"roles": []string{"Admin", "Viewer"}}), 200)

	// An invited Admin does not count: only active ones do.
	inv := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "next@example.com", "roles": []string{"Admin"}})
	expect(t, inv, 201)
	expect(t, ts.do(&admin, "POST", "/v1/users/"+adminID+"/deactivate", nil), 409, "CONFLICT")

	second := caller{sub: "admin-2", tenant: ts.tenant, roles: []string{"Admin"}, permissions: allPermissions()}
	secondID := ts.makeStoredAdmin(second)
	expect(t, ts.do(&admin, "POST", "/v1/users/"+secondID+"/deactivate", nil), 200)
	expect(t, ts.do(&admin, "POST", "/v1/users/"+adminID+"/deactivate", nil), 409, "CONFLICT")
	expect(t, ts.do(&admin, "POST", "/v1/users/"+secondID+"/reactivate", nil), 200)
	expect(t, ts.do(&admin, "POST", "/v1/users/"+adminID+"/deactivate", nil), 200)
}

func TestIdentityPermissionUnion(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Reader", "permissions": []string{"initiatives:read"}}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Creator", "permissions": []string{"initiatives:write"}}), 201)
	storedReader := caller{sub: "stored-reader", tenant: ts.tenant}
	firstVisit := caller{sub: storedReader.sub, tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	expect(t, ts.do(&firstVisit, "GET", "/v1/initiatives", nil), 200) // provisions the user (a refused request would roll it back)
	id := ts.userBySubject(storedReader.sub).ID.String()
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+id, map[string]any{"roles": []string{"Reader"}}), 200)

	cases := []struct {
		name        string
		c           caller
		read, write int
	}{
		{"no roles, no permissions", caller{sub: "u1"}, 403, 403},
		{"token permission only", caller{sub: "u2", permissions: []string{"initiatives:read"}}, 200, 403},
		{"built-in token role", caller{sub: "u3", roles: []string{"Viewer"}}, 200, 403},
		{"built-in token role with write", caller{sub: "u4", roles: []string{"Manager"}}, 200, 201},
		{"custom token role", caller{sub: "u5", roles: []string{"Reader"}}, 200, 403},
		{"custom role plus token permission", caller{sub: "u6", roles: []string{"Reader"}, permissions: []string{"initiatives:write"}}, 200, 201},
		{"two custom roles", caller{sub: "u7", roles: []string{"Reader", "Creator"}}, 200, 201},
		{"unknown role grants nothing", caller{sub: "u8", roles: []string{"Wizard", "admin"}}, 403, 403},
		{"stored custom role", caller{sub: storedReader.sub}, 200, 403},
		{"stored role plus token role", caller{sub: storedReader.sub, roles: []string{"Creator"}}, 200, 201},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.c.tenant = ts.tenant
			expect(t, ts.do(&c.c, "GET", "/v1/initiatives", nil), c.read)
			expect(t, ts.do(&c.c, "POST", "/v1/initiatives", map[string]any{"name": fmt.Sprintf("union %d", i)}), c.write)
		})
	}

	// Role changes apply on the next request.
	roles := ts.do(&admin, "GET", "/v1/roles?built_in=false", nil).json(t)["data"].([]any)
	readerID := roles[1].(map[string]any)["id"].(string) // sorted by name: Creator, Reader
	expect(t, ts.do(&admin, "PATCH", "/v1/roles/"+readerID, map[string]any{"permissions": []string{}}), 200)
	expect(t, ts.do(&storedReader, "GET", "/v1/initiatives", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+id, map[string]any{"roles": []string{"Analyst"}}), 200)
	expect(t, ts.do(&storedReader, "GET", "/v1/initiatives", nil), 200)
}

func TestIdentityRoles(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()

	list := ts.do(&admin, "GET", "/v1/roles", nil)
	expect(t, list, 200)
	var names []string
	for _, r := range list.json(t)["data"].([]any) {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	if fmt.Sprint(names) != "[Admin Executive Manager Analyst Viewer]" {
		t.Fatalf("built-in roles: %v", names)
	}
	viewer := ts.do(&admin, "GET", "/v1/roles/viewer", nil).json(t)
	if viewer["built_in"] != true || len(viewer["permissions"].([]any)) != 5 {
		t.Fatalf("viewer: %v", viewer)
	}
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		expect(t, ts.do(&admin, m, "/v1/roles/admin", map[string]any{"name": "Boss", "permissions": []string{}}), 409, "CONFLICT")
	}

	bad := ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Auditor", "permissions": []string{"initiatives:read", "initiatives:fly"}})
	expect(t, bad, 422, "VALIDATION_ERROR")
	if strings.Contains(string(bad.body), "initiatives:fly") || !strings.Contains(string(bad.body), "permissions[1]") {
		t.Fatalf("unknown permission not pointed at by its field, or its input echoed: %s", bad.body)
	}
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Auditor"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "no/slashes", "permissions": []string{}}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "viewer", "permissions": []string{}}), 409, "ALREADY_EXISTS")

	r := ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Auditor", "description": "reads", "permissions": []string{"analytics:read", "initiatives:read"}})
	expect(t, r, 201)
	role := r.json(t)
	id := role["id"].(string)
	if fmt.Sprint(role["permissions"]) != "[initiatives:read analytics:read]" || role["built_in"] != false {
		t.Fatalf("created role: %v", role)
	}
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "AUDITOR", "permissions": []string{}}), 409, "ALREADY_EXISTS")

	// Assigned: cannot be deleted; renaming renames the assignment.
	inv := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "aud@example.com", "roles": []string{"Auditor"}})
	expect(t, inv, 201)
	expect(t, ts.do(&admin, "DELETE", "/v1/roles/"+id, nil), 409, "CONFLICT")
	expect(t, ts.do(&admin, "PUT", "/v1/roles/"+id, map[string]any{"name": "Reviewer", "permissions": []string{"initiatives:read"}}), 200)
	if got := ts.do(&admin, "GET", "/v1/users/"+inv.json(t)["id"].(string), nil).json(t)["roles"]; fmt.Sprint(got) != "[Reviewer]" {
		t.Fatalf("user roles after rename: %v", got)
	}
	expect(t, ts.do(&admin, "PUT", "/v1/roles/"+id, map[string]any{"name": "Reviewer"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "PATCH", "/v1/roles/"+id, map[string]any{"name": "Executive"}), 409, "ALREADY_EXISTS")
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+inv.json(t)["id"].(string), map[string]any{"roles": []string{}}), 200)
	expect(t, ts.do(&admin, "DELETE", "/v1/roles/"+id, nil), 204)
	expect(t, ts.do(&admin, "GET", "/v1/roles/"+id, nil), 404, "NOT_FOUND")
	expect(t, ts.do(&admin, "DELETE", "/v1/roles/"+id, nil), 404, "NOT_FOUND")
}

// No one hands out what they do not hold.
func TestIdentityNoPrivilegeEscalation(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Configurer", "permissions": []string{"admin:config"}}), 201)
	roleAdmin := caller{sub: "role-admin", tenant: ts.tenant, permissions: []string{"admin:roles", "initiatives:read"}}
	userAdmin := caller{sub: "user-admin", tenant: ts.tenant, permissions: []string{"admin:users", "initiatives:read"}}
	configAdmin := caller{sub: "config-admin", tenant: ts.tenant, permissions: []string{"admin:config", "initiatives:read"}}

	expect(t, ts.do(&roleAdmin, "POST", "/v1/roles", map[string]any{"name": "Readers", "permissions": []string{"initiatives:read"}}), 201)
	expect(t, ts.do(&roleAdmin, "POST", "/v1/roles", map[string]any{"name": "Writers", "permissions": []string{"initiatives:write"}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&userAdmin, "POST", "/v1/users", map[string]any{"email": "a@example.com", "roles": []string{"Configurer"}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&userAdmin, "POST", "/v1/users", map[string]any{"email": "a@example.com", "roles": []string{"Readers"}}), 201)
	expect(t, ts.do(&configAdmin, "POST", "/v1/api-keys", map[string]any{"name": "k", "scopes": []string{"initiatives:write"}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&configAdmin, "POST", "/v1/api-keys", map[string]any{"name": "k", "scopes": []string{"initiatives:read", "webhooks:manage"}}), 201)
	expect(t, ts.do(&configAdmin, "POST", "/v1/service-clients", map[string]any{"name": "c", "roles": []string{"Admin"}}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&configAdmin, "POST", "/v1/service-clients", map[string]any{"name": "c", "roles": []string{"Configurer"}}), 201)
}

func TestIdentityAPIKeys(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Keyed"})

	r := ts.do(&admin, "POST", "/v1/api-keys", map[string]any{"name": "ci", "scopes": []string{"initiatives:read"}})
	expect(t, r, 201)
	created := r.json(t)
	key := created["key"].(string)
	if !strings.HasPrefix(key, created["prefix"].(string)+"_") || !strings.HasPrefix(key, "vck_") || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("created key: %v %v", created, r.header)
	}
	exp, _ := time.Parse(time.RFC3339Nano, created["expires_at"].(string))
	if d := time.Until(exp); d < 364*24*time.Hour || d > 366*24*time.Hour {
		t.Fatalf("default expiry in %v, want 365 days", d)
	}
	// Only the hash is stored.
	ts.inTenant(func(tx pgx.Tx) error {
		var n int
		err := tx.QueryRow(context.Background(), "SELECT count(*) FROM api_keys WHERE key_hash = sha256($1::bytea)", []byte(key)).Scan(&n)
		if n != 1 {
			t.Errorf("stored key row matches sha256(key): %d", n)
		}
		return err
	})

	// Both headers work; responses carry the deprecation headers.
	for _, hdr := range [][]string{{"X-API-Key", key}, {"Authorization", "Bearer " + key}} {
		r := ts.do(nil, "GET", "/v1/initiatives/"+id, nil, hdr[0], hdr[1], "X-Tenant-ID", ts.tenant.String())
		expect(t, r, 200)
		if r.header.Get("Deprecation") != api.APIKeyDeprecation || r.header.Get("Link") != `</docs>; rel="deprecation"` {
			t.Fatalf("deprecation headers: %v", r.header)
		}
	}
	got := ts.do(&admin, "GET", "/v1/api-keys", nil).json(t)["data"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["last_used_at"] == nil || got[0].(map[string]any)["key"] != nil {
		t.Fatalf("listed keys: %v", got)
	}
	for _, body := range []map[string]any{
		{"name": "x"},
		{"name": "x", "scopes": []string{}},
		{"name": "x", "scopes": []string{"admin:config"}},
		{"name": "x", "scopes": []string{"initiatives:read"}, "expires_in_days": 366},
		{"name": "x", "scopes": []string{"initiatives:read"}, "expires_in_days": 0},
		{"name": "x", "scopes": []string{"initiatives:read"}, "expires_in_days": 1.5},
		{"scopes": []string{"initiatives:read"}},
	} {
		expect(t, ts.do(&admin, "POST", "/v1/api-keys", body), 422, "VALIDATION_ERROR")
	}
	short := ts.do(&admin, "POST", "/v1/api-keys", map[string]any{"name": "short", "scopes": []string{"initiatives:write", "initiatives:read"}, "expires_in_days": 1})
	expect(t, short, 201)
	if fmt.Sprint(short.json(t)["scopes"]) != "[initiatives:read initiatives:write]" {
		t.Fatalf("scopes: %s", short.body)
	}
	expect(t, ts.doKey(short.json(t)["key"].(string), "POST", "/v1/initiatives", map[string]any{"name": "by key"}), 201)

	// Revoked keys: 401; gone from the list.
	keyID := created["id"].(string)
	expect(t, ts.do(&admin, "DELETE", "/v1/api-keys/"+keyID, nil), 204)
	expect(t, ts.do(&admin, "DELETE", "/v1/api-keys/"+keyID, nil), 404, "NOT_FOUND")
	expect(t, ts.doKey(key, "GET", "/v1/initiatives", nil), 401, "AUTHORIZATION_ERROR")
	if n := len(ts.do(&admin, "GET", "/v1/api-keys", nil).json(t)["data"].([]any)); n != 1 {
		t.Fatalf("%d keys listed after revocation, want 1", n)
	}
}

func TestIdentityAPIKeyLimit(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	// 49 live keys directly (plus one expired and one revoked, which do not count), then the API.
	ts.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `
			INSERT INTO api_keys (tenant_id, public_id, name, key_hash, scopes, created_by, expires_at, revoked_at)
			SELECT $1, 'k' || g, 'bulk', '\x00', '{initiatives:read}', 'test',
			       CASE WHEN g = 50 THEN now() - interval '1 day' ELSE now() + interval '1 day' END,
			       CASE WHEN g = 51 THEN now() END
			FROM generate_series(1, 51) g`, ts.tenant)
		return err
	})
	body := map[string]any{"name": "fiftieth", "scopes": []string{"initiatives:read"}}
	r := ts.do(&admin, "POST", "/v1/api-keys", body)
	expect(t, r, 201)
	expect(t, ts.do(&admin, "POST", "/v1/api-keys", body), 409, "CONFLICT")
	expect(t, ts.do(&admin, "DELETE", "/v1/api-keys/"+r.json(t)["id"].(string), nil), 204)
	expect(t, ts.do(&admin, "POST", "/v1/api-keys", body), 201)
}

// Every 401 and 403 of spec section 5 and the identity rules, for each kind of credential.
func TestIdentityRefusals(t *testing.T) {
	ts, idp := newIdentityServer(t)
	admin := ts.admin()
	other := ts.otherTenant()

	mkKey := func(scopes ...string) (string, string) {
		r := ts.do(&admin, "POST", "/v1/api-keys", map[string]any{"name": "k", "scopes": scopes})
		expect(t, r, 201)
		return r.json(t)["key"].(string), r.json(t)["id"].(string)
	}
	readKey, _ := mkKey("initiatives:read")
	revokedKey, revokedID := mkKey("initiatives:read")
	expect(t, ts.do(&admin, "DELETE", "/v1/api-keys/"+revokedID, nil), 204)
	expiredKey, expiredID := mkKey("initiatives:read")
	ts.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", expiredID)
		return err
	})
	webhookKey, _ := mkKey("webhooks:manage")
	forged := readKey[:len(readKey)-4] + "aaaa" // right shape and id, wrong secret
	parts := strings.Split(readKey, "_")        // vck, tenant, id, secret
	otherTenantGarbage := "vck_" + strings.ReplaceAll(other.String(), "-", "") + "_" + parts[2] + "_" + parts[3]

	// A key of another tenant: issued there, presented here.
	otherAdmin := caller{sub: "other-admin", tenant: other, roles: []string{"Admin"}, permissions: allPermissions()}
	r := ts.do(&otherAdmin, "POST", "/v1/api-keys", map[string]any{"name": "theirs", "scopes": []string{"initiatives:read"}})
	expect(t, r, 201)
	theirKey := r.json(t)["key"].(string)

	// Service client, then revoked.
	r = ts.do(&admin, "POST", "/v1/service-clients", map[string]any{"name": "etl", "permissions": []string{"initiatives:read"}})
	expect(t, r, 201)
	client := r.json(t)
	tr := ts.doRaw("POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": client["client_secret"]})
	expect(t, tr, 200)
	clientToken := tr.json(t)["access_token"].(string)
	expect(t, ts.do(&admin, "DELETE", "/v1/service-clients/"+client["id"].(string), nil), 204)

	// A session, then ended by an admin.
	eve := caller{sub: "idp|eve", tenant: ts.tenant, roles: []string{"Viewer"}}
	eveAccess, eveRefresh := ts.exchange(idp, eve, "")
	expect(t, ts.do(&admin, "DELETE", "/v1/users/"+ts.userBySubject(eve.sub).ID.String()+"/sessions", nil), 204)

	expiredIDP := idp.sign(caller{sub: "idp|x", tenant: ts.tenant}, "", -time.Minute)
	reader := caller{sub: "reader", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	tenantHdr := ts.tenant.String()
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		headers []string
		status  int
	}{
		{"no credentials", "GET", "/v1/initiatives", nil, []string{"X-Tenant-ID", tenantHdr}, 401},
		{"malformed key in X-API-Key", "GET", "/v1/initiatives", nil, []string{"X-API-Key", "vck_nonsense", "X-Tenant-ID", tenantHdr}, 401},
		{"malformed key as bearer", "GET", "/v1/initiatives", nil, []string{"Authorization", "Bearer vck_nonsense", "X-Tenant-ID", tenantHdr}, 401},
		{"forged key", "GET", "/v1/initiatives", nil, []string{"X-API-Key", forged, "X-Tenant-ID", tenantHdr}, 401},
		{"revoked key", "GET", "/v1/initiatives", nil, []string{"X-API-Key", revokedKey, "X-Tenant-ID", tenantHdr}, 401},
		{"expired key", "GET", "/v1/initiatives", nil, []string{"X-API-Key", expiredKey, "X-Tenant-ID", tenantHdr}, 401},
		{"key without the scope", "POST", "/v1/initiatives", map[string]any{"name": "n"}, []string{"X-API-Key", readKey, "X-Tenant-ID", tenantHdr}, 403},
		{"key on an admin route", "GET", "/v1/api-keys", nil, []string{"X-API-Key", readKey, "X-Tenant-ID", tenantHdr}, 403},
		{"webhooks key on initiatives", "GET", "/v1/initiatives", nil, []string{"X-API-Key", webhookKey, "X-Tenant-ID", tenantHdr}, 403},
		{"key of another tenant", "GET", "/v1/initiatives", nil, []string{"X-API-Key", theirKey, "X-Tenant-ID", tenantHdr}, 403},
		{"key with another tenant header", "GET", "/v1/initiatives", nil, []string{"X-API-Key", readKey, "X-Tenant-ID", other.String()}, 403},
		{"garbage key naming another tenant", "GET", "/v1/initiatives", nil, []string{"X-API-Key", otherTenantGarbage, "X-Tenant-ID", tenantHdr}, 401},
		{"key without tenant header", "GET", "/v1/initiatives", nil, []string{"X-API-Key", readKey}, 400},
		{"key and bearer together", "GET", "/v1/initiatives", nil, []string{"X-API-Key", readKey, "Authorization", "Bearer " + ts.token(admin), "X-Tenant-ID", tenantHdr}, 400},
		{"revoked service client's token", "GET", "/v1/initiatives", nil, []string{"Authorization", "Bearer " + clientToken, "X-Tenant-ID", tenantHdr}, 401},
		{"access token of an ended session", "GET", "/v1/initiatives", nil, []string{"Authorization", "Bearer " + eveAccess, "X-Tenant-ID", tenantHdr}, 401},
		{"expired identity-provider token", "GET", "/v1/initiatives", nil, []string{"Authorization", "Bearer " + expiredIDP, "X-Tenant-ID", tenantHdr}, 401},
		{"users without admin:users", "GET", "/v1/users", nil, []string{"Authorization", "Bearer " + ts.token(reader), "X-Tenant-ID", tenantHdr}, 403},
		{"roles without admin:roles", "GET", "/v1/roles", nil, []string{"Authorization", "Bearer " + ts.token(reader), "X-Tenant-ID", tenantHdr}, 403},
		{"api keys without admin:config", "GET", "/v1/api-keys", nil, []string{"Authorization", "Bearer " + ts.token(reader), "X-Tenant-ID", tenantHdr}, 403},
		{"service clients without admin:config", "GET", "/v1/service-clients", nil, []string{"Authorization", "Bearer " + ts.token(reader), "X-Tenant-ID", tenantHdr}, 403},
		{"client credentials: revoked client", "POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": client["client_secret"]}, nil, 401},
		{"client credentials: wrong secret", "POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": "vcs_" + strings.Repeat("a", 52)}, nil, 401},
		{"client credentials: unknown client", "POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": "vcc_" + strings.ReplaceAll(ts.tenant.String(), "-", "") + "_aaaaaaaaaa", "client_secret": client["client_secret"]}, nil, 401},
		{"client credentials: malformed", "POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": "me", "client_secret": "pw"}, nil, 401},
		{"client credentials: missing secret", "POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"]}, nil, 400},
		{"token exchange: bad subject token", "POST", "/v1/auth/token", map[string]any{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": "a.b.c"}, nil, 401},
		{"token exchange: expired subject token", "POST", "/v1/auth/token", map[string]any{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": expiredIDP}, nil, 401},
		{"token exchange: the service's own token", "POST", "/v1/auth/token", map[string]any{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": ts.token(admin)}, nil, 401},
		{"token exchange: unknown tenant", "POST", "/v1/auth/token", map[string]any{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(caller{sub: "x", tenant: uuid.New()}, "", time.Hour)}, nil, 403},
		{"unsupported grant", "POST", "/v1/auth/token", map[string]any{"grant_type": "password"}, nil, 400},
		{"refresh: ended session", "POST", "/v1/auth/refresh", map[string]any{"refresh_token": eveRefresh}, nil, 401},
		{"refresh: garbage", "POST", "/v1/auth/refresh", map[string]any{"refresh_token": "vcr_garbage"}, nil, 401},
		{"refresh: missing", "POST", "/v1/auth/refresh", map[string]any{}, nil, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(nil, c.method, c.path, c.body, c.headers...)
			expect(t, r, c.status)
			if c.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if c.status != 400 && r.errorCode(t) != "AUTHORIZATION_ERROR" {
				t.Errorf("error code %s", r.errorCode(t))
			}
		})
	}
}

func TestIdentityServiceClientCredentials(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Loader", "permissions": []string{"initiatives:write"}}), 201)
	r := ts.do(&admin, "POST", "/v1/service-clients", map[string]any{"name": "etl", "roles": []string{"Loader"}, "permissions": []string{"initiatives:read"}})
	expect(t, r, 201)
	client := r.json(t)
	id, secret := client["client_id"].(string), client["client_secret"].(string)
	if list := ts.do(&admin, "GET", "/v1/service-clients", nil).json(t)["data"].([]any); len(list) != 1 || list[0].(map[string]any)["client_secret"] != nil {
		t.Fatalf("listed clients: %v", list)
	}
	expect(t, ts.do(&admin, "POST", "/v1/service-clients", map[string]any{"name": "empty"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "POST", "/v1/service-clients", map[string]any{"name": "x", "permissions": []string{"root"}}), 422, "VALIDATION_ERROR")

	// JSON, form and HTTP Basic all work.
	responses := []response{
		ts.doRaw("POST", "/v1/auth/token", map[string]any{"grant_type": "client_credentials", "client_id": id, "client_secret": secret}),
		ts.postForm("/v1/auth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}),
		ts.postForm("/v1/auth/token", url.Values{"grant_type": {"client_credentials"}}, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret))),
	}
	for i, r := range responses {
		expect(t, r, 200)
		m := r.json(t)
		if m["token_type"] != "Bearer" || m["expires_in"] != float64(3600) || m["refresh_token"] != nil || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("response %d: %v %v", i, m, r.header)
		}
		tok := m["access_token"].(string)
		expect(t, ts.doBearer(tok, "GET", "/v1/initiatives", nil), 200)
		expect(t, ts.doBearer(tok, "POST", "/v1/initiatives", map[string]any{"name": fmt.Sprintf("loaded %d", i)}), 201)
		expect(t, ts.doBearer(tok, "GET", "/v1/users", nil), 403, "AUTHORIZATION_ERROR")
	}
	// A service client is not a user of the tenant.
	if n := ts.do(&admin, "GET", "/v1/users", nil).json(t)["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; n != float64(1) {
		t.Fatalf("users after client requests: %v", n)
	}
	if got := ts.do(&admin, "GET", "/v1/service-clients/"+client["id"].(string), nil).json(t); got["last_used_at"] == nil {
		t.Fatalf("last_used_at not set: %v", got)
	}
}

func TestIdentityRefreshRotationAndReuse(t *testing.T) {
	ts, idp := newIdentityServer(t)
	amy := caller{sub: "idp|amy", tenant: ts.tenant, roles: []string{"Viewer"}, permissions: []string{"initiatives:write"}}
	access1, refresh1 := ts.exchange(idp, amy, "amy@example.com")
	claims, err := auth.NewVerifier(t.Context(), ts.keys, auth.VerifierOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := claims.Verify(t.Context(), access1)
	if err != nil || !c.Self || c.SessionID == "" || c.Email != "amy@example.com" || fmt.Sprint(c.Roles) != "[Viewer]" {
		t.Fatalf("exchanged access token: %+v %v", c, err)
	}
	expect(t, ts.doBearer(access1, "POST", "/v1/initiatives", map[string]any{"name": "Amy's"}), 201)

	// Form-encoded refresh works; each refresh rotates.
	r := ts.postForm("/v1/auth/refresh", url.Values{"refresh_token": {refresh1}})
	expect(t, r, 200)
	access2, refresh2 := r.json(t)["access_token"].(string), r.json(t)["refresh_token"].(string)
	if refresh2 == refresh1 || r.json(t)["expires_in"] != float64(3600) {
		t.Fatalf("refresh response: %s", r.body)
	}
	expect(t, ts.doBearer(access2, "GET", "/v1/initiatives", nil), 200)
	r = ts.refresh(refresh2)
	expect(t, r, 200)
	access3, refresh3 := r.json(t)["access_token"].(string), r.json(t)["refresh_token"].(string)

	// refresh1 comes back (stolen): the whole family ends, the thief's and the owner's.
	expect(t, ts.refresh(refresh1), 401, "AUTHORIZATION_ERROR")
	expect(t, ts.refresh(refresh3), 401, "AUTHORIZATION_ERROR")
	for _, tok := range []string{access1, access2, access3} {
		expect(t, ts.doBearer(tok, "GET", "/v1/initiatives", nil), 401, "AUTHORIZATION_ERROR")
	}
	ts.inTenant(func(tx pgx.Tx) error {
		var reason string
		err := tx.QueryRow(context.Background(), "SELECT end_reason FROM auth_sessions").Scan(&reason)
		if reason != "reuse_detected" {
			t.Errorf("end_reason %q", reason)
		}
		return err
	})
	// Signing in again starts a new family.
	access4, _ := ts.exchange(idp, amy, "amy@example.com")
	expect(t, ts.doBearer(access4, "GET", "/v1/initiatives", nil), 200)

	// Expired refresh tokens are refused.
	_, refresh5 := ts.exchange(idp, amy, "amy@example.com")
	ts.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), "UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
		return err
	})
	expect(t, ts.refresh(refresh5), 401, "AUTHORIZATION_ERROR")
}

func TestIdentitySessionCap(t *testing.T) {
	ts, idp := newIdentityServer(t)
	admin := ts.admin()
	kim := caller{sub: "idp|kim", tenant: ts.tenant, roles: []string{"Viewer"}}
	var refresh, access []string
	for range 6 {
		a, r := ts.exchange(idp, kim, "")
		access, refresh = append(access, a), append(refresh, r)
	}
	id := ts.userBySubject(kim.sub).ID.String()
	sessions := ts.do(&admin, "GET", "/v1/users/"+id+"/sessions", nil).json(t)["data"].([]any)
	if len(sessions) != auth.MaxSessionsPerUser {
		t.Fatalf("%d live sessions, want %d", len(sessions), auth.MaxSessionsPerUser)
	}
	// The oldest session ended; the five newest live.
	expect(t, ts.refresh(refresh[0]), 401, "AUTHORIZATION_ERROR")
	expect(t, ts.doBearer(access[0], "GET", "/v1/initiatives", nil), 401, "AUTHORIZATION_ERROR")
	for i := 1; i < 6; i++ {
		expect(t, ts.refresh(refresh[i]), 200)
	}
	// An admin ends them all: refresh tokens and access tokens.
	expect(t, ts.do(&admin, "DELETE", "/v1/users/"+id+"/sessions", nil), 204)
	if n := len(ts.do(&admin, "GET", "/v1/users/"+id+"/sessions", nil).json(t)["data"].([]any)); n != 0 {
		t.Fatalf("%d sessions after DELETE", n)
	}
	expect(t, ts.doBearer(access[5], "GET", "/v1/initiatives", nil), 401, "AUTHORIZATION_ERROR")
}

func TestIdentityTokenEndpointRateLimit(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	body := map[string]any{"grant_type": "client_credentials", "client_id": "nobody", "client_secret": "wrong"}
	for i := range 100 {
		path := "/v1/auth/token"
		if i%2 == 1 {
			path = "/v1/auth/refresh" // one allowance for both token endpoints
		}
		r := ts.doRaw("POST", path, body)
		if r.status == 429 {
			t.Fatalf("request %d refused: %s", i+1, r.body)
		}
		if r.header.Get("X-RateLimit-Limit") != "100" {
			t.Fatalf("X-RateLimit-Limit %q", r.header.Get("X-RateLimit-Limit"))
		}
	}
	r := ts.doRaw("POST", "/v1/auth/token", body)
	expect(t, r, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

func TestIdentityKeyRotationPublishesBothKeys(t *testing.T) {
	dir := t.TempDir()
	keys, err := auth.LoadKeyStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, "enterprise_plus", func(d *api.Deps) {
		d.Keys = keys
		v, err := auth.NewVerifier(t.Context(), keys, auth.VerifierOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Verifier = v
	})
	ts.keys = keys
	admin := ts.admin()
	old := ts.token(admin)
	time.Sleep(1100 * time.Millisecond) // key ids have second resolution
	if _, err := auth.GenerateKey(dir); err != nil {
		t.Fatal(err)
	}
	if err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []struct{ Kid string } }
	r := ts.doRaw("GET", "/.well-known/jwks.json", nil)
	expect(t, r, 200)
	if err := json.Unmarshal(r.body, &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("JWKS after rotation: %s", r.body)
	}
	fresh := ts.token(admin)
	for _, tok := range []string{old, fresh} {
		expect(t, ts.doBearer(tok, "GET", "/v1/initiatives", nil), 200)
	}
}

// A read sends the caller's check with its first statement (expectCaller):
// whatever the handler read or answered by then, a refused caller gets only
// the refusal, and a permission only the tenant's stored roles grant still opens the read.
func TestReadsAnswerOnlyAdmittedCallers(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Payroll consolidation"})

	// First sight on a read is provisioned, on a plain read and on an analysis (its own transaction).
	carol := caller{sub: "carol", tenant: ts.tenant, permissions: []string{"initiatives:read", "analytics:read"}}
	expect(t, ts.do(&carol, "GET", "/v1/initiatives/"+id, nil), 200)
	if u := ts.userBySubject(carol.sub); u.Status != "active" {
		t.Fatalf("carol after her first read: %+v", u)
	}
	dave := caller{sub: "dave", tenant: ts.tenant, permissions: []string{"analytics:read"}}
	expect(t, ts.do(&dave, "GET", "/v1/analytics/roi?initiative_id="+id, nil), 200)
	if u := ts.userBySubject(dave.sub); u.Status != "active" {
		t.Fatalf("dave after his first analysis: %+v", u)
	}

	// A permission of a stored custom role, not of the token, opens the read.
	expect(t, ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Initiative reader", "permissions": []string{"initiatives:read"}}), 201)
	expect(t, ts.do(&admin, "PATCH", "/v1/users/"+ts.userBySubject(dave.sub).ID.String(), map[string]any{"roles": []string{"Initiative reader"}}), 200)
	expect(t, ts.do(&dave, "GET", "/v1/initiatives/"+id, nil), 200)

	// Deactivated: every read is refused, with nothing of what the handler had read or answered.
	expect(t, ts.do(&admin, "POST", "/v1/users/"+ts.userBySubject(carol.sub).ID.String()+"/deactivate", nil), 200)
	for _, path := range []string{
		"/v1/initiatives/" + id,                     // a record with its ETag
		"/v1/initiatives?page_size=0",               // refused by the handler before any statement
		"/v1/initiatives/" + uuid.NewString(),       // not found
		"/v1/analytics/roi?initiative_id=" + id,     // an analysis, in a transaction of its own
		"/v1/initiatives/" + id + "/status-history", // a list
	} {
		r := ts.do(&carol, "GET", path, nil)
		expect(t, r, 403, "AUTHORIZATION_ERROR")
		if !strings.Contains(string(r.body), "deactivated") || strings.Contains(string(r.body), "Payroll") || r.header.Get("ETag") != "" {
			t.Fatalf("GET %s by a deactivated user: %v %s", path, r.header, r.body)
		}
	}
}
