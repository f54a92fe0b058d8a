package businesscase_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/businesscase"
)

// TestApprovalsRecordRounds: the workflow's record of a round against
// PostgreSQL: opened only while pending, reminders and one escalation while
// open, nothing after the decision; another tenant's case is "gone".
func TestApprovalsRecordRounds(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	caseID := uuid.New()
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "Rounds"})
		if err != nil {
			return err
		}
		_, err = db.Q.BusinessCaseCreate(ctx, tx, dbsqlc.BusinessCaseCreateParams{TenantID: tenant, ID: caseID, InitiativeID: in.ID, LineageID: caseID, Version: 1,
			Name: "Case", Template: "cfo_view", Sections: []string{"executive_summary"}, Content: []byte("{}"), CreatedBy: "t"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	a := businesscase.Approvals{Pool: pool}
	round := businesscase.Round{TenantID: tenant, CaseID: caseID, WorkflowID: "business-case-approval/x", RunID: "run-1"}
	latest := func() (dbsqlc.BusinessCaseApprovalRound, error) {
		var r dbsqlc.BusinessCaseApprovalRound
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			var err error
			r, err = db.Q.BusinessCaseRoundLatest(ctx, tx, dbsqlc.BusinessCaseRoundLatestParams{TenantID: tenant, BusinessCaseID: caseID})
			return err
		})
		return r, err
	}

	// A draft: no round is opened.
	if st, err := a.Open(ctx, round); err != nil || st != businesscase.Draft {
		t.Fatalf("open a draft: %s %v", st, err)
	}
	if _, err := latest(); !db.IsNotFound(err) {
		t.Fatalf("a round for a draft: %v", err)
	}
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := db.Q.BusinessCaseSubmit(ctx, tx, dbsqlc.BusinessCaseSubmitParams{TenantID: tenant, ID: caseID, SubmittedBy: new("w")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Pending: opened once (a replayed open changes nothing), two reminders, one escalation.
	for range 2 {
		if st, err := a.Open(ctx, round); err != nil || st != businesscase.PendingApproval {
			t.Fatalf("open: %s %v", st, err)
		}
	}
	for _, want := range []bool{true, true} {
		if ok, err := a.Remind(ctx, round); err != nil || ok != want {
			t.Fatalf("remind: %v %v", ok, err)
		}
	}
	for _, want := range []bool{true, false} {
		if ok, err := a.Escalate(ctx, round); err != nil || ok != want {
			t.Fatalf("escalate: %v %v, want %v", ok, err, want)
		}
	}
	if err := a.Close(ctx, round, businesscase.Approved); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Remind(ctx, round); err != nil || ok {
		t.Fatalf("a reminder after the decision: %v %v", ok, err)
	}
	r, err := latest()
	if err != nil || r.RemindersSent != 2 || r.EscalatedAt == nil || r.Decision == nil || *r.Decision != "approved" || r.WorkflowID != round.WorkflowID {
		t.Fatalf("round %+v %v", r, err)
	}
	// Another tenant sees no such case.
	other := dbtest.NewTenant(t, pool, "enterprise")
	if st, err := a.Status(ctx, businesscase.Round{TenantID: other, CaseID: caseID}); err != nil || st != "" {
		t.Fatalf("another tenant's view: %q %v", st, err)
	}
}
