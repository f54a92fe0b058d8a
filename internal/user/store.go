package user

// The operations on a tenant's users: invitation, changes of name and roles,
// deactivation and reactivation, ending sessions, and provisioning on first sight.

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
)

// Errors of the user operations.
var (
	// ErrNotFound: no user of that id in the tenant.
	ErrNotFound = errors.New("user: no such user")
	// ErrEmailTaken: a user of the tenant already has the e-mail address.
	ErrEmailTaken = errors.New("a user with this e-mail address already exists in this tenant")
)

// LastAdminError refuses a change that takes the last active Admin out (ErrLastAdmin);
// What says which change ("cannot deactivate").
type LastAdminError struct{ What string }

func (e *LastAdminError) Error() string { return e.What + ": " + ErrLastAdmin.Error() }

func (e *LastAdminError) Unwrap() error { return ErrLastAdmin }

// Session end reasons (auth_sessions.end_reason).
const (
	EndDeactivated  = "user_deactivated"
	EndAdminRevoked = "admin_revoked"
)

// InvitedEvent is the data of a user.invited event.
type InvitedEvent struct {
	User      any    `json:"user"` // as the API shows it
	InvitedBy string `json:"invited_by"`
}

// DeactivatedEvent is the data of a user.deactivated event.
type DeactivatedEvent struct {
	User          any    `json:"user"` // as the API shows it
	DeactivatedBy string `json:"deactivated_by"`
	SessionsEnded int64  `json:"sessions_ended"`
}

// View is how the API shows a user; the events carry the same representation.
type View func(dbsqlc.User) any

// Lock finds a user of the tenant locked for update (ErrNotFound). Changes
// that may take an active Admin away take the tenant's admin lock first
// (admins), so the count of the other Admins holds until commit.
func Lock(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID, admins bool) (dbsqlc.User, error) {
	if admins {
		if err := db.Q.UserLockAdmins(ctx, tx, tenantID); err != nil {
			return dbsqlc.User{}, err
		}
	}
	u, err := db.Q.UserGetForUpdate(ctx, tx, dbsqlc.UserGetForUpdateParams{TenantID: tenantID, ID: id})
	if db.IsNotFound(err) {
		return u, ErrNotFound
	}
	return u, err
}

// InviteInput is an invitation: the address, an optional name and the roles the tenant assigns.
type InviteInput struct {
	Email string
	Name  *string
	Roles []string
}

// Invite adds an invited user and its user.invited event. The roles must
// exist and grant nothing the actor lacks; the address must be free in the
// tenant (ErrEmailTaken).
func Invite(ctx context.Context, tx pgx.Tx, a rbac.Actor, in InviteInput, view View) (dbsqlc.User, error) {
	if err := rbac.CheckAssignableRoles(ctx, tx, a, in.Roles, "assigning these roles"); err != nil {
		return dbsqlc.User{}, err
	}
	taken, err := db.Q.UserEmailTaken(ctx, tx, dbsqlc.UserEmailTakenParams{TenantID: a.TenantID, Email: in.Email})
	if err != nil {
		return dbsqlc.User{}, err
	}
	if taken {
		return dbsqlc.User{}, ErrEmailTaken
	}
	u, err := db.Q.UserInvite(ctx, tx, dbsqlc.UserInviteParams{TenantID: a.TenantID, Email: &in.Email, Name: in.Name, Roles: nonNil(in.Roles), InvitedBy: &a.Subject})
	if db.IsUniqueViolation(err, "users_tenant_pending_email") {
		return u, ErrEmailTaken
	}
	if err != nil {
		return u, err
	}
	_, err = outbox.Write(ctx, tx, a.TenantID, outbox.UserInvited, InvitedEvent{User: view(u), InvitedBy: a.Subject})
	return u, err
}

// Change is a change of a user's name and roles; nil leaves it as it is.
type Change struct {
	Name     *string
	SetName  bool
	Roles    []string
	SetRoles bool
}

// Update changes the locked user (Lock, with admins when roles change):
// added roles must be assignable by the actor, and the last active Admin
// keeps the Admin role (*LastAdminError).
func Update(ctx context.Context, tx pgx.Tx, a rbac.Actor, locked dbsqlc.User, ch Change) (dbsqlc.User, error) {
	next := dbsqlc.UserUpdateParams{TenantID: locked.TenantID, ID: locked.ID, Name: locked.Name, Roles: nonNil(locked.Roles)}
	if ch.SetName {
		next.Name = ch.Name
	}
	if ch.SetRoles {
		var added []string
		for _, r := range ch.Roles {
			if !slices.Contains(locked.Roles, r) {
				added = append(added, r)
			}
		}
		if err := rbac.CheckAssignableRoles(ctx, tx, a, added, "assigning these roles"); err != nil {
			return dbsqlc.User{}, err
		}
		if slices.Contains(locked.Roles, rbac.RoleAdmin) && !slices.Contains(ch.Roles, rbac.RoleAdmin) {
			if err := keepLastAdmin(ctx, tx, locked, "cannot remove the Admin role"); err != nil {
				return dbsqlc.User{}, err
			}
		}
		next.Roles = nonNil(ch.Roles)
	}
	return db.Q.UserUpdate(ctx, tx, next)
}

// keepLastAdmin refuses a change that takes u out of the active Admins when no
// other remains. The caller holds the admin lock (Lock with admins).
func keepLastAdmin(ctx context.Context, tx pgx.Tx, u dbsqlc.User, what string) error {
	if !IsActiveAdmin(Status(u.Status), u.Roles) {
		return nil
	}
	others, err := db.Q.UserCountActiveWithRole(ctx, tx, dbsqlc.UserCountActiveWithRoleParams{TenantID: u.TenantID, Role: rbac.RoleAdmin, ExceptID: u.ID})
	if err != nil {
		return err
	}
	if err := CheckKeepsAdmin(Status(u.Status), u.Roles, others); err != nil {
		return &LastAdminError{What: what}
	}
	return nil
}

// Deactivate deactivates the locked user (Lock with admins): not twice
// (ErrWrongStatus), not the last active Admin (*LastAdminError). Its sessions
// and access tokens end, and a user.deactivated event is written.
func Deactivate(ctx context.Context, tx pgx.Tx, a rbac.Actor, locked dbsqlc.User, view View) (dbsqlc.User, error) {
	if err := CheckDeactivate(Status(locked.Status)); err != nil {
		return dbsqlc.User{}, err
	}
	if err := keepLastAdmin(ctx, tx, locked, "cannot deactivate"); err != nil {
		return dbsqlc.User{}, err
	}
	updated, err := db.Q.UserDeactivate(ctx, tx, dbsqlc.UserDeactivateParams{TenantID: locked.TenantID, ID: locked.ID})
	if err != nil {
		return updated, err
	}
	ended, err := db.Q.SessionEndAllForUser(ctx, tx, dbsqlc.SessionEndAllForUserParams{TenantID: locked.TenantID, UserID: locked.ID, Reason: new(EndDeactivated)})
	if err != nil {
		return updated, err
	}
	_, err = outbox.Write(ctx, tx, a.TenantID, outbox.UserDeactivated, DeactivatedEvent{User: view(updated), DeactivatedBy: a.Subject, SessionsEnded: ended})
	return updated, err
}

// Reactivate brings the locked user back (ErrWrongStatus unless deactivated):
// active, or invited when nobody has signed in as the user yet.
func Reactivate(ctx context.Context, tx pgx.Tx, locked dbsqlc.User) (dbsqlc.User, error) {
	if err := CheckReactivate(Status(locked.Status)); err != nil {
		return dbsqlc.User{}, err
	}
	return db.Q.UserReactivate(ctx, tx, dbsqlc.UserReactivateParams{TenantID: locked.TenantID, ID: locked.ID})
}

// EndSessions ends every refresh-token session of the locked user and every
// access token issued to it so far.
func EndSessions(ctx context.Context, tx pgx.Tx, locked dbsqlc.User) error {
	if _, err := db.Q.SessionEndAllForUser(ctx, tx, dbsqlc.SessionEndAllForUserParams{TenantID: locked.TenantID, UserID: locked.ID, Reason: new(EndAdminRevoked)}); err != nil {
		return err
	}
	return db.Q.UserEndTokens(ctx, tx, dbsqlc.UserEndTokensParams{TenantID: locked.TenantID, ID: locked.ID})
}

// Provision finds or makes the user of a subject: by subject, else by
// claiming an invitation to the e-mail address, else a new active user.
// email and name may be empty (absent from the token).
func Provision(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, subject, email, name string) (dbsqlc.User, error) {
	u, err := db.Q.UserGetBySubject(ctx, tx, dbsqlc.UserGetBySubjectParams{TenantID: tenantID, Subject: &subject})
	if !db.IsNotFound(err) {
		return u, err
	}
	if email != "" {
		u, err = db.Q.UserClaimInvitation(ctx, tx, dbsqlc.UserClaimInvitationParams{TenantID: tenantID, Subject: &subject, Email: email, Name: nonEmpty(name)})
		if !db.IsNotFound(err) {
			return u, err
		}
	}
	return db.Q.UserProvision(ctx, tx, dbsqlc.UserProvisionParams{TenantID: tenantID, Subject: &subject, Email: nonEmpty(email), Name: nonEmpty(name)})
}

// nonNil stores an absent list as {} (the columns are NOT NULL).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
