package rbac_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/user"
)

// A custom role: refused under a built-in name or another role's, renamed
// everywhere it is assigned, and kept while assigned.
func TestRoleOperations(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := dbtest.NewTenant(t, pool, "starter")
	admin := rbac.Actor{TenantID: tenant, Subject: "auth0|admin", Permissions: rbac.Set{}}
	admin.Permissions.AddRole(rbac.RoleAdmin)
	in := func(fn func(tx pgx.Tx) error) error { return db.InTenant(ctx, pool, tenant, fn) }
	create := func(name string) (r dbsqlc.Role, err error) {
		err = in(func(tx pgx.Tx) (err error) {
			r, err = rbac.CreateRole(ctx, tx, admin, rbac.RoleInput{Name: name, Permissions: []string{string(rbac.InitiativesWrite), string(rbac.InitiativesRead)}})
			return err
		})
		return r, err
	}

	finance, err := create("Finance")
	if err != nil || !slices.Equal(finance.Permissions, []string{string(rbac.InitiativesRead), string(rbac.InitiativesWrite)}) {
		t.Fatalf("create: %+v, %v (permissions in the spec's order)", finance, err)
	}
	if _, err := create("admin"); !errors.Is(err, rbac.ErrReservedName) {
		t.Errorf("a built-in name: %v, want ErrReservedName", err)
	}
	if _, err := create("FINANCE"); !errors.Is(err, rbac.ErrNameTaken) {
		t.Errorf("another role's name: %v, want ErrNameTaken", err)
	}

	var holder dbsqlc.User
	if err := in(func(tx pgx.Tx) (err error) {
		if holder, err = user.Provision(ctx, tx, tenant, "auth0|fin", "", ""); err != nil {
			return err
		}
		holder, err = user.Update(ctx, tx, admin, holder, user.Change{Roles: []string{"Finance"}, SetRoles: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := in(func(tx pgx.Tx) error {
		locked, err := rbac.LockRole(ctx, tx, tenant, finance.ID)
		if err != nil {
			return err
		}
		_, err = rbac.UpdateRole(ctx, tx, admin, locked, rbac.RoleInput{Name: "Controlling", Permissions: locked.Permissions})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := in(func(tx pgx.Tx) error {
		u, err := db.Q.UserGet(ctx, tx, dbsqlc.UserGetParams{TenantID: tenant, ID: holder.ID})
		if err == nil && !slices.Equal(u.Roles, []string{"Controlling"}) {
			t.Errorf("the holder's roles after the rename: %v", u.Roles)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err = in(func(tx pgx.Tx) error {
		locked, err := rbac.LockRole(ctx, tx, tenant, finance.ID)
		if err != nil {
			return err
		}
		return rbac.DeleteRole(ctx, tx, locked)
	})
	if inUse, ok := errors.AsType[*rbac.RoleInUseError](err); !ok || inUse.Name != "Controlling" || inUse.Users != 1 || inUse.Clients != 0 {
		t.Fatalf("deleting an assigned role: %v", err)
	}
}
