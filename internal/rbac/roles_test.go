package rbac

import (
	"errors"
	"slices"
	"testing"
)

func TestBuiltinRoles(t *testing.T) {
	want := []string{RoleAdmin, RoleExecutive, RoleManager, RoleAnalyst, RoleViewer}
	for i, r := range BuiltinRoles {
		if r.Name != want[i] {
			t.Fatalf("role %d is %s, want %s", i, r.Name, want[i])
		}
		for _, p := range r.Permissions {
			if !IsKnown(p) {
				t.Errorf("%s grants unknown permission %s", r.Name, p)
			}
		}
		if b, ok := BuiltinByID(r.ID); !ok || b.Name != r.Name {
			t.Errorf("BuiltinByID(%s)", r.ID)
		}
		if !IsReservedRoleName(r.Name) || !IsReservedRoleName(r.ID) {
			t.Errorf("%s not reserved", r.Name)
		}
	}
	admin, _ := Builtin(RoleAdmin)
	if len(admin.Permissions) != len(AllPermissions) {
		t.Fatal("Admin must hold every permission")
	}
	viewer, _ := Builtin(RoleViewer)
	for _, p := range viewer.Permissions {
		if p[len(p)-5:] != ":read" {
			t.Errorf("Viewer holds %s", p)
		}
	}
	// Executive approves initiatives in review: a status change needs initiatives:write.
	exec, _ := Builtin(RoleExecutive)
	if !slices.Contains(exec.Permissions, InitiativesWrite) || !slices.Contains(exec.Permissions, BusinessCasesApprove) {
		t.Fatal("Executive cannot approve")
	}
	if _, ok := Builtin("admin"); ok {
		t.Fatal("role names are case-sensitive")
	}
}

func TestSet(t *testing.T) {
	s := Set{}
	s.Add("initiatives:read", "custom:thing")
	s.AddRole(RoleAnalyst)
	s.AddRole("Nope")
	if !s[BenefitsWrite] || s[InitiativesWrite] {
		t.Fatalf("set %v", s.Sorted())
	}
	if s[WebhooksManage] {
		t.Fatal("webhooks:manage without admin:config")
	}
	s.Add(string(AdminConfig))
	s.Imply()
	if !s[WebhooksManage] {
		t.Fatal("admin:config implies webhooks:manage")
	}
	if got := s.Missing([]Permission{InitiativesRead, InitiativesDelete, InitiativesDelete}); !slices.Equal(got, []Permission{InitiativesDelete}) {
		t.Fatalf("missing %v", got)
	}
	sorted := s.Sorted()
	if sorted[0] != "initiatives:read" || sorted[len(sorted)-1] != "webhooks:manage" {
		t.Fatalf("sorted %v", sorted)
	}
	if !IsAPIKeyScope(WebhooksManage) || IsAPIKeyScope(AdminConfig) {
		t.Fatal("API key scopes")
	}
}

func TestCheckGrant(t *testing.T) {
	held := Set{InitiativesRead: true, InitiativesWrite: true}
	if err := CheckGrant(held, Set{InitiativesRead: true}); err != nil {
		t.Errorf("a subset: %v", err)
	}
	err := CheckGrant(held, Set{InitiativesRead: true, AdminUsers: true, AdminConfig: true, InitiativesWrite: false})
	ge, ok := errors.AsType[*GrantError](err)
	if !ok || !slices.Equal(ge.Missing, []Permission{AdminConfig, AdminUsers}) || err.Error() != "would grant admin:config, admin:users, which you do not hold" {
		t.Errorf("beyond the holder: %v", err)
	}
}
