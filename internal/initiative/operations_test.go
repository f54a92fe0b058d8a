package initiative_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/validation"
)

// A batch writes the items that pass and returns each refusal with its item:
// what the import's rows and a single route's batch of one both rely on.
func TestOperationsWriteTheItemsThatPassAndRefuseTheOthers(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	owner := initiative.Actor{TenantID: tenant, Subject: "owner@example.com", Roles: []string{rbac.RoleManager}}
	other := initiative.Actor{TenantID: tenant, Subject: "other@example.com", Roles: []string{rbac.RoleManager}}
	admin := initiative.Actor{TenantID: tenant, Subject: "admin@example.com", Roles: []string{rbac.RoleAdmin}}
	fields := func(name string, status *string) initiative.Fields {
		return initiative.Fields{Name: &name, Status: status, Has: map[string]bool{}}
	}
	var created []initiative.Outcome
	inTenant := func(f func(tx pgx.Tx) error) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, f); err != nil {
			t.Fatal(err)
		}
	}
	inTenant(func(tx pgx.Tx) error {
		var err error
		created, err = initiative.Create(ctx, tx, owner, []initiative.Fields{fields("Alpha", nil), fields("Beta", new("active")), fields("Gamma", nil)})
		return err
	})
	if _, ok := errors.AsType[validation.Errors](created[1].Err); !ok {
		t.Fatalf("a new initiative sent as active: %v", created[1].Err)
	}
	alpha, gamma := created[0].Initiative, created[2].Initiative
	if created[0].Err != nil || created[2].Err != nil || alpha.Name != "Alpha" || gamma.Name != "Gamma" || *alpha.OwnerID != owner.Subject {
		t.Fatalf("created: %+v", created)
	}

	// Another manager may not move Alpha (owner-only); the owner may move Gamma; both in one batch.
	var moved []initiative.Outcome
	inTenant(func(tx pgx.Tx) error {
		var err error
		moved, err = initiative.ChangeStatus(ctx, tx, other, []initiative.StatusChange{{Current: alpha, To: initiative.InReview}})
		if err != nil {
			return err
		}
		out, err := initiative.ChangeStatus(ctx, tx, owner, []initiative.StatusChange{{Current: gamma, To: initiative.InReview, Reason: "ready"}})
		moved = append(moved, out...)
		return err
	})
	if te, ok := errors.AsType[*initiative.TransitionError](moved[0].Err); !ok || !te.Forbidden {
		t.Fatalf("another manager moved the owner's initiative: %v", moved[0].Err)
	}
	if moved[1].Err != nil || moved[1].Initiative.Status != string(initiative.InReview) {
		t.Fatalf("the owner's move: %+v", moved[1])
	}

	// Deleting archives the initiative with its projects; a transition that does not exist names the allowed ones.
	inTenant(func(tx pgx.Tx) error {
		if _, err := initiative.AddProjects(ctx, tx, alpha, []initiative.ProjectFields{{Name: "One"}, {Name: "Two"}}); err != nil {
			return err
		}
		out, err := initiative.ChangeStatus(ctx, tx, admin, []initiative.StatusChange{
			{Current: alpha, To: initiative.Archived, Reason: "deleted", Deleting: true},
			{Current: moved[1].Initiative, To: initiative.Completed},
		})
		if err != nil {
			return err
		}
		if out[0].Err != nil || out[0].Initiative.Status != string(initiative.Archived) {
			t.Errorf("deleting: %+v", out[0])
		}
		if te, ok := errors.AsType[*initiative.TransitionError](out[1].Err); !ok || te.Forbidden || te.Explain() != "status cannot change from in_review to completed; allowed from in_review: [approved rejected]" {
			t.Errorf("in_review to completed: %v", out[1].Err)
		}
		return nil
	})
	var history, archivedProjects int
	inTenant(func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM initiative_status_history WHERE initiative_id = $1", alpha.ID).Scan(&history); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT count(*) FROM projects WHERE initiative_id = $1 AND status = 'archived'", alpha.ID).Scan(&archivedProjects)
	})
	if history != 2 || archivedProjects != 2 {
		t.Errorf("Alpha: %d history entries (want created and archived), %d archived projects (want 2)", history, archivedProjects)
	}

	// An archived initiative is read-only; the owner rule holds in a replace.
	inTenant(func(tx pgx.Tx) error {
		archived, err := db.Q.InitiativeGetForUpdate(ctx, tx, dbsqlc.InitiativeGetForUpdateParams{TenantID: tenant, ID: alpha.ID})
		if err != nil {
			return err
		}
		out, err := initiative.Replace(ctx, tx, other, []initiative.Replacement{
			{Current: archived, Fields: fields("Alpha 2", nil), Replace: true},
			{Current: moved[1].Initiative, Fields: initiative.Fields{Name: new("Gamma"), OwnerID: new(other.Subject), Has: map[string]bool{"owner_id": true}}},
		})
		if err != nil {
			return err
		}
		if !errors.Is(out[0].Err, initiative.ErrArchived) {
			t.Errorf("an archived initiative replaced: %v", out[0].Err)
		}
		if _, ok := errors.AsType[*initiative.OwnerChangeError](out[1].Err); !ok {
			t.Errorf("another manager took the owner's initiative: %v", out[1].Err)
		}
		return nil
	})
}
