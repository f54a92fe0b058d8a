package api

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/testenv"
)

// benchApp is the whole app in-process for the Benchmark* functions: a fresh
// database, one Enterprise Plus tenant, the service's own keys, and limits
// that never throttle.
type benchApp struct {
	ctx      context.Context
	pool     *pgxpool.Pool
	tenant   uuid.UUID
	keys     *auth.KeyStore
	verifier *auth.Verifier
	server   *Server
}

func newBenchApp(b *testing.B) benchApp {
	b.Helper()
	a := benchApp{ctx: context.Background(), pool: dbtest.NewPool(b)}
	a.tenant = dbtest.NewTenant(b, a.pool, "enterprise_plus")
	var err error
	if a.keys, err = auth.LoadKeyStore(b.TempDir()); err != nil {
		b.Fatal(err)
	}
	if a.verifier, err = auth.NewVerifier(a.ctx, a.keys, auth.VerifierOptions{}); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load()
	if err != nil {
		b.Fatal(err)
	}
	a.server = New(Deps{Config: cfg, Pool: a.pool, Keys: a.keys, Verifier: a.verifier, Limits: allowAll{},
		Concurrency: ratelimit.NewMemoryConcurrency(), Log: testenv.QuietLogger()})
	return a
}
