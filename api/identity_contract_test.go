package api_test

import (
	"net/url"
	"testing"
	"time"
)

// TestContractIdentity drives the identity operations through their success
// and error paths and validates every response against api/openapi.yaml.
func TestContractIdentity(t *testing.T) {
	ts, idp := newIdentityServer(t)
	cc := newContractClient(t, ts)
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	noTenant := []string{"X-Tenant-ID", ""}
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }

	// Users.
	r := call(contractCall{as: &admin, method: "POST", path: "/v1/users", body: map[string]any{"email": "ada@example.com", "name": "Ada", "roles": []string{"Viewer"}}, want: 201})
	userID := r.json(t)["id"].(string)
	call(contractCall{as: &admin, method: "POST", path: "/v1/users", body: map[string]any{"email": "ada@example.com"}, want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users", body: map[string]any{"email": "x"}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users", body: "a=b", headers: []string{"Content-Type", "text/plain"}, want: 415, docRejects: true})
	call(contractCall{as: &reader, method: "POST", path: "/v1/users", body: map[string]any{"email": "b@example.com"}, want: 403})
	call(contractCall{as: &admin, method: "GET", path: "/v1/users?status=invited&role=Viewer&page=1&page_size=10", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/users?status=nope", want: 400, docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: "/v1/users", headers: noTenant, want: 400, docRejects: true})
	call(contractCall{method: "GET", path: "/v1/users", headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 401})
	call(contractCall{as: &admin, method: "GET", path: "/v1/users/" + userID, want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/users/nope", want: 404})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/users/" + userID, body: map[string]any{"name": nil, "roles": []string{"Analyst"}}, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/users/" + userID, body: map[string]any{"roles": []string{"Nope"}}, want: 422})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/reactivate", want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/deactivate", want: 200})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/deactivate", want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/reactivate", want: 200})

	// Sessions, through the token exchange (a public operation) and refresh.
	bob := caller{sub: "idp|bob", tenant: ts.tenant, roles: []string{"Viewer"}}
	r = call(contractCall{method: "POST", path: "/v1/auth/token", body: url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {idp.sign(bob, "bob@example.com", time.Hour)},
	}.Encode(), headers: []string{"Content-Type", "application/x-www-form-urlencoded"}, want: 200})
	refresh := r.json(t)["refresh_token"].(string)
	r = call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": refresh}, want: 200})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": refresh}, want: 401})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{}, want: 400, docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": 7}, want: 422, docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: "x", headers: []string{"Content-Type", "text/plain"}, want: 415, docRejects: true})
	bobID := ts.userBySubject(bob.sub).ID.String()
	call(contractCall{as: &admin, method: "GET", path: "/v1/users/" + bobID + "/sessions", want: 200})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/users/" + bobID + "/sessions", want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/users/00000000-0000-0000-0000-000000000000/sessions", want: 404})

	// Roles.
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles?built_in=false", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles/viewer", want: 200})
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "Auditor", "permissions": []string{"analytics:read"}}, want: 201})
	roleID := r.json(t)["id"].(string)
	call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "Viewer", "permissions": []string{}}, want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "X", "permissions": []string{"fly"}}, want: 422})
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles/" + roleID, want: 200})
	call(contractCall{as: &admin, method: "PUT", path: "/v1/roles/" + roleID, body: map[string]any{"name": "Auditors", "description": "d", "permissions": []string{"analytics:read", "initiatives:read"}}, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/roles/" + roleID, body: map[string]any{"description": nil}, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/roles/admin", body: map[string]any{"description": "x"}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/roles/" + roleID, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/roles/" + roleID, want: 404})

	// API keys.
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/api-keys", body: map[string]any{"name": "ci", "scopes": []string{"initiatives:read"}, "expires_in_days": 30}, want: 201})
	key, keyID := r.json(t)["key"].(string), r.json(t)["id"].(string)
	call(contractCall{as: &admin, method: "POST", path: "/v1/api-keys", body: map[string]any{"name": "ci", "scopes": []string{"admin:config"}}, want: 422, docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: "/v1/api-keys", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/api-keys/" + keyID, want: 200})
	call(contractCall{method: "GET", path: "/v1/initiatives", headers: []string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, want: 200})
	call(contractCall{method: "GET", path: "/v1/api-keys", headers: []string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, want: 403})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/api-keys/" + keyID, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/api-keys/" + keyID, want: 404})
	call(contractCall{method: "GET", path: "/v1/initiatives", headers: []string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, want: 401})

	// Service clients and the client_credentials grant.
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "etl", "permissions": []string{"initiatives:read"}}, want: 201})
	client := r.json(t)
	call(contractCall{as: &admin, method: "GET", path: "/v1/service-clients", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/service-clients/" + client["id"].(string), want: 200})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": client["client_secret"]}, want: 200})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": "wrong"}, want: 401})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "password"}, want: 400, docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(caller{sub: "x", tenant: ts.otherTenant()}, "", time.Hour)[:20],
	}, want: 401})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/service-clients/" + client["id"].(string), want: 204})
	call(contractCall{as: &admin, method: "GET", path: "/v1/service-clients/" + client["id"].(string), want: 404})

	// The deactivated user's token exchange is 403.
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + bobID + "/deactivate", want: 200})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(bob, "", time.Hour),
	}, want: 403})

	for _, u := range cc.uncovered([]string{"users", "roles", "api-keys", "service-clients", "auth"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
