package api

// Users of a tenant (/v1/users, permission admin:users).
//
// A user is invited (status invited, no subject yet), becomes active on the
// first sign-in whose token carries the invited e-mail address, and can be
// deactivated and reactivated. Users are also provisioned just in time, active,
// on the first request of a subject the tenant has not seen (tenantTx).
// roles are the roles the tenant assigns; they add to the roles of the
// user's tokens. The last active user holding the Admin role cannot be
// deactivated nor lose that role.

import (
	"context"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/user"
	"github.com/valuecase/valuecase/internal/validation"
)

type userJSON struct {
	ID            string   `json:"id"`
	Email         *string  `json:"email"`
	Name          *string  `json:"name"`
	Status        string   `json:"status"`
	Roles         []string `json:"roles"`
	Subject       *string  `json:"subject"` // the identity provider's sub, once signed in
	InvitedBy     *string  `json:"invited_by"`
	DeactivatedAt *string  `json:"deactivated_at"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
}

func toUserJSON(u dbsqlc.User) userJSON {
	return userJSON{
		ID: u.ID.String(), Email: u.Email, Name: u.Name, Status: u.Status, Roles: nonNil(u.Roles), Subject: u.Subject,
		InvitedBy: u.InvitedBy, DeactivatedAt: optTimestamp(u.DeactivatedAt),
		CreatedAt: timestamp(u.CreatedAt), UpdatedAt: timestamp(u.UpdatedAt),
	}
}

// UserInvitedEvent is the data of a user.invited event.
type UserInvitedEvent struct {
	User      userJSON `json:"user"`
	InvitedBy string   `json:"invited_by"`
}

// UserDeactivatedEvent is the data of a user.deactivated event.
type UserDeactivatedEvent struct {
	User          userJSON `json:"user"`
	DeactivatedBy string   `json:"deactivated_by"`
	SessionsEnded int64    `json:"sessions_ended"`
}

type sessionJSON struct {
	ID         string `json:"id"`
	CreatedAt  string `json:"created_at"`
	LastUsedAt string `json:"last_used_at"`
	ExpiresAt  string `json:"expires_at"`
}

func (s *Server) listUsers(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxUserPageSize)
	var status, role *string
	if _, ok := q.str("status"); ok {
		v := q.oneOf("status", "", validation.Names(user.Statuses))
		status = &v
	}
	if v, ok := q.str("role"); ok {
		if v == "" || len(v) > maxRoleNameLen {
			return InvalidParameter("query parameter role must be 1 to %d characters", maxRoleNameLen)
		}
		role = &v
	}
	if err := q.done(); err != nil {
		return err
	}
	ctx, p := c.UserContext(), principal(c)
	rows, err := db.Q.UserList(ctx, tx(c), dbsqlc.UserListParams{
		TenantID: p.TenantID, Status: status, Role: role, PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.UserListRow) int64 { return r.Total },
		func(r dbsqlc.UserListRow) userJSON { return toUserJSON(r.User) },
		func() (int64, error) {
			return db.Q.UserCount(ctx, tx(c), dbsqlc.UserCountParams{TenantID: p.TenantID, Status: status, Role: role})
		})
}

func loadUser(c *fiber.Ctx, forUpdate bool) (dbsqlc.User, error) {
	id, err := pathID(c, "id", "user")
	if err != nil {
		return dbsqlc.User{}, err
	}
	var u dbsqlc.User
	if forUpdate {
		u, err = db.Q.UserGetForUpdate(c.UserContext(), tx(c), dbsqlc.UserGetForUpdateParams{TenantID: principal(c).TenantID, ID: id})
		if err == nil {
			return u, checkIfMatch(c, u.UpdatedAt)
		}
	} else {
		u, err = db.Q.UserGet(c.UserContext(), tx(c), dbsqlc.UserGetParams{TenantID: principal(c).TenantID, ID: id})
	}
	return u, found("user", err)
}

func (s *Server) getUser(c *fiber.Ctx) error {
	u, err := loadUser(c, false)
	if err != nil {
		return err
	}
	return sendRecord(c, u.UpdatedAt, toUserJSON(u))
}

// checkAssignableRoles validates role names and that the caller may hand them out.
func checkAssignableRoles(ctx context.Context, t pgx.Tx, p *Principal, roles []string) error {
	if len(roles) == 0 {
		return nil
	}
	if err := checkRolesExist(ctx, t, p.TenantID, "roles", roles); err != nil {
		return err
	}
	granted, err := rolesPermissions(ctx, t, p.TenantID, roles)
	if err != nil {
		return err
	}
	return checkGrant(p, granted, "assigning these roles")
}

func (s *Server) inviteUser(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	email := b.Email("email", true)
	name := b.Text("name", false, maxNameLen)
	roles := b.TextList("roles", maxListItems, maxRoleNameLen)
	if err := b.Done(); err != nil {
		return err
	}
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	if err := checkAssignableRoles(ctx, t, p, roles); err != nil {
		return err
	}
	taken, err := db.Q.UserEmailTaken(ctx, t, dbsqlc.UserEmailTakenParams{TenantID: p.TenantID, Email: *email})
	if err != nil {
		return err
	}
	if taken {
		return AlreadyExists("a user with this e-mail address already exists in this tenant")
	}
	u, err := db.Q.UserInvite(ctx, t, dbsqlc.UserInviteParams{TenantID: p.TenantID, Email: email, Name: name, Roles: nonNil(roles), InvitedBy: &p.Subject})
	if db.IsUniqueViolation(err, "users_tenant_pending_email") {
		return AlreadyExists("a user with this e-mail address already exists in this tenant")
	}
	if err != nil {
		return err
	}
	body := toUserJSON(u)
	if _, err := outbox.Write(ctx, t, p.TenantID, outbox.UserInvited, UserInvitedEvent{User: body, InvitedBy: p.Subject}); err != nil {
		return err
	}
	c.Location("/v1/users/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// protectLastAdmin refuses a change that takes u out of the active Admins
// when no other remains (user.CheckKeepsAdmin). The caller holds UserLockAdmins.
func protectLastAdmin(ctx context.Context, t pgx.Tx, u dbsqlc.User, what string) error {
	if !user.IsActiveAdmin(user.Status(u.Status), u.Roles) {
		return nil
	}
	others, err := db.Q.UserCountActiveWithRole(ctx, t, dbsqlc.UserCountActiveWithRoleParams{TenantID: u.TenantID, Role: rbac.RoleAdmin, ExceptID: u.ID})
	if err != nil {
		return err
	}
	if err := user.CheckKeepsAdmin(user.Status(u.Status), u.Roles, others); err != nil {
		return Conflict("%s: %s", what, err.Error())
	}
	return nil
}

func (s *Server) patchUser(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	hasName, hasRoles := b.Has("name"), b.Has("roles")
	name := b.Text("name", false, maxNameLen)
	roles := b.TextList("roles", maxListItems, maxRoleNameLen)
	if hasRoles && b.IsNull("roles") {
		b.Fail("roles", "invalid_type", "must be an array of role names ([] for none)")
	}
	b.Ignore("id", "email", "status", "subject", "invited_by", "deactivated_at", "created_at", "updated_at")
	if err := b.Done(); err != nil {
		return err
	}
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	if hasRoles {
		if err := db.Q.UserLockAdmins(ctx, t, p.TenantID); err != nil {
			return err
		}
	}
	u, err := loadUser(c, true)
	if err != nil {
		return err
	}
	next := dbsqlc.UserUpdateParams{TenantID: u.TenantID, ID: u.ID, Name: u.Name, Roles: nonNil(u.Roles)}
	if hasName {
		next.Name = name
	}
	if hasRoles {
		var added []string
		for _, r := range roles {
			if !slices.Contains(u.Roles, r) {
				added = append(added, r)
			}
		}
		if err := checkAssignableRoles(ctx, t, p, added); err != nil {
			return err
		}
		if slices.Contains(u.Roles, rbac.RoleAdmin) && !slices.Contains(roles, rbac.RoleAdmin) {
			if err := protectLastAdmin(ctx, t, u, "cannot remove the Admin role"); err != nil {
				return err
			}
		}
		next.Roles = nonNil(roles)
	}
	updated, err := db.Q.UserUpdate(ctx, t, next)
	if err != nil {
		return err
	}
	return sendRecord(c, updated.UpdatedAt, toUserJSON(updated))
}

func (s *Server) deactivateUser(c *fiber.Ctx) error {
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	if err := db.Q.UserLockAdmins(ctx, t, p.TenantID); err != nil {
		return err
	}
	u, err := loadUser(c, true)
	if err != nil {
		return err
	}
	if err := user.CheckDeactivate(user.Status(u.Status)); err != nil {
		return userStatusError(err)
	}
	if err := protectLastAdmin(ctx, t, u, "cannot deactivate"); err != nil {
		return err
	}
	updated, err := db.Q.UserDeactivate(ctx, t, dbsqlc.UserDeactivateParams{TenantID: u.TenantID, ID: u.ID})
	if err != nil {
		return err
	}
	ended, err := db.Q.SessionEndAllForUser(ctx, t, dbsqlc.SessionEndAllForUserParams{TenantID: u.TenantID, UserID: u.ID, Reason: endReason("user_deactivated")})
	if err != nil {
		return err
	}
	body := toUserJSON(updated)
	if _, err := outbox.Write(ctx, t, p.TenantID, outbox.UserDeactivated, UserDeactivatedEvent{User: body, DeactivatedBy: p.Subject, SessionsEnded: ended}); err != nil {
		return err
	}
	return c.JSON(body)
}

func (s *Server) reactivateUser(c *fiber.Ctx) error {
	u, err := loadUser(c, true)
	if err != nil {
		return err
	}
	if err := user.CheckReactivate(user.Status(u.Status)); err != nil {
		return userStatusError(err)
	}
	updated, err := db.Q.UserReactivate(c.UserContext(), tx(c), dbsqlc.UserReactivateParams{TenantID: u.TenantID, ID: u.ID})
	if err != nil {
		return err
	}
	return c.JSON(toUserJSON(updated))
}

// endUserSessions ends every refresh-token session of the user and every
// access token issued to it so far.
func (s *Server) endUserSessions(c *fiber.Ctx) error {
	u, err := loadUser(c, true)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	if _, err := db.Q.SessionEndAllForUser(ctx, t, dbsqlc.SessionEndAllForUserParams{TenantID: u.TenantID, UserID: u.ID, Reason: endReason("admin_revoked")}); err != nil {
		return err
	}
	if err := db.Q.UserEndTokens(ctx, t, dbsqlc.UserEndTokensParams{TenantID: u.TenantID, ID: u.ID}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) listUserSessions(c *fiber.Ctx) error {
	u, err := loadUser(c, false)
	if err != nil {
		return err
	}
	rows, err := db.Q.SessionListLive(c.UserContext(), tx(c), dbsqlc.SessionListLiveParams{TenantID: u.TenantID, UserID: u.ID})
	if err != nil {
		return err
	}
	out := struct {
		Data []sessionJSON `json:"data"`
	}{Data: make([]sessionJSON, 0, len(rows))}
	for _, r := range rows {
		out.Data = append(out.Data, sessionJSON{ID: r.ID.String(), CreatedAt: timestamp(r.CreatedAt), LastUsedAt: timestamp(r.LastUsedAt), ExpiresAt: timestamp(r.ExpiresAt)})
	}
	return c.JSON(out)
}

// endReason is a value of auth_sessions.end_reason.
func endReason(s string) *string { return &s }

// userStatusError maps user.ErrWrongStatus to 409 with the rule's reason.
func userStatusError(err error) error {
	return Conflict("%s", strings.TrimPrefix(err.Error(), user.ErrWrongStatus.Error()+": "))
}
