package bulk_test

import (
	"cmp"
	"context"
	"fmt"
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
	const initiatives, children, named = 1000, 3, 17
	seed := func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
		return seedInitiatives(t, pool, tenant, cmp.Or(small, initiatives), cmp.Or(small, children))
	}
	dbtest.EachTenantStatistics(t, []string{"tenants", "initiatives", "stakeholders", "benefits"}, seed, func(t *testing.T, large dbtest.LargeTenant) {
		ctx, tenant, page, locks := context.Background(), large.ID, large.IDs[:named], dbtest.PastCustomPlans
		if err := db.InTenant(ctx, large.Pool, tenant, func(tx pgx.Tx) error {
			reads := dbtest.StartReads(t, tx, "initiatives", "stakeholders", "benefits")
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
			// One row per initiative locked and its children counted; a probe of a primary key, or
			// a count of an initiative's few children, reads a root and a leaf block here.
			each := int64(locks * named)
			reads.Check(fmt.Sprintf("%d locks of %d initiatives (of %d)", locks, named, initiatives),
				[]int64{2 * each, 2 * each * children, 2 * each * children}, []int64{4 * each, 4 * each, 4 * each})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
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
