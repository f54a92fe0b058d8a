package api_test

import (
	"time"

	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/internal/auth"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

func TestInitiativeCreateGetList(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()

	r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{
		"name": "Cloud migration", "description": "Move to the cloud", "industry": "finance", "segment": "enterprise",
		"expected_start_date": "2026-01-01", "expected_end_date": "2026-12-31",
	})
	expect(t, r, 201)
	created := r.json(t)
	id := created["id"].(string)
	if created["status"] != "draft" || created["owner_id"] != "admin-1" || created["expected_end_date"] != "2026-12-31" {
		t.Fatalf("unexpected created initiative: %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != "/v1/initiatives/"+id {
		t.Fatalf("Location = %q", loc)
	}

	r = ts.do(&admin, "GET", "/v1/initiatives/"+id, nil)
	expect(t, r, 200)
	got := r.json(t)
	for _, k := range []string{"projects", "stakeholders", "metrics"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("GET lacks %q: %s", k, r.body)
		}
	}

	for i := range 4 {
		ts.createInitiative(admin, map[string]any{"name": fmt.Sprintf("Init %d", i), "industry": []string{"retail", "health"}[i%2]})
	}
	r = ts.do(&admin, "GET", "/v1/initiatives?page=2&page_size=2&sort=name&order=asc", nil)
	expect(t, r, 200)
	list := r.json(t)
	p := list["meta"].(map[string]any)["pagination"].(map[string]any)
	if p["total"] != 5.0 || p["total_pages"] != 3.0 || p["page"] != 2.0 || p["page_size"] != 2.0 {
		t.Fatalf("pagination = %v", p)
	}
	data := list["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["name"] != "Init 1" || data[1].(map[string]any)["name"] != "Init 2" {
		t.Fatalf("page 2 sorted by name = %s", r.body)
	}

	r = ts.do(&admin, "GET", "/v1/initiatives?industry=retail", nil)
	expect(t, r, 200)
	if n := len(r.json(t)["data"].([]any)); n != 2 {
		t.Fatalf("industry filter returned %d, want 2", n)
	}
	r = ts.do(&admin, "GET", "/v1/initiatives?page=9", nil)
	expect(t, r, 200)
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 5.0 || len(r.json(t)["data"].([]any)) != 0 {
		t.Fatalf("page past the end: %s", r.body)
	}
}

func TestInitiativeListRejectsBadQueries(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	for _, q := range []string{"page=0", "page=abc", "page_size=201", "page_size=0", "status=bogus", "sort=password", "order=up", "colour=red", "page=1&page=2", "industry=a%00b", "industry=%FF", "industry="} {
		t.Run(q, func(t *testing.T) {
			expect(t, ts.do(&admin, "GET", "/v1/initiatives?"+q, nil), 400, "INVALID_PARAMETER")
		})
	}
}

func TestInitiativeCreateValidation(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // many POSTs: no per-endpoint limit
	admin := ts.admin()
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"missing name", map[string]any{"description": "x"}, 422, "VALIDATION_ERROR", "name"},
		{"blank name", map[string]any{"name": "   "}, 422, "VALIDATION_ERROR", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 201)}, 422, "VALIDATION_ERROR", "name"},
		{"name wrong type", map[string]any{"name": 5}, 422, "VALIDATION_ERROR", "name"},
		{"unknown field", map[string]any{"name": "ok", "colour": "red"}, 422, "VALIDATION_ERROR", "colour"},
		{"bad date", map[string]any{"name": "ok", "expected_start_date": "2026-13-01"}, 422, "VALIDATION_ERROR", "expected_start_date"},
		{"status other than draft", map[string]any{"name": "ok", "status": "approved"}, 422, "VALIDATION_ERROR", "status"},
		{"end before start", map[string]any{"name": "ok", "expected_start_date": "2026-05-01", "expected_end_date": "2026-04-30"}, 400, "INVALID_PARAMETER", ""},
		{"malformed JSON", `{"name":`, 400, "INVALID_PARAMETER", ""},
		{"JSON array", `[1,2]`, 400, "INVALID_PARAMETER", ""},
		{"two objects", `{"name":"a"}{"name":"b"}`, 400, "INVALID_PARAMETER", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(&admin, "POST", "/v1/initiatives", c.body)
			expect(t, r, c.status, c.code)
			if c.field != "" {
				errs := r.json(t)["error"].(map[string]any)["errors"].([]any)
				if errs[0].(map[string]any)["field"] != c.field {
					t.Fatalf("want the error on %s, got %s", c.field, r.body)
				}
			}
		})
	}
	// 200 characters, counted as characters not bytes, is fine.
	ts.createInitiative(admin, map[string]any{"name": strings.Repeat("é", 200)})
}

func TestInitiativeNameIsUniquePerTenant(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	ts.createInitiative(admin, map[string]any{"name": "Alpha"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "alpha"}), 409, "ALREADY_EXISTS")
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "  Alpha "}), 409, "ALREADY_EXISTS")

	// Another tenant may use the same name.
	other := admin
	other.tenant = dbtest.NewTenant(t, ts.pool, "enterprise")
	ts.createInitiative(other, map[string]any{"name": "Alpha"})
}

func TestInitiativeStatusLifecycle(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	owner := caller{sub: "owner-1", tenant: ts.tenant, roles: []string{"Manager"}, permissions: allPermissions()}
	exec := caller{sub: "exec-1", tenant: ts.tenant, roles: []string{"Executive"}, permissions: allPermissions()}
	admin := ts.admin()
	id := ts.createInitiative(owner, map[string]any{"name": "Lifecycle"})
	status := func(c caller, to string) response {
		return ts.do(&c, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": to, "reason": "because"})
	}

	expect(t, status(owner, "approved"), 422, "VALIDATION_ERROR") // skipping review is no transition
	expect(t, status(exec, "in_review"), 403, "AUTHORIZATION_ERROR")
	expect(t, status(owner, "in_review"), 200)
	expect(t, status(owner, "approved"), 403, "AUTHORIZATION_ERROR") // the owner cannot approve
	r := status(exec, "approved")
	expect(t, r, 200)
	if r.json(t)["status"] != "approved" {
		t.Fatalf("status after approval: %s", r.body)
	}
	expect(t, status(exec, "active"), 403, "AUTHORIZATION_ERROR") // only Admin activates
	expect(t, status(admin, "active"), 200)
	expect(t, status(owner, "completed"), 200)
	expect(t, status(owner, "archived"), 403, "AUTHORIZATION_ERROR")
	expect(t, status(admin, "archived"), 200)
	expect(t, status(admin, "active"), 409, "CONFLICT") // archived is final

	r = ts.do(&admin, "GET", "/v1/initiatives/"+id+"/status-history", nil)
	expect(t, r, 200)
	var path []string
	for _, h := range r.json(t)["data"].([]any) {
		path = append(path, h.(map[string]any)["to_status"].(string))
	}
	if got := strings.Join(path, ">"); got != "draft>in_review>approved>active>completed>archived" {
		t.Fatalf("history = %s", got)
	}
	last := r.json(t)["data"].([]any)[5].(map[string]any)
	if last["actor"] != "admin-1" || last["reason"] != "because" || last["from_status"] != "completed" {
		t.Fatalf("history entry = %v", last)
	}

	// Bad bodies of the status endpoint.
	id2 := ts.createInitiative(owner, map[string]any{"name": "Second"})
	expect(t, ts.do(&owner, "POST", "/v1/initiatives/"+id2+"/status", map[string]any{}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&owner, "POST", "/v1/initiatives/"+id2+"/status", map[string]any{"status": "flying"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&owner, "POST", "/v1/initiatives/"+id2+"/status", map[string]any{"status": "draft"}), 422, "VALIDATION_ERROR")
}

func TestInitiativeRejectedCanGoBackToDraft(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Rework"})
	for _, to := range []string{"in_review", "rejected", "draft", "in_review"} {
		expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": to}), 200)
	}
}

func TestInitiativeUpdate(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Before", "industry": "retail", "segment": "smb"})

	// PATCH changes only what it carries; null clears.
	r := ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"description": "new", "segment": nil})
	expect(t, r, 200)
	got := r.json(t)
	if got["name"] != "Before" || got["description"] != "new" || got["industry"] != "retail" || got["segment"] != nil {
		t.Fatalf("after PATCH: %s", r.body)
	}
	// PUT replaces: absent optional fields are cleared, status kept.
	r = ts.do(&admin, "PUT", "/v1/initiatives/"+id, map[string]any{"name": "After", "description": "full"})
	expect(t, r, 200)
	got = r.json(t)
	if got["name"] != "After" || got["industry"] != nil || got["status"] != "draft" {
		t.Fatalf("after PUT: %s", r.body)
	}
	// Blank optional texts are stored as null.
	r = ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"owner_id": "", "industry": "  "})
	expect(t, r, 200)
	if got := r.json(t); got["owner_id"] != nil || got["industry"] != nil {
		t.Fatalf("blank texts not stored as null: %s", r.body)
	}
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"owner_id": "admin-1"}), 200)
	// Single-record routes take no query parameters.
	expect(t, ts.do(&admin, "GET", "/v1/initiatives/"+id+"?expand=all", nil), 400, "INVALID_PARAMETER")
	// A GET body can be sent back as is.
	full := ts.do(&admin, "GET", "/v1/initiatives/"+id, nil).json(t)
	full["description"] = "round-trip"
	expect(t, ts.do(&admin, "PUT", "/v1/initiatives/"+id, full), 200)

	expect(t, ts.do(&admin, "PUT", "/v1/initiatives/"+id, map[string]any{"description": "no name"}), 422, "VALIDATION_ERROR")
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"expected_start_date": "2026-06-01", "expected_end_date": "2026-01-01"}), 400, "INVALID_PARAMETER")
	// Status in PATCH obeys the transition table and its roles.
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"status": "active"}), 422, "VALIDATION_ERROR")
	analyst := caller{sub: "analyst", tenant: ts.tenant, roles: []string{"Analyst"}, permissions: allPermissions()}
	expect(t, ts.do(&analyst, "PATCH", "/v1/initiatives/"+id, map[string]any{"status": "in_review"}), 403, "AUTHORIZATION_ERROR")
	r = ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"status": "in_review"})
	expect(t, r, 200)
	hist := ts.do(&admin, "GET", "/v1/initiatives/"+id+"/status-history", nil).json(t)["data"].([]any)
	var kinds []string
	for _, h := range hist {
		kinds = append(kinds, h.(map[string]any)["kind"].(string)+":"+h.(map[string]any)["to_status"].(string))
	}
	// The PUT cleared the owner and a PATCH set it again: owner entries between the status ones.
	if got := strings.Join(kinds, ","); got != "status:draft,owner:draft,owner:draft,status:in_review" {
		t.Fatalf("a status change by PATCH must be in the history: %s", got)
	}
	// Renaming onto another initiative's name conflicts.
	ts.createInitiative(admin, map[string]any{"name": "Taken"})
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"name": "TAKEN"}), 409, "ALREADY_EXISTS")
}

func TestInitiativeDeleteArchivesWithProjects(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Doomed"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/projects", map[string]any{"name": "Phase 1"}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/projects", map[string]any{"name": ""}), 422, "VALIDATION_ERROR")

	// No roles: the Admin role would grant every permission (identity: permissions ∪ roles' permissions).
	noDelete := caller{sub: "w", tenant: ts.tenant, permissions: []string{"initiatives:read", "initiatives:write"}}
	expect(t, ts.do(&noDelete, "DELETE", "/v1/initiatives/"+id, nil), 403, "AUTHORIZATION_ERROR")

	r := ts.do(&admin, "DELETE", "/v1/initiatives/"+id, nil)
	expect(t, r, 204)
	if len(r.body) != 0 {
		t.Fatalf("204 with a body: %s", r.body)
	}
	got := ts.do(&admin, "GET", "/v1/initiatives/"+id, nil).json(t)
	if got["status"] != "archived" || got["projects"].([]any)[0].(map[string]any)["status"] != "archived" {
		t.Fatalf("after DELETE: %v", got)
	}
	// Archived is read-only.
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+id, nil), 409, "CONFLICT")
	expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"description": "x"}), 409, "CONFLICT")
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/projects", map[string]any{"name": "late"}), 409, "CONFLICT")
	// Excluded from the default list, shown when asked for.
	if n := len(ts.do(&admin, "GET", "/v1/initiatives", nil).json(t)["data"].([]any)); n != 0 {
		t.Fatalf("archived initiative listed by default")
	}
	if n := len(ts.do(&admin, "GET", "/v1/initiatives?status=archived", nil).json(t)["data"].([]any)); n != 1 {
		t.Fatalf("status=archived lists %d", n)
	}
}

func TestInitiativeUnknownIDs(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	for _, id := range []string{uuid.NewString(), "not-a-uuid", "1", "%27%20OR%201=1"} {
		expect(t, ts.do(&admin, "GET", "/v1/initiatives/"+id, nil), 404, "NOT_FOUND")
		expect(t, ts.do(&admin, "PATCH", "/v1/initiatives/"+id, map[string]any{"name": "x"}), 404, "NOT_FOUND")
		expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+id, nil), 404, "NOT_FOUND")
		expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "in_review"}), 404, "NOT_FOUND")
	}
}

func TestTenantIsolation(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	a := ts.admin()
	id := ts.createInitiative(a, map[string]any{"name": "A only"})
	b := a
	b.tenant = dbtest.NewTenant(t, ts.pool, "enterprise")

	expect(t, ts.do(&b, "GET", "/v1/initiatives/"+id, nil), 404, "NOT_FOUND")
	expect(t, ts.do(&b, "PATCH", "/v1/initiatives/"+id, map[string]any{"name": "stolen"}), 404, "NOT_FOUND")
	expect(t, ts.do(&b, "DELETE", "/v1/initiatives/"+id, nil), 404, "NOT_FOUND")
	if n := len(ts.do(&b, "GET", "/v1/initiatives", nil).json(t)["data"].([]any)); n != 0 {
		t.Fatalf("tenant B lists %d of A's initiatives", n)
	}
	// A token of tenant B naming tenant A in the header is refused.
	expect(t, ts.do(&b, "GET", "/v1/initiatives", nil, "X-Tenant-ID", a.tenant.String()), 403, "AUTHORIZATION_ERROR")
}

func TestAuthenticationAndTenantHeader(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	tok := ts.token(admin)
	expired, _ := ts.keys.Mint(authMint(admin, -time.Minute))
	unknownTenant := admin
	unknownTenant.tenant = uuid.New()

	cases := []struct {
		name    string
		c       *caller
		headers []string
		status  int
	}{
		{"no credentials", nil, []string{"X-Tenant-ID", admin.tenant.String()}, 401},
		{"lowercase bearer", nil, []string{"Authorization", "bearer " + tok, "X-Tenant-ID", admin.tenant.String()}, 401},
		{"two spaces", nil, []string{"Authorization", "Bearer  " + tok, "X-Tenant-ID", admin.tenant.String()}, 401},
		{"basic auth", nil, []string{"Authorization", "Basic dXNlcjpwYXNz", "X-Tenant-ID", admin.tenant.String()}, 401},
		{"tampered token", nil, []string{"Authorization", "Bearer " + tok[:len(tok)-4] + "AAAA", "X-Tenant-ID", admin.tenant.String()}, 401},
		{"expired token", nil, []string{"Authorization", "Bearer " + expired, "X-Tenant-ID", admin.tenant.String()}, 401},
		{"missing tenant header", &admin, []string{"X-Tenant-ID", ""}, 400},
		{"malformed tenant header", &admin, []string{"X-Tenant-ID", "acme"}, 403},
		{"tenant that does not exist", &unknownTenant, nil, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(c.c, "GET", "/v1/initiatives", nil, c.headers...)
			expect(t, r, c.status)
			if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
			if r.header.Get("X-RateLimit-Limit") == "" {
				t.Fatal("refused response without rate-limit headers")
			}
		})
	}
}

func TestPermissionsAreChecked(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Guarded"})
	// No roles: the Admin role would grant every permission (identity: permissions ∪ roles' permissions).
	reader := caller{sub: "reader", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	nobody := caller{sub: "nobody", tenant: ts.tenant, permissions: []string{}}

	expect(t, ts.do(&reader, "GET", "/v1/initiatives/"+id, nil), 200)
	expect(t, ts.do(&nobody, "GET", "/v1/initiatives", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&nobody, "GET", "/v1/initiatives/"+id+"/status-history", nil), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "POST", "/v1/initiatives", map[string]any{"name": "x"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "PUT", "/v1/initiatives/"+id, map[string]any{"name": "x"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "PATCH", "/v1/initiatives/"+id, map[string]any{"name": "x"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "in_review"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "POST", "/v1/initiatives/"+id+"/projects", map[string]any{"name": "p"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&reader, "DELETE", "/v1/initiatives/"+id, nil), 403, "AUTHORIZATION_ERROR")
}

func TestDeactivatedUserIsRefused(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	expect(t, ts.do(&admin, "GET", "/v1/initiatives", nil), 200) // provisions the user just in time
	err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), "UPDATE users SET status = 'deactivated' WHERE subject = $1", admin.sub)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, ts.do(&admin, "GET", "/v1/initiatives", nil), 403, "AUTHORIZATION_ERROR")
}

func TestLiveInitiativeCap(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus") // no per-endpoint limit in the way
	admin := ts.admin()
	// Fill to 999 directly, then the API may create exactly one more.
	fillInitiatives(t, ts, 999)
	last := ts.createInitiative(admin, map[string]any{"name": "number 1000"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "number 1001"}), 409, "CONFLICT")
	// Archiving one frees a place.
	expect(t, ts.do(&admin, "DELETE", "/v1/initiatives/"+last, nil), 204)
	ts.createInitiative(admin, map[string]any{"name": "number 1001"})
}

// Creates at once near the cap: the per-tenant lock makes each count the
// initiatives the others committed, so exactly the places left are taken.
func TestLiveInitiativeCapUnderConcurrentCreates(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	fillInitiatives(t, ts, 990)
	got := raceStatuses(30, func(i int) int {
		return ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": fmt.Sprintf("raced %d", i)}).status
	})
	if got[201] != 10 || got[409] != 20 {
		t.Fatalf("creates %v, want 10 201 and 20 409", got)
	}
	if n := countRows(t, ts, ts.tenant, "SELECT count(*) FROM initiatives WHERE status <> 'archived'"); n != 1000 {
		t.Fatalf("%d live initiatives, want 1000", n)
	}
}

// fillInitiatives inserts n draft initiatives into the test tenant directly.
func fillInitiatives(t *testing.T, ts *testServer, n int) {
	t.Helper()
	err := db.InTenant(context.Background(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), "INSERT INTO initiatives (tenant_id, name) SELECT $1, 'bulk ' || g FROM generate_series(1, $2::int) g", ts.tenant, n)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func authMint(c caller, ttl time.Duration) auth.MintOptions {
	return auth.MintOptions{Subject: c.sub, TenantID: c.tenant.String(), Roles: c.roles, Permissions: c.permissions, TTL: ttl}
}
