package cost_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/cost"
	"github.com/valuecase/valuecase/internal/validation"
)

// SaveCosts takes a batch with good and bad changes: each bad one fails with
// its typed error, the good ones are stored; an equal replacement is
// unchanged unless Touch asks for the write.
func TestSaveCostsBatch(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	actor := cost.Actor{TenantID: tenant}
	var open, archived uuid.UUID
	run := func(fn func(tx pgx.Tx) error) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, fn); err != nil {
			t.Fatal(err)
		}
	}
	run(func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Open') RETURNING id", tenant).Scan(&open); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name, status) VALUES ($1, 'Closed', 'archived') RETURNING id", tenant).Scan(&archived)
	})
	fields := func(name string, amount float64) cost.Fields {
		return cost.Fields{Name: &name, Category: new("capex"), Amount: &amount, Currency: new("EUR"), Period: new("2026-01"), Has: map[string]bool{}}
	}
	save := func(changes []cost.Change, opts cost.SaveOptions) (out []cost.Outcome) {
		t.Helper()
		run(func(tx pgx.Tx) error {
			var err error
			out, err = cost.SaveCosts(ctx, tx, actor, changes, opts)
			return err
		})
		return out
	}
	first := save([]cost.Change{
		{InitiativeID: open, Fields: fields("Licences", 1000), Replace: true},
		{InitiativeID: archived, Fields: fields("Frozen", 1), Replace: true},
		{InitiativeID: uuid.New(), Fields: fields("Nowhere", 1), Replace: true},
		{InitiativeID: open, Fields: fields("Free", 0), Replace: true},
		{InitiativeID: open, ID: new(uuid.New()), Fields: fields("Unknown", 1), Replace: true},
	}, cost.SaveOptions{})
	_, invalid := errors.AsType[validation.Errors](first[3].Err)
	if first[0].Err != nil || first[0].Result != cost.Created || !errors.Is(first[1].Err, cost.ErrInitiativeArchived) ||
		!errors.Is(first[2].Err, cost.ErrInitiativeNotFound) || !invalid || !errors.Is(first[4].Err, cost.ErrNotFound) {
		t.Fatalf("outcomes: %+v", first)
	}
	id := first[0].Cost.ID
	again := save([]cost.Change{
		{InitiativeID: open, ID: &id, Fields: fields("Licences", 1000), Replace: true},
		{InitiativeID: open, ID: &id, Fields: fields("Licences", 1200), Replace: true},
	}, cost.SaveOptions{})
	if dup, ok := errors.AsType[*cost.DuplicateError](again[1].Err); again[0].Result != cost.Unchanged || !ok || dup.First != 0 {
		t.Errorf("again: %+v", again)
	}
	touched := save([]cost.Change{{InitiativeID: open, ID: &id, Fields: fields("Licences", 1000), Replace: true}}, cost.SaveOptions{Touch: true})
	if touched[0].Result != cost.Updated || !touched[0].Cost.UpdatedAt.After(first[0].Cost.UpdatedAt) {
		t.Errorf("touched: %+v", touched)
	}
	var stored int
	run(func(tx pgx.Tx) error { return tx.QueryRow(ctx, "SELECT count(*) FROM initiative_costs").Scan(&stored) })
	if stored != 1 {
		t.Errorf("%d costs stored, want 1", stored)
	}
}

// Locking the stored costs a page of an upsert names reads those costs, not every cost of the
// tenant, whatever the statistics taken while tenants were small say. Found by the tenant and the
// ids, the costs were read through the tenant and filtered by id whenever the statistics put a
// tenant at a few rows: each page of a large import read every cost its tenant had.
func TestSavingLocksOnlyTheCostsItNames(t *testing.T) {
	const initiatives, perInitiative, named = 20, 100, 17
	dbtest.EachTenantStatistics(t, []string{"tenants", "initiatives", "initiative_costs"}, costSeed(initiatives, perInitiative), func(t *testing.T, large dbtest.LargeTenant) {
		ctx, tenant, page, locks := context.Background(), large.ID, large.IDs[:named], dbtest.PastCustomPlans
		if err := db.InTenant(ctx, large.Pool, tenant, func(tx pgx.Tx) error {
			reads := dbtest.StartReads(t, tx, "initiative_costs")
			for round := range locks {
				got, err := db.Q.BulkCostsExisting(ctx, tx, dbsqlc.BulkCostsExistingParams{TenantID: tenant, Ids: page})
				if err != nil {
					return err
				}
				if len(got) != named {
					t.Errorf("round %d: %d costs locked, want %d", round, len(got), named)
				}
			}
			// One row per cost locked; a probe of a primary key reads a root and a leaf block here.
			each := int64(locks * named)
			reads.Check(fmt.Sprintf("%d locks of %d costs (of %d)", locks, named, initiatives*perInitiative), []int64{2 * each}, []int64{4 * each})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// Counting the costs of the initiatives a page names (their limit) reads those initiatives' costs,
// not every cost of the tenant for each, even where the statistics, taken before the tenant came,
// put a tenant at one row: counted by equality, the primary key looked as cheap as the
// initiative's index, and each count read the tenant's costs.
func TestSavingCountsOnlyTheCostsOfItsInitiatives(t *testing.T) {
	const initiatives, perInitiative, named = 200, 10, 3
	dbtest.EachTenantStatistics(t, []string{"tenants", "initiatives", "initiative_costs"}, costSeed(initiatives, perInitiative), func(t *testing.T, large dbtest.LargeTenant) {
		ctx, tenant, counts := context.Background(), large.ID, dbtest.PastCustomPlans
		if err := db.InTenant(ctx, large.Pool, tenant, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, "SELECT id FROM initiatives ORDER BY id LIMIT $1", named)
			if err != nil {
				return err
			}
			page, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			if err != nil {
				return err
			}
			reads := dbtest.StartReads(t, tx, "initiative_costs")
			for round := range counts {
				got, err := db.Q.BulkCostCounts(ctx, tx, dbsqlc.BulkCostCountsParams{TenantID: tenant, InitiativeIds: page})
				if err != nil {
					return err
				}
				if len(got) != named {
					t.Errorf("round %d: %d initiatives counted, want %d", round, len(got), named)
				}
				for _, c := range got {
					if c.N != perInitiative {
						t.Errorf("round %d: initiative %s has %d costs, want %d", round, c.InitiativeID, c.N, perInitiative)
					}
				}
			}
			// Each count reads its initiative's costs: a range of its index, a root and a leaf block.
			each := int64(counts * named)
			reads.Check(fmt.Sprintf("%d counts of %d initiatives (of %d costs)", counts, named, initiatives*perInitiative),
				[]int64{2 * each * perInitiative}, []int64{4 * each})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// costSeed seeds EachTenantStatistics' tenants with costs: a small tenant small initiatives of
// small costs each, the large one initiatives of perInitiative.
func costSeed(initiatives, perInitiative int) func(*testing.T, *pgxpool.Pool, uuid.UUID, int) []uuid.UUID {
	return func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
		return seedCosts(t, pool, tenant, cmp.Or(small, initiatives), cmp.Or(small, perInitiative))
	}
}

// seedCosts gives the tenant n initiatives of the given number of costs each and returns the
// costs' ids in id order.
func seedCosts(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, n, costs int) (ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status)
				SELECT $1, 'Initiative ' || n, 'active' FROM generate_series(1, $2) n RETURNING id),
			c AS (INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence)
				SELECT $1, i.id, 'Cost ' || c, 'capex', 1000, 'EUR', '2026-01-01', 'once' FROM i, generate_series(1, $3) c RETURNING id)
			SELECT id FROM c ORDER BY id`, tenant, n, costs)
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
