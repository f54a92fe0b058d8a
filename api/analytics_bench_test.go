package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/auth"
)

// BenchmarkAnalyticsPortfolio measures the analytics endpoints through the
// whole app on the large tenant: 1,000 initiatives, 10 monthly USD
// benefits each (2023-01 .. 2025-12), 36 actuals each (360,000 actuals), a
// cost each; each endpoint computed on every request (uncached) and answered
// from the report cache (cached).
//
//	go test ./api/ -run '^$' -bench AnalyticsPortfolio -benchtime 5x
func BenchmarkAnalyticsPortfolio(b *testing.B) {
	app := newBenchApp(b)
	ctx, pool, tenant, keys, s := app.ctx, app.pool, app.tenant, app.keys, app.server
	var err error
	var one string
	start := time.Now()
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for i := range 1000 {
			in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: fmt.Sprintf("Initiative %04d", i)})
			if err != nil {
				return err
			}
			one = in.ID.String()
		}
		for _, q := range []string{
			`INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
			 SELECT i.tenant_id, i.id, 'b' || g, (ARRAY['cost_savings','revenue_growth','productivity'])[1 + g % 3], 12000, 'USD', 'currency', 'monthly', '2023-01-01', '2025-12-31', 'bench'
			 FROM initiatives i, generate_series(1, 10) g WHERE i.tenant_id = $1`,
			// Statistics of the new benefits before their actuals go in: on a stale estimate (no
			// benefits) the rollup trigger's join of the 360,000 new actuals to benefits is planned
			// as a nested loop over all of them, and the seed takes tens of minutes instead of one.
			`ANALYZE benefits`,
			`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			 SELECT b.tenant_id, b.id, date '2023-01-01' + make_interval(months => m), 900 + m, 'bench'
			 FROM benefits b, generate_series(0, 35) m WHERE b.tenant_id = $1`,
			`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence)
			 SELECT i.tenant_id, i.id, 'Build', 'capex', 250000, 'USD', '2023-01-01', 'once' FROM initiatives i WHERE i.tenant_id = $1`,
			`ANALYZE`,
		} {
			args := []any{tenant}
			if strings.HasPrefix(q, "ANALYZE") {
				args = nil
			}
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated in %s", time.Since(start).Round(time.Millisecond))
	tok, _ := keys.Mint(auth.MintOptions{Subject: "bench", TenantID: tenant.String(), Permissions: []string{"analytics:read"}, TTL: time.Hour})
	handler := s.App().Handler()
	for _, c := range []struct{ name, uri string }{
		{"roi_initiative", "/v1/analytics/roi?initiative_id=" + one},
		{"roi_portfolio", "/v1/analytics/roi"},
		{"realization_portfolio", "/v1/analytics/realization"},
		{"trends_36_months", "/v1/analytics/trends?from=2023-01&to=2025-12"},
		{"trends_by_category", "/v1/analytics/trends?from=2023-01&to=2025-12&group_by=category"},
	} {
		for _, mode := range []struct {
			name  string
			bytes int64
		}{{"uncached", 0}, {"cached", analytics.DefaultCacheBytes}} {
			analytics.SetCacheBytes(mode.bytes)
			benchRequest(b, c.name+"/"+mode.name, c.uri, tok, tenant.String(), handler)
		}
	}
	analytics.SetCacheBytes(analytics.DefaultCacheBytes)
}

// benchRequest runs GET uri through the app's handler.
func benchRequest(b *testing.B, name, uri, tok, tenant string, handler fasthttp.RequestHandler) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		var req fasthttp.Request
		req.SetRequestURI(uri)
		req.Header.SetMethod("GET")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Tenant-ID", tenant)
		var rc fasthttp.RequestCtx
		for b.Loop() {
			rc.Init(&req, nil, nil)
			handler(&rc)
			if st := rc.Response.StatusCode(); st != 200 {
				b.Fatalf("status %d: %s", st, rc.Response.Body())
			}
		}
	})
}
