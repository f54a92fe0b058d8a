package api

// Roles (/v1/roles, permission admin:roles): the built-in roles every tenant
// has (read-only: PUT, PATCH and DELETE answer 409) and the tenant's custom
// roles. A role is referred to by name in tokens (`roles` claim), in users'
// and service clients' role lists; renaming a custom role renames it there
// too. A role still assigned to a user or a live service client cannot be
// deleted (409).

import (
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/wire"
)

// roleNamePattern: letters, digits, space, dot, dash and underscore; starts
// with a letter or digit and does not end with a space (names are compared
// exactly with token claims, so surrounding spaces are refused, not trimmed).
var roleNamePattern = regexp.MustCompile(`^[\p{L}\p{N}](?:[\p{L}\p{N} ._-]*[\p{L}\p{N}._-])?$`)

type roleJSON struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Permissions []string `json:"permissions"`
	BuiltIn     bool     `json:"built_in"`
	CreatedAt   *string  `json:"created_at"` // null for built-in roles
	UpdatedAt   *string  `json:"updated_at"`
}

func builtinRoleJSON(r rbac.BuiltinRole) roleJSON {
	perms := make([]string, len(r.Permissions))
	for i, p := range r.Permissions {
		perms[i] = string(p)
	}
	return roleJSON{ID: r.ID, Name: r.Name, Description: r.Description, Permissions: perms, BuiltIn: true}
}

func toRoleJSON(r dbsqlc.Role) roleJSON {
	created, updated := wire.Timestamp(r.CreatedAt), wire.Timestamp(r.UpdatedAt)
	return roleJSON{ID: r.ID.String(), Name: r.Name, Description: r.Description, Permissions: rbac.SortPermissions(r.Permissions),
		CreatedAt: &created, UpdatedAt: &updated}
}

func (s *Server) listRoles(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxUserPageSize)
	builtIn := q.oneOf("built_in", "", []string{"true", "false"})
	if err := q.done(); err != nil {
		return err
	}
	var all []roleJSON
	if builtIn != "false" {
		for _, r := range rbac.BuiltinRoles {
			all = append(all, builtinRoleJSON(r))
		}
	}
	if builtIn != "true" {
		rows, err := db.Q.RoleList(c.UserContext(), requestTx(c), principal(c).TenantID)
		if err != nil {
			return err
		}
		for _, r := range rows {
			all = append(all, toRoleJSON(r))
		}
	}
	var resp listResponse[roleJSON]
	from := min((page-1)*size, len(all))
	resp.Data = append(make([]roleJSON, 0, size), all[from:min(from+size, len(all))]...)
	resp.Meta.Pagination = newPagination(page, size, int64(len(all)))
	return c.JSON(resp)
}

// loadRole finds a role by id: a built-in id (admin, executive, ...) or a
// custom role's uuid. forUpdate locks a custom role and checks If-Match.
func loadRole(c *fiber.Ctx, forUpdate bool) (*rbac.BuiltinRole, dbsqlc.Role, error) {
	raw := c.Params("id")
	if r, ok := rbac.BuiltinByID(strings.ToLower(raw)); ok {
		return &r, dbsqlc.Role{}, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return nil, dbsqlc.Role{}, NotFound("role")
	}
	if forUpdate {
		r, err := rbac.LockRole(c.UserContext(), requestTx(c), principal(c).TenantID, id)
		if err != nil {
			return nil, r, identityError(err)
		}
		return nil, r, checkIfMatch(c, r.UpdatedAt)
	}
	r, err := db.Q.RoleGet(c.UserContext(), requestTx(c), dbsqlc.RoleGetParams{TenantID: principal(c).TenantID, ID: id})
	return nil, r, found("role", err)
}

func (s *Server) getRole(c *fiber.Ctx) error {
	b, r, err := loadRole(c, false)
	if err != nil {
		return err
	}
	if b != nil {
		return sendRecord(c, time.Time{}, builtinRoleJSON(*b)) // built in: never written, version 0
	}
	return sendRecord(c, r.UpdatedAt, toRoleJSON(r))
}

type roleFields struct {
	name, description *string
	permissions       []string
	has               map[string]bool
}

func readRoleFields(c *fiber.Ctx, replace bool) (roleFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return roleFields{}, err
	}
	f := roleFields{has: map[string]bool{}}
	for _, n := range []string{"name", "description", "permissions"} {
		f.has[n] = b.Has(n)
	}
	f.name = b.Text("name", replace || f.has["name"], maxRoleNameLen)
	if f.name != nil && !roleNamePattern.MatchString(*f.name) {
		b.Fail("name", "invalid_format", "must start with a letter or digit, not end with a space, and hold only letters, digits, spaces, dots, dashes and underscores")
	}
	f.description = b.Text("description", false, maxRoleDescLen)
	f.permissions = readPermissions(b, "permissions")
	if replace && !f.has["permissions"] {
		b.Fail("permissions", "required", "is required ([] for none)")
	}
	if f.has["permissions"] && b.IsNull("permissions") {
		b.Fail("permissions", "invalid_type", "must be an array of permissions ([] for none)")
	}
	b.Ignore("id", "built_in", "created_at", "updated_at")
	if err := b.Done(); err != nil {
		return roleFields{}, err
	}
	return f, nil
}

func (s *Server) createRole(c *fiber.Ctx) error {
	f, err := readRoleFields(c, true)
	if err != nil {
		return err
	}
	r, err := rbac.CreateRole(c.UserContext(), requestTx(c), principal(c).actor(), rbac.RoleInput{
		Name: *f.name, Description: deref(f.description), Permissions: f.permissions,
	})
	if err != nil {
		return identityError(err)
	}
	body := toRoleJSON(r)
	c.Location("/v1/roles/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

func (s *Server) replaceRole(c *fiber.Ctx) error { return s.updateRole(c, true) }
func (s *Server) patchRole(c *fiber.Ctx) error   { return s.updateRole(c, false) }

func (s *Server) updateRole(c *fiber.Ctx, replace bool) error {
	builtin, r, err := loadRole(c, true)
	if err != nil {
		return err
	}
	if builtin != nil {
		return Conflict("built-in role %s is read-only; create a custom role instead", builtin.Name)
	}
	f, err := readRoleFields(c, replace)
	if err != nil {
		return err
	}
	next := rbac.RoleInput{Name: r.Name, Description: r.Description, Permissions: r.Permissions}
	if f.name != nil {
		next.Name = *f.name
	}
	if replace || f.has["description"] {
		next.Description = deref(f.description)
	}
	if f.has["permissions"] {
		next.Permissions = f.permissions
	}
	updated, err := rbac.UpdateRole(c.UserContext(), requestTx(c), principal(c).actor(), r, next)
	if err != nil {
		return identityError(err)
	}
	return sendRecord(c, updated.UpdatedAt, toRoleJSON(updated))
}

func (s *Server) deleteRole(c *fiber.Ctx) error {
	builtin, r, err := loadRole(c, true)
	if err != nil {
		return err
	}
	if builtin != nil {
		return Conflict("built-in role %s cannot be deleted", builtin.Name)
	}
	if err := rbac.DeleteRole(c.UserContext(), requestTx(c), r); err != nil {
		return identityError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
