package credential

// The operations on stored credentials: API keys and service clients are
// created (within a tenant's limit, granting nothing their creator lacks),
// revoked, and verified when presented.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/rbac"
)

// Limits of a tenant's live credentials (spec section 8).
const (
	MaxLiveAPIKeys    = 50
	MaxServiceClients = 50
	// touchEvery bounds the writes of last_used_at to one per credential per minute.
	touchEvery = time.Minute
)

// Errors of the credential operations.
var (
	ErrAPIKeyNotFound = errors.New("credential: no such API key")
	ErrClientNotFound = errors.New("credential: no such service client")
	// ErrUnknown: no live credential matches what was presented (unknown id, wrong secret).
	ErrUnknown = errors.New("credential: unknown")
	// ErrRevoked: the credential was revoked.
	ErrRevoked = errors.New("credential: revoked")
)

// LimitError refuses a credential beyond the tenant's limit of live ones.
type LimitError struct {
	What string // "live API keys", "service clients"
	Max  int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the tenant has reached its limit of %d %s; revoke one first", e.Max, e.What)
}

// ExpiredError: the credential expired at At.
type ExpiredError struct{ At time.Time }

func (e *ExpiredError) Error() string { return "credential: expired at " + e.At.String() }

// APIKeyInput is a new API key: its name, scopes (permission names) and lifetime.
type APIKeyInput struct {
	Name   string
	Scopes []string
	Days   int
}

// CreateAPIKey stores a new key and returns it with its raw form, shown once.
// Its scopes must be the actor's (*rbac.GrantError) and the tenant have fewer
// than MaxLiveAPIKeys live keys (*LimitError).
func CreateAPIKey(ctx context.Context, tx pgx.Tx, a rbac.Actor, in APIKeyInput) (dbsqlc.APIKey, Parsed, error) {
	granted := rbac.Set{}
	granted.Add(in.Scopes...)
	if err := rbac.CheckGrantOf(a, granted, "this key"); err != nil {
		return dbsqlc.APIKey{}, Parsed{}, err
	}
	if err := db.Q.APIKeyLockTenantCreates(ctx, tx, a.TenantID); err != nil {
		return dbsqlc.APIKey{}, Parsed{}, err
	}
	live, err := db.Q.APIKeyCountLive(ctx, tx, a.TenantID)
	if err != nil {
		return dbsqlc.APIKey{}, Parsed{}, err
	}
	if live >= MaxLiveAPIKeys {
		return dbsqlc.APIKey{}, Parsed{}, &LimitError{What: "live API keys", Max: MaxLiveAPIKeys}
	}
	key := New(APIKey, a.TenantID)
	row, err := db.Q.APIKeyCreate(ctx, tx, dbsqlc.APIKeyCreateParams{
		TenantID: a.TenantID, PublicID: key.ID, Name: in.Name, KeyHash: Hash(key.Raw),
		Scopes: rbac.SortPermissions(in.Scopes), CreatedBy: a.Subject, ExpiresAt: time.Now().Add(time.Duration(in.Days) * 24 * time.Hour),
	})
	return row, key, err
}

// RevokeAPIKey revokes a live key of the tenant (ErrAPIKeyNotFound if none).
func RevokeAPIKey(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID) error {
	n, err := db.Q.APIKeyRevoke(ctx, tx, dbsqlc.APIKeyRevokeParams{TenantID: tenantID, ID: id})
	if err == nil && n == 0 {
		return ErrAPIKeyNotFound
	}
	return err
}

// VerifyAPIKey looks a presented key up in its own tenant (tx is that
// tenant's) and checks it: found with an equal hash (ErrUnknown), not revoked
// (ErrRevoked), not expired (*ExpiredError). It records the use, at most once
// a minute per key.
func VerifyAPIKey(ctx context.Context, tx pgx.Tx, key Parsed) (dbsqlc.APIKey, error) {
	row, err := db.Q.APIKeyGetByPublicID(ctx, tx, dbsqlc.APIKeyGetByPublicIDParams{TenantID: key.Tenant, PublicID: key.ID})
	if db.IsNotFound(err) || (err == nil && !Matches(key.Raw, row.KeyHash)) {
		return row, ErrUnknown
	}
	if err != nil { // a key cannot be told good or bad now: a retry may succeed
		return row, fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	if row.RevokedAt != nil {
		return row, ErrRevoked
	}
	if !time.Now().Before(row.ExpiresAt) {
		return row, &ExpiredError{At: row.ExpiresAt}
	}
	if row.LastUsedAt == nil || time.Since(*row.LastUsedAt) > touchEvery {
		return row, db.Q.APIKeyTouch(ctx, tx, dbsqlc.APIKeyTouchParams{TenantID: key.Tenant, ID: row.ID})
	}
	return row, nil
}

// ClientInput is a new service client: its name, roles and permissions.
type ClientInput struct {
	Name        string
	Roles       []string
	Permissions []string
}

// CreateServiceClient stores a new client and returns it with its secret,
// shown once. Its roles must exist (*rbac.UnknownRolesError), it may grant
// nothing the actor lacks (*rbac.GrantError), and the tenant have fewer than
// MaxServiceClients live clients (*LimitError).
func CreateServiceClient(ctx context.Context, tx pgx.Tx, a rbac.Actor, in ClientInput) (dbsqlc.ServiceClient, string, error) {
	if err := rbac.CheckRolesExist(ctx, tx, a.TenantID, in.Roles); err != nil {
		return dbsqlc.ServiceClient{}, "", err
	}
	granted, err := rbac.RolesPermissions(ctx, tx, a.TenantID, in.Roles)
	if err != nil {
		return dbsqlc.ServiceClient{}, "", err
	}
	granted.Add(in.Permissions...)
	if err := rbac.CheckGrantOf(a, granted, "this client"); err != nil {
		return dbsqlc.ServiceClient{}, "", err
	}
	if err := db.Q.ServiceClientLockTenantCreates(ctx, tx, a.TenantID); err != nil {
		return dbsqlc.ServiceClient{}, "", err
	}
	live, err := db.Q.ServiceClientCountLive(ctx, tx, a.TenantID)
	if err != nil {
		return dbsqlc.ServiceClient{}, "", err
	}
	if live >= MaxServiceClients {
		return dbsqlc.ServiceClient{}, "", &LimitError{What: "service clients", Max: MaxServiceClients}
	}
	roles := in.Roles
	if roles == nil {
		roles = []string{}
	}
	client, secret := NewClient(a.TenantID)
	row, err := db.Q.ServiceClientCreate(ctx, tx, dbsqlc.ServiceClientCreateParams{
		TenantID: a.TenantID, ClientID: client.Raw, Name: in.Name, SecretHash: Hash(secret),
		Roles: roles, Permissions: rbac.SortPermissions(in.Permissions), CreatedBy: a.Subject,
	})
	return row, secret, err
}

// RevokeServiceClient revokes a live client of the tenant (ErrClientNotFound if none).
func RevokeServiceClient(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID) error {
	n, err := db.Q.ServiceClientRevoke(ctx, tx, dbsqlc.ServiceClientRevokeParams{TenantID: tenantID, ID: id})
	if err == nil && n == 0 {
		return ErrClientNotFound
	}
	return err
}

// AuthenticateClient checks a client's credentials in its own tenant (tx is
// that tenant's): a live client whose secret matches, else ErrUnknown. It
// records the use.
func AuthenticateClient(ctx context.Context, tx pgx.Tx, client Parsed, secret string) (dbsqlc.ServiceClient, error) {
	row, err := db.Q.ServiceClientGetByClientID(ctx, tx, dbsqlc.ServiceClientGetByClientIDParams{TenantID: client.Tenant, ClientID: client.Raw})
	if db.IsNotFound(err) || (err == nil && (!Matches(secret, row.SecretHash) || row.RevokedAt != nil)) {
		return row, ErrUnknown
	}
	if err != nil {
		return row, err
	}
	return row, db.Q.ServiceClientTouch(ctx, tx, dbsqlc.ServiceClientTouchParams{TenantID: client.Tenant, ID: row.ID})
}
