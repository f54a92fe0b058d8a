package db_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// These prove the isolation holds in the database itself, whatever the query forgets.
func TestRowLevelSecurity(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenantA := dbtest.NewTenant(t, pool, "starter")
	tenantB := dbtest.NewTenant(t, pool, "starter")

	var initiativeA uuid.UUID
	err := db.InTenant(ctx, pool, tenantA, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenantA, Name: "A's secret"})
		initiativeA = in.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("role is neither superuser nor bypassrls", func(t *testing.T) {
		var super, bypass bool
		if err := pool.QueryRow(ctx, "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").Scan(&super, &bypass); err != nil {
			t.Fatal(err)
		}
		if super || bypass {
			t.Fatalf("test role must be like production: superuser=%v bypassrls=%v", super, bypass)
		}
	})

	t.Run("no tenant set sees no rows", func(t *testing.T) {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM initiatives").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("without a tenant a query saw %d rows", n)
		}
	})

	t.Run("tenant B cannot read A's rows even without a WHERE clause", func(t *testing.T) {
		err := db.InTenant(ctx, pool, tenantB, func(tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM initiatives").Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("tenant B saw %d of tenant A's rows", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("tenant B cannot update or delete A's rows", func(t *testing.T) {
		err := db.InTenant(ctx, pool, tenantB, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, "UPDATE initiatives SET name = 'pwned' WHERE id = $1", initiativeA)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 0 {
				t.Errorf("tenant B updated %d of A's rows", tag.RowsAffected())
			}
			tag, err = tx.Exec(ctx, "DELETE FROM initiatives WHERE id = $1", initiativeA)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 0 {
				t.Errorf("tenant B deleted %d of A's rows", tag.RowsAffected())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTenant(ctx, pool, tenantA, func(tx pgx.Tx) error {
			in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: tenantA, ID: initiativeA})
			if err == nil && in.Name != "A's secret" {
				t.Errorf("A's initiative changed to %q", in.Name)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("tenant B cannot write rows into A", func(t *testing.T) {
		err := db.InTenant(ctx, pool, tenantB, func(tx pgx.Tx) error {
			_, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenantA, Name: "planted"})
			return err
		})
		if err == nil {
			t.Fatal("inserting a row for another tenant succeeded")
		}
	})

	t.Run("system scope sees outbox events only", func(t *testing.T) {
		err := db.InTenant(ctx, pool, tenantA, func(tx pgx.Tx) error {
			_, err := db.Q.OutboxInsert(ctx, tx, dbsqlc.OutboxInsertParams{TenantID: tenantA, Type: "initiative.created", Data: []byte(`{}`)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.InSystem(ctx, pool, func(tx pgx.Tx) error {
			var events, initiatives int
			if err := tx.QueryRow(ctx, "SELECT (SELECT count(*) FROM outbox_events), (SELECT count(*) FROM initiatives)").Scan(&events, &initiatives); err != nil {
				return err
			}
			if events != 1 || initiatives != 0 {
				t.Errorf("system scope saw %d events (want 1) and %d initiatives (want 0)", events, initiatives)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
