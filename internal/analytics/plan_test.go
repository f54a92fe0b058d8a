package analytics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/finance"
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
			if p.Statement() != "AnalyticsRealizationSums" {
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
// plan: the actuals of the ROI's series (AnalyticsActuals) and of its forecast accuracy
// (AnalyticsForecastAccuracy), whose FX rates are looked up once a (currency, period) summed, not
// once an actual. Statistics taken before the tenant grew put it at one actual: the planner read
// every actual of the tenant first and filtered it against the initiative's benefits, or compared
// every actual with every benefit of the portfolio (and scanned the rates once an actual).
func TestAnalysisReadsTheActualsOfItsScopeOnly(t *testing.T) {
	const initiatives, benefitsEach = 40, 10
	tables := []string{"initiatives", "benefits", "benefit_actuals", "fx_rates"}
	dbtest.EachTenantStatistics(t, tables, portfolioSeed(initiatives, benefitsEach), func(t *testing.T, large dbtest.LargeTenant) {
		ctx := context.Background()
		one := anInitiative(t, large)
		explained, plans := dbtest.Explained(t, large.Pool, nil)
		scopes := []struct {
			name    string
			only    *uuid.UUID
			actuals float64
		}{{"one initiative", &one, benefitsEach}, {"the portfolio", nil, initiatives * benefitsEach}}
		for _, sc := range scopes {
			inAnalysis(t, explained, large.ID, func(tx pgx.Tx) error {
				if _, _, err := loadInitiatives(ctx, tx, large.ID, sc.only); err != nil {
					return err
				}
				_, err := forecastWAPE(ctx, tx, large.ID, "USD", Window{Lifetime: true}, seedCurrentMonth, sc.only)
				return err
			})
		}
		for _, statement := range []string{"AnalyticsActuals", "AnalyticsForecastAccuracy"} {
			k := 0
			for _, p := range plans() {
				if p.Statement() != statement {
					continue
				}
				if k == len(scopes) {
					t.Fatalf("more than %d %s explained", len(scopes), statement)
				}
				sc := scopes[k]
				k++
				// The sums of the forecast accuracy meet the tenant's rates: a nested loop of those few
				// rows may compare each sum with each rate.
				compared := 0.0
				if statement == "AnalyticsForecastAccuracy" {
					compared = seededRatePairs * seededRates
				}
				read := 0.0
				p.Plan.Walk(func(n dbtest.PlanNode) {
					switch n.Relation {
					case "benefit_actuals":
						read += n.ActualRows * n.ActualLoops
					case "fx_rates":
						if n.ActualLoops > seededRatePairs {
							t.Errorf("%s, %s: the rates scanned %v times, more than once a (currency, period) of its actuals", statement, sc.name, n.ActualLoops)
						}
					}
					if n.RowsRemovedByJoinFilter > compared {
						t.Errorf("%s, %s: %s compared %v pairs of rows that did not match", statement, sc.name, n.NodeType, n.RowsRemovedByJoinFilter)
					}
				})
				if read != sc.actuals {
					t.Errorf("%s, %s: %v actuals read, want its %v", statement, sc.name, read, sc.actuals)
				}
			}
			if k != len(scopes) {
				t.Fatalf("%d %s explained, want %d", k, statement, len(scopes))
			}
		}
	})
}

// TestAnalysesCompareOnlyRowsThatMatch: every statement of the ROI (of one initiative and of the
// portfolio), the trends (by category and by initiative) and the forecasts of a large tenant meets
// its rows by their keys, under both statistics that mislead a tenant-scoped plan: no join
// compares pairs of rows that do not match, but for the few sums of the forecast accuracy that
// meet the tenant's rates (at most each with each). Planned with statistics taken before the
// tenant grew, a join to the scope's initiatives compared every benefit, cost, plan entry or
// month row with every initiative of the tenant (a second each for 10,000 benefits).
func TestAnalysesCompareOnlyRowsThatMatch(t *testing.T) {
	const initiatives, benefitsEach = 40, 10
	tables := []string{"initiatives", "benefits", "benefit_actuals", "benefit_plan_entries", "initiative_costs", "fx_rates",
		"benefit_actual_months", "benefit_actual_portfolio_months"}
	dbtest.EachTenantStatistics(t, tables, portfolioSeed(initiatives, benefitsEach), func(t *testing.T, large dbtest.LargeTenant) {
		ctx := context.Background()
		one := anInitiative(t, large)
		explained, plans := dbtest.Explained(t, large.Pool, nil)
		scope := Scope{Tenant: large.ID, Now: seedCurrentMonth.FirstDay()}
		analyses := []func(tx pgx.Tx) error{
			func(tx pgx.Tx) error {
				_, err := analyseROI(ctx, tx, scope, ROIParams{InitiativeID: &one, Basis: DefaultROIBasis})
				return err
			},
			func(tx pgx.Tx) error {
				_, err := analyseROI(ctx, tx, scope, ROIParams{Basis: DefaultROIBasis})
				return err
			},
			func(tx pgx.Tx) error {
				_, err := analyseTrends(ctx, tx, scope, TrendsParams{From: "2025-01", To: "2026-02", GroupBy: "category"})
				return err
			},
			func(tx pgx.Tx) error {
				_, err := analyseTrends(ctx, tx, scope, TrendsParams{From: "2025-01", To: "2026-02", GroupBy: "initiative"})
				return err
			},
			func(tx pgx.Tx) error {
				_, err := analyseForecasts(ctx, tx, scope, ForecastsParams{GroupBy: "initiative", Horizon: 6})
				return err
			},
		}
		for _, analyse := range analyses {
			inAnalysis(t, explained, large.ID, analyse)
		}
		statements := 0
		for _, p := range plans() {
			name := p.Statement()
			statements++
			// The forecast accuracy's sums (one a group, currency and month) may meet the tenant's
			// rates in a nested loop: at most each sum with each rate, whatever the tenant's size.
			compared := 0.0
			if name == "AnalyticsForecastAccuracy" {
				compared = initiatives * seededRatePairs * seededRates
			}
			p.Plan.Walk(func(n dbtest.PlanNode) {
				if n.RowsRemovedByJoinFilter > compared {
					t.Errorf("%s: %s compared %v pairs of rows that did not match", name, n.NodeType, n.RowsRemovedByJoinFilter)
				}
			})
		}
		if statements < 3*len(analyses) {
			t.Fatalf("%d statements explained for %d analyses", statements, len(analyses))
		}
	})
}

// TestMissingRatesAreLookedUpOnceACandidate: the rates a tenant's actuals miss are found from the
// portfolio rollup's rows, each tested once against the rates and, when it has none, once
// against the live initiatives' month rows, under both statistics that mislead a tenant-scoped
// plan. Planned with statistics taken before the tenant grew, the join to initiatives compared
// every month row of the tenant with every initiative.
func TestMissingRatesAreLookedUpOnceACandidate(t *testing.T) {
	const initiatives, benefitsEach = 40, 10
	tables := []string{"initiatives", "benefit_actual_months", "benefit_actual_portfolio_months", "fx_rates"}
	dbtest.EachTenantStatistics(t, tables, portfolioSeed(initiatives, benefitsEach), func(t *testing.T, large dbtest.LargeTenant) {
		ctx := context.Background()
		explained, plans := dbtest.Explained(t, large.Pool, nil)
		var missing []dbsqlc.AnalyticsMissingActualRatesRow
		inAnalysis(t, explained, large.ID, func(tx pgx.Tx) (err error) {
			missing, err = db.Q.AnalyticsMissingActualRates(ctx, tx, dbsqlc.AnalyticsMissingActualRatesParams{TenantID: large.ID,
				Through: seedCurrentMonth.FirstDay(), Base: "USD"})
			return err
		})
		if got := fmt.Sprint(missing); got != "[{EUR 2025-01-01 00:00:00 +0000 UTC}]" {
			t.Errorf("missing rates %s, want EUR in 2025-01 only", got)
		}
		n := 0
		for _, p := range plans() {
			if p.Statement() != "AnalyticsMissingActualRates" {
				continue
			}
			n++
			p.Plan.Walk(func(n dbtest.PlanNode) {
				if n.Relation == "benefit_actual_months" && n.ActualRows*n.ActualLoops > 1 {
					t.Errorf("%v month rows read, want the one found for the one candidate without a rate", n.ActualRows*n.ActualLoops)
				}
				if n.Relation == "initiatives" && n.ActualLoops > 1 {
					t.Errorf("the initiatives read %v times, want once", n.ActualLoops)
				}
				if n.RowsRemovedByJoinFilter > 0 {
					t.Errorf("%s compared %v pairs of rows that did not match", n.NodeType, n.RowsRemovedByJoinFilter)
				}
			})
		}
		if n != 1 {
			t.Fatalf("%d reads of the missing rates explained, want 1", n)
		}
	})
}

// TestMissingRatesAreThoseOfTheLiveInitiatives: the missing rates of the trends and forecasts
// are the (currency, month) of the live initiatives' actuals in the window; an archived
// initiative's actual needs no rate.
func TestMissingRatesAreThoseOfTheLiveInitiatives(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	seedPortfolio(t, pool, tenant, 2, 2)
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for _, q := range []string{
			`UPDATE initiatives SET status = 'archived' WHERE id = (SELECT id FROM initiatives WHERE tenant_id = @t ORDER BY id LIMIT 1) AND tenant_id = @t`,
			`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			 SELECT b.tenant_id, b.id, CASE i.status WHEN 'archived' THEN date '2026-01-01' ELSE date '2026-02-01' END, 900, 'ann'
			 FROM benefits b JOIN initiatives i ON i.tenant_id = b.tenant_id AND i.id = b.initiative_id
			 WHERE b.tenant_id = @t AND b.currency = 'EUR'`,
		} {
			if _, err := tx.Exec(ctx, q, pgx.NamedArgs{"t": tenant}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from *time.Time
		want string
	}{
		{nil, "[{EUR 2025-01-01 00:00:00 +0000 UTC} {EUR 2026-02-01 00:00:00 +0000 UTC}]"},
		{new(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)), "[{EUR 2026-02-01 00:00:00 +0000 UTC}]"},
	} {
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			missing, err := db.Q.AnalyticsMissingActualRates(ctx, tx, dbsqlc.AnalyticsMissingActualRatesParams{TenantID: tenant,
				FromPeriod: c.from, Through: seedCurrentMonth.FirstDay(), Base: "USD"})
			if got := fmt.Sprint(missing); err == nil && got != c.want {
				t.Errorf("from %v: missing rates %s, want %s", c.from, got, c.want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// anInitiative is the id of one of the large tenant's initiatives.
func anInitiative(t *testing.T, large dbtest.LargeTenant) (id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTenant(ctx, large.Pool, large.ID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT id FROM initiatives WHERE tenant_id = $1 LIMIT 1", large.ID).Scan(&id)
	}); err != nil {
		t.Fatal(err)
	}
	return id
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

// seedCurrentMonth is the current month of the analyses of a seeded portfolio.
var seedCurrentMonth = finance.MonthOf(2026, 3)

// seededRatePairs is how many (currency, month) a seeded portfolio's actuals have (USD and EUR in
// 2025-01), seededRates how many rates the tenant has (EUR from 2025-02 to 2025-12).
const seededRatePairs, seededRates = 2, 11

// seedPortfolio gives the tenant initiatives, each with a cost and money benefits (monthly, over
// 2025, in turn in USD, the base, and in EUR; the first with a plan) and an actual of each in
// 2025-01, and EUR rates for every month of 2025 but that one.
func seedPortfolio(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, initiatives, benefitsEach int) {
	t.Helper()
	ctx := context.Background()
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for _, q := range []string{
			`INSERT INTO initiatives (tenant_id, name, status) SELECT @t, 'Initiative ' || i, 'active' FROM generate_series(1, @initiatives::int) i`,
			`INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
			 SELECT i.tenant_id, i.id, 'Benefit ' || b, (ARRAY['cost_savings','revenue_growth'])[1 + b % 2], 12000, (ARRAY['USD','EUR'])[1 + b % 2], 'currency', 'monthly', '2025-01-01', '2025-12-31', 'ann'
			 FROM initiatives i, generate_series(1, @benefits::int) b WHERE i.tenant_id = @t`,
			`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			 SELECT b.tenant_id, b.id, '2025-01-01', 900, 'ann' FROM benefits b WHERE b.tenant_id = @t`,
			`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence)
			 SELECT i.tenant_id, i.id, 'Licences', 'opex', 5000, 'USD', '2025-01-01', 'once' FROM initiatives i WHERE i.tenant_id = @t`,
			`INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected)
			 SELECT b.tenant_id, b.id, m, 1500 FROM benefits b, generate_series(date '2025-01-01', date '2025-03-01', interval '1 month') m
			 WHERE b.tenant_id = @t AND b.name = 'Benefit 1'`,
			`INSERT INTO fx_rates (tenant_id, currency, period, rate)
			 SELECT @t, 'EUR', m, 1.1 FROM generate_series(date '2025-02-01', date '2025-12-01', interval '1 month') m`,
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
