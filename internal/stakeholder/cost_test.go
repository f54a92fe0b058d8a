package stakeholder_test

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

// Locking the stakeholders a page of engagements names reads those stakeholders and their
// initiatives, not every stakeholder of the tenant, whatever the statistics taken while tenants
// were small say. Found by the tenant and the ids, the stakeholders were read through the tenant
// and filtered by id whenever the statistics put a tenant at a few rows: each page of a large
// import read every stakeholder its tenant had.
func TestLoggingLocksOnlyTheStakeholdersItNames(t *testing.T) {
	for _, oneRow := range []bool{false, true} {
		name := "tenants of a few rows, statistics with the large tenant"
		if oneRow {
			name = "tenants of one row, statistics before the large tenant"
		}
		t.Run(name, func(t *testing.T) { loggingLocksOnlyTheStakeholdersItNames(t, oneRow) })
	}
}

func loggingLocksOnlyTheStakeholdersItNames(t *testing.T, oneRow bool) {
	const tenants, initiatives, perInitiative, named = 300, 20, 100, 17
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	small, children := 3, 2
	if oneRow {
		small, children = 1, 1
	}
	for range tenants {
		seedStakeholders(t, pool, dbtest.NewTenant(t, pool, "enterprise"), small, children)
	}
	analyze := func() {
		if _, err := pool.Exec(ctx, "ANALYZE tenants; ANALYZE initiatives; ANALYZE stakeholders"); err != nil {
			t.Fatal(err)
		}
	}
	if oneRow {
		analyze()
	}
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	ids := seedStakeholders(t, pool, tenant, initiatives, perInitiative)
	if !oneRow {
		analyze()
	}

	page := ids[:named]
	// One read per stakeholder locked, and at most one per stakeholder for its initiative.
	tables := []string{"stakeholders", "initiatives"}
	const locks = 7 // past the five custom plans, onto the generic one
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		before, blocksBefore := make([]int64, len(tables)), make([]int64, len(tables))
		for k, table := range tables {
			before[k], blocksBefore[k] = dbtest.RowsReadInTx(t, tx, table), dbtest.IndexBlocksInTx(t, tx, table)
		}
		for round := range locks {
			got, err := db.Q.BulkEngagementStakeholdersLocked(ctx, tx, dbsqlc.BulkEngagementStakeholdersLockedParams{TenantID: tenant, Ids: page})
			if err != nil {
				return err
			}
			if len(got) != named {
				t.Errorf("round %d: %d stakeholders locked, want %d", round, len(got), named)
			}
		}
		for k, table := range tables {
			read := dbtest.RowsReadInTx(t, tx, table) - before[k]
			t.Logf("%s: %d locks of %d stakeholders read %d rows", table, locks, named, read)
			if read > int64(locks*2*named) {
				t.Errorf("%s: %d locks of %d stakeholders read %d rows of a tenant with %d stakeholders in %d initiatives",
					table, locks, named, read, initiatives*perInitiative, initiatives)
			}
			// A probe of a primary key reads a block or two a level: a root and a leaf here.
			blocks := dbtest.IndexBlocksInTx(t, tx, table) - blocksBefore[k]
			t.Logf("%s: %d locks of %d stakeholders read %d index blocks", table, locks, named, blocks)
			if blocks > int64(locks*4*named) {
				t.Errorf("%s: %d locks of %d stakeholders read %d index blocks", table, locks, named, blocks)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// seedStakeholders gives the tenant n initiatives of the given number of stakeholders each and
// returns the stakeholders' ids in id order.
func seedStakeholders(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, n, stakeholders int) (ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status)
				SELECT $1, 'Initiative ' || n, 'active' FROM generate_series(1, $2) n RETURNING id),
			s AS (INSERT INTO stakeholders (tenant_id, initiative_id, name, email, influence, interest)
				SELECT $1, i.id, 'Person ' || c, 'person' || c || '@example.com', 'high', 'high' FROM i, generate_series(1, $3) c RETURNING id)
			SELECT id FROM s ORDER BY id`, tenant, n, stakeholders)
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
