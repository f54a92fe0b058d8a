package bulk_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// Locking the initiatives a page of stakeholders, benefits or costs names reads those initiatives
// and their children's counts, not every initiative of the tenant, whatever the statistics taken
// while tenants were small say. Found by the tenant and the ids, the initiatives were read through
// the tenant and filtered by id whenever the statistics put a tenant at a few rows: each page of a
// large import read every initiative its tenant had.
func TestImportLocksOnlyTheInitiativesItNames(t *testing.T) {
	for _, oneRow := range []bool{false, true} {
		name := "tenants of a few rows, statistics with the large tenant"
		if oneRow {
			name = "tenants of one row, statistics before the large tenant"
		}
		t.Run(name, func(t *testing.T) { importLocksOnlyTheInitiativesItNames(t, oneRow) })
	}
}

func importLocksOnlyTheInitiativesItNames(t *testing.T, oneRow bool) {
	const tenants, initiatives, children, named = 300, 1000, 3, 17
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	small, smallChildren := 3, 2
	if oneRow {
		small, smallChildren = 1, 1
	}
	for range tenants {
		seedInitiatives(t, pool, dbtest.NewTenant(t, pool, "enterprise"), small, smallChildren)
	}
	analyze := func() {
		if _, err := pool.Exec(ctx, "ANALYZE tenants; ANALYZE initiatives; ANALYZE stakeholders; ANALYZE benefits"); err != nil {
			t.Fatal(err)
		}
	}
	if oneRow {
		analyze()
	}
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	ids := seedInitiatives(t, pool, tenant, initiatives, children)
	if !oneRow {
		analyze()
	}

	page := ids[:named]
	tables := []string{"initiatives", "stakeholders", "benefits"}
	// One read per initiative locked; the counts read the named initiatives' children only.
	bounds := []int64{2 * named, 2 * named * children, 2 * named * children}
	const locks = 7 // past the five custom plans, onto the generic one
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		before, blocksBefore := make([]int64, len(tables)), make([]int64, len(tables))
		for k, table := range tables {
			before[k], blocksBefore[k] = dbtest.RowsReadInTx(t, tx, table), dbtest.IndexBlocksInTx(t, tx, table)
		}
		for round := range locks {
			got, err := db.Q.BulkInitiativesLocked(ctx, tx, dbsqlc.BulkInitiativesLockedParams{TenantID: tenant, Ids: page})
			if err != nil {
				return err
			}
			if len(got) != named {
				t.Errorf("round %d: %d initiatives locked, want %d", round, len(got), named)
			}
			for _, in := range got {
				if in.Stakeholders != children || in.Benefits != children {
					t.Errorf("round %d: initiative %s counted %d stakeholders and %d benefits, want %d each", round, in.ID, in.Stakeholders, in.Benefits, children)
				}
			}
		}
		for k, table := range tables {
			read := dbtest.RowsReadInTx(t, tx, table) - before[k]
			t.Logf("%s: %d locks of %d initiatives read %d rows", table, locks, named, read)
			if read > locks*bounds[k] {
				t.Errorf("%s: %d locks of %d initiatives read %d rows of a tenant with %d initiatives", table, locks, named, read, initiatives)
			}
			// A probe of a primary key, or a count of an initiative's few children, reads a block
			// or two a level of its index: a root and a leaf here.
			blocks := dbtest.IndexBlocksInTx(t, tx, table) - blocksBefore[k]
			t.Logf("%s: %d locks of %d initiatives read %d index blocks", table, locks, named, blocks)
			if blocks > int64(locks*4*named) {
				t.Errorf("%s: %d locks of %d initiatives read %d index blocks of a tenant with %d initiatives", table, locks, named, blocks, initiatives)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// seedInitiatives gives the tenant n initiatives, each with the given number of stakeholders and
// benefits, and returns the initiatives' ids in id order.
func seedInitiatives(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, n, children int) (ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status)
				SELECT $1, 'Initiative ' || n, 'active' FROM generate_series(1, $2) n RETURNING id),
			s AS (INSERT INTO stakeholders (tenant_id, initiative_id, name, email, influence, interest)
				SELECT $1, i.id, 'Person ' || c, 'person' || c || '@example.com', 'high', 'high' FROM i, generate_series(1, $3) c),
			b AS (INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id)
				SELECT $1, i.id, 'Benefit ' || c, 'cost_savings', 1200, 'EUR', 'currency', 'monthly', '2026-01-01', 'owner' FROM i, generate_series(1, $3) c)
			SELECT id FROM i ORDER BY id`, tenant, n, children)
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
