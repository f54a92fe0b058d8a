package benefit_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// Filing a page of actuals reads the stored actuals at the page's keys, not every actual the
// tenant filed before, whatever the statistics taken before the tenant existed say: that a new
// tenant is empty (one tenant filed before it), or that a tenant is about one actual (many small
// ones). Plans that hashed every actual of the tenant with the keys, or read the tenant's actuals
// to lock those at the keys, made each page of a 100,000-record sync cost more than the one before.
func TestFilingReadsOnlyTheActualsAtItsKeys(t *testing.T) {
	for _, before := range []struct {
		name                      string
		tenants, benefits, months int
	}{{"one tenant of 240 actuals", 1, 20, 12}, {"300 tenants of one actual", 300, 1, 1}} {
		t.Run(before.name, func(t *testing.T) {
			filingReadsOnlyTheActualsAtItsKeys(t, before.tenants, before.benefits, before.months)
		})
	}
}

func filingReadsOnlyTheActualsAtItsKeys(t *testing.T, tenantsBefore, benefitsBefore, monthsBefore int) {
	const benefits, months, page = 250, 12, 200
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	for range tenantsBefore {
		seedFeed(t, pool, dbtest.NewTenant(t, pool, "enterprise"), benefitsBefore, monthsBefore)
	}
	if _, err := pool.Exec(ctx, "ANALYZE benefit_actuals; ANALYZE benefit_actual_revisions"); err != nil {
		t.Fatal(err)
	}
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	ids := seedFeed(t, pool, tenant, benefits, months)

	// A page: 200 keys, stored ones and new ones (a month not filed yet).
	var keyBenefits []uuid.UUID
	var keyPeriods []time.Time
	for i := range page {
		keyBenefits = append(keyBenefits, ids[i%len(ids)])
		keyPeriods = append(keyPeriods, time.Date(2026, time.Month(1+i%(months+1)), 1, 0, 0, 0, 0, time.UTC))
	}
	stored := 0
	for _, p := range keyPeriods {
		if p.Year() == 2026 && int(p.Month()) <= months {
			stored++
		}
	}
	rowsRead := func(tx pgx.Tx) int64 { return dbtest.RowsReadInTx(t, tx, "benefit_actuals") }
	const lookups = dbtest.PastCustomPlans
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		before := rowsRead(tx)
		for round := range lookups {
			found, err := db.Q.BulkActualsExisting(ctx, tx, dbsqlc.BulkActualsExistingParams{TenantID: tenant, BenefitIds: keyBenefits, Periods: keyPeriods})
			if err != nil {
				return err
			}
			if len(found) != stored {
				t.Errorf("round %d: %d stored actuals found at the page's keys, want %d", round, len(found), stored)
			}
		}
		// One read per stored actual at the page's keys (the probe locks what it finds).
		read := rowsRead(tx) - before
		t.Logf("%d lookups of a page of %d keys read %d actual rows", lookups, page, read)
		if read > int64(lookups*2*page) {
			t.Errorf("%d lookups of a page of %d keys read %d actual rows of a tenant with %d", lookups, page, read, benefits*months)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Locking the benefits a page of actuals names reads those benefits, not every benefit of their
// initiative or tenant. Most tenants have an initiative or two of a few benefits each, so the
// statistics put a tenant's initiatives at about one row and an initiative's benefits at a few,
// however fresh they are; an integration's initiative holds every benefit its feed names. Joined to
// the initiatives, the benefits were found through their initiative and filtered by id: each page
// of a 100,000-record sync, whose 8,334 benefits share one initiative, read all of them. Where a
// tenant looks like one row, any index led by the tenant looks as cheap as the primary key, and
// one ending in the id was walked through the whole tenant for each id: no more rows read, but
// every index block of the tenant.
func TestFilingLocksOnlyTheBenefitsItNames(t *testing.T) {
	const benefits, named = 2000, 17
	seed := func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
		return seedFeed(t, pool, tenant, cmp.Or(small, benefits), 0)
	}
	dbtest.EachTenantStatistics(t, []string{"tenants", "initiatives", "benefits"}, seed, func(t *testing.T, large dbtest.LargeTenant) {
		ctx, tenant, page, locks := context.Background(), large.ID, large.IDs[:named], dbtest.PastCustomPlans
		if err := db.InTenant(ctx, large.Pool, tenant, func(tx pgx.Tx) error {
			reads := dbtest.StartReads(t, tx, "benefits", "initiatives")
			for round := range locks {
				got, err := db.Q.BulkBenefitsLocked(ctx, tx, dbsqlc.BulkBenefitsLockedParams{TenantID: tenant, Ids: page})
				if err != nil {
					return err
				}
				if len(got) != named {
					t.Errorf("round %d: %d benefits locked, want %d", round, len(got), named)
				}
			}
			// A row and its initiative's per benefit locked; a probe of a primary key reads a root
			// and a leaf block here.
			each := int64(locks * named)
			reads.Check(fmt.Sprintf("%d locks of %d benefits (of an initiative of %d)", locks, named, benefits),
				[]int64{2 * each, 2 * each}, []int64{4 * each, 4 * each})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// Filing actuals updates the kept figures of the benefits filed (benefit_actual_stats,
// benefit_measured_expectations), not of every benefit of the tenant. The triggers take those rows
// by their tids; row security adds the tenant to each update, and the planner, which sizes a tenant
// as an average one, scanned the tenant's rows and filtered them by tid instead: every page of a
// 100,000-record sync read all the rows its tenant had so far.
func TestFilingUpdatesOnlyTheFiguresOfItsBenefits(t *testing.T) {
	const benefits, filed = 2000, 17
	pool, tenant := tenantAfterOneRowTenants(t)
	ids := seedFeed(t, pool, tenant, benefits, 1)

	const pages = 3
	tables := []string{"benefit_actual_stats", "benefit_measured_expectations"}
	reads := rowsReadFiling(t, pool, tenant, ids[:filed], pages, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), tables...)
	for k, table := range tables {
		t.Logf("%s: %d pages of %d actuals read %d rows", table, pages, filed, reads[k])
		if reads[k] > int64(pages*3*filed) {
			t.Errorf("%s: %d pages of %d actuals read %d rows of a tenant with %d benefits", table, pages, filed, reads[k], benefits)
		}
	}
}

// Filing actuals reads the actuals and plans of the benefits filed to keep their figures, not the
// whole tables once per benefit, whatever the statistics say. Taken while a table held one
// benefit's rows, they put every benefit at the whole table, and the figures' refresh
// (benefit_measured_refresh) read the table once per benefit it touched, sequentially or by the
// tenant: a bulk import into a growing tenant took 16 s, 20 s, then over 30 s, and 10,000 benefits
// created in one statement 61 s (migration 00056).
func TestFilingReadsOnlyTheRowsOfItsBenefits(t *testing.T) {
	const others, filed, pages, months = 300, 40, 2, 12
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	first := dbtest.NewTenant(t, pool, "enterprise")
	seedPlans(t, pool, first, seedFeed(t, pool, first, 1, months), months)
	if _, err := pool.Exec(ctx, "ANALYZE benefits; ANALYZE benefit_actuals; ANALYZE benefit_plan_entries; ANALYZE benefit_actual_stats; ANALYZE benefit_measured_expectations"); err != nil {
		t.Fatal(err)
	}
	// 3,600 actuals and plan entries the statistics do not know.
	other := dbtest.NewTenant(t, pool, "enterprise")
	seedPlans(t, pool, other, seedFeed(t, pool, other, others, months), months)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	ids := seedFeed(t, pool, tenant, filed, months)
	seedPlans(t, pool, tenant, ids[:filed/2], months) // half the filed benefits have a plan

	tables := []string{"benefit_actuals", "benefit_plan_entries"}
	reads := rowsReadFiling(t, pool, tenant, ids, pages, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), tables...)
	for k, table := range tables {
		t.Logf("%s: %d rows read", table, reads[k])
		// Each benefit's own 12-14 rows, read by each of the figures' few lookups.
		if limit := int64(pages * filed * (months + 2) * 4); reads[k] > limit {
			t.Errorf("%s: %d pages of %d actuals read %d rows (at most %d: the filed benefits' own); the table holds %d", table, pages, filed, reads[k], limit, months*(1+others+filed))
		}
	}
}

// Filing actuals of many benefits in one statement fetches each benefit's kept figures
// (benefit_actual_stats, benefit_measured_expectations) once, by its tid, and compares it with
// nothing else. The updates named their rows both by the list of tids and by the join to what each
// row becomes; planned for a tenant the statistics size at one row, they compared every row with
// every tid of the list: 10,000 benefits filed in one statement took 21 s of one core. Nor is any
// statement of a filing compiled, in a session with JIT on: under the updates' settings (scans
// other than by tid off), the foreign key's check of each new row was priced past jit_above_cost
// and compiled, 12 ms a row.
func TestFilingManyBenefitsFetchesEachFigureOnce(t *testing.T) {
	const benefits = 1500
	pool, tenant := tenantAfterOneRowTenants(t)
	explained, plans := dbtest.Explained(t, pool, map[string]string{"jit": "on"})
	// The benefits with their first actual (rows created and updated in one transaction), then a
	// second month of each (rows of earlier transactions).
	ids := seedFeed(t, explained, tenant, benefits, 1)
	rowsReadFiling(t, explained, tenant, ids, 1, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))

	updates := map[string]int{}
	for _, p := range plans() {
		if p.JIT != nil {
			t.Errorf("%q compiled %d functions (JIT): a check of a row of the figures planned with scans off", shortened(p.Query), p.JIT.Functions)
		}
		p.Plan.Walk(func(n dbtest.PlanNode) {
			if n.RowsRemovedByJoinFilter > 0 {
				t.Errorf("%s under %q: %v pairs of rows joined and thrown away", n.NodeType, shortened(p.Query), n.RowsRemovedByJoinFilter)
			}
			if n.NodeType != "Tid Scan" || (n.Relation != "benefit_actual_stats" && n.Relation != "benefit_measured_expectations") {
				return
			}
			updates[n.Relation]++
			if fetched := n.ActualRows * n.ActualLoops; fetched != benefits {
				t.Errorf("%s: %v rows fetched by tid, want each of the %d benefits' rows once", n.Relation, fetched, benefits)
			}
			if cond := n.TIDCond + " " + n.Filter; strings.Contains(cond, "ANY") && n.ActualLoops > 1 {
				t.Errorf("%s: each of %v rows fetched is compared with the list of tids (%s)", n.Relation, n.ActualLoops, shortened(cond))
			}
		})
	}
	for _, table := range []string{"benefit_actual_stats", "benefit_measured_expectations"} {
		if updates[table] < 2 {
			t.Errorf("%s: %d updates by tid explained, want one a filing at least", table, updates[table])
		}
	}
}

// tenantAfterOneRowTenants returns a fresh database of 300 tenants of one benefit and one actual,
// analyzed, and a new tenant in it: the statistics put a tenant at about one row of each table.
func tenantAfterOneRowTenants(t *testing.T) (*pgxpool.Pool, uuid.UUID) {
	t.Helper()
	pool := dbtest.NewPool(t)
	for range 300 {
		seedFeed(t, pool, dbtest.NewTenant(t, pool, "enterprise"), 1, 1)
	}
	if _, err := pool.Exec(context.Background(), "ANALYZE benefits; ANALYZE benefit_actuals; ANALYZE benefit_actual_stats; ANALYZE benefit_measured_expectations"); err != nil {
		t.Fatal(err)
	}
	return pool, dbtest.NewTenant(t, pool, "enterprise")
}

// shortened is the start of a statement or condition, for a message.
func shortened(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 100 {
		return text[:100] + "..."
	}
	return text
}

// rowsReadFiling files pages of actuals of the tenant's benefits, a month a page from first, in
// one tenant transaction, and returns how many rows of each table that read.
func rowsReadFiling(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, benefits []uuid.UUID, pages int, first time.Time, tables ...string) []int64 {
	t.Helper()
	ctx := context.Background()
	reads := make([]int64, len(tables))
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for k, table := range tables {
			reads[k] = -dbtest.RowsReadInTx(t, tx, table)
		}
		for page := range pages {
			if _, err := tx.Exec(ctx, `INSERT INTO benefit_actuals (tenant_id, id, benefit_id, period, value, recorded_by)
				SELECT $1, gen_random_uuid(), b, $3::date, 100, 'page' FROM unnest($2::uuid[]) b`,
				tenant, benefits, first.AddDate(0, page, 0)); err != nil {
				return err
			}
		}
		for k, table := range tables {
			reads[k] += dbtest.RowsReadInTx(t, tx, table)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return reads
}

// seedPlans gives each of the benefits a plan entry in each of the first months of 2026.
func seedPlans(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, benefits []uuid.UUID, months int) {
	t.Helper()
	if err := db.InTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO benefit_plan_entries (tenant_id, benefit_id, period, expected)
			SELECT $1, b, make_date(2026, m, 1), 90 FROM unnest($2::uuid[]) b, generate_series(1, $3) m`, tenant, benefits, months)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// seedFeed gives the tenant an initiative of n benefits, each with an actual in each of the
// first months of 2026, and returns the benefits' ids in id order.
func seedFeed(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, n, months int) (ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status) VALUES ($1, 'Feed', 'active') RETURNING id),
			b AS (INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id)
				SELECT $1, i.id, 'B ' || n, 'cost_savings', 1200, 'EUR', 'currency', 'monthly', '2026-01-01', 'owner'
				FROM i, generate_series(1, $2) n RETURNING id),
			a AS (INSERT INTO benefit_actuals (tenant_id, id, benefit_id, period, value, recorded_by)
				SELECT $1, gen_random_uuid(), b.id, make_date(2026, m, 1), 100, 'seed' FROM b, generate_series(1, $3) m)
			SELECT id FROM b ORDER BY id`, tenant, n, months)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}
