package stakeholder_test

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

// Locking the stakeholders a page of engagements names reads those stakeholders and their
// initiatives, not every stakeholder of the tenant, whatever the statistics taken while tenants
// were small say. Found by the tenant and the ids, the stakeholders were read through the tenant
// and filtered by id whenever the statistics put a tenant at a few rows: each page of a large
// import read every stakeholder its tenant had.
func TestLoggingLocksOnlyTheStakeholdersItNames(t *testing.T) {
	const initiatives, perInitiative, named = 20, 100, 17
	seed := func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
		return seedStakeholders(t, pool, tenant, cmp.Or(small, initiatives), cmp.Or(small, perInitiative))
	}
	dbtest.EachTenantStatistics(t, []string{"tenants", "initiatives", "stakeholders"}, seed, func(t *testing.T, large dbtest.LargeTenant) {
		ctx, tenant, page, locks := context.Background(), large.ID, large.IDs[:named], dbtest.PastCustomPlans
		if err := db.InTenant(ctx, large.Pool, tenant, func(tx pgx.Tx) error {
			reads := dbtest.StartReads(t, tx, "stakeholders", "initiatives")
			for round := range locks {
				got, err := db.Q.BulkEngagementStakeholdersLocked(ctx, tx, dbsqlc.BulkEngagementStakeholdersLockedParams{TenantID: tenant, Ids: page})
				if err != nil {
					return err
				}
				if len(got) != named {
					t.Errorf("round %d: %d stakeholders locked, want %d", round, len(got), named)
				}
			}
			// A row and its initiative's per stakeholder locked; a probe of a primary key reads a
			// root and a leaf block here.
			each := int64(locks * named)
			reads.Check(fmt.Sprintf("%d locks of %d stakeholders (of %d in %d initiatives)", locks, named, initiatives*perInitiative, initiatives),
				[]int64{2 * each, 2 * each}, []int64{4 * each, 4 * each})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
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
