package api

import (
	"context"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/rbac"
)

// allowAll is a rate-limit store that admits everything, so the benchmark
// measures authentication and not the limiter's refusals.
type allowAll struct{}

func (allowAll) Allow(_ context.Context, _ string, l ratelimit.Limit) (ratelimit.Result, error) {
	return ratelimit.Result{Limit: l, Allowed: true, Remaining: l.Burst}, nil
}

// BenchmarkAuthMiddleware measures the per-request cost of authentication:
// JWT verification, tenant check, the tenant transaction with the user lookup
// and the permission union, and the permission check. Baselines in the same
// run: JWT verification alone, and the foundation's per-request database work
// (BEGIN, set tenant, user by subject, COMMIT) against ours (the same with
// UserAuthenticate, which joins the role permissions and the session check).
//
//	go test ./api/ -run '^$' -bench AuthMiddleware -benchmem
func BenchmarkAuthMiddleware(b *testing.B) {
	bench := newBenchApp(b)
	ctx, pool, tenant, keys, verifier, s := bench.ctx, bench.pool, bench.tenant, bench.keys, bench.verifier, bench.server
	var err error

	// A user with a stored custom role, a token naming a built-in and a custom role, and a session.
	sub := "bench-user"
	var userID, sessionID uuid.UUID
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for _, r := range []struct{ name, perm string }{{"Reader", "initiatives:read"}, {"Auditor", "analytics:read"}} {
			if _, err := db.Q.RoleCreate(ctx, tx, dbsqlc.RoleCreateParams{TenantID: tenant, Name: r.name, Permissions: []string{r.perm}}); err != nil {
				return err
			}
		}
		u, err := db.Q.UserProvision(ctx, tx, dbsqlc.UserProvisionParams{TenantID: tenant, Subject: &sub})
		if err != nil {
			return err
		}
		userID = u.ID
		if _, err := db.Q.UserUpdate(ctx, tx, dbsqlc.UserUpdateParams{TenantID: tenant, ID: u.ID, Roles: []string{"Reader"}}); err != nil {
			return err
		}
		sess, err := db.Q.SessionCreate(ctx, tx, dbsqlc.SessionCreateParams{TenantID: tenant, UserID: u.ID, Roles: []string{}, Permissions: []string{}, ExpiresAt: time.Now().Add(time.Hour)})
		sessionID = sess.ID
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = userID
	tok, _ := keys.Mint(auth.MintOptions{Subject: sub, TenantID: tenant.String(), Roles: []string{"Viewer", "Auditor"}, TTL: time.Hour})
	sessTok, _ := keys.Mint(auth.MintOptions{Subject: sub, TenantID: tenant.String(), Roles: []string{"Viewer", "Auditor"}, SessionID: sessionID.String(), TTL: time.Hour})
	apiKey := credential.New(credential.APIKey, tenant)
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := db.Q.APIKeyCreate(ctx, tx, dbsqlc.APIKeyCreateParams{TenantID: tenant, PublicID: apiKey.ID, Name: "bench",
			KeyHash: credential.Hash(apiKey.Raw), Scopes: []string{"initiatives:read"}, CreatedBy: "bench", ExpiresAt: time.Now().Add(time.Hour)})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}

	app := fiber.New(fiber.Config{ErrorHandler: s.errorHandler, DisableStartupMessage: true})
	app.Get("/bench", s.authenticate, s.tenant, s.rateLimit, s.tenantTx, s.require(rbac.InitiativesRead),
		func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	handler := app.Handler()
	chain := func(b *testing.B, headers ...string) {
		var req fasthttp.Request
		req.SetRequestURI("/bench")
		req.Header.SetMethod("GET")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		var rc fasthttp.RequestCtx
		b.ReportAllocs()
		for b.Loop() {
			rc.Init(&req, nil, nil)
			handler(&rc)
			if st := rc.Response.StatusCode(); st != fiber.StatusNoContent {
				b.Fatalf("status %d: %s", st, rc.Response.Body())
			}
		}
	}

	// A client's repeated token is verified once a minute (a cache hit), a new one in full.
	b.Run("jwt_verify_only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := verifier.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jwt_verify_first_time", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fresh, err := auth.NewVerifier(ctx, keys, auth.VerifierOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := fresh.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("db_baseline_user_by_subject", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
				_, err := db.Q.UserGetBySubject(ctx, tx, dbsqlc.UserGetBySubjectParams{TenantID: tenant, Subject: &sub})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("db_user_authenticate_union", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
				row, err := db.Q.UserAuthenticate(ctx, tx, dbsqlc.UserAuthenticateParams{TenantID: tenant, Subject: &sub, SessionID: &sessionID, TokenRoles: []string{"Viewer", "Auditor"}})
				if err == nil && (len(row.RolePermissions) != 2 || !row.SessionLive) {
					b.Fatalf("union %v, session live %v", row.RolePermissions, row.SessionLive)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chain_jwt", func(b *testing.B) {
		chain(b, "Authorization", "Bearer "+tok, "X-Tenant-ID", tenant.String())
	})
	b.Run("chain_jwt_with_session", func(b *testing.B) {
		chain(b, "Authorization", "Bearer "+sessTok, "X-Tenant-ID", tenant.String())
	})
	b.Run("chain_api_key", func(b *testing.B) {
		chain(b, "X-API-Key", apiKey.Raw, "X-Tenant-ID", tenant.String())
	})
}
