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
// probe per row of another table, under both statistics that mislead a tenant-scoped plan
// (dbtest.EachTenantStatistics). A cached generic plan is costed for a tenant of average size
// (here one benefit), and PostgreSQL keeps it from the sixth execution on; statistics taken
// before the tenant grew put it at one row even in a plan made for its values. Either way the
// portfolio realisation read the benefits of each initiative, and the figures of each benefit,
// one index probe at a time.
func TestAnalysisOfALargeTenantIsPlannedForItsRows(t *testing.T) {
	const initiatives, benefitsEach, runs = 40, 10, dbtest.PastCustomPlans
	tables := []string{"initiatives", "benefits", "benefit_measured_expectations"}
	dbtest.EachTenantStatistics(t, tables, portfolioSeed(initiatives, benefitsEach), func(t *testing.T, large dbtest.LargeTenant) {
		ctx := context.Background()
		explained, plans := dbtest.Explained(t, large.Pool, nil)
		scope := Scope{Tenant: large.ID, Now: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}
		for range runs {
			var report RealizationReport
			inAnalysis(t, explained, large.ID, func(tx pgx.Tx) (err error) {
				report, err = analyseRealization(ctx, tx, scope, RealizationParams{})
				return err
			})
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
	})
}

// TestAnalysisReadsTheActualsOfItsScopeOnly: an analysis reads the actuals of the initiative it
// covers, or of the portfolio, once each, under both statistics that mislead a tenant-scoped
// plan. Statistics taken before the tenant grew put it at one actual: the planner read every
// actual of the tenant first and filtered it against the initiative's benefits, or compared every
// actual with every benefit of the portfolio.
func TestAnalysisReadsTheActualsOfItsScopeOnly(t *testing.T) {
	const initiatives, benefitsEach = 40, 10
	tables := []string{"initiatives", "benefits", "benefit_actuals"}
	dbtest.EachTenantStatistics(t, tables, portfolioSeed(initiatives, benefitsEach), func(t *testing.T, large dbtest.LargeTenant) {
		ctx := context.Background()
		var one uuid.UUID
		if err := db.InTenant(ctx, large.Pool, large.ID, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT id FROM initiatives WHERE tenant_id = $1 LIMIT 1", large.ID).Scan(&one)
		}); err != nil {
			t.Fatal(err)
		}
		explained, plans := dbtest.Explained(t, large.Pool, nil)
		scopes := []struct {
			name    string
			only    *uuid.UUID
			actuals float64
		}{{"one initiative", &one, benefitsEach}, {"the portfolio", nil, initiatives * benefitsEach}}
		for _, sc := range scopes {
			inAnalysis(t, explained, large.ID, func(tx pgx.Tx) error {
				_, _, err := loadInitiatives(ctx, tx, large.ID, sc.only)
				return err
			})
		}
		k := 0
		for _, p := range plans() {
			if !strings.Contains(p.Query, "name: AnalyticsActuals :many") {
				continue
			}
			if k == len(scopes) {
				t.Fatalf("more than %d reads of the actuals explained", len(scopes))
			}
			sc := scopes[k]
			k++
			read := 0.0
			p.Plan.Walk(func(n dbtest.PlanNode) {
				if n.Relation == "benefit_actuals" {
					read += n.ActualRows * n.ActualLoops
				}
				if n.RowsRemovedByJoinFilter > 0 {
					t.Errorf("%s: %s compared %v pairs of rows that did not match", sc.name, n.NodeType, n.RowsRemovedByJoinFilter)
				}
			})
			if read != sc.actuals {
				t.Errorf("%s: %v actuals read, want its %v", sc.name, read, sc.actuals)
			}
		}
		if k != len(scopes) {
			t.Fatalf("%d reads of the actuals explained, want %d", k, len(scopes))
		}
	})
}

// inAnalysis runs fn in a transaction of the tenant's as a request's analysis has it: a read's
// (db.BeginTenantReads), prepared with the analysis's deadline and settings.
func inAnalysis(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, fn func(tx pgx.Tx) error) {
	t.Helper()
	ctx := context.Background()
	tx := db.BeginTenantReads(ctx, pool, tenant)
	if err := PrepareTransaction(ctx, tx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fn(tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// portfolioSeed seeds the large tenant of dbtest.EachTenantStatistics with initiatives of
// benefitsEach money benefits each, and every small one with small initiatives of one benefit.
func portfolioSeed(initiatives, benefitsEach int) func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
	return func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
		if small == 0 {
			seedPortfolio(t, pool, tenant, initiatives, benefitsEach)
		} else {
			seedPortfolio(t, pool, tenant, small, 1)
		}
		return nil
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
