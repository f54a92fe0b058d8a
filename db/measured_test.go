package db_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/finance"
)

// TestBenefitMeasuredExpectations proves benefit_measured_expectations
// (migration 00039) exact: after every kind of write to one of its inputs
// (a benefit created; an actual filed, corrected, moved or deleted; a plan
// entered, changed or removed; a benefit's value, frequency, dates or
// currency changed; a benefit deleted; statements of several benefits at once; two transactions
// filing for one benefit concurrently) each benefit's row equals a
// recomputation from scratch (AnalyticsMeasuredCheck lists every benefit
// where the two differ), and a few rows equal figures worked out by hand.
// Another tenant's writes never show.
func TestBenefitMeasuredExpectations(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant, other := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")

	step := func(name string, tenant uuid.UUID, sql string, args ...any) {
		t.Helper()
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// exact checks the rollup against the recomputation (both tenants).
	exact := func(name string) {
		t.Helper()
		for _, tn := range []uuid.UUID{tenant, other} {
			err := db.InTenant(ctx, pool, tn, func(tx pgx.Tx) error {
				diff, err := db.Q.AnalyticsMeasuredCheck(ctx, tx, tn)
				for _, d := range diff {
					t.Errorf("%s: benefit_measured_expectations differs for %s: rollup %s, fresh %s", name, d.BenefitID, d.Rollup, d.Fresh)
				}
				return err
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	// row reads a benefit's row as "measured inside expected actual" (none without one: the
	// benefit is gone).
	row := func(name string, benefit uuid.UUID, want string) {
		t.Helper()
		var got string
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT coalesce((SELECT measured || ' ' || inside || ' ' || trim_scale(expected) || ' ' || actual
				FROM benefit_measured_expectations WHERE benefit_id = $1), 'none')`, benefit).Scan(&got)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: row of %s = %q, want %q", name, benefit, got, want)
		}
	}

	newBenefit := func(tenant uuid.UUID, frequency, start string, end *string) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			var initiative uuid.UUID
			if err := tx.QueryRow(ctx, `INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Measured ' || gen_random_uuid()) RETURNING id`, tenant).Scan(&initiative); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency,
				expected_start_date, expected_end_date, owner_id)
				VALUES ($1, $2, 'b', 'cost_savings', 12000, 'USD', 'currency', $3, $4, $5, 'test') RETURNING id`, tenant, initiative, frequency, start, end).Scan(&id)
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	file := func(name string, tenant, benefit uuid.UUID, period string, value string) {
		t.Helper()
		step(name, tenant, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by) VALUES ($1, $2, $3, $4, 'test')
			ON CONFLICT (tenant_id, benefit_id, period) DO UPDATE SET value = excluded.value`, tenant, benefit, period, value)
	}

	end := "2026-06-30"
	a := newBenefit(tenant, "monthly", "2026-01-15", &end)  // 1,000 a month, 2026-01 .. 2026-06
	q := newBenefit(tenant, "quarterly", "2026-01-01", nil) // 3,000 a quarter, open-ended
	o := newBenefit(other, "monthly", "2026-01-01", nil)
	row("no actual", a, "0 0 0 0")

	file("first actual", tenant, a, "2026-01-01", "800")
	file("second actual", tenant, a, "2026-02-01", "1100.5")
	file("other tenant", other, o, "2026-01-01", "5")
	exact("two actuals")
	row("two actuals", a, "2 2 2000 1900.5")

	file("correction", tenant, a, "2026-02-01", "900")
	exact("correction")
	row("correction", a, "2 2 2000 1700")

	step("moved period", tenant, `UPDATE benefit_actuals SET period = '2026-08-01' WHERE benefit_id = $1 AND period = '2026-02-01'`, a)
	exact("moved after the benefit's end")
	row("moved after the benefit's end", a, "2 1 1000 1700") // 2026-08 is outside: it expects 0

	step("plan", tenant, `INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected) VALUES ($1, $2, '2026-01-01', 500), ($1, $2, '2026-03-01', 700)`, tenant, a)
	exact("plan entered")
	row("plan entered", a, "2 1 500 1700")
	step("plan changed", tenant, `UPDATE benefit_plan_entries SET expected = 650 WHERE benefit_id = $1 AND period = '2026-01-01'`, a)
	exact("plan changed")
	row("plan changed", a, "2 1 650 1700")
	step("plan entry moved away", tenant, `UPDATE benefit_plan_entries SET period = '2026-04-01' WHERE benefit_id = $1 AND period = '2026-01-01'`, a)
	exact("plan entry moved")
	row("plan entry moved", a, "2 1 0 1700") // the plan lists no 2026-01: it expects 0
	step("plan removed", tenant, `DELETE FROM benefit_plan_entries WHERE benefit_id = $1`, a)
	exact("plan removed")
	row("plan removed", a, "2 1 1000 1700")

	step("value changed", tenant, `UPDATE benefits SET expected_value = 1000 WHERE id = $1`, a)
	exact("value changed")
	row("value changed", a, "2 1 83.3333333333333333 1700")
	step("end moved", tenant, `UPDATE benefits SET expected_end_date = NULL, expected_value = 12000 WHERE id = $1`, a)
	exact("open-ended")
	row("open-ended", a, "2 2 2000 1700")
	step("start moved", tenant, `UPDATE benefits SET expected_start_date = '2026-02-01' WHERE id = $1`, a)
	exact("start moved")
	row("start moved", a, "2 1 1000 1700") // 2026-01 is before the first period now
	step("frequency", tenant, `UPDATE benefits SET measurement_frequency = 'quarterly', expected_start_date = '2026-01-01' WHERE id = $1`, a)
	exact("quarterly")
	row("quarterly", a, "1 1 3000 800") // 2026-08 is not on the quarters' grid
	step("currency", tenant, `UPDATE benefits SET currency = 'EUR' WHERE id = $1`, a)
	exact("currency changed")
	row("currency changed", a, "1 1 3000 800") // kept in the benefit's own currency

	// Statements of several benefits at once, as a bulk page writes them.
	step("many", tenant, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
		VALUES ($1, $2, '2026-04-01', 10, 'test'), ($1, $3, '2026-01-01', 2500, 'test'), ($1, $3, '2026-04-01', 3500, 'test')`, tenant, a, q)
	exact("multi-row insert")
	row("multi-row insert", q, "2 2 6000 6000")
	step("many corrected", tenant, `UPDATE benefit_actuals SET value = value + 1 WHERE benefit_id IN ($1, $2)`, a, q)
	exact("multi-row correction")
	step("many plans", tenant, `INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected) VALUES ($1, $2, '2026-04-01', 1), ($1, $3, '2026-05-01', 2), ($1, $3, '2026-04-01', 3)`, tenant, a, q)
	exact("multi-benefit plans")
	row("multi-benefit plans", q, "2 2 3 6002") // the quarter's first entry (2026-04) counts
	step("deleted actual", tenant, `DELETE FROM benefit_actuals WHERE benefit_id = $1 AND period = '2026-01-01'`, q)
	exact("deleted actual")
	row("deleted actual", q, "1 1 3 3501")
	step("deleted benefit", tenant, `DELETE FROM benefits WHERE id = $1`, q)
	exact("deleted benefit")
	row("deleted benefit", q, "none")
	step("all actuals deleted", tenant, `DELETE FROM benefit_actuals WHERE benefit_id = $1`, a)
	exact("all actuals deleted")
	row("all actuals deleted", a, "0 0 0 0")

	// Two transactions filing for one benefit at once: the second waits on the first's row, then
	// recomputes with the first's committed actual, so neither is lost.
	c := newBenefit(tenant, "monthly", "2026-01-01", nil)
	insert := func(period, value string) func(tx pgx.Tx) error {
		return func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by) VALUES ($1, $2, $3, $4, 'test')`,
				tenant, c, period, value)
			return err
		}
	}
	started, release, errs := make(chan struct{}), make(chan struct{}), make(chan error, 2)
	go func() {
		errs <- db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			err := insert("2026-01-01", "100")(tx)
			close(started)
			<-release
			return err
		})
	}()
	<-started
	go func() { errs <- db.InTenant(ctx, pool, tenant, insert("2026-02-01", "200")) }()
	time.Sleep(200 * time.Millisecond) // the second is now waiting on the first's row
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent filings: %v", err)
		}
	}
	exact("concurrent filings")
	row("concurrent filings", c, "2 2 2000 300")
}

// TestRealizationSumsAreCompareToDate: AnalyticsRealizationSums, summed in
// SQL from benefit_measured_expectations, equals finance.Benefit.CompareToDate
// (the one definition of the like-for-like comparison) summed in Go per
// initiative and category, digit for digit, on random base-currency benefits:
// even spread or plan (periods listed twice within a quarter, periods outside
// the dates), monthly or quarterly, open-ended or not, starting mid-month,
// with actuals inside and outside their dates and before, in and after the
// current month's year; benefits with an actual after the current month are
// left to Go (not summed), as the query's contract says.
func TestRealizationSumsAreCompareToDate(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	rng := rand.New(rand.NewPCG(3, 4))
	current := finance.MonthOf(2025, 6)
	type key struct {
		initiative uuid.UUID
		category   string
	}
	want := map[key]*finance.ComparisonSum{}
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		var initiatives []uuid.UUID
		for i := range 5 {
			in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: fmt.Sprintf("Random %d", i)})
			if err != nil {
				return err
			}
			initiatives = append(initiatives, in.ID)
		}
		for range 200 {
			initiative, category := initiatives[rng.IntN(len(initiatives))], []string{"cost_savings", "revenue_growth"}[rng.IntN(2)]
			b := finance.Benefit{ExpectedValue: decimal.New(int64(rng.IntN(10_000_000)), -int32(rng.IntN(4))), Frequency: finance.Frequencies[rng.IntN(2)],
				Start: finance.MonthOf(2023, 1).Add(rng.IntN(36)), Currency: "USD", Actuals: map[finance.Month]decimal.Decimal{}}
			startDay := 1 + rng.IntN(28)
			var end *time.Time
			if rng.IntN(2) == 0 {
				b.End = new(b.Start.Add(rng.IntN(30)))
				end = new(b.End.Add(1).FirstDay().AddDate(0, 0, -1)) // its last day: never before the start
			}
			var id uuid.UUID
			if err := tx.QueryRow(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency,
				expected_start_date, expected_end_date, owner_id) VALUES ($1, $2, 'r' || gen_random_uuid(), $3, $4, 'USD', 'currency', $5, $6, $7, 'test') RETURNING id`,
				tenant, initiative, category, b.ExpectedValue, string(b.Frequency), b.Start.FirstDay().AddDate(0, 0, startDay-1), end).Scan(&id); err != nil {
				return err
			}
			if rng.IntN(3) == 0 {
				b.Plan = []finance.PlanEntry{}
				for range rng.IntN(6) {
					e := finance.PlanEntry{Period: b.Start.Add(rng.IntN(36) - 3), Expected: decimal.New(int64(rng.IntN(100_000)), -3)}
					tag, err := tx.Exec(ctx, `INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
						tenant, id, e.Period.FirstDay(), e.Expected)
					if err != nil {
						return err
					}
					if tag.RowsAffected() == 1 {
						b.Plan = append(b.Plan, e)
					}
				}
				if len(b.Plan) == 0 {
					b.Plan = nil // no entry stored: no plan
				}
				slices.SortFunc(b.Plan, func(x, y finance.PlanEntry) int { return int(x.Period - y.Period) })
			}
			later := rng.IntN(8) == 0
			for range rng.IntN(40) {
				p := b.Frequency.PeriodOf(finance.MonthOf(2022, 10).Add(rng.IntN(44)))
				if p > current && !later {
					continue
				}
				b.Actuals[p] = decimal.New(int64(rng.IntN(2_000_000)-500_000), -3)
			}
			for p, v := range b.Actuals {
				if _, err := tx.Exec(ctx, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by) VALUES ($1, $2, $3, $4, 'test')`,
					tenant, id, p.FirstDay(), v); err != nil {
					return err
				}
			}
			if last, ok := finance.LastActual([]finance.Benefit{b}); ok && last > current {
				continue // compared in Go from its actuals, not in the sums
			}
			c, _ := b.CompareToDate(current, finance.NewRates("USD").FX())
			k := key{initiative, category}
			if want[k] == nil {
				want[k] = new(finance.ComparisonSum)
			}
			want[k].Merge(c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var rows []dbsqlc.AnalyticsRealizationSumsRow
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		var err error
		rows, err = db.Q.AnalyticsRealizationSums(ctx, tx, dbsqlc.AnalyticsRealizationSumsParams{TenantID: tenant, Base: "USD",
			CurrentMonth: int32(current)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rows = slices.DeleteFunc(rows, func(r dbsqlc.AnalyticsRealizationSumsRow) bool { return r.Summed == 0 }) // only benefits left to Go
	if len(rows) != len(want) {
		t.Errorf("%d groups summed in SQL, %d in Go", len(rows), len(want))
	}
	for _, r := range rows {
		w := want[key{r.InitiativeID, r.Category}]
		if w == nil {
			t.Errorf("group %s %s summed in SQL only", r.InitiativeID, r.Category)
			continue
		}
		c := w.Comparison()
		if !r.Expected.Equal(c.Expected) || !r.Actual.Equal(c.Actual) || !r.Unmeasured.Equal(c.Unmeasured) || int(r.Measured) != c.Measured || int(r.Periods) != c.Periods {
			t.Errorf("group %s %s: SQL expected %s actual %s unmeasured %s measured %d periods %d; Go expected %s actual %s unmeasured %s measured %d periods %d",
				r.InitiativeID, r.Category, r.Expected, r.Actual, r.Unmeasured, r.Measured, r.Periods, c.Expected, c.Actual, c.Unmeasured, c.Measured, c.Periods)
		}
	}
}
