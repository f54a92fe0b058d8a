package benefit_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/validation"
)

// FileActuals takes a batch with good and bad inputs: each bad one fails with
// its typed error and writes nothing, the good ones are stored, and their
// events go in one outbox batch row; filing the batch again changes nothing.
func TestFileActualsBatch(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	actor := benefit.Actor{TenantID: tenant, Subject: "filer-1"}
	now := time.Now()
	start := now.AddDate(-2, 0, 0)
	var open, archived uuid.UUID
	inTenant := func(fn func(tx pgx.Tx) error) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, fn); err != nil {
			t.Fatal(err)
		}
	}
	create := func(tx pgx.Tx, initiative, name string) uuid.UUID {
		t.Helper()
		outcomes, err := benefit.SaveBenefits(ctx, tx, actor, []benefit.Change{{InitiativeID: uuid.MustParse(initiative), Replace: true,
			Fields: benefit.Fields{InitiativeID: &initiative, Name: &name, Category: new("cost_savings"), ExpectedValue: new(12000.0),
				Unit: new("currency"), Currency: new("EUR"), Frequency: new("monthly"), Start: &start, Has: map[string]bool{"currency": true}}}},
			benefit.SaveOptions{})
		if err != nil || outcomes[0].Err != nil {
			t.Fatal(err, outcomes)
		}
		saved := outcomes[0].Saved
		if saved.Benefit.OwnerID != "filer-1" {
			t.Errorf("owner %q, want the creator", saved.Benefit.OwnerID)
		}
		return saved.Benefit.ID
	}
	inTenant(func(tx pgx.Tx) error {
		var a, b uuid.UUID
		if err := tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Open') RETURNING id", tenant).Scan(&a); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Closed') RETURNING id", tenant).Scan(&b); err != nil {
			return err
		}
		open, archived = create(tx, a.String(), "Savings"), create(tx, b.String(), "Frozen")
		_, err := tx.Exec(ctx, "UPDATE initiatives SET status = 'archived' WHERE id = $1", b)
		return err
	})
	month := finance.MonthOfTime(now)
	last, earlier, next := (month - 1).String(), (month - 2).String(), (month + 1).String()
	inputs := []benefit.ActualInput{
		{BenefitID: open, Period: last, Value: decimal.NewFromInt(900), Notes: new("")},
		{BenefitID: uuid.New(), Period: last, Value: decimal.NewFromInt(1)},
		{BenefitID: open, Period: next, Value: decimal.NewFromInt(1)},
		{BenefitID: open, Period: last, Value: decimal.NewFromInt(2)},
		{BenefitID: archived, Period: last, Value: decimal.NewFromInt(3)},
		{BenefitID: open, Period: earlier, Value: decimal.RequireFromString("0.25"), EvidenceURL: new("https://example.com/close")},
	}
	var outcomes []benefit.Outcome
	inTenant(func(tx pgx.Tx) error {
		var err error
		outcomes, err = benefit.FileActuals(ctx, tx, actor, inputs, benefit.FileOptions{Now: now})
		return err
	})
	_, invalid := errors.AsType[validation.Errors](outcomes[2].Err)
	dup, isDup := errors.AsType[*benefit.DuplicateError](outcomes[3].Err)
	if outcomes[0].Err != nil || outcomes[0].Filing != benefit.FirstValue || outcomes[5].Err != nil || outcomes[5].Filing != benefit.FirstValue ||
		!errors.Is(outcomes[1].Err, benefit.ErrNotFound) || !invalid || !isDup || dup.First != 0 ||
		!errors.Is(outcomes[4].Err, benefit.ErrInitiativeArchived) {
		t.Fatalf("outcomes: %+v", outcomes)
	}
	var actuals int
	var batch []byte
	inTenant(func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM benefit_actuals").Scan(&actuals); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT data FROM outbox_events WHERE type = 'outbox.batch'").Scan(&batch)
	})
	var head struct {
		Type  string
		Count int
	}
	if err := json.Unmarshal(batch, &head); err != nil || actuals != 2 || head.Type != "benefit.actual_recorded" || head.Count != 2 {
		t.Errorf("%d actuals, batch %s (%v); want 2 and one batch of 2 events", actuals, batch, err)
	}
	// The same batch again: the good inputs are unchanged, nothing is written.
	inTenant(func(tx pgx.Tx) error {
		var err error
		outcomes, err = benefit.FileActuals(ctx, tx, actor, inputs, benefit.FileOptions{Now: now})
		return err
	})
	var events int
	inTenant(func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT count(*) FROM outbox_events").Scan(&events)
	})
	if outcomes[0].Filing != benefit.SameValue || outcomes[5].Filing != benefit.SameValue || outcomes[0].Actual.ID == uuid.Nil || events != 1 {
		t.Errorf("again: %+v, %d outbox rows", outcomes, events)
	}
}
