package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// WithSettings gives its statement the settings and puts the values back after it, in a
// transaction and in a read's implicit ones alike.
func TestWithSettingsHoldForTheStatementAlone(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx, tenant := context.Background(), dbtest.NewTenant(t, pool, "enterprise")
	show := func(t *testing.T, q dbsqlc.DBTX) (mode, tenantSetting string) {
		t.Helper()
		if err := q.QueryRow(ctx, "SELECT current_setting('plan_cache_mode'), current_setting('app.tenant_id')").Scan(&mode, &tenantSetting); err != nil {
			t.Fatal(err)
		}
		return mode, tenantSetting
	}
	check := func(t *testing.T, tx pgx.Tx) {
		t.Helper()
		if mode, in := show(t, db.WithSettings(tx, db.PlanPerCall)); mode != "force_custom_plan" || in != tenant.String() {
			t.Errorf("through WithSettings: plan_cache_mode %q, tenant %q; want force_custom_plan and the tenant", mode, in)
		}
		if mode, _ := show(t, tx); mode != "auto" {
			t.Errorf("the next statement: plan_cache_mode %q, want auto again", mode)
		}
	}
	t.Run("transaction", func(t *testing.T) {
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error { check(t, tx); return nil }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("read", func(t *testing.T) {
		tx := db.BeginTenantReads(ctx, pool, tenant)
		defer func() { _ = tx.Rollback(ctx) }()
		// A statement riding with the next round trip goes before the settings, untouched.
		var riderMode string
		settle := db.Ride(ctx, tx, func(q dbsqlc.DBTX) error {
			return q.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&riderMode)
		}, func(err error) error { return err })
		check(t, tx)
		if err := settle(); err != nil || riderMode != "auto" {
			t.Errorf("the riding statement: plan_cache_mode %q (%v), want auto", riderMode, err)
		}
	})
}

// The lists whose sort and filters are parameters are planned for their parameters on every
// call. Left to the plan cache, a connection switched to the generic plan after five calls
// under statistics taken while tenants were small, and kept it: a plan that sorts every row
// of the tenant by a dozen CASE expressions, where the call's own plan reads the rows in an
// index's order. The bench's GET /v1/initiatives ran at 0.41x of pgbench on the same SQL on
// such connections, against 0.73–0.80x.
func TestListsArePlannedForEachCall(t *testing.T) {
	const large, small = 1000, 300
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	seed := func(tenant uuid.UUID, n int) {
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status)
					SELECT $1, 'Initiative ' || n, 'active' FROM generate_series(1, $2) n RETURNING id),
				s AS (INSERT INTO stakeholders (tenant_id, initiative_id, name, email, influence, interest)
					SELECT $1, i.id, 'Person', 'person@example.com', 'high', 'high' FROM i)
				INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id)
				SELECT $1, i.id, 'Benefit', 'cost_savings', 1200, 'EUR', 'currency', 'monthly', '2026-01-01', 'owner' FROM i`, tenant, n)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Statistics taken while every tenant had one row of each, then a tenant of many.
	for range small {
		seed(dbtest.NewTenant(t, pool, "enterprise"), 1)
	}
	if _, err := pool.Exec(ctx, "ANALYZE initiatives, stakeholders, benefits"); err != nil {
		t.Fatal(err)
	}
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	seed(tenant, large)

	lists := []struct {
		name string
		call func(q dbsqlc.DBTX) (int, error)
	}{
		{"InitiativeList", func(q dbsqlc.DBTX) (int, error) {
			rows, err := db.Q.InitiativeList(ctx, q, dbsqlc.InitiativeListParams{TenantID: tenant, Sort: "created_at", SortDesc: true, PageLimit: 50})
			return len(rows), err
		}},
		{"BenefitList", func(q dbsqlc.DBTX) (int, error) {
			rows, err := db.Q.BenefitList(ctx, q, dbsqlc.BenefitListParams{TenantID: tenant, Sort: "created_at", SortDesc: true, PageLimit: 50})
			return len(rows), err
		}},
		{"StakeholderList", func(q dbsqlc.DBTX) (int, error) {
			rows, err := db.Q.StakeholderList(ctx, q, dbsqlc.StakeholderListParams{TenantID: tenant, Today: time.Now(), Sort: "name", PageLimit: 50})
			return len(rows), err
		}},
	}
	// plans runs the list on a fresh connection of its own, the way a request does, and
	// returns how the connection planned it.
	plans := func(t *testing.T, call func(q dbsqlc.DBTX) (int, error), name string, settings *db.Settings) (generic, custom int64) {
		t.Helper()
		one := dbtest.OneConnection(t, pool, nil)
		for range 2 * dbtest.PastCustomPlans {
			tx := db.BeginTenantReads(ctx, one, tenant)
			q := dbsqlc.DBTX(tx)
			if settings != nil {
				q = db.WithSettings(tx, *settings)
			}
			if n, err := call(q); err != nil || n != 50 {
				t.Fatalf("%d rows, %v", n, err)
			}
			_ = tx.Rollback(ctx)
		}
		return preparedPlans(t, one, name)
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			if generic, custom := plans(t, l.call, l.name, &db.PlanPerCall); generic != 0 || custom != 2*dbtest.PastCustomPlans {
				t.Errorf("with PlanPerCall: %d generic and %d custom plans for %d calls, want every call planned for its parameters", generic, custom, 2*dbtest.PastCustomPlans)
			}
			// The trap this guards against, on the same statistics.
			if generic, _ := plans(t, l.call, l.name, nil); generic == 0 {
				t.Errorf("without PlanPerCall the connection never took the generic plan: these statistics no longer show the trap")
			}
		})
	}
}

// preparedPlans is how the one connection of pool planned the prepared statement named in
// its sqlc comment: generic and custom plans so far.
func preparedPlans(t *testing.T, one *pgxpool.Pool, name string) (generic, custom int64) {
	t.Helper()
	if err := one.QueryRow(context.Background(), `SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
		FROM pg_prepared_statements WHERE statement LIKE $1`, "-- name: "+name+" %").Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if generic+custom == 0 {
		t.Fatalf("no prepared statement %s on the connection", name)
	}
	return generic, custom
}
