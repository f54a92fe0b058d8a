package api_test

import (
	"testing"
)

// Regression: any holder of initiatives:write could PATCH owner_id to their own
// sub and then make the owner-only transitions, and the history did not show
// the ownership change.
func TestInitiativeOwnerChange(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	alice := caller{sub: "alice", tenant: ts.tenant, roles: []string{"Manager"}, permissions: []string{"initiatives:read", "initiatives:write"}}
	bob := caller{sub: "bob", tenant: ts.tenant, roles: []string{"Manager", "Executive"}, permissions: []string{"initiatives:read", "initiatives:write"}}
	id := ts.createInitiative(admin, map[string]any{"name": "Owned", "owner_id": "alice"})
	path := "/v1/initiatives/" + id
	owner := func() any { return ts.do(&admin, "GET", path, nil).json(t)["owner_id"] }

	// Bob cannot take it, clear it (PATCH null, PUT without owner_id) or give it away.
	expect(t, ts.do(&bob, "PATCH", path, map[string]any{"owner_id": "bob"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&bob, "PATCH", path, map[string]any{"owner_id": nil}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&bob, "PATCH", path, map[string]any{"owner_id": "carol"}), 403, "AUTHORIZATION_ERROR")
	expect(t, ts.do(&bob, "PUT", path, map[string]any{"name": "Owned"}), 403, "AUTHORIZATION_ERROR")
	// ... so the owner-only transition stays out of reach.
	expect(t, ts.do(&bob, "POST", path+"/status", map[string]any{"status": "in_review"}), 403, "AUTHORIZATION_ERROR")
	if owner() != "alice" {
		t.Fatalf("owner changed by a refused request: %v", owner())
	}
	// Other writes that keep the owner still work for Bob.
	expect(t, ts.do(&bob, "PATCH", path, map[string]any{"description": "Bob's notes", "owner_id": "alice"}), 200)
	expect(t, ts.do(&bob, "PUT", path, map[string]any{"name": "Owned", "owner_id": "alice"}), 200)

	// The owner hands it over; then Bob may make the owner-only transition.
	r := ts.do(&alice, "PATCH", path, map[string]any{"owner_id": "bob"})
	expect(t, r, 200)
	if r.json(t)["owner_id"] != "bob" {
		t.Fatalf("handover: %s", r.body)
	}
	expect(t, ts.do(&bob, "POST", path+"/status", map[string]any{"status": "in_review"}), 200)
	// Alice is no longer the owner.
	expect(t, ts.do(&alice, "PATCH", path, map[string]any{"owner_id": "alice"}), 403, "AUTHORIZATION_ERROR")
	// An Admin reassigns and clears; nobody else may claim an initiative without an owner.
	expect(t, ts.do(&admin, "PATCH", path, map[string]any{"owner_id": "alice"}), 200)
	expect(t, ts.do(&admin, "PATCH", path, map[string]any{"owner_id": nil}), 200)
	expect(t, ts.do(&bob, "PATCH", path, map[string]any{"owner_id": "bob"}), 403, "AUTHORIZATION_ERROR")

	// The history records every change of owner with who made it; metrics count status changes only.
	r = ts.do(&alice, "GET", path+"/status-history", nil)
	expect(t, r, 200)
	type entry struct{ kind, from, to, fromOwner, toOwner, actor any }
	var got []entry
	for _, h := range r.json(t)["data"].([]any) {
		m := h.(map[string]any)
		got = append(got, entry{m["kind"], m["from_status"], m["to_status"], m["from_owner_id"], m["to_owner_id"], m["actor"]})
	}
	want := []entry{
		{"status", nil, "draft", nil, nil, "admin-1"},
		{"owner", "draft", "draft", "alice", "bob", "alice"},
		{"status", "draft", "in_review", nil, nil, "bob"},
		{"owner", "in_review", "in_review", "bob", "alice", "admin-1"},
		{"owner", "in_review", "in_review", "alice", nil, "admin-1"},
	}
	if len(got) != len(want) {
		t.Fatalf("history: %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("history[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	m := ts.do(&admin, "GET", path, nil).json(t)["metrics"].(map[string]any)
	if m["status_changes"] != float64(1) {
		t.Errorf("status_changes = %v, want 1 (owner entries are not status changes)", m["status_changes"])
	}
}
