package rbac

// The tenant's custom roles: the operations that write them and the lookups
// that every grant (a role, a user's roles, a service client, an API key) checks.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// MaxCustomRoles bounds a tenant's custom roles.
const MaxCustomRoles = 100

// Actor is who changes roles, users and credentials: their tenant, their
// subject (recorded as creator) and the permissions they hold (a grant may
// not exceed them).
type Actor struct {
	TenantID    uuid.UUID
	Subject     string
	Permissions Set
}

// Errors of the role operations.
var (
	// ErrRoleNotFound: no custom role of that id in the tenant.
	ErrRoleNotFound = errors.New("rbac: no such role")
	// ErrReservedName: the name is a built-in role's.
	ErrReservedName = errors.New("the name is the name of a built-in role")
	// ErrNameTaken: another custom role has the name (case-insensitively).
	ErrNameTaken = errors.New("a role of this name already exists in this tenant")
	// ErrRoleLimit: the tenant has MaxCustomRoles custom roles.
	ErrRoleLimit = fmt.Errorf("the tenant has reached its limit of %d custom roles", MaxCustomRoles)
)

// RoleInUseError refuses to delete a role still assigned.
type RoleInUseError struct {
	Name           string
	Users, Clients int64
}

func (e *RoleInUseError) Error() string {
	return fmt.Sprintf("role %q is in use by %d user(s) and %d service client(s); unassign it first", e.Name, e.Users, e.Clients)
}

// UnknownRolesError names the positions of role names the tenant does not define.
type UnknownRolesError struct {
	Indexes []int
	Names   []string
}

func (e *UnknownRolesError) Error() string {
	return "no role named " + strings.Join(e.Names, ", ") + " in this tenant"
}

// SortPermissions orders permissions as the spec lists them.
func SortPermissions(perms []string) []string {
	set := Set{}
	set.Add(perms...)
	return set.Sorted()
}

// CheckRolesExist refuses (*UnknownRolesError) role names that are neither
// built in nor custom roles of the tenant.
func CheckRolesExist(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, names []string) error {
	var custom []string
	for _, n := range names {
		if _, ok := Builtin(n); !ok {
			custom = append(custom, n)
		}
	}
	if len(custom) == 0 {
		return nil
	}
	found, err := db.Q.RoleNamesExisting(ctx, tx, dbsqlc.RoleNamesExistingParams{TenantID: tenantID, Names: custom})
	if err != nil {
		return err
	}
	unknown := &UnknownRolesError{}
	for i, n := range names {
		if _, ok := Builtin(n); !ok && !slices.Contains(found, n) {
			unknown.Indexes, unknown.Names = append(unknown.Indexes, i), append(unknown.Names, n)
		}
	}
	if len(unknown.Indexes) > 0 {
		return unknown
	}
	return nil
}

// RolesPermissions is what the named roles grant, built in or custom.
func RolesPermissions(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, names []string) (Set, error) {
	set := Set{}
	for _, n := range names {
		set.AddRole(n)
	}
	if names == nil {
		names = []string{}
	}
	custom, err := db.Q.RolePermissions(ctx, tx, dbsqlc.RolePermissionsParams{TenantID: tenantID, Names: names})
	if err != nil {
		return nil, err
	}
	set.Add(custom...)
	return set, nil
}

// CheckAssignableRoles refuses roles the tenant does not define
// (*UnknownRolesError) and roles granting more than the actor holds (*GrantError).
func CheckAssignableRoles(ctx context.Context, tx pgx.Tx, a Actor, roles []string, what string) error {
	if len(roles) == 0 {
		return nil
	}
	if err := CheckRolesExist(ctx, tx, a.TenantID, roles); err != nil {
		return err
	}
	granted, err := RolesPermissions(ctx, tx, a.TenantID, roles)
	if err != nil {
		return err
	}
	return CheckGrantOf(a, granted, what)
}

// CheckGrantOf refuses (*GrantError naming what) a grant of permissions the actor lacks.
func CheckGrantOf(a Actor, granted Set, what string) error {
	err := CheckGrant(a.Permissions, granted)
	if ge, ok := errors.AsType[*GrantError](err); ok {
		ge.What = what
	}
	return err
}

// LockRole finds a custom role of the tenant locked for update (ErrRoleNotFound).
func LockRole(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID) (dbsqlc.Role, error) {
	r, err := db.Q.RoleGetForUpdate(ctx, tx, dbsqlc.RoleGetForUpdateParams{TenantID: tenantID, ID: id})
	if db.IsNotFound(err) {
		return r, ErrRoleNotFound
	}
	return r, err
}

// RoleInput is a custom role as written: a name, a description and permissions.
type RoleInput struct {
	Name, Description string
	Permissions       []string
}

// CreateRole adds a custom role: not a built-in name (ErrReservedName), no
// permission the actor lacks (*GrantError), within MaxCustomRoles
// (ErrRoleLimit), a name not taken (ErrNameTaken).
func CreateRole(ctx context.Context, tx pgx.Tx, a Actor, in RoleInput) (dbsqlc.Role, error) {
	if IsReservedRoleName(in.Name) {
		return dbsqlc.Role{}, ErrReservedName
	}
	granted := Set{}
	granted.Add(in.Permissions...)
	if err := CheckGrantOf(a, granted, "this role"); err != nil {
		return dbsqlc.Role{}, err
	}
	existing, err := db.Q.RoleList(ctx, tx, a.TenantID)
	if err != nil {
		return dbsqlc.Role{}, err
	}
	if len(existing) >= MaxCustomRoles {
		return dbsqlc.Role{}, ErrRoleLimit
	}
	r, err := db.Q.RoleCreate(ctx, tx, dbsqlc.RoleCreateParams{
		TenantID: a.TenantID, Name: in.Name, Description: in.Description, Permissions: SortPermissions(in.Permissions),
	})
	if db.IsUniqueViolation(err, "roles_tenant_name_ci") {
		return r, ErrNameTaken
	}
	return r, err
}

// UpdateRole writes next over the locked role (LockRole): the name may not
// become a built-in one (ErrReservedName) nor another role's (ErrNameTaken);
// added permissions must be the actor's (*GrantError). A rename follows into
// the role lists of users and service clients.
func UpdateRole(ctx context.Context, tx pgx.Tx, a Actor, locked dbsqlc.Role, next RoleInput) (dbsqlc.Role, error) {
	if !strings.EqualFold(next.Name, locked.Name) && IsReservedRoleName(next.Name) {
		return dbsqlc.Role{}, ErrReservedName
	}
	perms := SortPermissions(next.Permissions)
	added := Set{}
	for _, perm := range perms {
		if !slices.Contains(locked.Permissions, perm) {
			added.Add(perm)
		}
	}
	if err := CheckGrantOf(a, added, "this change"); err != nil {
		return dbsqlc.Role{}, err
	}
	updated, err := db.Q.RoleUpdate(ctx, tx, dbsqlc.RoleUpdateParams{
		TenantID: locked.TenantID, ID: locked.ID, Name: next.Name, Description: next.Description, Permissions: perms,
	})
	if db.IsUniqueViolation(err, "roles_tenant_name_ci") {
		return updated, ErrNameTaken
	}
	if err != nil {
		return updated, err
	}
	if updated.Name != locked.Name {
		if err := db.Q.UserRenameRole(ctx, tx, dbsqlc.UserRenameRoleParams{TenantID: locked.TenantID, OldName: locked.Name, NewName: updated.Name}); err != nil {
			return updated, err
		}
		if err := db.Q.ServiceClientRenameRole(ctx, tx, dbsqlc.ServiceClientRenameRoleParams{TenantID: locked.TenantID, OldName: locked.Name, NewName: updated.Name}); err != nil {
			return updated, err
		}
	}
	return updated, nil
}

// DeleteRole removes the locked role (LockRole) unless a user or a live
// service client holds it (*RoleInUseError).
func DeleteRole(ctx context.Context, tx pgx.Tx, locked dbsqlc.Role) error {
	users, err := db.Q.UserCountWithRole(ctx, tx, dbsqlc.UserCountWithRoleParams{TenantID: locked.TenantID, Role: locked.Name})
	if err != nil {
		return err
	}
	clients, err := db.Q.ServiceClientCountWithRole(ctx, tx, dbsqlc.ServiceClientCountWithRoleParams{TenantID: locked.TenantID, Role: locked.Name})
	if err != nil {
		return err
	}
	if users > 0 || clients > 0 {
		return &RoleInUseError{Name: locked.Name, Users: users, Clients: clients}
	}
	_, err = db.Q.RoleDelete(ctx, tx, dbsqlc.RoleDeleteParams{TenantID: locked.TenantID, ID: locked.ID})
	return err
}
