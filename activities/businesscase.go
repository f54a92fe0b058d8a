package activities

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/businesscase"
)

// BusinessCaseActivities are the activities of the business-case approval
// workflow; the approval record and its rules live in internal/businesscase.
type BusinessCaseActivities struct {
	Approvals businesscase.Approvals
}

// ApprovalRef names one approval round of one business case.
type ApprovalRef struct {
	TenantID   string
	CaseID     string
	WorkflowID string
	RunID      string // the workflow's first run id: stable across continue-as-new
}

// round parses the ids; a malformed one can never succeed, so it is not retried.
func (r ApprovalRef) round() (businesscase.Round, error) {
	t, err := uuid.Parse(r.TenantID)
	if err != nil {
		return businesscase.Round{}, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	c, err := uuid.Parse(r.CaseID)
	if err != nil {
		return businesscase.Round{}, temporal.NewNonRetryableApplicationError("bad business case id", "BadInput", err)
	}
	return businesscase.Round{TenantID: t, CaseID: c, WorkflowID: r.WorkflowID, RunID: r.RunID}, nil
}

// BusinessCaseApprovalOpen records the round and returns the case's current status.
func (a *BusinessCaseActivities) BusinessCaseApprovalOpen(ctx context.Context, ref ApprovalRef) (businesscase.Status, error) {
	round, err := ref.round()
	if err != nil {
		return "", err
	}
	return a.Approvals.Open(ctx, round)
}

// BusinessCaseApprovalStatus returns the case's current status ("" when it is gone).
func (a *BusinessCaseActivities) BusinessCaseApprovalStatus(ctx context.Context, ref ApprovalRef) (businesscase.Status, error) {
	round, err := ref.round()
	if err != nil {
		return "", err
	}
	return a.Approvals.Status(ctx, round)
}

// BusinessCaseApprovalRemind records and logs a reminder to the approvers.
func (a *BusinessCaseActivities) BusinessCaseApprovalRemind(ctx context.Context, ref ApprovalRef) error {
	round, err := ref.round()
	if err != nil {
		return err
	}
	reminded, err := a.Approvals.Remind(ctx, round)
	if reminded {
		activity.GetLogger(ctx).Info("business case approval reminder", "tenant_id", ref.TenantID, "business_case_id", ref.CaseID)
		slog.InfoContext(ctx, "business case approval reminder", "tenant_id", ref.TenantID, "business_case_id", ref.CaseID, "workflow_id", ref.WorkflowID)
	}
	return err
}

// BusinessCaseApprovalEscalate records and logs the escalation of a case
// that waited too long (once per round).
func (a *BusinessCaseActivities) BusinessCaseApprovalEscalate(ctx context.Context, ref ApprovalRef) error {
	round, err := ref.round()
	if err != nil {
		return err
	}
	escalated, err := a.Approvals.Escalate(ctx, round)
	if escalated {
		activity.GetLogger(ctx).Warn("business case approval escalated", "tenant_id", ref.TenantID, "business_case_id", ref.CaseID)
		slog.WarnContext(ctx, "business case approval escalated", "tenant_id", ref.TenantID, "business_case_id", ref.CaseID, "workflow_id", ref.WorkflowID)
	}
	return err
}

// BusinessCaseApprovalClose records the decision that ended the round.
func (a *BusinessCaseActivities) BusinessCaseApprovalClose(ctx context.Context, ref ApprovalRef, decision businesscase.Status) error {
	round, err := ref.round()
	if err != nil {
		return err
	}
	return a.Approvals.Close(ctx, round, decision)
}
