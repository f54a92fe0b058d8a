// Package rbac holds the permission vocabulary of the spec (section 5) and
// the rules that turn a caller's roles and permissions into what it may do.
package rbac

import "slices"

// Permission is one permission string from the spec's permission table.
type Permission string

const (
	InitiativesRead      Permission = "initiatives:read"
	InitiativesWrite     Permission = "initiatives:write"
	InitiativesDelete    Permission = "initiatives:delete"
	BusinessCasesRead    Permission = "business_cases:read"
	BusinessCasesWrite   Permission = "business_cases:write"
	BusinessCasesApprove Permission = "business_cases:approve"
	AnalyticsRead        Permission = "analytics:read"
	AdminUsers           Permission = "admin:users"
	AdminRoles           Permission = "admin:roles"
	AdminConfig          Permission = "admin:config"
	BenefitsRead         Permission = "benefits:read"
	BenefitsWrite        Permission = "benefits:write"
	StakeholdersRead     Permission = "stakeholders:read"
	StakeholdersWrite    Permission = "stakeholders:write"
	StakeholdersDelete   Permission = "stakeholders:delete"
)

// AllPermissions lists every permission the spec defines, in spec order.
var AllPermissions = []Permission{
	InitiativesRead, InitiativesWrite, InitiativesDelete,
	BusinessCasesRead, BusinessCasesWrite, BusinessCasesApprove,
	AnalyticsRead,
	AdminUsers, AdminRoles, AdminConfig,
	BenefitsRead, BenefitsWrite,
	StakeholdersRead, StakeholdersWrite, StakeholdersDelete,
}

// Names lists every permission as a string, in spec order.
func Names() []string {
	out := make([]string, len(AllPermissions))
	for i, p := range AllPermissions {
		out[i] = string(p)
	}
	return out
}

// IsKnown reports whether p is a permission the spec defines.
func IsKnown(p Permission) bool { return slices.Contains(AllPermissions, p) }

// Role names the spec's transition table checks against the `roles` claim.
const (
	RoleAdmin     = "Admin"
	RoleExecutive = "Executive"
)
