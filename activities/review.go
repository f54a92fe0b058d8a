package activities

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Review holds the initiative-review workflow's activities and their dependencies.
type Review struct {
	Pool *pgxpool.Pool
}

// ReviewRef names one review round of one initiative.
type ReviewRef struct {
	TenantID     string
	InitiativeID string
	WorkflowID   string
	RunID        string // the workflow's first run id: stable across continue-as-new
}

func (r ReviewRef) ids() (uuid.UUID, uuid.UUID, error) {
	t, err := uuid.Parse(r.TenantID)
	if err != nil {
		return uuid.Nil, uuid.Nil, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	i, err := uuid.Parse(r.InitiativeID)
	if err != nil {
		return uuid.Nil, uuid.Nil, temporal.NewNonRetryableApplicationError("bad initiative id", "BadInput", err)
	}
	return t, i, nil
}

// ReviewOpen records the review round and returns the initiative's current status.
func (a *Review) ReviewOpen(ctx context.Context, ref ReviewRef) (string, error) {
	tenantID, initiativeID, err := ref.ids()
	if err != nil {
		return "", err
	}
	var status string
	err = db.InTenant(ctx, a.Pool, tenantID, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: tenantID, ID: initiativeID})
		if db.IsNotFound(err) {
			status = ""
			return nil
		}
		if err != nil {
			return err
		}
		status = in.Status
		if status != "in_review" {
			return nil
		}
		return db.Q.InitiativeReviewStart(ctx, tx, dbsqlc.InitiativeReviewStartParams{
			TenantID: tenantID, InitiativeID: initiativeID, WorkflowID: ref.WorkflowID, RunID: ref.RunID,
		})
	})
	return status, err
}

// ReviewStatus returns the initiative's current status ("" when it is gone).
func (a *Review) ReviewStatus(ctx context.Context, ref ReviewRef) (string, error) {
	tenantID, initiativeID, err := ref.ids()
	if err != nil {
		return "", err
	}
	var status string
	err = db.InTenant(ctx, a.Pool, tenantID, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: tenantID, ID: initiativeID})
		if db.IsNotFound(err) {
			return nil
		}
		status = in.Status
		return err
	})
	return status, err
}

// ReviewRemind records and logs a reminder that the initiative still waits for a decision.
func (a *Review) ReviewRemind(ctx context.Context, ref ReviewRef) error {
	tenantID, initiativeID, err := ref.ids()
	if err != nil {
		return err
	}
	return db.InTenant(ctx, a.Pool, tenantID, func(tx pgx.Tx) error {
		n, err := db.Q.InitiativeReviewReminded(ctx, tx, dbsqlc.InitiativeReviewRemindedParams{TenantID: tenantID, InitiativeID: initiativeID, RunID: ref.RunID})
		if err == nil && n > 0 {
			activity.GetLogger(ctx).Info("initiative review reminder", "tenant_id", ref.TenantID, "initiative_id", ref.InitiativeID)
			slog.InfoContext(ctx, "initiative review reminder", "tenant_id", ref.TenantID, "initiative_id", ref.InitiativeID, "workflow_id", ref.WorkflowID)
		}
		return err
	})
}

// ReviewClose records the decision that ended the review round.
func (a *Review) ReviewClose(ctx context.Context, ref ReviewRef, decision string) error {
	tenantID, initiativeID, err := ref.ids()
	if err != nil {
		return err
	}
	return db.InTenant(ctx, a.Pool, tenantID, func(tx pgx.Tx) error {
		return db.Q.InitiativeReviewDecide(ctx, tx, dbsqlc.InitiativeReviewDecideParams{TenantID: tenantID, InitiativeID: initiativeID, RunID: ref.RunID, Decision: &decision})
	})
}
