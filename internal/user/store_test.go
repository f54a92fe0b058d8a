package user_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/user"
)

func showID(u dbsqlc.User) any { return map[string]string{"id": u.ID.String()} }

// inTx runs fn in a tenant transaction.
func inTx(t *testing.T, pool db.Beginner, tenant uuid.UUID, fn func(tx pgx.Tx) error) error {
	t.Helper()
	return db.InTenant(context.Background(), pool, tenant, fn)
}

// tenantEvents reads the tenant's outbox (as the tenant: row-level security applies).
func tenantEvents(t *testing.T, pool db.Beginner, tenant uuid.UUID) []dbsqlc.OutboxEvent {
	t.Helper()
	var events []dbsqlc.OutboxEvent
	if err := inTx(t, pool, tenant, func(tx pgx.Tx) (err error) {
		events, err = db.Q.OutboxListByTenant(context.Background(), tx, tenant)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return events
}

// The operations refuse with typed errors a handler maps without reading
// their text, and write the events of what they did.
func TestUserOperations(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := dbtest.NewTenant(t, pool, "starter")
	admin := rbac.Actor{TenantID: tenant, Subject: "auth0|admin", Permissions: rbac.Set{}}
	admin.Permissions.AddRole(rbac.RoleAdmin)
	analyst := rbac.Actor{TenantID: tenant, Subject: "auth0|analyst", Permissions: rbac.Set{}}
	analyst.Permissions.AddRole(rbac.RoleAnalyst)

	var invited dbsqlc.User
	if err := inTx(t, pool, tenant, func(tx pgx.Tx) (err error) {
		invited, err = user.Invite(ctx, tx, admin, user.InviteInput{Email: "ada@example.com", Roles: []string{rbac.RoleAdmin}}, showID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	events := tenantEvents(t, pool, tenant)
	var ev user.InvitedEvent
	if len(events) != 1 || events[0].Type != outbox.UserInvited || json.Unmarshal(events[0].Data, &ev) != nil ||
		ev.InvitedBy != admin.Subject || ev.User.(map[string]any)["id"] != invited.ID.String() {
		t.Fatalf("events after an invitation: %+v", events)
	}

	refusals := []struct {
		name  string
		op    func(tx pgx.Tx) error
		check func(error) bool
	}{
		{"the same address again", func(tx pgx.Tx) error {
			_, err := user.Invite(ctx, tx, admin, user.InviteInput{Email: "ADA@example.com"}, showID)
			return err
		}, func(err error) bool { return errors.Is(err, user.ErrEmailTaken) }},
		{"a role the tenant does not define", func(tx pgx.Tx) error {
			_, err := user.Invite(ctx, tx, admin, user.InviteInput{Email: "bob@example.com", Roles: []string{rbac.RoleViewer, "Nobody"}}, showID)
			return err
		}, func(err error) bool {
			u, ok := errors.AsType[*rbac.UnknownRolesError](err)
			return ok && len(u.Indexes) == 1 && u.Indexes[0] == 1 && u.Names[0] == "Nobody"
		}},
		{"a role granting more than the inviter holds", func(tx pgx.Tx) error {
			_, err := user.Invite(ctx, tx, analyst, user.InviteInput{Email: "bob@example.com", Roles: []string{rbac.RoleAdmin}}, showID)
			return err
		}, func(err error) bool {
			g, ok := errors.AsType[*rbac.GrantError](err)
			return ok && g.What == "assigning these roles" && len(g.Missing) > 0
		}},
		{"reactivating a user who is not deactivated", func(tx pgx.Tx) error {
			u, err := user.Lock(ctx, tx, tenant, invited.ID, false)
			if err != nil {
				return err
			}
			_, err = user.Reactivate(ctx, tx, u)
			return err
		}, func(err error) bool {
			s, ok := errors.AsType[*user.StatusError](err)
			return ok && s.Reason == "the user is invited, not deactivated" && errors.Is(err, user.ErrWrongStatus)
		}},
		{"an id of no user", func(tx pgx.Tx) error {
			_, err := user.Lock(ctx, tx, tenant, uuid.New(), true)
			return err
		}, func(err error) bool { return errors.Is(err, user.ErrNotFound) }},
	}
	for _, r := range refusals {
		if err := inTx(t, pool, tenant, r.op); !r.check(err) {
			t.Errorf("%s: got %v", r.name, err)
		}
	}

	// The first sign-in of the address claims the invitation: the only active Admin.
	if err := inTx(t, pool, tenant, func(tx pgx.Tx) error {
		u, err := user.Provision(ctx, tx, tenant, "auth0|ada", "ada@example.com", "Ada")
		if err == nil && (u.ID != invited.ID || user.Status(u.Status) != user.Active) {
			t.Errorf("provisioned %+v, want the invitation %s active", u, invited.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lastAdmin := func(tx pgx.Tx) error {
		u, err := user.Lock(ctx, tx, tenant, invited.ID, true)
		if err != nil {
			return err
		}
		_, err = user.Deactivate(ctx, tx, admin, u, showID)
		return err
	}
	err := inTx(t, pool, tenant, lastAdmin)
	if last, ok := errors.AsType[*user.LastAdminError](err); !ok || last.What != "cannot deactivate" || !errors.Is(err, user.ErrLastAdmin) {
		t.Fatalf("deactivating the last active Admin: %v", err)
	}
	if err := inTx(t, pool, tenant, func(tx pgx.Tx) error {
		u, err := user.Lock(ctx, tx, tenant, invited.ID, true)
		if err != nil {
			return err
		}
		_, err = user.Update(ctx, tx, admin, u, user.Change{Roles: []string{rbac.RoleViewer}, SetRoles: true})
		return err
	}); !errors.Is(err, user.ErrLastAdmin) {
		t.Fatalf("taking the Admin role from the last active Admin: %v", err)
	}

	// With another active Admin, the first may go; its deactivation is an event.
	if err := inTx(t, pool, tenant, func(tx pgx.Tx) error {
		other, err := user.Provision(ctx, tx, tenant, "auth0|grace", "", "Grace")
		if err != nil {
			return err
		}
		_, err = user.Update(ctx, tx, admin, other, user.Change{Roles: []string{rbac.RoleAdmin}, SetRoles: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := inTx(t, pool, tenant, lastAdmin); err != nil {
		t.Fatalf("deactivating one of two active Admins: %v", err)
	}
	events = tenantEvents(t, pool, tenant)
	if n := len(events); n != 2 || events[1].Type != outbox.UserDeactivated {
		t.Fatalf("events after the deactivation: %+v", events)
	}
}
