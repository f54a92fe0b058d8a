package auth

// Sessions: a token exchange begins a session (one refresh-token family);
// each refresh uses its token once and issues the next. Presenting a used
// token again ends the session (theft detection). A user has at most
// MaxSessionsPerUser live sessions; one more ends the oldest.

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/user"
)

const (
	// RefreshTokenTTL is the lifetime of each refresh token.
	RefreshTokenTTL = 7 * 24 * time.Hour
	// MaxSessionsPerUser is the concurrent-session cap (spec section 8).
	MaxSessionsPerUser = 5
)

// Refusals of the session operations.
var (
	// ErrUserDeactivated: the signing-in user is deactivated in the tenant.
	ErrUserDeactivated = errors.New("auth: the user is deactivated")
	// ErrRefreshRefused: the refresh token is unknown, expired, of an ended
	// session or of a user who can no longer sign in.
	ErrRefreshRefused = errors.New("auth: refresh token refused")
	// ErrRefreshReused: a used refresh token came back; its session was ended
	// (commit the transaction, then refuse).
	ErrRefreshReused = errors.New("auth: refresh token reused")
)

// SignIn begins a session for the subject of a verified identity-provider
// token in its tenant (tx is that tenant's): the user is found or provisioned
// (user.Provision), refused when deactivated (ErrUserDeactivated), and the
// session gets its first refresh token.
func SignIn(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, claims *Claims) (dbsqlc.AuthSession, credential.Parsed, error) {
	u, err := user.Provision(ctx, tx, tenantID, claims.Subject, claims.Email, claims.Name)
	if err != nil {
		return dbsqlc.AuthSession{}, credential.Parsed{}, err
	}
	if user.Status(u.Status) == user.Deactivated {
		return dbsqlc.AuthSession{}, credential.Parsed{}, ErrUserDeactivated
	}
	// The user row is locked so that concurrent sign-ins count its sessions right.
	if _, err := db.Q.UserGetForUpdate(ctx, tx, dbsqlc.UserGetForUpdateParams{TenantID: u.TenantID, ID: u.ID}); err != nil {
		return dbsqlc.AuthSession{}, credential.Parsed{}, err
	}
	if _, err := db.Q.SessionEndOldest(ctx, tx, dbsqlc.SessionEndOldestParams{TenantID: u.TenantID, UserID: u.ID, Keep: MaxSessionsPerUser - 1}); err != nil {
		return dbsqlc.AuthSession{}, credential.Parsed{}, err
	}
	session, err := db.Q.SessionCreate(ctx, tx, dbsqlc.SessionCreateParams{
		TenantID: u.TenantID, UserID: u.ID, Roles: nonNil(claims.Roles), Permissions: nonNil(claims.Permissions),
		Email: nonEmpty(claims.Email), Name: nonEmpty(claims.Name), ExpiresAt: time.Now().Add(RefreshTokenTTL),
	})
	if err != nil {
		return session, credential.Parsed{}, err
	}
	refresh, err := issueRefreshToken(ctx, tx, session.TenantID, session.ID)
	return session, refresh, err
}

func issueRefreshToken(ctx context.Context, tx pgx.Tx, tenantID, sessionID uuid.UUID) (credential.Parsed, error) {
	tok := credential.New(credential.RefreshToken, tenantID)
	expires := time.Now().Add(RefreshTokenTTL)
	if err := db.Q.RefreshTokenCreate(ctx, tx, dbsqlc.RefreshTokenCreateParams{
		TenantID: tenantID, SessionID: sessionID, PublicID: tok.ID, TokenHash: credential.Hash(tok.Raw), ExpiresAt: expires,
	}); err != nil {
		return tok, err
	}
	return tok, db.Q.SessionExtend(ctx, tx, dbsqlc.SessionExtendParams{TenantID: tenantID, ID: sessionID, ExpiresAt: expires})
}

// Refreshed is what a refresh gives: the session's identity for the next
// access token, its subject, and the next refresh token.
type Refreshed struct {
	Session dbsqlc.AuthSession
	Subject string
	Next    credential.Parsed
}

// Refresh uses a presented refresh token once (tx is its tenant's) and issues
// the next: ErrRefreshRefused when it cannot be used, ErrRefreshReused (the
// session ended) when it was used before.
func Refresh(ctx context.Context, tx pgx.Tx, presented credential.Parsed) (Refreshed, error) {
	row, err := db.Q.RefreshTokenGetForUpdate(ctx, tx, dbsqlc.RefreshTokenGetForUpdateParams{TenantID: presented.Tenant, PublicID: presented.ID})
	if db.IsNotFound(err) || (err == nil && !credential.Matches(presented.Raw, row.TokenHash)) {
		return Refreshed{}, ErrRefreshRefused
	}
	if err != nil {
		return Refreshed{}, err
	}
	if row.SessionEndedAt != nil {
		return Refreshed{}, ErrRefreshRefused
	}
	if row.UsedAt != nil {
		// A rotated token came back: whoever holds the family, it is compromised.
		if err := db.Q.SessionEnd(ctx, tx, dbsqlc.SessionEndParams{TenantID: presented.Tenant, ID: row.SessionID, Reason: new("reuse_detected")}); err != nil {
			return Refreshed{}, err
		}
		return Refreshed{Session: dbsqlc.AuthSession{TenantID: presented.Tenant, ID: row.SessionID}}, ErrRefreshReused
	}
	if !time.Now().Before(row.ExpiresAt) || user.Status(row.UserStatus) != user.Active || row.Subject == nil {
		return Refreshed{}, ErrRefreshRefused
	}
	if err := db.Q.RefreshTokenMarkUsed(ctx, tx, dbsqlc.RefreshTokenMarkUsedParams{TenantID: presented.Tenant, ID: row.ID}); err != nil {
		return Refreshed{}, err
	}
	next, err := issueRefreshToken(ctx, tx, presented.Tenant, row.SessionID)
	if err != nil {
		return Refreshed{}, err
	}
	if err := db.Q.RefreshTokenPrune(ctx, tx, dbsqlc.RefreshTokenPruneParams{TenantID: presented.Tenant, SessionID: row.SessionID}); err != nil {
		return Refreshed{}, err
	}
	return Refreshed{
		Session: dbsqlc.AuthSession{TenantID: presented.Tenant, ID: row.SessionID, Roles: row.Roles, Permissions: row.Permissions, Email: row.Email, Name: row.Name},
		Subject: *row.Subject, Next: next,
	}, nil
}

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
