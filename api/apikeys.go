package api

// API keys (deprecated, still supported; spec section 5).
//
// A key is vck_<tenant>_<id>_<secret> (internal/credential). It is accepted as
// `X-API-Key: <key>` or `Authorization: Bearer <key>` (a bearer value starting
// with vck_ is a key, anything else a JWT). The key names its tenant, so a key
// presented with another tenant's X-Tenant-ID is checked in its own tenant:
// a valid key there is 403 (tenant not permitted), an invalid one 401.
//
// Scopes map one to one onto permissions: initiatives:read grants
// initiatives:read, and so on; webhooks:manage grants the pseudo-permission
// rbac.WebhooksManage that the webhook routes require (JWT callers hold it
// through admin:config). A key grants nothing else.

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/wire"
)

const (
	// APIKeyDeprecation is the RFC 9745 Deprecation header value of responses
	// to key-authenticated requests: deprecated since 2026-01-01T00:00:00Z.
	APIKeyDeprecation = "@1767225600"
	// APIKeyDeprecationLink points at the documentation of the replacement.
	APIKeyDeprecationLink = `</docs>; rel="deprecation"`
	defaultKeyDays        = 365
	maxKeyDays            = 365
)

// apiKeyPresented returns the key of a request, if it carries one.
func apiKeyPresented(c *fiber.Ctx) (string, bool) {
	if k := c.Get("X-API-Key"); k != "" {
		return k, true
	}
	if tok, ok := bearerToken(c); ok && credential.HasKind(credential.APIKey, tok) {
		return tok, true
	}
	return "", false
}

// authenticateAPIKey is authenticate for a request carrying an API key. It
// checks the key's form only; the key is looked up once the tenant is known.
func (s *Server) authenticateAPIKey(c *fiber.Ctx, raw string) error {
	c.Set("Deprecation", APIKeyDeprecation)
	c.Set(fiber.HeaderLink, APIKeyDeprecationLink)
	if c.Get("X-API-Key") != "" && c.Get(fiber.HeaderAuthorization) != "" {
		return s.refuseAnonymous(c, InvalidParameter("send one credential: X-API-Key or Authorization, not both"))
	}
	key, ok := credential.Parse(credential.APIKey, raw)
	if !ok {
		return s.refuseAnonymous(c, Unauthorized("the API key is malformed"))
	}
	c.Locals(localAPIKey, key)
	return c.Next()
}

// apiKeyTenant is tenant for a key: the key must be live in the X-Tenant-ID
// tenant. It is verified here, before rate limiting, so requests with bad keys
// count against the client IP and not against the tenant they name.
func (s *Server) apiKeyTenant(c *fiber.Ctx, key credential.Parsed) error {
	header := c.Get("X-Tenant-ID")
	if header == "" {
		return s.refuseAnonymous(c, InvalidParameter("the X-Tenant-ID header is required"))
	}
	ctx := c.UserContext()
	tenantID, err := uuid.Parse(header)
	if err != nil || tenantID != key.Tenant {
		// Another tenant's key: 403 if it is a valid key there, 401 if it is no key at all.
		if _, verr := s.verifyAPIKey(ctx, key); verr != nil {
			return s.refuseAnonymous(c, verr)
		}
		return s.refuseAnonymous(c, Forbidden("the API key is not valid for the tenant named in X-Tenant-ID"))
	}
	t, err := s.tenants.get(ctx, tenantID)
	if err != nil {
		return err
	}
	if t == nil {
		return s.refuseAnonymous(c, Unauthorized("the API key is revoked, expired or unknown"))
	}
	row, err := s.verifyAPIKey(ctx, key)
	if err != nil {
		return s.refuseAnonymous(c, err)
	}
	perms := make(rbac.Set, len(row.Scopes))
	perms.Add(row.Scopes...) // scopes are permission names (see the package comment above)
	c.Locals(localPrincipal, &Principal{
		Subject: "api-key:" + row.ID.String(), TenantID: tenantID, roles: []string{}, perms: perms,
		Auth: AuthInfo{Kind: authAPIKey, APIKeyID: row.ID},
	})
	c.Locals(localTenant, t)
	return c.Next()
}

// verifyAPIKey checks a key in its own tenant (credential.VerifyAPIKey) and
// says why it is refused.
func (s *Server) verifyAPIKey(ctx context.Context, key credential.Parsed) (dbsqlc.APIKey, error) {
	var row dbsqlc.APIKey
	err := db.InTenant(ctx, s.Pool, key.Tenant, func(tx pgx.Tx) error {
		var err error
		row, err = credential.VerifyAPIKey(ctx, tx, key)
		if expired, ok := errors.AsType[*credential.ExpiredError](err); ok {
			return Unauthorized("the API key expired at %s", wire.Timestamp(expired.At))
		}
		switch {
		case errors.Is(err, credential.ErrUnknown):
			return Unauthorized("the API key is revoked, expired or unknown")
		case errors.Is(err, credential.ErrRevoked):
			return Unauthorized("the API key was revoked")
		}
		return err
	})
	return row, err
}

// ---- /v1/api-keys ----

type apiKeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	Status     string   `json:"status"` // active or expired (revoked keys are gone)
	CreatedBy  string   `json:"created_by"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	ExpiresAt  string   `json:"expires_at"`
}

type apiKeyCreatedJSON struct {
	apiKeyJSON
	Key string `json:"key"` // shown once
}

func toAPIKeyJSON(k dbsqlc.APIKey) apiKeyJSON {
	status := "active"
	if !time.Now().Before(k.ExpiresAt) {
		status = "expired"
	}
	prefix := credential.Parsed{Kind: credential.APIKey, Tenant: k.TenantID, ID: k.PublicID}.Prefix()
	return apiKeyJSON{
		ID: k.ID.String(), Name: k.Name, Prefix: prefix, Scopes: k.Scopes, Status: status, CreatedBy: k.CreatedBy,
		CreatedAt: wire.Timestamp(k.CreatedAt), LastUsedAt: optTimestamp(k.LastUsedAt), ExpiresAt: wire.Timestamp(k.ExpiresAt),
	}
}

func scopeNames() []string {
	out := make([]string, len(rbac.APIKeyScopes))
	for i, s := range rbac.APIKeyScopes {
		out[i] = string(s)
	}
	return out
}

func (s *Server) createAPIKey(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	name := b.Text("name", true, maxIdentityName)
	scopes := b.TextList("scopes", len(rbac.APIKeyScopes), 100)
	if b.Has("scopes") && scopes != nil && len(scopes) == 0 {
		b.Fail("scopes", "required", "must name at least one scope")
	} else if !b.Has("scopes") || b.IsNull("scopes") {
		b.Fail("scopes", "required", "is required; one or more of %v", scopeNames())
	}
	for i, sc := range scopes {
		if !rbac.IsAPIKeyScope(rbac.Permission(sc)) {
			b.Fail("scopes["+strconv.Itoa(i)+"]", "invalid_value", "is not a known scope; known: %v", scopeNames())
		}
	}
	days := b.Integer("expires_in_days", 1, maxKeyDays)
	if err := b.Done(); err != nil {
		return err
	}
	if days == nil {
		d := defaultKeyDays
		days = &d
	}
	row, key, err := credential.CreateAPIKey(c.UserContext(), requestTx(c), principal(c).actor(), credential.APIKeyInput{Name: *name, Scopes: scopes, Days: *days})
	if err != nil {
		return identityError(err)
	}
	noStore(c)
	c.Location("/v1/api-keys/" + row.ID.String())
	return c.Status(fiber.StatusCreated).JSON(apiKeyCreatedJSON{apiKeyJSON: toAPIKeyJSON(row), Key: key.Raw})
}

func (s *Server) listAPIKeys(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxUserPageSize)
	if err := q.done(); err != nil {
		return err
	}
	p := principal(c)
	rows, err := db.Q.APIKeyList(c.UserContext(), requestTx(c), dbsqlc.APIKeyListParams{TenantID: p.TenantID, PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.APIKeyListRow) int64 { return r.Total },
		func(r dbsqlc.APIKeyListRow) apiKeyJSON { return toAPIKeyJSON(r.APIKey) },
		func() (int64, error) { return db.Q.APIKeyCount(c.UserContext(), requestTx(c), p.TenantID) })
}

func (s *Server) getAPIKey(c *fiber.Ctx) error {
	id, err := pathID(c, "id", "API key")
	if err != nil {
		return err
	}
	row, err := db.Q.APIKeyGet(c.UserContext(), requestTx(c), dbsqlc.APIKeyGetParams{TenantID: principal(c).TenantID, ID: id})
	if err := found("API key", err); err != nil {
		return err
	}
	return sendRecord(c, row.CreatedAt, toAPIKeyJSON(row)) // never edited: created_at is its version
}

func (s *Server) revokeAPIKey(c *fiber.Ctx) error {
	id, err := pathID(c, "id", "API key")
	if err != nil {
		return err
	}
	// The only change a key sees is this revocation (conditional below), so the check holds to the write.
	if row, err := db.Q.APIKeyGet(c.UserContext(), requestTx(c), dbsqlc.APIKeyGetParams{TenantID: principal(c).TenantID, ID: id}); err == nil {
		if err := checkIfMatch(c, row.CreatedAt); err != nil {
			return err
		}
	}
	if err := credential.RevokeAPIKey(c.UserContext(), requestTx(c), principal(c).TenantID, id); err != nil {
		return identityError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
