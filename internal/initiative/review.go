package initiative

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Reviews keeps the record of review rounds (initiative_reviews): what the
// review workflow's activities read and write. The database is the truth
// about an initiative's status; the workflow only waits on it.
type Reviews struct {
	Pool *pgxpool.Pool
}

// Round names one review round of one initiative.
type Round struct {
	TenantID     uuid.UUID
	InitiativeID uuid.UUID
	WorkflowID   string
	RunID        string // the workflow's first run id: stable across continue-as-new
}

// Open records the round when the initiative is in review and returns its
// current status ("" when the initiative is gone).
func (r Reviews) Open(ctx context.Context, round Round) (Status, error) {
	var status Status
	err := db.InTenant(ctx, r.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		if status, err = currentStatus(ctx, tx, round); err != nil || status != InReview {
			return err
		}
		return db.Q.InitiativeReviewStart(ctx, tx, dbsqlc.InitiativeReviewStartParams{
			TenantID: round.TenantID, InitiativeID: round.InitiativeID, WorkflowID: round.WorkflowID, RunID: round.RunID,
		})
	})
	return status, err
}

// Status returns the initiative's current status ("" when it is gone).
func (r Reviews) Status(ctx context.Context, round Round) (Status, error) {
	var status Status
	err := db.InTenant(ctx, r.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		status, err = currentStatus(ctx, tx, round)
		return err
	})
	return status, err
}

// Remind counts a reminder on the round; false when the round is no longer open.
func (r Reviews) Remind(ctx context.Context, round Round) (bool, error) {
	var n int64
	err := db.InTenant(ctx, r.Pool, round.TenantID, func(tx pgx.Tx) error {
		var err error
		n, err = db.Q.InitiativeReviewReminded(ctx, tx, dbsqlc.InitiativeReviewRemindedParams{TenantID: round.TenantID, InitiativeID: round.InitiativeID, RunID: round.RunID})
		return err
	})
	return n > 0, err
}

// Close records the decision that ended the round.
func (r Reviews) Close(ctx context.Context, round Round, decision Status) error {
	return db.InTenant(ctx, r.Pool, round.TenantID, func(tx pgx.Tx) error {
		d := string(decision)
		return db.Q.InitiativeReviewDecide(ctx, tx, dbsqlc.InitiativeReviewDecideParams{TenantID: round.TenantID, InitiativeID: round.InitiativeID, RunID: round.RunID, Decision: &d})
	})
}

func currentStatus(ctx context.Context, tx pgx.Tx, round Round) (Status, error) {
	in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: round.TenantID, ID: round.InitiativeID})
	if db.IsNotFound(err) {
		return "", nil
	}
	return Status(in.Status), err
}
