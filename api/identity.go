package api

// Identity and access: who the caller is and what it may do.
//
// Effective permissions of a request (docs/identity.md, "Effective permissions"):
//
//	token permissions
//	∪ permissions of the token's roles
//	∪ permissions of the roles the tenant assigned to the user (users.roles)
//	(∪ webhooks:manage when admin:config is held)
//
// where a role name is looked up among the built-in roles (internal/rbac) and
// the tenant's custom roles; names the tenant does not know grant nothing.
// Built-in role permissions need no query; custom ones come with the one query
// that also loads the user (UserAuthenticate), so a request costs the same
// number of statements as before roles existed.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/user"
)

// How a caller authenticated.
const (
	authUser          = "user"           // a user's access token (identity provider's or the service's own)
	authServiceClient = "service_client" // the service's own token for a service client
	authAPIKey        = "api_key"        // a (deprecated) API key
)

// AuthInfo says how the caller of a request authenticated.
type AuthInfo struct {
	Kind      string
	ClientID  string     // service client tokens
	SessionID *uuid.UUID // access tokens issued from a refresh-token session
	APIKeyID  uuid.UUID  // API keys
	IssuedAt  time.Time  // iat of the token (zero when absent)
}

// principalFromClaims builds the caller of a verified token for a tenant:
// token permissions ∪ the built-in roles' permissions. Its admission adds the
// tenant's stored roles and custom roles (expectCaller).
func principalFromClaims(claims *auth.Claims, tenantID uuid.UUID) *Principal {
	perms := make(rbac.Set, len(claims.Permissions)+8)
	perms.Add(claims.Permissions...)
	for _, r := range claims.Roles {
		perms.AddRole(r)
	}
	perms.Imply()
	info := AuthInfo{Kind: authUser}
	if claims.IssuedAt != nil {
		info.IssuedAt = claims.IssuedAt.Time
	}
	if claims.Self && claims.ClientID != "" {
		info.Kind, info.ClientID = authServiceClient, claims.ClientID
	}
	if claims.Self && claims.SessionID != "" {
		if sid, err := uuid.Parse(claims.SessionID); err == nil {
			info.SessionID = &sid
		}
	}
	return &Principal{
		Subject: claims.Subject, TenantID: tenantID, Email: claims.Email, Name: claims.Name, Auth: info,
		roles: claims.Roles, perms: perms,
	}
}

// identityRoutes mounts the identity resources on the authenticated /v1 group.
func (s *Server) identityRoutes(v1 fiber.Router) {
	v1.Get("/users", s.require(rbac.AdminUsers), s.listUsers)
	v1.Post("/users", s.require(rbac.AdminUsers), s.inviteUser)
	v1.Get("/users/:id", s.require(rbac.AdminUsers), s.getUser)
	v1.Patch("/users/:id", s.require(rbac.AdminUsers), s.patchUser)
	v1.Post("/users/:id/deactivate", s.require(rbac.AdminUsers), s.deactivateUser)
	v1.Post("/users/:id/reactivate", s.require(rbac.AdminUsers), s.reactivateUser)
	v1.Get("/users/:id/sessions", s.require(rbac.AdminUsers), s.listUserSessions)
	v1.Delete("/users/:id/sessions", s.require(rbac.AdminUsers), s.endUserSessions)

	v1.Get("/roles", s.require(rbac.AdminRoles), s.listRoles)
	v1.Post("/roles", s.require(rbac.AdminRoles), s.createRole)
	v1.Get("/roles/:id", s.require(rbac.AdminRoles), s.getRole)
	v1.Put("/roles/:id", s.require(rbac.AdminRoles), s.replaceRole)
	v1.Patch("/roles/:id", s.require(rbac.AdminRoles), s.patchRole)
	v1.Delete("/roles/:id", s.require(rbac.AdminRoles), s.deleteRole)

	v1.Get("/api-keys", s.require(rbac.AdminConfig), s.listAPIKeys)
	v1.Post("/api-keys", s.require(rbac.AdminConfig), s.createAPIKey)
	v1.Get("/api-keys/:id", s.require(rbac.AdminConfig), s.getAPIKey)
	v1.Delete("/api-keys/:id", s.require(rbac.AdminConfig), s.revokeAPIKey)

	v1.Get("/service-clients", s.require(rbac.AdminConfig), s.listServiceClients)
	v1.Post("/service-clients", s.require(rbac.AdminConfig), s.createServiceClient)
	v1.Get("/service-clients/:id", s.require(rbac.AdminConfig), s.getServiceClient)
	v1.Delete("/service-clients/:id", s.require(rbac.AdminConfig), s.revokeServiceClient)
}

// expectCaller queues tenantTx's one query for the caller (db.Ride): the user
// (provisioned on first sight) or the service client, with the permissions of
// its stored roles. p.admit then refuses deactivated users, revoked clients and
// ended sessions, and completes the roles and the permission union.
func (s *Server) expectCaller(ctx context.Context, tx pgx.Tx, p *Principal) {
	switch p.Auth.Kind {
	case authAPIKey:
		return // verified before rate limiting (apiKeyTenant)
	case authServiceClient:
		var row dbsqlc.ServiceClientAuthenticateRow
		p.admission = db.Ride(ctx, tx, func(q dbsqlc.DBTX) (err error) {
			row, err = db.Q.ServiceClientAuthenticate(ctx, q, dbsqlc.ServiceClientAuthenticateParams{
				TenantID: p.TenantID, ClientID: p.Auth.ClientID, TokenRoles: nonNil(p.roles),
			})
			return err
		}, func(err error) error {
			if db.IsNotFound(err) || (err == nil && row.RevokedAt != nil) {
				return Unauthorized("the service client of this token was revoked")
			}
			if err != nil {
				return err
			}
			p.perms.Add(row.RolePermissions...)
			p.perms.Imply()
			return nil
		})
		return
	}
	var row dbsqlc.UserAuthenticateRow
	p.admission = db.Ride(ctx, tx, func(q dbsqlc.DBTX) (err error) {
		row, err = db.Q.UserAuthenticate(ctx, q, dbsqlc.UserAuthenticateParams{
			TenantID: p.TenantID, Subject: &p.Subject, SessionID: p.Auth.SessionID, TokenRoles: nonNil(p.roles),
		})
		return err
	}, func(err error) error {
		if db.IsNotFound(err) {
			row, err = s.firstSighting(ctx, tx, p)
		}
		if err != nil {
			return err
		}
		return p.admitUser(row)
	})
}

// admitUser refuses a deactivated user and a token of ended sessions, and adds
// the user's stored roles and their permissions.
func (p *Principal) admitUser(row dbsqlc.UserAuthenticateRow) error {
	if user.Status(row.Status) == user.Deactivated {
		return Forbidden("this user is deactivated in the tenant")
	}
	// iat has second resolution: a token issued in the same second as the revocation is refused too.
	if row.TokensValidAfter != nil && !p.Auth.IssuedAt.IsZero() && !p.Auth.IssuedAt.After(row.TokensValidAfter.Truncate(time.Second)) {
		return Unauthorized("the sessions of this user were ended; sign in again")
	}
	if p.Auth.SessionID != nil && !row.SessionLive {
		return Unauthorized("the session of this token has ended; sign in again")
	}
	for _, r := range row.Roles {
		if !slices.Contains(p.roles, r) {
			p.roles = append(slices.Clip(p.roles), r)
		}
		p.perms.AddRole(r)
	}
	p.perms.Add(row.RolePermissions...)
	p.perms.Imply()
	return nil
}

// firstSighting provisions the user of a subject the tenant has not seen:
// an invitation to the token's e-mail address is claimed (and becomes active),
// otherwise a new active user is made. It costs one more query for the
// permissions of custom roles, once per user.
func (s *Server) firstSighting(ctx context.Context, tx pgx.Tx, p *Principal) (dbsqlc.UserAuthenticateRow, error) {
	u, err := user.Provision(ctx, tx, p.TenantID, p.Subject, p.Email, p.Name)
	if err != nil {
		return dbsqlc.UserAuthenticateRow{}, err
	}
	names := unionStrings(u.Roles, p.roles)
	perms, err := db.Q.RolePermissions(ctx, tx, dbsqlc.RolePermissionsParams{TenantID: p.TenantID, Names: names})
	if err != nil {
		return dbsqlc.UserAuthenticateRow{}, err
	}
	return dbsqlc.UserAuthenticateRow{ID: u.ID, Status: u.Status, Roles: u.Roles, TokensValidAfter: u.TokensValidAfter, RolePermissions: perms}, nil
}

func unionStrings(a, b []string) []string {
	out := slices.Clone(nonNil(a))
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ---- limits and readers of the identity resources ----

const (
	maxRoleNameLen  = 100
	maxRoleDescLen  = 1000
	maxListItems    = 100
	maxIdentityName = 100 // names of API keys and service clients
	maxUserPageSize = 200
)

// readPermissions reads a permission list; unknown permissions are named in the 422.
func readPermissions(b *input.Object, field string) []string {
	perms := b.TextList(field, len(rbac.AllPermissions)+10, 100)
	for i, p := range perms {
		if !rbac.IsKnown(rbac.Permission(p)) {
			b.Fail(field+"["+strconv.Itoa(i)+"]", "invalid_value", "is not a known permission; known: %s", strings.Join(rbac.Names(), ", "))
		}
	}
	return perms
}

// actor is the caller as the identity operations see it.
func (p *Principal) actor() rbac.Actor {
	_ = p.admit() // refused: the request is answered with the refusal (tenantTx)
	return rbac.Actor{TenantID: p.TenantID, Subject: p.Subject, Permissions: p.perms}
}

// identityError maps the typed refusals of the users', roles' and
// credentials' operations (internal/user, internal/rbac, internal/credential).
func identityError(err error) error {
	if ge, ok := errors.AsType[*rbac.GrantError](err); ok {
		return Forbidden("%s %s", ge.What, ge.Error())
	}
	if unknown, ok := errors.AsType[*rbac.UnknownRolesError](err); ok {
		errs := make([]FieldError, len(unknown.Indexes))
		for i, at := range unknown.Indexes {
			errs[i] = FieldError{Field: "roles[" + strconv.Itoa(at) + "]", Code: "invalid_value", Message: "no role named " + strconv.Quote(unknown.Names[i]) + " in this tenant"}
		}
		return Invalid(errs...)
	}
	if inUse, ok := errors.AsType[*rbac.RoleInUseError](err); ok {
		return Conflict("%s", inUse.Error())
	}
	if last, ok := errors.AsType[*user.LastAdminError](err); ok {
		return Conflict("%s", last.Error())
	}
	if status, ok := errors.AsType[*user.StatusError](err); ok {
		return Conflict("%s", status.Reason)
	}
	if limit, ok := errors.AsType[*credential.LimitError](err); ok {
		return Conflict("%s", limit.Error())
	}
	switch {
	case errors.Is(err, rbac.ErrRoleNotFound):
		return NotFound("role")
	case errors.Is(err, user.ErrNotFound):
		return NotFound("user")
	case errors.Is(err, credential.ErrAPIKeyNotFound):
		return NotFound("API key")
	case errors.Is(err, credential.ErrClientNotFound):
		return NotFound("service client")
	case errors.Is(err, rbac.ErrReservedName), errors.Is(err, rbac.ErrNameTaken), errors.Is(err, user.ErrEmailTaken):
		return AlreadyExists("%s", err.Error())
	case errors.Is(err, rbac.ErrRoleLimit):
		return Conflict("%s", err.Error())
	}
	return err
}

// noStore marks a response that carries a credential.
func noStore(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
}
