package stakeholder_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/stakeholder"
	"github.com/valuecase/valuecase/internal/validation"
)

// A batch writes the stakeholders and engagements that pass and returns each
// refusal with its item; an engagement named by id is unchanged when it says
// the same and refused when it does not.
func TestStakeholderOperationsPerItem(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	actor := stakeholder.Actor{TenantID: tenant, Subject: "pm@example.com"}
	var initiativeID uuid.UUID
	inTenant := func(f func(tx pgx.Tx) error) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, f); err != nil {
			t.Fatal(err)
		}
	}
	inTenant(func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Rollout') RETURNING id", tenant).Scan(&initiativeID)
	})
	body := func(email string) stakeholder.Body {
		return stakeholder.Body{Name: new("Dana"), Email: new(email), Influence: new("high"), Interest: new("high"), Has: map[string]bool{}}
	}
	var created []stakeholder.Outcome
	inTenant(func(tx pgx.Tx) error {
		var err error
		created, err = stakeholder.Create(ctx, tx, actor, []stakeholder.New{
			{InitiativeID: initiativeID, Body: body("dana@example.com")},
			{InitiativeID: initiativeID, Body: body("not an address")},
			{InitiativeID: uuid.New(), Body: body("eve@example.com")},
		})
		return err
	})
	if created[0].Err != nil || created[0].Stakeholder.Email != "dana@example.com" || created[0].Stakeholder.AtRiskFrom == nil {
		t.Fatalf("a powerful stakeholder never engaged is at risk from creation: %+v", created[0])
	}
	if _, ok := errors.AsType[validation.Errors](created[1].Err); !ok {
		t.Errorf("a bad address: %v", created[1].Err)
	}
	if !errors.Is(created[2].Err, stakeholder.ErrInitiativeNotFound) {
		t.Errorf("another tenant's or no initiative: %v", created[2].Err)
	}
	dana := created[0].Stakeholder

	moved := body("dana@example.com")
	moved.InitiativeID = new(uuid.NewString())
	inTenant(func(tx pgx.Tx) error {
		out, err := stakeholder.Replace(ctx, tx, actor, []stakeholder.Replacement{{Current: dana, InitiativeStatus: initiative.Active, Body: moved, Full: true}})
		if err != nil {
			return err
		}
		if _, ok := errors.AsType[validation.Errors](out[0].Err); !ok {
			t.Errorf("a stakeholder moved to another initiative: %v", out[0].Err)
		}
		return nil
	})

	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	meeting := stakeholder.EngagementBody{EngagementInput: stakeholder.EngagementInput{Type: stakeholder.Meeting, Sentiment: stakeholder.Positive, Date: day}, Notes: "kick-off"}
	var logged []stakeholder.EngagementOutcome
	inTenant(func(tx pgx.Tx) error {
		var err error
		logged, err = stakeholder.LogEngagements(ctx, tx, actor, time.Now(), []stakeholder.EngagementEntry{{StakeholderID: dana.ID, Engagement: meeting}})
		return err
	})
	if logged[0].Err != nil || logged[0].Logged.Stakeholder.EngagementCount != 1 || logged[0].Logged.Stakeholder.AtRisk {
		t.Fatalf("logged: %+v", logged[0])
	}
	changed := meeting
	changed.Notes = "kick-off, rewritten"
	inTenant(func(tx pgx.Tx) error {
		id := logged[0].ID
		out, err := stakeholder.LogEngagements(ctx, tx, actor, time.Now(), []stakeholder.EngagementEntry{
			{StakeholderID: dana.ID, Engagement: meeting, Logged: &id},
			{StakeholderID: dana.ID, Engagement: changed, Logged: &id},
			{StakeholderID: uuid.New(), Engagement: meeting},
		})
		if err != nil {
			return err
		}
		if !out[0].Unchanged || out[0].Err != nil {
			t.Errorf("the same engagement again: %+v", out[0])
		}
		if !errors.Is(out[1].Err, stakeholder.ErrEngagementChanged) {
			t.Errorf("a logged engagement rewritten: %v", out[1].Err)
		}
		if !errors.Is(out[2].Err, stakeholder.ErrStakeholderNotFound) {
			t.Errorf("no such stakeholder: %v", out[2].Err)
		}
		return nil
	})
}
