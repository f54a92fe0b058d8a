package benchutil

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/ratelimit"
)

// Negotiated limits of benchmark tenants: far above anything one machine can
// send, so the rate limiter admits every request (its bookkeeping still runs).
const (
	BenchRequestsPerMinute = 1_000_000_000
	BenchBurst             = 1_000_000_000
	BenchMaxConcurrent     = 100_000
)

// LimitsNote says how benchmark tenants relate to the rate limiter.
var LimitsNote = fmt.Sprintf("tenants are on plan %s with negotiated limits of %d requests/min, burst %d, %d concurrent, so the rate limiter never throttles the measurement (it still runs for every request)",
	ratelimit.PlanEnterprisePlus, BenchRequestsPerMinute, BenchBurst, BenchMaxConcurrent)

// Tenant is a benchmark tenant with one user and a token for it.
type Tenant struct {
	ID      uuid.UUID
	Subject string
	Token   string
}

// NewTenant creates a tenant directly in the database (as `valuecase tenant
// create --plan enterprise_plus` does), provisions the user of subject (as the
// API does on a first request, so no measured request pays for it) and mints
// that user a token with the given roles and permissions.
func NewTenant(ctx context.Context, pool *pgxpool.Pool, keys *auth.KeyStore, name, subject string, roles, permissions []string) (Tenant, error) {
	rpm, burst, conc := int32(BenchRequestsPerMinute), int32(BenchBurst), int32(BenchMaxConcurrent)
	t, err := db.Q.TenantCreate(ctx, pool, dbsqlc.TenantCreateParams{
		Name: name, Plan: string(ratelimit.PlanEnterprisePlus), RequestsPerMinute: &rpm, Burst: &burst, MaxConcurrent: &conc,
	})
	if err != nil {
		return Tenant{}, fmt.Errorf("create tenant %q: %w", name, err)
	}
	err = db.InTenant(ctx, pool, t.ID, func(tx pgx.Tx) error {
		_, err := db.Q.UserProvision(ctx, tx, dbsqlc.UserProvisionParams{TenantID: t.ID, Subject: &subject})
		return err
	})
	if err != nil {
		return Tenant{}, fmt.Errorf("provision user %q: %w", subject, err)
	}
	tok, err := keys.Mint(auth.MintOptions{Subject: subject, TenantID: t.ID.String(), Roles: roles, Permissions: permissions, TTL: 2 * time.Hour})
	if err != nil {
		return Tenant{}, fmt.Errorf("mint token: %w", err)
	}
	return Tenant{ID: t.ID, Subject: subject, Token: tok}, nil
}
