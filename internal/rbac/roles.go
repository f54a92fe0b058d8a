package rbac

import (
	"slices"
	"strings"
)

// Built-in role names. Admin and Executive are also the names the initiative
// state machine checks (spec section 3).
const (
	RoleManager = "Manager"
	RoleAnalyst = "Analyst"
	RoleViewer  = "Viewer"
)

// BuiltinRole is a role every tenant has. Built-in roles are read-only.
type BuiltinRole struct {
	ID          string // stable id in /v1/roles/{id}
	Name        string
	Description string
	Permissions []Permission
}

// BuiltinRoles are the roles every tenant has, in the order they are listed.
var BuiltinRoles = []BuiltinRole{
	{
		ID: "admin", Name: RoleAdmin,
		Description: "Everything, including users, roles and organization settings",
		Permissions: AllPermissions,
	},
	{
		ID: "executive", Name: RoleExecutive,
		Description: "Reads everything, approves business cases and initiatives in review",
		Permissions: []Permission{
			InitiativesRead, InitiativesWrite, // initiatives:write: approving is a status change (plus the role check)
			BusinessCasesRead, BusinessCasesApprove,
			AnalyticsRead, BenefitsRead, StakeholdersRead,
		},
	},
	{
		ID: "manager", Name: RoleManager,
		Description: "Runs initiatives: creates and edits initiatives, business cases, benefits and stakeholders",
		Permissions: []Permission{
			InitiativesRead, InitiativesWrite,
			BusinessCasesRead, BusinessCasesWrite,
			AnalyticsRead,
			BenefitsRead, BenefitsWrite,
			StakeholdersRead, StakeholdersWrite, StakeholdersDelete,
		},
	},
	{
		ID: "analyst", Name: RoleAnalyst,
		Description: "Reads everything and records benefit actuals",
		Permissions: []Permission{
			InitiativesRead, BusinessCasesRead, AnalyticsRead,
			BenefitsRead, BenefitsWrite,
			StakeholdersRead,
		},
	},
	{
		ID: "viewer", Name: RoleViewer,
		Description: "Reads everything, changes nothing",
		Permissions: []Permission{InitiativesRead, BusinessCasesRead, AnalyticsRead, BenefitsRead, StakeholdersRead},
	},
}

// Builtin returns the built-in role with exactly this name.
func Builtin(name string) (BuiltinRole, bool) {
	for _, r := range BuiltinRoles {
		if r.Name == name {
			return r, true
		}
	}
	return BuiltinRole{}, false
}

// BuiltinByID returns the built-in role with this id.
func BuiltinByID(id string) (BuiltinRole, bool) {
	for _, r := range BuiltinRoles {
		if r.ID == id {
			return r, true
		}
	}
	return BuiltinRole{}, false
}

// IsReservedRoleName reports whether a custom role may not take this name:
// the built-in names are reserved regardless of case.
func IsReservedRoleName(name string) bool {
	for _, r := range BuiltinRoles {
		if strings.EqualFold(r.Name, name) || strings.EqualFold(r.ID, name) {
			return true
		}
	}
	return false
}

// WebhooksManage is not a role permission: it is the API-key scope that grants
// the webhook routes. Every caller holding admin:config holds it implicitly, so
// webhook routes require WebhooksManage and both JWT admins and scoped keys pass.
const WebhooksManage Permission = "webhooks:manage"

// APIKeyScopes are the scopes an API key may carry (spec section 5).
var APIKeyScopes = []Permission{InitiativesRead, InitiativesWrite, BenefitsRead, BenefitsWrite, WebhooksManage}

// IsAPIKeyScope reports whether s is a scope an API key may carry.
func IsAPIKeyScope(s Permission) bool { return slices.Contains(APIKeyScopes, s) }

// Set is an effective permission set.
type Set map[Permission]bool

// Add puts permissions (given as strings, e.g. from a token or a row) into the set.
func (s Set) Add(perms ...string) {
	for _, p := range perms {
		s[Permission(p)] = true
	}
}

// AddRole adds the permissions of a built-in role, if name is one.
func (s Set) AddRole(name string) {
	if r, ok := Builtin(name); ok {
		for _, p := range r.Permissions {
			s[p] = true
		}
	}
}

// Imply adds the permissions implied by others: admin:config implies webhooks:manage.
func (s Set) Imply() {
	if s[AdminConfig] {
		s[WebhooksManage] = true
	}
}

// Missing returns the permissions of want that the set lacks, in order.
func (s Set) Missing(want []Permission) []Permission {
	var out []Permission
	for _, p := range want {
		if !s[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Sorted lists the set in the spec's order (unknown permissions last, sorted).
func (s Set) Sorted() []string {
	out := make([]string, 0, len(s))
	for _, p := range AllPermissions {
		if s[p] {
			out = append(out, string(p))
		}
	}
	var rest []string
	for p, ok := range s {
		if ok && !IsKnown(p) {
			rest = append(rest, string(p))
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// GrantError refuses to hand out permissions the granter does not hold.
type GrantError struct {
	Missing []Permission
	What    string // what the grant is ("this role", "this key"); not part of Error
}

func (e *GrantError) Error() string {
	names := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		names[i] = string(m)
	}
	return "would grant " + strings.Join(names, ", ") + ", which you do not hold"
}

// CheckGrant refuses a grant (a role, client, key or assignment) holding a
// permission the granter lacks: no one creates anything more powerful than
// they are. The missing permissions are listed in order.
func CheckGrant(held, granted Set) error {
	var want []Permission
	for perm, ok := range granted {
		if ok {
			want = append(want, perm)
		}
	}
	slices.Sort(want)
	if missing := held.Missing(want); len(missing) > 0 {
		return &GrantError{Missing: missing}
	}
	return nil
}
