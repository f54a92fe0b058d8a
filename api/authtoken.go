package api

// Token endpoints (spec section 5): POST /v1/auth/token and POST
// /v1/auth/refresh. They carry no Authorization header and no X-Tenant-ID:
// the tenant comes from the credential (client_id, refresh token) or from the
// identity provider's token (org_id), and every lookup then runs in that
// tenant's transaction under row-level security.
//
// Sessions (begun, refreshed, ended on reuse) are internal/auth's.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/ratelimit"
)

const (
	grantClientCredentials = "client_credentials"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"

	// AccessTokenTTL is the lifetime of the access tokens the service issues.
	AccessTokenTTL = time.Hour
)

// subjectTokenTypes are the accepted subject_token_type values (absent means JWT).
var subjectTokenTypes = []string{"urn:ietf:params:oauth:token-type:jwt", tokenTypeAccessToken, "urn:ietf:params:oauth:token-type:id_token"}

// tokenLimit is spec section 8's "token requests: 100 per minute per IP",
// shared by /v1/auth/token and /v1/auth/refresh.
var tokenLimit = ratelimit.Limit{PerMinute: 100, Burst: 100}

// authRoutes mounts the token endpoints; they must come before the
// authenticated /v1 group, whose middleware they do not run.
func (s *Server) authRoutes(app fiber.Router) {
	app.Post("/v1/auth/token", s.tokenRateLimit, s.issueToken)
	app.Post("/v1/auth/refresh", s.tokenRateLimit, s.refreshTokens)
}

func (s *Server) tokenRateLimit(c *fiber.Ctx) error {
	res, err := s.Limits.Allow(c.UserContext(), "token-ip:"+s.clientIP(c), tokenLimit)
	if err != nil {
		return err
	}
	setRateHeaders(c, res)
	if !res.Allowed {
		return rateLimited(c, res)
	}
	noStore(c)
	return c.Next()
}

type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshToken     string `json:"refresh_token,omitempty"`
	RefreshExpiresIn int    `json:"refresh_expires_in,omitempty"`
	IssuedTokenType  string `json:"issued_token_type,omitempty"`
}

// readTokenForm reads the parameters of a token request: a form
// (application/x-www-form-urlencoded, as OAuth clients send) or a JSON object
// of strings. Unknown parameters are ignored, as OAuth 2.0 asks.
func readTokenForm(c *fiber.Ctx) (map[string]string, error) {
	out := map[string]string{}
	mt := ""
	if ct := c.Get(fiber.HeaderContentType); ct != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return nil, fiber.ErrUnsupportedMediaType
		}
	}
	raw := bytes.TrimSpace(c.Body())
	switch mt {
	case fiber.MIMEApplicationForm:
		v, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, InvalidParameter("the form body is malformed")
		}
		for k, vals := range v {
			if len(vals) > 1 {
				return nil, InvalidParameter("parameter %s is given more than once", k)
			}
			out[k] = vals[0]
		}
	case fiber.MIMEApplicationJSON, "":
		if len(raw) == 0 {
			return out, nil
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, InvalidParameter("request body must be a JSON object or a form")
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, Invalid(FieldError{Field: k, Code: "invalid_type", Message: "must be a string"})
			}
			out[k] = s
		}
	default:
		return nil, fiber.ErrUnsupportedMediaType
	}
	return out, nil
}

// issueToken is POST /v1/auth/token.
func (s *Server) issueToken(c *fiber.Ctx) error {
	form, err := readTokenForm(c)
	if err != nil {
		return err
	}
	switch form["grant_type"] {
	case grantClientCredentials:
		return s.clientCredentialsGrant(c, form)
	case grantTokenExchange:
		return s.tokenExchangeGrant(c, form)
	case "":
		return InvalidParameter("grant_type is required: %s or %s", grantClientCredentials, grantTokenExchange)
	default:
		return InvalidParameter("unsupported grant_type; use %s or %s", grantClientCredentials, grantTokenExchange)
	}
}

// clientCredentials reads client_id and client_secret from the body or from
// HTTP Basic authentication (RFC 6749 section 2.3.1).
func clientCredentials(c *fiber.Ctx, form map[string]string) (id, secret string, err error) {
	id, secret = form["client_id"], form["client_secret"]
	if h, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Basic "); ok {
		if id != "" || secret != "" {
			return "", "", InvalidParameter("send the client credentials once: in the body or with Basic authentication")
		}
		dec, derr := base64.StdEncoding.DecodeString(h)
		if derr != nil {
			return "", "", Unauthorized("invalid client credentials")
		}
		u, p, _ := strings.Cut(string(dec), ":")
		if id, err = url.QueryUnescape(u); err == nil {
			secret, err = url.QueryUnescape(p)
		}
		if err != nil {
			return "", "", Unauthorized("invalid client credentials")
		}
	}
	if id == "" || secret == "" {
		return "", "", InvalidParameter("client_id and client_secret are required")
	}
	return id, secret, nil
}

func (s *Server) clientCredentialsGrant(c *fiber.Ctx, form map[string]string) error {
	id, secret, err := clientCredentials(c, form)
	if err != nil {
		return err
	}
	refused := Unauthorized("invalid client credentials")
	client, ok := credential.Parse(credential.ClientID, id)
	if !ok || !credential.ValidSecret(secret) {
		return refused
	}
	ctx := c.UserContext()
	var row dbsqlc.ServiceClient
	err = db.InTenant(ctx, s.Pool, client.Tenant, func(tx pgx.Tx) error {
		var err error
		row, err = credential.AuthenticateClient(ctx, tx, client, secret)
		if errors.Is(err, credential.ErrUnknown) {
			return refused
		}
		return err
	})
	if err != nil {
		return err
	}
	tok, err := s.Keys.Mint(auth.MintOptions{
		Subject: row.ClientID, TenantID: row.TenantID.String(), Name: row.Name,
		Roles: row.Roles, Permissions: row.Permissions, ClientID: row.ClientID, TTL: AccessTokenTTL,
	})
	if err != nil {
		return err
	}
	return c.JSON(tokenResponse{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int(AccessTokenTTL / time.Second)})
}

// tokenExchangeGrant turns an identity provider's token into the service's
// own access token and a refresh token (a new session).
func (s *Server) tokenExchangeGrant(c *fiber.Ctx, form map[string]string) error {
	subject := form["subject_token"]
	if subject == "" {
		return InvalidParameter("subject_token is required: the identity provider's JWT")
	}
	if tt := form["subject_token_type"]; tt != "" && !slices.Contains(subjectTokenTypes, tt) {
		return InvalidParameter("unsupported subject_token_type; use one of %s", strings.Join(subjectTokenTypes, ", "))
	}
	ctx := c.UserContext()
	claims, err := s.Verifier.Verify(ctx, subject)
	if err != nil {
		s.log.InfoContext(ctx, "subject token refused", "request_id", requestID(c), "reason", err.Error())
		return Unauthorized("the subject_token is invalid or expired")
	}
	if claims.Self {
		return Unauthorized("the subject_token must be issued by the identity provider, not by this service")
	}
	tenantID, err := uuid.Parse(claims.OrgID)
	if err != nil {
		return Forbidden("the subject_token is not valid for any tenant")
	}
	if t, err := s.tenants.get(ctx, tenantID); err != nil {
		return err
	} else if t == nil {
		return Forbidden("the subject_token is not valid for any tenant")
	}
	var (
		access  string
		refresh credential.Parsed
	)
	err = db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		session, issued, err := auth.SignIn(ctx, tx, tenantID, claims)
		if errors.Is(err, auth.ErrUserDeactivated) {
			return Forbidden("this user is deactivated in the tenant")
		}
		if err != nil {
			return err
		}
		refresh = issued
		access, err = s.mintSessionToken(claims.Subject, session)
		return err
	})
	if err != nil {
		return err
	}
	return c.JSON(tokenResponse{
		AccessToken: access, TokenType: "Bearer", ExpiresIn: int(AccessTokenTTL / time.Second),
		RefreshToken: refresh.Raw, RefreshExpiresIn: int(auth.RefreshTokenTTL / time.Second), IssuedTokenType: tokenTypeAccessToken,
	})
}

// mintSessionToken issues an access token of a session: the identity of the
// sign-in token (roles, permissions, e-mail, name) and the session id.
func (s *Server) mintSessionToken(subject string, session dbsqlc.AuthSession) (string, error) {
	return s.Keys.Mint(auth.MintOptions{
		Subject: subject, TenantID: session.TenantID.String(), Email: deref(session.Email), Name: deref(session.Name),
		Roles: session.Roles, Permissions: session.Permissions, SessionID: session.ID.String(), TTL: AccessTokenTTL,
	})
}

// refreshTokens is POST /v1/auth/refresh.
func (s *Server) refreshTokens(c *fiber.Ctx) error {
	form, err := readTokenForm(c)
	if err != nil {
		return err
	}
	raw := form["refresh_token"]
	if raw == "" {
		return InvalidParameter("refresh_token is required")
	}
	refused := Unauthorized("the refresh token is invalid, expired or revoked; sign in again")
	presented, ok := credential.Parse(credential.RefreshToken, raw)
	if !ok {
		return refused
	}
	ctx := c.UserContext()
	tx, err := db.BeginTenant(ctx, s.Pool, presented.Tenant)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	got, err := auth.Refresh(ctx, tx, presented)
	switch {
	case errors.Is(err, auth.ErrRefreshReused):
		if err := tx.Commit(ctx); err != nil { // the session's end must hold
			return err
		}
		s.log.WarnContext(ctx, "refresh token reused; session ended", "request_id", requestID(c), "tenant_id", presented.Tenant.String(), "session_id", got.Session.ID.String())
		return refused
	case errors.Is(err, auth.ErrRefreshRefused):
		return refused
	case err != nil:
		return err
	}
	access, err := s.mintSessionToken(got.Subject, got.Session)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	next := got.Next
	return c.JSON(tokenResponse{
		AccessToken: access, TokenType: "Bearer", ExpiresIn: int(AccessTokenTTL / time.Second),
		RefreshToken: next.Raw, RefreshExpiresIn: int(auth.RefreshTokenTTL / time.Second),
	})
}
