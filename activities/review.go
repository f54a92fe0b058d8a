package activities

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/initiative"
)

// ReviewActivities are the activities of the initiative-review workflow;
// the review record and its rules live in internal/initiative.
type ReviewActivities struct {
	Reviews initiative.Reviews
}

// ReviewRef names one review round of one initiative.
type ReviewRef struct {
	TenantID     string
	InitiativeID string
	WorkflowID   string
	RunID        string // the workflow's first run id: stable across continue-as-new
}

// round parses the ids; a malformed one can never succeed, so it is not retried.
func (r ReviewRef) round() (initiative.Round, error) {
	t, err := uuid.Parse(r.TenantID)
	if err != nil {
		return initiative.Round{}, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	i, err := uuid.Parse(r.InitiativeID)
	if err != nil {
		return initiative.Round{}, temporal.NewNonRetryableApplicationError("bad initiative id", "BadInput", err)
	}
	return initiative.Round{TenantID: t, InitiativeID: i, WorkflowID: r.WorkflowID, RunID: r.RunID}, nil
}

// ReviewOpen records the review round and returns the initiative's current status.
func (a *ReviewActivities) ReviewOpen(ctx context.Context, ref ReviewRef) (initiative.Status, error) {
	round, err := ref.round()
	if err != nil {
		return "", err
	}
	return a.Reviews.Open(ctx, round)
}

// ReviewStatus returns the initiative's current status ("" when it is gone).
func (a *ReviewActivities) ReviewStatus(ctx context.Context, ref ReviewRef) (initiative.Status, error) {
	round, err := ref.round()
	if err != nil {
		return "", err
	}
	return a.Reviews.Status(ctx, round)
}

// ReviewRemind records and logs a reminder that the initiative still waits for a decision.
func (a *ReviewActivities) ReviewRemind(ctx context.Context, ref ReviewRef) error {
	round, err := ref.round()
	if err != nil {
		return err
	}
	reminded, err := a.Reviews.Remind(ctx, round)
	if reminded {
		activity.GetLogger(ctx).Info("initiative review reminder", "tenant_id", ref.TenantID, "initiative_id", ref.InitiativeID)
		slog.InfoContext(ctx, "initiative review reminder", "tenant_id", ref.TenantID, "initiative_id", ref.InitiativeID, "workflow_id", ref.WorkflowID)
	}
	return err
}

// ReviewClose records the decision that ended the review round.
func (a *ReviewActivities) ReviewClose(ctx context.Context, ref ReviewRef, decision initiative.Status) error {
	round, err := ref.round()
	if err != nil {
		return err
	}
	return a.Reviews.Close(ctx, round, decision)
}
