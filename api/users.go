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
	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/user"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
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
		CreatedAt: wire.Timestamp(u.CreatedAt), UpdatedAt: wire.Timestamp(u.UpdatedAt),
	}
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
	rows, err := db.Q.UserList(ctx, requestTx(c), dbsqlc.UserListParams{
		TenantID: p.TenantID, Status: status, Role: role, PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.UserListRow) int64 { return r.Total },
		func(r dbsqlc.UserListRow) userJSON { return toUserJSON(r.User) },
		func() (int64, error) {
			return db.Q.UserCount(ctx, requestTx(c), dbsqlc.UserCountParams{TenantID: p.TenantID, Status: status, Role: role})
		})
}

// loadUser finds the user of the path. forUpdate locks it (after the
// tenant's admin lock when admins) and checks If-Match.
func loadUser(c *fiber.Ctx, forUpdate, admins bool) (dbsqlc.User, error) {
	id, err := pathID(c, "id", "user")
	if err != nil {
		return dbsqlc.User{}, err
	}
	if forUpdate {
		u, err := user.Lock(c.UserContext(), requestTx(c), principal(c).TenantID, id, admins)
		if err != nil {
			return u, identityError(err)
		}
		return u, checkIfMatch(c, u.UpdatedAt)
	}
	u, err := db.Q.UserGet(c.UserContext(), requestTx(c), dbsqlc.UserGetParams{TenantID: principal(c).TenantID, ID: id})
	return u, found("user", err)
}

// showUser is user.View: the events of a user carry the API's representation.
func showUser(u dbsqlc.User) any { return toUserJSON(u) }

func (s *Server) getUser(c *fiber.Ctx) error {
	u, err := loadUser(c, false, false)
	if err != nil {
		return err
	}
	return sendRecord(c, u.UpdatedAt, toUserJSON(u))
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
	u, err := user.Invite(c.UserContext(), requestTx(c), principal(c).actor(), user.InviteInput{Email: *email, Name: name, Roles: roles}, showUser)
	if err != nil {
		return identityError(err)
	}
	body := toUserJSON(u)
	c.Location("/v1/users/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
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
	u, err := loadUser(c, true, hasRoles)
	if err != nil {
		return err
	}
	updated, err := user.Update(c.UserContext(), requestTx(c), principal(c).actor(), u, user.Change{Name: name, SetName: hasName, Roles: roles, SetRoles: hasRoles})
	if err != nil {
		return identityError(err)
	}
	return sendRecord(c, updated.UpdatedAt, toUserJSON(updated))
}

func (s *Server) deactivateUser(c *fiber.Ctx) error {
	u, err := loadUser(c, true, true)
	if err != nil {
		return err
	}
	updated, err := user.Deactivate(c.UserContext(), requestTx(c), principal(c).actor(), u, showUser)
	if err != nil {
		return identityError(err)
	}
	return c.JSON(toUserJSON(updated))
}

func (s *Server) reactivateUser(c *fiber.Ctx) error {
	u, err := loadUser(c, true, false)
	if err != nil {
		return err
	}
	updated, err := user.Reactivate(c.UserContext(), requestTx(c), u)
	if err != nil {
		return identityError(err)
	}
	return c.JSON(toUserJSON(updated))
}

// endUserSessions ends every refresh-token session of the user and every
// access token issued to it so far.
func (s *Server) endUserSessions(c *fiber.Ctx) error {
	u, err := loadUser(c, true, false)
	if err != nil {
		return err
	}
	if err := user.EndSessions(c.UserContext(), requestTx(c), u); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) listUserSessions(c *fiber.Ctx) error {
	u, err := loadUser(c, false, false)
	if err != nil {
		return err
	}
	rows, err := db.Q.SessionListLive(c.UserContext(), requestTx(c), dbsqlc.SessionListLiveParams{TenantID: u.TenantID, UserID: u.ID})
	if err != nil {
		return err
	}
	out := struct {
		Data []sessionJSON `json:"data"`
	}{Data: make([]sessionJSON, 0, len(rows))}
	for _, r := range rows {
		out.Data = append(out.Data, sessionJSON{ID: r.ID.String(), CreatedAt: wire.Timestamp(r.CreatedAt), LastUsedAt: wire.Timestamp(r.LastUsedAt), ExpiresAt: wire.Timestamp(r.ExpiresAt)})
	}
	return c.JSON(out)
}
