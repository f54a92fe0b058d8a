package api

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/auth"
)

// BenchmarkInitiativeList is the bench's GET /v1/initiatives run in-process
// (page 1, 50 of 944, default sort), for a profile of the service's share.
//
//	go test ./api/ -run '^$' -bench InitiativeList -benchmem -cpuprofile cpu.out
func BenchmarkInitiativeList(b *testing.B) {
	app := newBenchApp(b)
	ctx, pool, tenant, keys, s := app.ctx, app.pool, app.tenant, app.keys, app.server
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO initiatives (tenant_id, name, description, owner_id) SELECT $1, 'Initiative ' || g, 'A bench initiative', 'bench' FROM generate_series(1, 944) g`, tenant)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	tok, _ := keys.Mint(auth.MintOptions{Subject: "bench", TenantID: tenant.String(), Permissions: []string{"initiatives:read"}, TTL: time.Hour})
	handler := s.App().Handler()
	var req fasthttp.Request
	req.SetRequestURI("/v1/initiatives")
	req.Header.SetMethod("GET")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("X-Tenant-ID", tenant.String())
	var rc fasthttp.RequestCtx
	for b.Loop() {
		rc.Init(&req, nil, nil)
		handler(&rc)
		if st := rc.Response.StatusCode(); st != 200 {
			b.Fatalf("status %d: %.300s", st, rc.Response.Body())
		}
	}
}
