package api_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/rbac"
)

// TestContractIdentity drives the identity operations through their success
// and error paths and validates every response against api/openapi.yaml.
func TestContractIdentity(t *testing.T) {
	ts, idp := newIdentityServer(t)
	cc := newContractClient(t, ts)
	ctx := context.Background()
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	other := contractTenant(t, ts, "enterprise_plus") // another tenant's Admin
	noTenant := []string{"X-Tenant-ID", ""}
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	missing := uuid.NewString()
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}

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
	// An Idempotency-Key reused for another request is 422 (the key is the reactivation's).
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/deactivate", headers: []string{"Idempotency-Key", "user-flip"}, want: 200})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/reactivate", headers: []string{"Idempotency-Key", "user-flip"}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/reactivate", headers: []string{"Idempotency-Key", "user-flop"}, want: 200})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + userID + "/deactivate", headers: []string{"Idempotency-Key", "user-flop"}, want: 422, code: "VALIDATION_ERROR"})
	// 404: unknown users in any form, and another tenant's user (as that tenant sees it: not there).
	for _, p := range []string{"/v1/users/" + missing, "/v1/users/nope"} {
		call(contractCall{as: &admin, method: "PATCH", path: p, body: map[string]any{"name": "x"}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "POST", path: p + "/deactivate", want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "POST", path: p + "/reactivate", want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "GET", path: p + "/sessions", want: 404, code: "NOT_FOUND"})
	}
	call(contractCall{as: &other, method: "GET", path: "/v1/users/" + userID, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "PATCH", path: "/v1/users/" + userID, body: map[string]any{"name": "intruder"}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "POST", path: "/v1/users/" + userID + "/deactivate", want: 404, code: "NOT_FOUND"})
	if r := call(contractCall{as: &admin, method: "GET", path: "/v1/users/" + userID, want: 200}); r.status == 200 && (r.json(t)["name"] != nil || r.json(t)["status"] != "invited") {
		t.Errorf("another tenant changed the user: %s", r.body)
	}
	// 409: the last active Admin keeps the Admin role and stays active.
	adminID := ts.userBySubject(admin.sub).ID.String()
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/users/" + adminID, body: map[string]any{"roles": []string{"Admin"}}, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/users/" + adminID, body: map[string]any{"roles": []string{"Viewer"}}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + adminID + "/deactivate", want: 409, code: "CONFLICT"})
	if r := call(contractCall{as: &admin, method: "GET", path: "/v1/users/" + adminID, want: 200}); r.status == 200 {
		if m := r.json(t); m["status"] != "active" || fmt.Sprint(m["roles"]) != "[Admin]" {
			t.Errorf("the last Admin after the refused changes: %s", r.body)
		}
	}

	// Sessions, through the token exchange (a public operation) and refresh.
	bob := caller{sub: "idp|bob", tenant: ts.tenant, roles: []string{"Viewer"}}
	r = call(contractCall{method: "POST", path: "/v1/auth/token", body: url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {idp.sign(bob, "bob@example.com", time.Hour)},
	}.Encode(), headers: form, want: 200})
	refresh := r.json(t)["refresh_token"].(string)
	r = call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": refresh}, want: 200})
	liveRefresh := r.json(t)["refresh_token"].(string)
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": refresh}, want: 401})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{}, want: 400, docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": 7}, want: 422, docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: "x", headers: []string{"Content-Type", "text/plain"}, want: 415, docRejects: true})
	bobID := ts.userBySubject(bob.sub).ID.String()
	call(contractCall{as: &admin, method: "GET", path: "/v1/users/" + bobID + "/sessions", want: 200})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/users/" + bobID + "/sessions", want: 204})
	if r := call(contractCall{as: &admin, method: "GET", path: "/v1/users/" + bobID + "/sessions", want: 200}); r.status == 200 && len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("sessions after ending them: %s", r.body)
	}
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": liveRefresh}, want: 401}) // its session ended
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/users/00000000-0000-0000-0000-000000000000/sessions", want: 404})
	call(contractCall{as: &other, method: "DELETE", path: "/v1/users/" + bobID + "/sessions", want: 404, code: "NOT_FOUND"})

	// Roles.
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles?built_in=false", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/roles/viewer", want: 200})
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "Auditor", "permissions": []string{"analytics:read"}}, want: 201})
	roleID := r.json(t)["id"].(string)
	rolePath := "/v1/roles/" + roleID
	call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "Viewer", "permissions": []string{}}, want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "X", "permissions": []string{"fly"}}, want: 422})
	call(contractCall{as: &admin, method: "GET", path: rolePath, want: 200})
	call(contractCall{as: &admin, method: "PUT", path: rolePath, body: map[string]any{"name": "Auditors", "description": "d", "permissions": []string{"analytics:read", "initiatives:read"}}, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: rolePath, body: map[string]any{"description": nil}, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/roles/admin", body: map[string]any{"description": "x"}, want: 409, code: "CONFLICT"})
	// 409: built-in roles are read-only; a name is taken by a built-in or another custom role.
	call(contractCall{as: &admin, method: "PUT", path: "/v1/roles/admin", body: map[string]any{"name": "Boss", "permissions": []string{}}, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/roles/viewer", want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "Reporter", "permissions": []string{}}, want: 201})
	call(contractCall{as: &admin, method: "PUT", path: rolePath, body: map[string]any{"name": "reporter", "permissions": []string{}}, want: 409, code: "ALREADY_EXISTS"})
	call(contractCall{as: &admin, method: "PATCH", path: rolePath, body: map[string]any{"name": "Executive"}, want: 409, code: "ALREADY_EXISTS"})
	// 422: the rules of a role, each naming its field.
	for _, c := range []struct {
		method string
		body   map[string]any
		field  string
		doc    bool // the document refuses it too
	}{
		{"PUT", map[string]any{"permissions": []string{}}, "name", true},
		{"PUT", map[string]any{"name": "Auditors"}, "permissions", true},
		{"PUT", map[string]any{"name": "-dash", "permissions": []string{}}, "name", false},
		{"PATCH", map[string]any{"permissions": []string{"fly"}}, "permissions[0]", false},
		{"PATCH", map[string]any{"permissions": nil}, "permissions", true},
		{"PATCH", map[string]any{"name": ""}, "name", true},
		{"PATCH", map[string]any{"colour": "red"}, "colour", false},
	} {
		r := call(contractCall{as: &admin, method: c.method, path: rolePath, body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.doc})
		if r.status == 422 {
			if e := r.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any); e["field"] != c.field {
				t.Errorf("%s %v: first error %v, want field %s", c.method, c.body, e, c.field)
			}
		}
	}
	// 404: unknown roles, and another tenant's role.
	for _, p := range []string{"/v1/roles/" + missing, "/v1/roles/nope"} {
		call(contractCall{as: &admin, method: "GET", path: p, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PUT", path: p, body: map[string]any{"name": "x", "permissions": []string{}}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "PATCH", path: p, body: map[string]any{"name": "x"}, want: 404, code: "NOT_FOUND"})
		call(contractCall{as: &admin, method: "DELETE", path: p, want: 404, code: "NOT_FOUND"})
	}
	call(contractCall{as: &other, method: "GET", path: rolePath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "DELETE", path: rolePath, want: 404, code: "NOT_FOUND"})
	// 409: a role in use is not deleted; unassigned, it is.
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/users/" + userID, body: map[string]any{"roles": []string{"Analyst", "Auditors"}}, want: 200})
	call(contractCall{as: &admin, method: "DELETE", path: rolePath, want: 409, code: "CONFLICT"})
	call(contractCall{as: &admin, method: "GET", path: rolePath, want: 200})
	call(contractCall{as: &admin, method: "PATCH", path: "/v1/users/" + userID, body: map[string]any{"roles": []string{"Analyst"}}, want: 200})
	call(contractCall{as: &admin, method: "DELETE", path: rolePath, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: rolePath, want: 404})
	call(contractCall{as: &admin, method: "GET", path: rolePath, want: 404, code: "NOT_FOUND"})

	// API keys.
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/api-keys", body: map[string]any{"name": "ci", "scopes": []string{"initiatives:read"}, "expires_in_days": 30}, want: 201})
	key, keyID := r.json(t)["key"].(string), r.json(t)["id"].(string)
	call(contractCall{as: &admin, method: "POST", path: "/v1/api-keys", body: map[string]any{"name": "ci", "scopes": []string{"admin:config"}}, want: 422, docRejects: true})
	call(contractCall{as: &admin, method: "GET", path: "/v1/api-keys", want: 200})
	call(contractCall{as: &admin, method: "GET", path: "/v1/api-keys/" + keyID, want: 200})
	call(contractCall{as: &other, method: "GET", path: "/v1/api-keys/" + keyID, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "DELETE", path: "/v1/api-keys/" + keyID, want: 404, code: "NOT_FOUND"})
	call(contractCall{method: "GET", path: "/v1/initiatives", headers: []string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, want: 200})
	call(contractCall{method: "GET", path: "/v1/api-keys", headers: []string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, want: 403})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/api-keys/" + keyID, want: 204})
	call(contractCall{as: &admin, method: "DELETE", path: "/v1/api-keys/" + keyID, want: 404})
	call(contractCall{as: &admin, method: "GET", path: "/v1/api-keys/" + keyID, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &admin, method: "GET", path: "/v1/api-keys/nope", want: 404, code: "NOT_FOUND"})
	call(contractCall{method: "GET", path: "/v1/initiatives", headers: []string{"X-API-Key", key, "X-Tenant-ID", ts.tenant.String()}, want: 401})

	// Service clients and the client_credentials grant.
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "etl", "permissions": []string{"initiatives:read"}}, want: 201})
	client := r.json(t)
	clientPath := "/v1/service-clients/" + client["id"].(string)
	call(contractCall{as: &admin, method: "GET", path: "/v1/service-clients", want: 200})
	call(contractCall{as: &admin, method: "GET", path: clientPath, want: 200})
	call(contractCall{as: &other, method: "GET", path: clientPath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "DELETE", path: clientPath, want: 404, code: "NOT_FOUND"})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": client["client_secret"]}, want: 200})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": "wrong"}, want: 401})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "password"}, want: 400, docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(caller{sub: "x", tenant: ts.otherTenant()}, "", time.Hour)[:20],
	}, want: 401})
	// 422: token parameters are strings; 415: only JSON and forms.
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": 7}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: "grant_type=client_credentials", headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	// 422: a client needs roles or permissions, and only roles that exist.
	call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "empty"}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "ghost", "roles": []string{"Nope"}}, want: 422, code: "VALIDATION_ERROR"})
	call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "", "permissions": []string{"initiatives:read"}}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	call(contractCall{as: &admin, method: "DELETE", path: clientPath, want: 204})
	call(contractCall{as: &admin, method: "GET", path: clientPath, want: 404})
	call(contractCall{as: &admin, method: "DELETE", path: clientPath, want: 404, code: "NOT_FOUND"})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": client["client_secret"]}, want: 401})

	// The deactivated user's token exchange is 403.
	call(contractCall{as: &admin, method: "POST", path: "/v1/users/" + bobID + "/deactivate", want: 200})
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(bob, "", time.Hour),
	}, want: 403})

	// 409: 50 live API keys and 50 service clients per tenant (49 stored
	// directly in a tenant of their own, the 50th and 51st through the API).
	full := contractTenant(t, ts, "enterprise_plus")
	err := db.InTenant(ctx, ts.pool, full.tenant, func(tx pgx.Tx) error {
		for range 49 {
			if _, err := db.Q.APIKeyCreate(ctx, tx, dbsqlc.APIKeyCreateParams{TenantID: full.tenant, PublicID: credential.New(credential.APIKey, full.tenant).ID, Name: "bulk",
				KeyHash: []byte{0}, Scopes: []string{"initiatives:read"}, CreatedBy: "test", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
				return err
			}
			c, _ := credential.NewClient(full.tenant)
			if _, err := db.Q.ServiceClientCreate(ctx, tx, dbsqlc.ServiceClientCreateParams{TenantID: full.tenant, ClientID: c.Raw, Name: "bulk",
				SecretHash: []byte{0}, Roles: []string{}, Permissions: []string{"initiatives:read"}, CreatedBy: "test"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ path, body string }{
		{"/v1/api-keys", `{"name":"%s","scopes":["initiatives:read"]}`},
		{"/v1/service-clients", `{"name":"%s","permissions":["initiatives:read"]}`},
	} {
		call(contractCall{as: &full, method: "POST", path: p.path, body: fmt.Sprintf(p.body, "fiftieth"), want: 201})
		call(contractCall{as: &full, method: "POST", path: p.path, body: fmt.Sprintf(p.body, "fifty-first"), want: 409, code: "CONFLICT"})
		if r := call(contractCall{as: &full, method: "GET", path: p.path, want: 200}); r.status == 200 {
			if n := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; n != 50.0 {
				t.Errorf("%s: %v listed after the refusal, want 50", p.path, n)
			}
		}
	}

	// Every authenticated identity operation, with the permission it requires,
	// on live resources of their own.
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/users", body: map[string]any{"email": "table@example.com"}, want: 201})
	tUser := "/v1/users/" + r.json(t)["id"].(string)
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/roles", body: map[string]any{"name": "Table", "permissions": []string{"initiatives:read"}}, want: 201})
	tRole := "/v1/roles/" + r.json(t)["id"].(string)
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/api-keys", body: map[string]any{"name": "table", "scopes": []string{"initiatives:read"}}, want: 201})
	tKey := "/v1/api-keys/" + r.json(t)["id"].(string)
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "table", "permissions": []string{"initiatives:read"}}, want: 201})
	tClient := "/v1/service-clients/" + r.json(t)["id"].(string)
	users, roles, config := string(rbac.AdminUsers), string(rbac.AdminRoles), string(rbac.AdminConfig)
	ops := []struct {
		method, path string
		body         any
		perm         string
	}{
		{"GET", "/v1/users", nil, users},
		{"POST", "/v1/users", map[string]any{"email": "op@example.com"}, users},
		{"GET", tUser, nil, users},
		{"PATCH", tUser, map[string]any{"name": "Op"}, users},
		{"POST", tUser + "/deactivate", nil, users},
		{"POST", tUser + "/reactivate", nil, users},
		{"GET", tUser + "/sessions", nil, users},
		{"DELETE", tUser + "/sessions", nil, users},
		{"GET", "/v1/roles", nil, roles},
		{"POST", "/v1/roles", map[string]any{"name": "Op", "permissions": []string{}}, roles},
		{"GET", tRole, nil, roles},
		{"PUT", tRole, map[string]any{"name": "Op", "permissions": []string{}}, roles},
		{"PATCH", tRole, map[string]any{"name": "Op"}, roles},
		{"DELETE", tRole, nil, roles},
		{"GET", "/v1/api-keys", nil, config},
		{"POST", "/v1/api-keys", map[string]any{"name": "op", "scopes": []string{"initiatives:read"}}, config},
		{"GET", tKey, nil, config},
		{"DELETE", tKey, nil, config},
		{"GET", "/v1/service-clients", nil, config},
		{"POST", "/v1/service-clients", map[string]any{"name": "op", "permissions": []string{"initiatives:read"}}, config},
		{"GET", tClient, nil, config},
		{"DELETE", tClient, nil, config},
	}
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	tok := ts.token(admin)
	for _, op := range ops {
		// Refusals before the tenant is known count against the client IP
		// (burst 60): a server of its own for each operation.
		fcc := cc.on(contractFreshServer(ts))
		for _, v := range []struct {
			as      *caller
			headers []string
			want    int
		}{
			{&admin, noTenant, 400},
			{&admin, []string{"X-Tenant-ID", "not-a-tenant"}, 403},
			{nil, []string{"X-Tenant-ID", ts.tenant.String()}, 401},
			{nil, []string{"Authorization", "Bearer " + tok[:len(tok)-4] + "AAAA", "X-Tenant-ID", ts.tenant.String()}, 401},
			{&other, []string{"X-Tenant-ID", ts.tenant.String()}, 403},
		} {
			code := map[int]string{400: "INVALID_PARAMETER", 401: "AUTHORIZATION_ERROR", 403: "AUTHORIZATION_ERROR"}[v.want]
			r := fcc.call(t, contractCall{as: v.as, method: op.method, path: op.path, body: op.body, headers: v.headers, want: v.want, code: code})
			if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 without WWW-Authenticate", op.method, op.path)
			}
		}
		// 403: every permission but the one the operation requires; a reader.
		lacking := caller{sub: "lacks-" + op.perm, tenant: ts.tenant, permissions: slices.DeleteFunc(allPermissions(), func(p string) bool { return p == op.perm })}
		call(contractCall{as: &lacking, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		if op.body != nil {
			call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
			call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
		}
	}
	for _, p := range []string{"/v1/users?page=0", "/v1/roles?page_size=501", "/v1/api-keys?page=0", "/v1/service-clients?page_size=0"} {
		call(contractCall{as: &admin, method: "GET", path: p, want: 400, code: "INVALID_PARAMETER", docRejects: true})
	}
	for _, p := range []string{"/v1/roles?sort=name", "/v1/api-keys?page=1&page=2", "/v1/service-clients?x=1"} {
		// The document does not forbid unknown or repeated parameters; the API does.
		call(contractCall{as: &admin, method: "GET", path: p, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	}
	for _, p := range []string{tUser, tUser + "?x=1"} {
		call(contractCall{as: &admin, method: "PATCH", path: p, body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	}
	// Nothing the refusals touched changed.
	if r := call(contractCall{as: &admin, method: "GET", path: tUser, want: 200}); r.status == 200 && (r.json(t)["status"] != "invited" || r.json(t)["name"] != nil) {
		t.Errorf("user after refusals: %s", r.body)
	}
	if r := call(contractCall{as: &admin, method: "GET", path: tRole, want: 200}); r.status == 200 && r.json(t)["name"] != "Table" {
		t.Errorf("role after refusals: %s", r.body)
	}
	call(contractCall{as: &admin, method: "GET", path: tKey, want: 200})
	call(contractCall{as: &admin, method: "GET", path: tClient, want: 200})
	if r := call(contractCall{as: &admin, method: "GET", path: "/v1/users?page_size=100", want: 200}); r.status == 200 && strings.Contains(string(r.body), "op@example.com") {
		t.Errorf("a refused invitation was stored: %s", r.body)
	}

	// The token endpoints: 413 for a body over 5 MB.
	call(contractCall{method: "POST", path: "/v1/auth/token", body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: big, want: 413, network: true, code: "INVALID_PARAMETER"})

	// A live client and refresh token for the 503 at the end.
	r = call(contractCall{as: &admin, method: "POST", path: "/v1/service-clients", body: map[string]any{"name": "late", "permissions": []string{"initiatives:read"}}, want: 201})
	late := r.json(t)
	carol := caller{sub: "idp|carol", tenant: ts.tenant, roles: []string{"Viewer"}}
	r = call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": idp.sign(carol, "carol@example.com", time.Hour),
	}, want: 200})
	carolRefresh := r.json(t)["refresh_token"].(string)

	// exhaust sends c (unchecked) to srv until it is refused with 429.
	exhaust := func(srv *testServer, c contractCall) {
		t.Helper()
		for i := 0; ; i++ {
			res, err := srv.srv.App().Test(cc.newRequest(t, c), -1)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode == 429 {
				return
			}
			if i > 200 {
				t.Fatalf("%s %s: never rate limited", c.method, c.path)
			}
		}
	}

	// 429: the token endpoints allow 100 requests a minute per IP, together (a server of their own).
	tsrv := contractFrozenServer(ts)
	tcc := cc.on(tsrv)
	password := contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "password"}}
	for _, c := range []contractCall{
		{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": late["client_id"], "client_secret": late["client_secret"]}},
		{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": carolRefresh}},
	} {
		exhaust(tsrv, password)
		c.want, c.code = 429, "RATE_LIMIT_EXCEEDED"
		if r := tcc.call(t, c); r.header.Get("Retry-After") == "" {
			t.Errorf("%s: 429 without Retry-After: %v", c.path, contractRelevantHeaders(r.header))
		}
	}

	// 429: a starter tenant (burst 20) over its limit, on every operation.
	starter := contractTenant(t, ts, "starter")
	limits := contractFrozenServer(ts) // the allowance stays used up
	limitsCC := cc.on(limits)
	for _, op := range ops {
		exhaust(limits, contractCall{as: &starter, method: "GET", path: "/v1/roles"})
		if r := limitsCC.call(t, contractCall{as: &starter, method: op.method, path: op.path, body: op.body, want: 429, code: "RATE_LIMIT_EXCEEDED"}); r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 429 without Retry-After", op.method, op.path)
		}
	}

	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.preconditions(t, admin, calls) // ETag: 304 and the 409 of a stale If-Match

	// 503: the database is gone (last: the server is of no use after this).
	ts.pool.Close()
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, want: 503, code: "SERVICE_UNAVAILABLE"})
	}
	call(contractCall{method: "POST", path: "/v1/auth/token", body: map[string]any{"grant_type": "client_credentials", "client_id": late["client_id"], "client_secret": late["client_secret"]}, want: 503, code: "SERVICE_UNAVAILABLE"})
	call(contractCall{method: "POST", path: "/v1/auth/refresh", body: map[string]any{"refresh_token": carolRefresh}, want: 503, code: "SERVICE_UNAVAILABLE"})

	for _, u := range cc.uncovered([]string{"users", "roles", "api-keys", "service-clients", "auth"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}
