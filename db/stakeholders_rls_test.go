package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// The stakeholder tables (migration 00005) keep each tenant's stakeholders and
// engagements to that tenant: another can neither see, change nor add rows
// (the catalog test proves their policies).
func TestStakeholderTablesAreIsolated(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenantA := dbtest.NewTenant(t, pool, "starter")
	tenantB := dbtest.NewTenant(t, pool, "starter")

	tables := []string{"stakeholders", "stakeholder_engagements"}
	var stakeholder dbsqlc.Stakeholder
	err := db.InTenant(ctx, pool, tenantA, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenantA, Name: "A's initiative"})
		if err != nil {
			return err
		}
		stakeholder, err = db.Q.StakeholderCreate(ctx, tx, dbsqlc.StakeholderCreateParams{TenantID: tenantA, InitiativeID: in.ID, Name: "Ana",
			Email: "ana@example.com", Influence: "high", Interest: "high"})
		if err != nil {
			return err
		}
		_, err = db.Q.EngagementCreate(ctx, tx, dbsqlc.EngagementCreateParams{TenantID: tenantA, StakeholderID: stakeholder.ID, Type: "call",
			Date: time.Now().UTC().Truncate(24 * time.Hour), Sentiment: "positive", RecordedBy: "a"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.InTenant(ctx, pool, tenantB, func(tx pgx.Tx) error {
		for _, table := range tables {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("tenant B sees %d of A's rows in %s", n, table)
			}
			tag, err := tx.Exec(ctx, "UPDATE "+table+" SET tenant_id = tenant_id")
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 0 {
				t.Errorf("tenant B updated %d of A's rows in %s", tag.RowsAffected(), table)
			}
			if tag, err = tx.Exec(ctx, "DELETE FROM "+table); err != nil {
				return err
			}
			if tag.RowsAffected() != 0 {
				t.Errorf("tenant B deleted %d of A's rows in %s", tag.RowsAffected(), table)
			}
		}
		if _, err := db.Q.StakeholderGet(ctx, tx, dbsqlc.StakeholderGetParams{TenantID: tenantA, ID: stakeholder.ID}); !db.IsNotFound(err) {
			t.Errorf("A's stakeholder found from B: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Writing a row for A while acting as B is refused by the policy.
	err = db.InTenant(ctx, pool, tenantB, func(tx pgx.Tx) error {
		_, err := db.Q.EngagementCreate(ctx, tx, dbsqlc.EngagementCreateParams{TenantID: tenantA, StakeholderID: stakeholder.ID, Type: "call",
			Date: time.Now().UTC().Truncate(24 * time.Hour), Sentiment: "negative", RecordedBy: "b"})
		return err
	})
	if err == nil {
		t.Error("tenant B added an engagement to A's stakeholder")
	}
	err = db.InTenant(ctx, pool, tenantA, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM stakeholder_engagements").Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("A has %d engagements, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
