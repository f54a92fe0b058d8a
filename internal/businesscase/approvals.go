package businesscase

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Approvals keeps the record of approval rounds (business_case_approval_rounds):
// what the approval workflow's activities read and write. The database is
// the truth about a case's status; the workflow only waits on it.
type Approvals struct {
	Pool *pgxpool.Pool
}

// Round names one approval round of one case.
type Round struct {
	TenantID   uuid.UUID
	CaseID     uuid.UUID
	WorkflowID string
	RunID      string // the workflow's first run id: stable across continue-as-new
}

// Open records the round when the case is pending approval and returns its
// current status ("" when the case is gone).
func (a Approvals) Open(ctx context.Context, round Round) (Status, error) {
	var status Status
	err := db.InTenant(ctx, a.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		if status, err = currentStatus(ctx, tx, round); err != nil || status != PendingApproval {
			return err
		}
		return db.Q.BusinessCaseRoundStart(ctx, tx, dbsqlc.BusinessCaseRoundStartParams{
			TenantID: round.TenantID, BusinessCaseID: round.CaseID, WorkflowID: round.WorkflowID, RunID: round.RunID,
		})
	})
	return status, err
}

// Status returns the case's current status ("" when it is gone).
func (a Approvals) Status(ctx context.Context, round Round) (Status, error) {
	var status Status
	err := db.InTenant(ctx, a.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		status, err = currentStatus(ctx, tx, round)
		return err
	})
	return status, err
}

// Remind counts a reminder on the round; false when the round is no longer open.
func (a Approvals) Remind(ctx context.Context, round Round) (bool, error) {
	var n int64
	err := db.InTenant(ctx, a.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		n, err = db.Q.BusinessCaseRoundReminded(ctx, tx, dbsqlc.BusinessCaseRoundRemindedParams{TenantID: round.TenantID, BusinessCaseID: round.CaseID, RunID: round.RunID})
		return err
	})
	return n > 0, err
}

// Escalate marks the round escalated (once); false when it was already, or is closed.
func (a Approvals) Escalate(ctx context.Context, round Round) (bool, error) {
	var n int64
	err := db.InTenant(ctx, a.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		n, err = db.Q.BusinessCaseRoundEscalated(ctx, tx, dbsqlc.BusinessCaseRoundEscalatedParams{TenantID: round.TenantID, BusinessCaseID: round.CaseID, RunID: round.RunID})
		return err
	})
	return n > 0, err
}

// Close records the decision that ended the round.
func (a Approvals) Close(ctx context.Context, round Round, decision Status) error {
	return db.InTenant(ctx, a.Pool, round.TenantID, func(tx pgx.Tx) error {
		d := string(decision)
		return db.Q.BusinessCaseRoundDecide(ctx, tx, dbsqlc.BusinessCaseRoundDecideParams{TenantID: round.TenantID, BusinessCaseID: round.CaseID, RunID: round.RunID, Decision: &d})
	})
}

func currentStatus(ctx context.Context, tx pgx.Tx, round Round) (Status, error) {
	bc, err := db.Q.BusinessCaseGet(ctx, tx, dbsqlc.BusinessCaseGetParams{TenantID: round.TenantID, ID: round.CaseID})
	if db.IsNotFound(err) {
		return "", nil
	}
	return Status(bc.Status), err
}
