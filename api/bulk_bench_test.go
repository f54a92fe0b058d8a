package api

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/auth"
)

// BenchmarkBulkImportActuals is the bench's bulk round in-process, for a
// profile: one POST /v1/bulk/import of 10,000 new actuals (40 monthly
// benefits × 250 months) per iteration, mode create, through the whole app.
//
//	go test ./api/ -run '^$' -bench BulkImportActuals -benchtime 5x -cpuprofile cpu.out
func BenchmarkBulkImportActuals(b *testing.B) {
	app := newBenchApp(b)
	ctx, pool, tenant, keys, s := app.ctx, app.pool, app.tenant, app.keys, app.server
	tok, _ := keys.Mint(auth.MintOptions{Subject: "bench", TenantID: tenant.String(), Permissions: []string{"benefits:write", "benefits:read"}, TTL: time.Hour})
	handler := s.App().Handler()
	round := 0
	// body makes 40 new benefits and the import of their 10,000 actuals.
	body := func() []byte {
		round++
		var ids []string
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status) VALUES ($1, $2, 'active') RETURNING tenant_id, id)
				INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id)
				SELECT i.tenant_id, i.id, 'b' || g, 'cost_savings', 1000, 'USD', 'currency', 'monthly', '2000-01-01', 'bench'
				FROM i, generate_series(1, 40) g RETURNING id::text`, tenant, fmt.Sprintf("Bulk bench %d", round))
			if err != nil {
				return err
			}
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		records := make([]map[string]any, 0, 10000)
		for _, id := range ids {
			for m := range 250 {
				records = append(records, map[string]any{"benefit_id": id, "period": fmt.Sprintf("%04d-%02d", 2000+m/12, 1+m%12), "value": 1000 + m})
			}
		}
		out, _ := json.Marshal(map[string]any{"resource": "actuals", "mode": "create", "records": records})
		return out
	}
	for b.Loop() {
		b.StopTimer()
		var req fasthttp.Request
		req.SetRequestURI("/v1/bulk/import")
		req.Header.SetMethod("POST")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Tenant-ID", tenant.String())
		req.Header.SetContentType("application/json")
		req.SetBody(body())
		var rc fasthttp.RequestCtx
		rc.Init(&req, nil, nil)
		b.StartTimer()
		handler(&rc)
		if st := rc.Response.StatusCode(); st != 200 {
			b.Fatalf("status %d: %.500s", st, rc.Response.Body())
		}
	}
}
