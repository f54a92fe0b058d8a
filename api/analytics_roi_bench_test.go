package api

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
)

// BenchmarkAnalyticsROIInitiative is the bench's GET /v1/analytics/roi of one
// initiative (10 monthly USD benefits 2023-01 .. 2025-12 with an actual every
// month, a one-off cost) in-process, for a profile of the cold path's
// computation without the large tenant's two-minute seeding.
//
//	go test ./api/ -run '^$' -bench AnalyticsROIInitiative -benchmem -cpuprofile cpu.out
func BenchmarkAnalyticsROIInitiative(b *testing.B) {
	app := newBenchApp(b)
	ctx, pool, tenant, keys, s := app.ctx, app.pool, app.tenant, app.keys, app.server
	var one string
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "ROI bench"})
		if err != nil {
			return err
		}
		one = in.ID.String()
		for _, q := range []string{
			`INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
			 SELECT i.tenant_id, i.id, 'b' || g, (ARRAY['cost_savings','revenue_growth','productivity'])[1 + g % 3], 12000, 'USD', 'currency', 'monthly', '2023-01-01', '2025-12-31', 'bench'
			 FROM initiatives i, generate_series(1, 10) g WHERE i.tenant_id = $1`,
			`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			 SELECT b.tenant_id, b.id, date '2023-01-01' + make_interval(months => m), 900 + m, 'bench'
			 FROM benefits b, generate_series(0, 35) m WHERE b.tenant_id = $1`,
			`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence)
			 SELECT i.tenant_id, i.id, 'Build', 'capex', 250000, 'USD', '2023-01-01', 'once' FROM initiatives i WHERE i.tenant_id = $1`,
		} {
			if _, err := tx.Exec(ctx, q, tenant); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := keys.Mint(auth.MintOptions{Subject: "bench", TenantID: tenant.String(), Permissions: []string{"analytics:read"}, TTL: time.Hour})
	benchRequest(b, "roi_initiative", "/v1/analytics/roi?initiative_id="+one, tok, tenant.String(), s.App().Handler())
}
