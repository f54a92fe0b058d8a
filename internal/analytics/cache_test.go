package analytics

import (
	"context"
	"errors"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/finance"
)

// cacheFixture is a tenant with two initiatives, money benefits in USD and
// EUR (monthly and quarterly, one with a plan), actuals, costs and FX rates.
type cacheFixture struct {
	pool          *pgxpool.Pool
	tenant, other uuid.UUID
	initiative    uuid.UUID // the initiative the single-initiative analyses name
	second        uuid.UUID
	usd, eur      uuid.UUID // its benefits
}

func newCacheFixture(t *testing.T) cacheFixture {
	ctx := context.Background()
	f := cacheFixture{pool: dbtest.NewPool(t)}
	f.tenant, f.other = dbtest.NewTenant(t, f.pool, "starter"), dbtest.NewTenant(t, f.pool, "starter")
	for _, tn := range []uuid.UUID{f.tenant, f.other} {
		err := db.InTenant(ctx, f.pool, tn, func(tx pgx.Tx) error {
			var in, second, usd, eur uuid.UUID
			err := tx.QueryRow(ctx, `INSERT INTO initiatives (tenant_id, name, status, industry) VALUES ($1, 'Alpha', 'active', 'retail') RETURNING id`, tn).Scan(&in)
			if err == nil {
				err = tx.QueryRow(ctx, `INSERT INTO initiatives (tenant_id, name, status, industry) VALUES ($1, 'Beta', 'approved', 'retail') RETURNING id`, tn).Scan(&second)
			}
			if err == nil {
				err = tx.QueryRow(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
					VALUES ($1, $2, 'Savings', 'cost_savings', 120000, 'USD', 'currency', 'monthly', '2025-01-01', '2026-12-31', 'ann') RETURNING id`, tn, in).Scan(&usd)
			}
			if err == nil {
				err = tx.QueryRow(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, expected_end_date, owner_id)
					VALUES ($1, $2, 'Revenue', 'revenue_growth', 80000, 'EUR', 'currency', 'quarterly', '2025-01-01', NULL, 'bob') RETURNING id`, tn, second).Scan(&eur)
			}
			if err != nil {
				return err
			}
			for _, q := range []string{
				`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
				 SELECT @t, @usd, date '2025-01-01' + make_interval(months => m), 9000 + 100 * m, 'ann' FROM generate_series(0, 13) m`,
				`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
				 SELECT @t, @eur, date '2025-01-01' + make_interval(months => 3 * q), 15000 + 500 * q, 'bob' FROM generate_series(0, 4) q`,
				`INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected) VALUES (@t, @eur, '2025-01-01', 18000), (@t, @eur, '2025-04-01', 19000), (@t, @eur, '2025-07-01', 20000)`,
				`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence) VALUES (@t, @ini, 'Build', 'capex', 90000, 'USD', '2025-01-01', 'once')`,
				`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence, end_period) VALUES (@t, @second, 'Run', 'opex', 1500, 'EUR', '2025-01-01', 'monthly', '2026-12-01')`,
				`INSERT INTO fx_rates (tenant_id, currency, period, rate) SELECT @t, 'EUR', date '2024-01-01' + make_interval(months => m), 1.10 FROM generate_series(0, 35) m`,
			} {
				if _, err := tx.Exec(ctx, q, pgx.NamedArgs{"t": tn, "usd": usd, "eur": eur, "ini": in, "second": second}); err != nil {
					return err
				}
			}
			if tn == f.tenant {
				f.initiative, f.second, f.usd, f.eur = in, second, usd, eur
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// analyses runs every cached analysis (cached: through the cache; else
// the operations themselves, fresh) and names each report.
func (f cacheFixture) analyses(t *testing.T, now time.Time, cachedRead bool) map[string]any {
	t.Helper()
	ctx := context.Background()
	scope := Scope{Tenant: f.tenant, Now: now}
	out := map[string]any{}
	err := db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) error {
		roi, realization, trends, forecasts := analyseROI, analyseRealization, analyseTrends, analyseForecasts
		if cachedRead {
			roi, realization, trends, forecasts = AnalyseROI, AnalyseRealization, AnalyseTrends, AnalyseForecasts
		}
		return errors.Join(
			keep(out, "roi portfolio")(roi(ctx, tx, scope, ROIParams{Basis: DefaultROIBasis})),
			keep(out, "roi initiative fiscal 2026")(roi(ctx, tx, scope, ROIParams{InitiativeID: &f.initiative, Period: "2026", Basis: DefaultROIBasis})),
			keep(out, "realization portfolio")(realization(ctx, tx, scope, RealizationParams{})),
			keep(out, "realization initiative")(realization(ctx, tx, scope, RealizationParams{InitiativeID: &f.second})),
			keep(out, "trends by category")(trends(ctx, tx, scope, TrendsParams{From: "2025-01", To: "2026-12", GroupBy: "category"})),
			keep(out, "forecasts by benefit")(forecasts(ctx, tx, scope, ForecastsParams{GroupBy: "benefit", Horizon: 6})),
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keep names a report in out.
func keep(out map[string]any, name string) func(any, error) error {
	return func(r any, err error) error {
		out[name] = r
		return err
	}
}

// version is the tenant's analytics data version.
func (f cacheFixture) version(t *testing.T, tenant uuid.UUID) int64 {
	t.Helper()
	var v int64
	err := db.InTenant(context.Background(), f.pool, tenant, func(tx pgx.Tx) error {
		r, err := db.Q.AnalyticsDataVersion(context.Background(), tx, tenant)
		v = r.Version
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// storedFor counts the cache's reports of a tenant at a version and month.
func storedFor(tenant uuid.UUID, version int64, now time.Time) int {
	reports.mu.Lock()
	defer reports.mu.Unlock()
	n := 0
	for k := range reports.entries {
		if k.tenant == tenant && k.version == version && k.month == finance.MonthOfTime(now) {
			n++
		}
	}
	return n
}

// TestReportCacheExact proves the report cache exact: after each kind of
// write to an input of the analyses (an actual filed, corrected, deleted; a
// plan entered and changed; a benefit's value, frequency, dates, currency
// changed, a benefit created and deleted; an initiative created, its status
// changed, archived; a cost added and changed; an FX rate added and changed;
// each tenant setting changed) the tenant's version moves, every cached
// answer equals a fresh computation and at least one differs from the answer
// before; the current month rolling over answers anew without a write;
// another tenant's writes and a rolled-back write leave the version (and the
// stored reports) alone.
func TestReportCacheExact(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t)
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)

	// check reads through the cache twice (the second from it) and fresh,
	// and returns the cached answers.
	check := func(name string) map[string]any {
		t.Helper()
		first := f.analyses(t, now, true)
		if n := storedFor(f.tenant, f.version(t, f.tenant), now); n != len(first) {
			t.Errorf("%s: %d reports stored at the tenant's version, want %d", name, n, len(first))
		}
		again, fresh := f.analyses(t, now, true), f.analyses(t, now, false)
		for k := range fresh {
			if !reflect.DeepEqual(first[k], fresh[k]) || !reflect.DeepEqual(again[k], fresh[k]) {
				t.Errorf("%s: %s cached differs from a fresh computation:\ncached %+v\nfresh  %+v", name, k, again[k], fresh[k])
			}
		}
		return first
	}
	exec := func(tenant uuid.UUID, sql string, args ...any) {
		t.Helper()
		err := db.InTenant(ctx, f.pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	before := check("initial")
	// The figures do not depend on what these change (only archived initiatives drop out).
	unchanged := map[string]bool{"initiative status changed": true}
	steps := []struct{ name, sql string }{
		{"actual filed", `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by) VALUES (@t, @usd, '2026-03-01', 12345, 'ann')`},
		{"actual corrected", `UPDATE benefit_actuals SET value = 5000 WHERE benefit_id = @usd AND period = '2025-06-01'`},
		{"actual deleted", `DELETE FROM benefit_actuals WHERE benefit_id = @usd AND period = '2025-02-01'`},
		{"benefit value changed", `UPDATE benefits SET expected_value = 150000 WHERE id = @usd`},
		{"plan entered", `INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected) VALUES (@t, @usd, '2025-03-01', 7000)`},
		{"plan changed", `UPDATE benefit_plan_entries SET expected = 25000 WHERE benefit_id = @eur AND period = '2025-04-01'`},
		{"benefit frequency changed", `UPDATE benefits SET measurement_frequency = 'monthly' WHERE id = @eur`},
		{"benefit dates changed", `UPDATE benefits SET expected_start_date = '2025-04-01', expected_end_date = '2026-06-30' WHERE id = @usd`},
		{"benefit currency changed", `UPDATE benefits SET currency = 'EUR' WHERE id = @usd`},
		{"benefit created", `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id)
			VALUES (@t, @ini, 'Extra', 'productivity', 24000, 'USD', 'currency', 'monthly', '2025-06-01', 'cy')`},
		{"benefit deleted", `DELETE FROM benefits WHERE tenant_id = @t AND name = 'Extra'`},
		{"initiative created", `INSERT INTO initiatives (tenant_id, name, status, industry) VALUES (@t, 'Gamma', 'draft', 'retail')`},
		{"initiative status changed", `UPDATE initiatives SET status = 'completed' WHERE id = @ini`},
		{"initiative archived", `UPDATE initiatives SET status = 'archived' WHERE tenant_id = @t AND name = 'Gamma'`},
		{"cost added", `INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence) VALUES (@t, @ini, 'Licences', 'opex', 4000, 'USD', '2025-06-01', 'annual')`},
		{"cost changed", `UPDATE initiative_costs SET amount = 120000 WHERE initiative_id = @ini AND name = 'Build'`},
		{"FX rate changed", `UPDATE fx_rates SET rate = 1.2 WHERE tenant_id = @t AND currency = 'EUR' AND period >= '2025-06-01'`},
		{"FX rate deleted", `DELETE FROM fx_rates WHERE tenant_id = @t AND currency = 'EUR' AND period = '2025-07-01'`},
		{"FX rate added", `INSERT INTO fx_rates (tenant_id, currency, period, rate) VALUES (@t, 'EUR', '2025-07-01', 1.3)`},
		{"discount rate set", `INSERT INTO tenant_settings (tenant_id, discount_rate) VALUES (@t, 0.2)`},
		{"fiscal year start changed", `UPDATE tenant_settings SET fiscal_year_start_month = 7 WHERE tenant_id = @t`},
		{"base currency changed", `UPDATE tenant_settings SET base_currency = 'EUR' WHERE tenant_id = @t`},
		{"setting removed", `DELETE FROM tenant_settings WHERE tenant_id = @t`},
	}
	for _, s := range steps {
		v := f.version(t, f.tenant)
		exec(f.tenant, s.sql, pgx.NamedArgs{"t": f.tenant, "usd": f.usd, "eur": f.eur, "ini": f.initiative, "second": f.second})
		if after := f.version(t, f.tenant); after <= v {
			t.Errorf("%s: version %d after the write, %d before: want it moved", s.name, after, v)
		}
		got := check(s.name)
		if !unchanged[s.name] && reflect.DeepEqual(got, before) {
			t.Errorf("%s: every answer is the one before the write", s.name)
		}
		before = got
	}

	// The month rolls over: no write, new answers (the figures to date grow).
	v := f.version(t, f.tenant)
	now = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	if got := check("month rolled over"); reflect.DeepEqual(got, before) {
		t.Error("month rolled over: every answer is the one of the month before")
	}

	// Another tenant's writes and a rolled-back write leave the version and the stored reports.
	exec(f.other, `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
		SELECT tenant_id, id, '2026-03-01', 1, 'x' FROM benefits WHERE tenant_id = $1 AND currency = 'USD'`, f.other)
	exec(f.other, `UPDATE fx_rates SET rate = 2 WHERE tenant_id = $1`, f.other)
	rollback := errors.New("rolled back")
	err := db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE benefit_actuals SET value = value * 2 WHERE tenant_id = $1`, f.tenant); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if after := f.version(t, f.tenant); after != v {
		t.Errorf("version %d after another tenant's writes and a rolled-back write, want %d", after, v)
	}
	if n := storedFor(f.tenant, v, now); n != len(before) {
		t.Errorf("%d reports stored after another tenant's writes, want %d", n, len(before))
	}
	check("after another tenant's writes")
}

// TestReportCacheOwnWrites: a transaction that wrote an input reads its own
// figures (not the stored ones of the committed version) and stores none.
func TestReportCacheOwnWrites(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t)
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	scope := Scope{Tenant: f.tenant, Now: now}
	committed := f.analyses(t, now, true)["realization portfolio"]
	v := f.version(t, f.tenant)
	err := db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE benefit_actuals SET value = value + 1000 WHERE tenant_id = $1`, f.tenant); err != nil {
			return err
		}
		got, err := AnalyseRealization(ctx, tx, scope, RealizationParams{})
		if err != nil {
			return err
		}
		fresh, err := analyseRealization(ctx, tx, scope, RealizationParams{})
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, fresh) || reflect.DeepEqual(got, committed) {
			t.Errorf("in the writing transaction: cached %+v, fresh %+v (committed before %+v)", got, fresh, committed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := storedFor(f.tenant, v, now); n != len(f.analyses(t, now, false)) {
		t.Errorf("%d reports stored at the old version, want only the committed ones", n)
	}
	if after := f.version(t, f.tenant); after != v+1 {
		t.Errorf("version %d after one committed transaction, want %d", after, v+1)
	}
}

// TestReportCacheVersionMovedDuringCompute: a commit between the version
// read and the computation's end (READ COMMITTED: the computation may have
// seen part of it) leaves nothing stored; concurrent misses of one key
// compute once.
func TestReportCacheVersionMovedDuringCompute(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t)
	scope := Scope{Tenant: f.tenant, Now: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}
	c := newReportCache(1 << 20)
	err := db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) error {
		_, err := c.do(ctx, tx, scope, "test", 1, func() (any, error) {
			return "report", db.InTenant(ctx, f.pool, f.tenant, func(w pgx.Tx) error {
				_, err := w.Exec(ctx, `UPDATE benefits SET expected_value = expected_value + 1 WHERE id = $1`, f.usd)
				return err
			})
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.entries) != 0 {
		t.Errorf("%d reports stored though the version moved while computing", len(c.entries))
	}

	// 20 concurrent misses of one key: one computation.
	var computed atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			err := db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) error {
				r, err := c.do(ctx, tx, scope, "test", 2, func() (any, error) {
					computed.Add(1)
					<-release
					return "report", nil
				})
				if err == nil && r != "report" {
					t.Errorf("got %v", r)
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // every request waits on the one computation
	close(release)
	wg.Wait()
	if n := computed.Load(); n != 1 {
		t.Errorf("computed %d times for 20 concurrent misses, want 1", n)
	}
}

// TestReportCacheBytesBound: the cache holds at most its budget of estimated
// bytes, dropping the least recently used first, and never keeps a report
// over a quarter of the budget.
func TestReportCacheBytesBound(t *testing.T) {
	c := newReportCache(1000)
	key := func() cacheKey { return cacheKey{tenant: uuid.New(), version: 1, kind: "realization"} }
	a, b, d := key(), key(), key()
	c.put(a, []byte("a"), 200)
	c.put(b, []byte("b"), 200)
	c.put(key(), []byte("too large"), 251)
	if c.order.Len() != 2 || c.size != 400 {
		t.Fatalf("after two reports and one over a quarter: %d held, %d bytes", c.order.Len(), c.size)
	}
	c.order.MoveToFront(c.entries[a]) // a read again: b is now the least recently used
	for range 3 {
		c.put(key(), []byte("x"), 200)
	}
	c.put(d, []byte("d"), 200)
	if _, ok := c.entries[b]; ok || c.size > 1000 {
		t.Errorf("over budget: b still held (%v), %d bytes", ok, c.size)
	}
	if _, ok := c.entries[a]; !ok {
		t.Error("the recently read report was dropped before older ones")
	}
	if got := sizeOf([]byte("12345")); got != 5 {
		t.Errorf("sizeOf a rendering: %d", got)
	}
	if got := sizeOf(map[string]int{"n": 1}); got != int64(len(`{"n":1}`))*typedReportFactor {
		t.Errorf("sizeOf a typed report: %d", got)
	}
}

// TestEveryReportHasASize: each analysis's typed report encodes, so the
// cache can weigh it and keep it.
func TestEveryReportHasASize(t *testing.T) {
	f := newCacheFixture(t)
	for name, r := range f.analyses(t, time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC), false) {
		if size := sizeOf(r); size == math.MaxInt64 || size <= 0 {
			t.Errorf("%s: size %d (does not encode)", name, size)
		}
	}
}
