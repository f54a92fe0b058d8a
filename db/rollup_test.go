package db_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// TestBenefitActualMonthsRollup proves the rollup of migration 00013 exact:
// after every kind of write that can move an actual in or out of a row
// (insert, correction of value or period, delete, a benefit's category,
// currency, unit or status changed, a benefit deleted with its actuals), the
// rollup equals a fresh GROUP BY of benefit_actuals (AnalyticsRollupCheck
// lists every row where the two differ), and a few rows equal sums worked out
// by hand. Statements writing many rows (of several benefits) at once and two
// transactions adding to the same row concurrently keep it exact too. Another
// tenant's writes never show.
func TestBenefitActualMonthsRollup(t *testing.T) {
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
	// exact checks the rollup against the fresh GROUP BY and returns the
	// rollup's rows as "initiative category currency period" → total.
	exact := func(name string) map[string]string {
		t.Helper()
		rows := map[string]string{}
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			diff, err := db.Q.AnalyticsRollupCheck(ctx, tx, tenant)
			if err != nil {
				return err
			}
			for _, d := range diff {
				t.Errorf("%s: rollup differs at %s %s %s %s: rollup %v (%v actuals), fresh %v (%v actuals)", name, d.InitiativeID, d.Category,
					d.Currency, d.Period.Format("2006-01"), d.RollupTotal, d.RollupActuals, d.FreshTotal, d.FreshActuals)
			}
			// benefit_actual_stats (migration 00017): each benefit's count, Σ and two latest actuals.
			stats, err := db.Q.AnalyticsActualStatsCheck(ctx, tx, tenant)
			if err != nil {
				return err
			}
			for _, d := range stats {
				t.Errorf("%s: benefit_actual_stats differs for %s: stats %s (%d actuals), fresh %s (%d actuals)", name, d.BenefitID, d.Stats, d.StatsActuals, d.Fresh, d.FreshActuals)
			}
			// benefit_actual_portfolio_months (migration 00019): Σ per (category, currency, month).
			portfolio, err := db.Q.AnalyticsPortfolioRollupCheck(ctx, tx, tenant)
			if err != nil {
				return err
			}
			for _, d := range portfolio {
				t.Errorf("%s: portfolio rollup differs at %s %s %s: rollup %v (%v actuals), fresh %v (%v actuals)", name, d.Category,
					d.Currency, d.Period.Format("2006-01"), d.RollupTotal, d.RollupActuals, d.FreshTotal, d.FreshActuals)
			}
			// Trends' sums (the portfolio rollup less the archived initiatives' months) equal the
			// month rows of the live initiatives summed directly, in every grouping.
			for _, groupBy := range []string{"", "category", "initiative"} {
				sums, err := db.Q.AnalyticsActualsByMonth(ctx, tx, dbsqlc.AnalyticsActualsByMonthParams{GroupBy: groupBy, Base: "USD",
					TenantID: tenant, FromPeriod: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Through: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
				if err != nil {
					return err
				}
				var gotSums []string
				for _, s := range sums {
					gotSums = append(gotSums, fmt.Sprintf("%s %s %v %v", s.GroupKey, s.Period.Format("2006-01"), s.Actual, s.Missing > 0))
				}
				r, err := tx.Query(ctx, `SELECT g || ' ' || to_char(period, 'YYYY-MM') || ' ' || actual || ' ' || missing FROM (
					SELECT (CASE $1::text WHEN 'category' THEN m.category WHEN 'initiative' THEN m.initiative_id::text ELSE '' END) AS g, m.period,
					       coalesce(sum(m.total * CASE WHEN m.currency = 'USD' THEN 1 ELSE r.rate END), 0)::float8 AS actual,
					       count(*) FILTER (WHERE m.currency <> 'USD' AND r.rate IS NULL) > 0 AS missing
					FROM benefit_actual_months m JOIN initiatives i ON i.tenant_id = m.tenant_id AND i.id = m.initiative_id
					LEFT JOIN fx_rates r ON r.tenant_id = m.tenant_id AND r.currency = m.currency AND r.period = m.period
					WHERE i.status <> 'archived' GROUP BY 1, 2) x`, groupBy)
				if err != nil {
					return err
				}
				wantSums, err := pgx.CollectRows(r, pgx.RowTo[string])
				if err != nil {
					return err
				}
				slices.Sort(gotSums)
				slices.Sort(wantSums)
				if strings.Join(gotSums, "\n") != strings.Join(wantSums, "\n") {
					t.Errorf("%s: trends sums by %q:\n%s\nwant (live initiatives' month rows):\n%s", name, groupBy,
						strings.Join(gotSums, "\n"), strings.Join(wantSums, "\n"))
				}
			}
			r, err := tx.Query(ctx, `SELECT i.name || ' ' || m.category || ' ' || m.currency || ' ' || to_char(m.period, 'YYYY-MM'), m.total::text
				FROM benefit_actual_months m JOIN initiatives i ON i.tenant_id = m.tenant_id AND i.id = m.initiative_id`)
			if err != nil {
				return err
			}
			defer r.Close()
			for r.Next() {
				var k, v string
				if err := r.Scan(&k, &v); err != nil {
					return err
				}
				rows[k] = v
			}
			return r.Err()
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rows
	}
	want := func(name string, got map[string]string, key, total string) {
		t.Helper()
		if got[key] != total {
			t.Errorf("%s: %s = %q, want %q (all: %v)", name, key, got[key], total, got)
		}
	}

	// portfolio reads benefit_actual_portfolio_months as "category currency period" → "total/actuals".
	portfolio := func(name string) map[string]string {
		t.Helper()
		rows := map[string]string{}
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			r, err := tx.Query(ctx, `SELECT category || ' ' || currency || ' ' || to_char(period, 'YYYY-MM'), total || '/' || actuals
				FROM benefit_actual_portfolio_months`)
			if err != nil {
				return err
			}
			defer r.Close()
			for r.Next() {
				var k, v string
				if err := r.Scan(&k, &v); err != nil {
					return err
				}
				rows[k] = v
			}
			return r.Err()
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rows
	}

	// wantStats reads a benefit's benefit_actual_stats row as "actuals total latest previous".
	wantStats := func(name string, benefit uuid.UUID, want string) {
		t.Helper()
		var got string
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT coalesce((SELECT actuals || ' ' || total || ' ' || to_char(latest_period, 'YYYY-MM') || '=' || latest_value || ' ' ||
				coalesce(to_char(previous_period, 'YYYY-MM') || '=' || previous_value, '-') FROM benefit_actual_stats WHERE benefit_id = $1), 'none')`, benefit).Scan(&got)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: stats of %s = %q, want %q", name, benefit, got, want)
		}
	}

	var ini, ini2 uuid.UUID
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		a, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "Rollup A"})
		if err != nil {
			return err
		}
		b, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "Rollup B"})
		ini, ini2 = a.ID, b.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	benefit := func(tenant, initiative uuid.UUID, name, category, unit string, currency *string) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id)
				VALUES ($1, $2, $3, $4, 12000, $5, $6, 'monthly', '2026-01-01', 'test') RETURNING id`, tenant, initiative, name, category, currency, unit).Scan(&id)
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	usd, eur := new("USD"), new("EUR")
	saving := benefit(tenant, ini, "Savings", "cost_savings", "currency", usd)
	revenue := benefit(tenant, ini, "Revenue", "revenue_growth", "currency", eur)
	savingB := benefit(tenant, ini2, "Savings B", "cost_savings", "currency", usd)
	hours := benefit(tenant, ini, "Hours", "productivity", "hours", nil)
	actual := `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by) VALUES (app_tenant_id(), $1, $2, $3, 'test')`

	// The other tenant writes the same shapes: never in this tenant's rollup.
	var otherIni uuid.UUID
	if err := db.InTenant(ctx, pool, other, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: other, Name: "Other"})
		otherIni = in.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	otherSaving := benefit(other, otherIni, "Savings", "cost_savings", "currency", usd)
	step("other tenant's actual", other, actual, otherSaving, "2026-01-01", "999999")

	// Rates for two of the foreign months (the others have none: trends count them missing).
	step("fx rates", tenant, `INSERT INTO fx_rates (tenant_id, currency, period, rate) VALUES
		(app_tenant_id(), 'EUR', '2026-01-01', 1.1), (app_tenant_id(), 'GBP', '2026-08-01', 1.3)`)
	step("insert", tenant, actual, saving, "2026-01-01", "1000.10")
	step("insert", tenant, actual, saving, "2026-02-01", "2000")
	step("insert", tenant, actual, revenue, "2026-01-01", "500.5")
	step("insert", tenant, actual, savingB, "2026-01-01", "300")
	step("insert", tenant, actual, hours, "2026-01-01", "40") // not money: never in the rollup
	got := exact("after inserts")
	if len(got) != 4 {
		t.Errorf("after inserts: %d rows (%v), want 4: A and B savings 2026-01, A savings 2026-02, A revenue EUR 2026-01", len(got), got)
	}
	want("after inserts", got, "Rollup A cost_savings USD 2026-01", "1000.10")
	want("after inserts", got, "Rollup B cost_savings USD 2026-01", "300")
	want("after inserts", got, "Rollup A cost_savings USD 2026-02", "2000")
	want("after inserts", got, "Rollup A revenue_growth EUR 2026-01", "500.5")
	// Worked by hand: A's and B's savings of 2026-01 share one portfolio row.
	want("after inserts", portfolio("after inserts"), "cost_savings USD 2026-01", "1300.10/2")
	wantStats("after inserts", saving, "2 3000.10 2026-02=2000 2026-01=1000.10")
	wantStats("after inserts", hours, "1 40 2026-01=40 -") // every benefit has its row: the at-risk rule reads any unit

	step("correct a value", tenant, `UPDATE benefit_actuals SET value = 2500.25 WHERE benefit_id = $1 AND period = '2026-02-01'`, saving)
	want("after correction", exact("after correction"), "Rollup A cost_savings USD 2026-02", "2500.25")
	wantStats("after correction", saving, "2 3500.35 2026-02=2500.25 2026-01=1000.10")
	step("move to another month", tenant, `UPDATE benefit_actuals SET period = '2026-03-01' WHERE benefit_id = $1 AND period = '2026-02-01'`, saving)
	got = exact("after the move")
	want("after the move", got, "Rollup A cost_savings USD 2026-03", "2500.25")
	if _, ok := got["Rollup A cost_savings USD 2026-02"]; ok {
		t.Errorf("after the move: 2026-02 still has a row: %v", got)
	}
	wantStats("after the move", saving, "2 3500.35 2026-03=2500.25 2026-01=1000.10")
	step("delete an actual", tenant, `DELETE FROM benefit_actuals WHERE benefit_id = $1 AND period = '2026-03-01'`, saving)
	wantStats("after deleting the latest", saving, "1 1000.10 2026-01=1000.10 -") // the one before it is the latest again
	if got := exact("after delete"); len(got) != 3 {
		t.Errorf("after delete: %v, want the empty month's row gone", got)
	}
	step("change the category", tenant, `UPDATE benefits SET category = 'cost_avoidance' WHERE id = $1`, revenue)
	want("after the category change", exact("after the category change"), "Rollup A cost_avoidance EUR 2026-01", "500.5")
	step("change the currency", tenant, `UPDATE benefits SET currency = 'GBP' WHERE id = $1`, revenue)
	want("after the currency change", exact("after the currency change"), "Rollup A cost_avoidance GBP 2026-01", "500.5")
	step("cancel", tenant, `UPDATE benefits SET status = 'cancelled' WHERE id = $1`, revenue)
	if got := exact("after cancel"); len(got) != 2 {
		t.Errorf("after cancel: %v, want only the savings of A and B", got)
	}
	step("actual of a cancelled benefit", tenant, actual, revenue, "2026-02-01", "70")
	exact("actual of a cancelled benefit")
	step("reactivate", tenant, `UPDATE benefits SET status = 'active' WHERE id = $1`, revenue)
	want("after reactivation", exact("after reactivation"), "Rollup A cost_avoidance GBP 2026-02", "70")
	step("hours become money", tenant, `UPDATE benefits SET unit = 'currency', currency = 'USD' WHERE id = $1`, hours)
	want("after the unit change", exact("after the unit change"), "Rollup A productivity USD 2026-01", "40")
	step("bulk insert", tenant, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
		SELECT app_tenant_id(), $1, date '2026-04-01' + make_interval(months => m), 0.01 * m, 'test' FROM generate_series(0, 8) m`, saving)
	want("after a bulk insert", exact("after a bulk insert"), "Rollup A cost_savings USD 2026-12", "0.08")
	// A benefit moved to another initiative: its months move between month rows, the portfolio
	// row keeps its Σ (A's 1000.10 + B's 300 in 2026-01, now both A's). Then B is archived and
	// unarchived: the portfolio never changes, trends drop B's months while it is archived.
	step("move a benefit to another initiative", tenant, `UPDATE benefits SET initiative_id = $2 WHERE id = $1`, savingB, ini)
	want("after moving a benefit", exact("after moving a benefit"), "Rollup A cost_savings USD 2026-01", "1300.10")
	want("after moving a benefit", portfolio("after moving a benefit"), "cost_savings USD 2026-01", "1300.10/2")
	step("move it back", tenant, `UPDATE benefits SET initiative_id = $2 WHERE id = $1`, savingB, ini2)
	want("after moving it back", exact("after moving it back"), "Rollup B cost_savings USD 2026-01", "300")
	step("archive B", tenant, `UPDATE initiatives SET status = 'archived' WHERE id = $1`, ini2)
	exact("after archiving B")
	want("after archiving B", portfolio("after archiving B"), "cost_savings USD 2026-01", "1300.10/2")
	step("B's actual while archived", tenant, actual, savingB, "2026-05-01", "77") // a month only B has
	exact("after B's actual while archived")
	want("after B's actual while archived", portfolio("after B's actual while archived"), "cost_savings USD 2026-05", "77.01/2")
	step("unarchive B", tenant, `UPDATE initiatives SET status = 'active' WHERE id = $1`, ini2)
	exact("after unarchiving B")
	step("archive B again", tenant, `UPDATE initiatives SET status = 'archived' WHERE id = $1`, ini2)
	exact("after archiving B again")
	step("delete a benefit", tenant, `DELETE FROM benefits WHERE id = $1`, savingB)
	got = exact("after deleting a benefit")
	want("after deleting a benefit", got, "Rollup A cost_savings USD 2026-01", "1000.10")
	want("after deleting a benefit", portfolio("after deleting a benefit"), "cost_savings USD 2026-01", "1000.10/1")
	want("after deleting a benefit", portfolio("after deleting a benefit"), "cost_savings USD 2026-05", "0.01/1")
	if _, ok := got["Rollup B cost_savings USD 2026-01"]; ok {
		t.Errorf("after deleting a benefit: its month is still there: %v", got)
	}
	wantStats("after deleting a benefit", savingB, "none")

	// One statement writing actuals of two benefits: a correction of one and a period move of
	// the other. Worked by hand: A savings 2026-01 1000.10 + 1 = 1001.10; A revenue GBP 500.5 + 1
	// leaves 2026-01 for 2026-08.
	step("multi-row update of two benefits", tenant, `UPDATE benefit_actuals SET value = value + 1,
		period = CASE WHEN benefit_id = $2 THEN date '2026-08-01' ELSE period END
		WHERE benefit_id IN ($1, $2) AND period = '2026-01-01'`, saving, revenue)
	got = exact("after a multi-row update")
	want("after a multi-row update", got, "Rollup A cost_savings USD 2026-01", "1001.10")
	want("after a multi-row update", got, "Rollup A cost_avoidance GBP 2026-08", "501.5")
	if _, ok := got["Rollup A cost_avoidance GBP 2026-01"]; ok {
		t.Errorf("after a multi-row update: the moved month is still there: %v", got)
	}
	// One statement deleting actuals of two benefits: savings April to July (0.00, 0.01, 0.02,
	// 0.03) and revenue 2026-02 (70): those five months' rows go, the rest stays.
	step("multi-row delete of two benefits", tenant, `DELETE FROM benefit_actuals
		WHERE (benefit_id = $1 AND period BETWEEN '2026-04-01' AND '2026-07-01') OR (benefit_id = $2 AND period = '2026-02-01')`, saving, revenue)
	got = exact("after a multi-row delete")
	for _, gone := range []string{"cost_savings USD 2026-04", "cost_savings USD 2026-07", "cost_avoidance GBP 2026-02"} {
		if _, ok := got["Rollup A "+gone]; ok {
			t.Errorf("after a multi-row delete: %s is still there: %v", gone, got)
		}
	}
	want("after a multi-row delete", got, "Rollup A cost_savings USD 2026-08", "0.04")
	// One statement changing two benefits into the same category and currency: their months
	// merge, 2026-08 = savings 0.04 + revenue 501.5.
	step("multi-row benefit change", tenant, `UPDATE benefits SET category = 'revenue_growth', currency = 'USD' WHERE id IN ($1, $2)`, saving, revenue)
	got = exact("after a multi-row benefit change")
	want("after a multi-row benefit change", got, "Rollup A revenue_growth USD 2026-08", "501.54")
	want("after a multi-row benefit change", got, "Rollup A revenue_growth USD 2026-01", "1001.10")

	// Two transactions adding to the same new month at once: the second waits on the first's
	// row (ON CONFLICT DO UPDATE adds to it) and neither delta is lost: 5 + 7 = 12.
	first, release, errs := make(chan struct{}), make(chan struct{}), make(chan error, 2)
	go func() {
		errs <- db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, actual, saving, "2027-01-01", "5")
			close(first)
			<-release
			return err
		})
	}()
	<-first
	go func() {
		errs <- db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, actual, revenue, "2027-01-01", "7")
			return err
		})
	}()
	time.Sleep(200 * time.Millisecond) // the second is now waiting on the first's rollup row
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent inserts: %v", err)
		}
	}
	want("after concurrent inserts", exact("after concurrent inserts"), "Rollup A revenue_growth USD 2027-01", "12")

	// Two transactions adding actuals of the SAME benefit at once (different months): the second
	// waits on the first's benefit_actual_stats row, then reads the first's committed actual, so
	// its count, Σ and latest two include both: 2027-02 = 11, 2027-03 = 13.
	concurrent := func(name string, first, second func(tx pgx.Tx) error) {
		t.Helper()
		started, release, errs := make(chan struct{}), make(chan struct{}), make(chan error, 2)
		go func() {
			errs <- db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
				err := first(tx)
				close(started)
				<-release
				return err
			})
		}()
		<-started
		go func() { errs <- db.InTenant(ctx, pool, tenant, second) }()
		time.Sleep(200 * time.Millisecond) // the second is now waiting on the first's stats row
		close(release)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	insert := func(benefit uuid.UUID, period, value string) func(tx pgx.Tx) error {
		return func(tx pgx.Tx) error { _, err := tx.Exec(ctx, actual, benefit, period, value); return err }
	}
	concurrent("concurrent inserts of one benefit", insert(hours, "2027-02-01", "11"), insert(hours, "2027-03-01", "13"))
	exact("after concurrent inserts of one benefit")
	wantStats("after concurrent inserts of one benefit", hours, "3 64 2027-03=13 2027-02=11")
	// And a delete of its latest against an insert before it: 2027-03 goes, 2026-12 comes: the
	// latest two are 2027-02 and 2026-12 whichever commits first.
	concurrent("concurrent delete and insert of one benefit",
		func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `DELETE FROM benefit_actuals WHERE benefit_id = $1 AND period = '2027-03-01'`, hours)
			return err
		}, insert(hours, "2026-12-01", "5"))
	exact("after a concurrent delete and insert of one benefit")
	wantStats("after a concurrent delete and insert of one benefit", hours, "3 56 2027-02=11 2026-12=5")

	// Two transactions of different initiatives adding to the same category and month at once:
	// their month rows differ, the portfolio row is shared; the second waits on it and neither
	// delta is lost: 5 + 7 = 12 over 2 actuals (B is archived: trends show only A's 5).
	revenueB := benefit(tenant, ini2, "Revenue B", "revenue_growth", "currency", usd)
	concurrent("concurrent inserts of two initiatives", insert(saving, "2027-04-01", "5"), insert(revenueB, "2027-04-01", "7"))
	want("after concurrent inserts of two initiatives", portfolio("after concurrent inserts of two initiatives"), "revenue_growth USD 2027-04", "12/2")
	exact("after concurrent inserts of two initiatives")

	// A bulk import's shape: one multi-row INSERT of many benefits' actuals, then a multi-row
	// UPDATE of some (a re-import correcting values) — exact after each.
	step("multi-row insert of three benefits", tenant, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
		SELECT app_tenant_id(), b, date '2028-01-01' + make_interval(months => m), 1 + m, 'test'
		FROM unnest($1::uuid[]) b, generate_series(0, 2) m`, []uuid.UUID{saving, revenue, hours})
	exact("after a multi-row insert of three benefits")
	wantStats("after a multi-row insert of three benefits", hours, "6 62 2028-03=3 2028-02=2")
	step("multi-row correction of three benefits", tenant, `UPDATE benefit_actuals SET value = value * 10 WHERE period >= '2028-02-01'`)
	exact("after a multi-row correction")
	wantStats("after a multi-row correction", hours, "6 107 2028-03=30 2028-02=20")

	// Worked by hand: the merged 2026-08 row of the multi-row benefit change (then the
	// concurrent and bulk writes never touched 2026-08).
	want("at the end", portfolio("at the end"), "revenue_growth USD 2026-08", "501.54/2")

	// The rollup is RLS-forced: the other tenant sees only its own row.
	var n int
	if err := db.InTenant(ctx, pool, other, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM benefit_actual_months`).Scan(&n)
	}); err != nil || n != 1 {
		t.Errorf("other tenant sees %d rollup rows (%v), want its own 1", n, err)
	}
	if err := db.InTenant(ctx, pool, other, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM benefit_actual_stats`).Scan(&n)
	}); err != nil || n != 1 {
		t.Errorf("other tenant sees %d benefit_actual_stats rows (%v), want its own 1", n, err)
	}
	if err := db.InTenant(ctx, pool, other, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM benefit_actual_portfolio_months`).Scan(&n)
	}); err != nil || n != 1 {
		t.Errorf("other tenant sees %d portfolio rollup rows (%v), want its own 1", n, err)
	}
}
