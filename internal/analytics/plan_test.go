package analytics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// TestAnalysisOfALargeTenantIsPlannedForItsRows: a realisation run again and again on one
// connection reads a large tenant's benefits and their figures in one pass each, not one index
// probe per row of another table. The statistics know the tenant's size, but a cached generic
// plan is costed for a tenant of average size (here one benefit), and PostgreSQL keeps the
// generic plan from the sixth execution on: the portfolio realisation then read the benefits of
// each initiative, and the figures of each benefit, one index probe at a time. (Statistics taken
// before the tenant grew, dbtest.EachTenantStatistics' other case, mislead its custom plans too:
// planning per call does not help there, so the test takes the statistics after.)
func TestAnalysisOfALargeTenantIsPlannedForItsRows(t *testing.T) {
	const initiatives, benefitsEach, runs = 40, 10, dbtest.PastCustomPlans
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	for range 200 {
		seedPortfolio(t, pool, dbtest.NewTenant(t, pool, "enterprise"), 1, 1)
	}
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	seedPortfolio(t, pool, tenant, initiatives, benefitsEach)
	if _, err := pool.Exec(ctx, "ANALYZE initiatives; ANALYZE benefits; ANALYZE benefit_measured_expectations"); err != nil {
		t.Fatal(err)
	}
	explained, plans := dbtest.Explained(t, pool, nil)
	scope := Scope{Tenant: tenant, Now: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}
	for range runs {
		tx := db.BeginTenantReads(ctx, explained, tenant)
		if err := PrepareTransaction(ctx, tx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		report, err := analyseRealization(ctx, tx, scope, RealizationParams{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if got := len(report.Initiatives); got != initiatives {
			t.Fatalf("%d initiatives in the report, want %d", got, initiatives)
		}
	}
	sums := 0
	for _, p := range plans() {
		if !strings.Contains(p.Query, "AnalyticsRealizationSums") {
			continue
		}
		sums++
		p.Plan.Walk(func(n dbtest.PlanNode) {
			switch n.Relation {
			case "initiatives", "benefits", "benefit_measured_expectations":
				if n.ActualLoops > 1 {
					t.Errorf("run %d: %s of %s ran %v times, once for each row of another table", sums, n.NodeType, n.Relation, n.ActualLoops)
				}
			}
		})
	}
	if sums != runs {
		t.Fatalf("%d realisation sums explained, want %d", sums, runs)
	}
}

// seedPortfolio gives the tenant initiatives, each with money benefits (monthly, in USD, over
// 2025) and an actual of each.
func seedPortfolio(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, initiatives, benefitsEach int) {
	t.Helper()
	ctx := context.Background()
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for _, q := range []string{
			`INSERT INTO initiatives (tenant_id, name, status) SELECT @t, 'Initiative ' || i, 'active' FROM generate_series(1, @initiatives::int) i`,
			`INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
			 SELECT i.tenant_id, i.id, 'Benefit ' || b, (ARRAY['cost_savings','revenue_growth'])[1 + b % 2], 12000, 'USD', 'currency', 'monthly', '2025-01-01', '2025-12-31', 'ann'
			 FROM initiatives i, generate_series(1, @benefits::int) b WHERE i.tenant_id = @t`,
			`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			 SELECT b.tenant_id, b.id, '2025-01-01', 900, 'ann' FROM benefits b WHERE b.tenant_id = @t`,
		} {
			if _, err := tx.Exec(ctx, q, pgx.NamedArgs{"t": tenant, "initiatives": initiatives, "benefits": benefitsEach}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
