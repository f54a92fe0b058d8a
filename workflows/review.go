package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// ReviewTaskQueue is the task queue of the initiative-review workflow and its activities.
const ReviewTaskQueue = "initiative-reviews"

// ReviewDecisionSignal carries the status that ended a review (approved, rejected, archived).
const ReviewDecisionSignal = "decision"

// ReviewWorkflowID names the review of one initiative, so an operator finds it by what it is about.
func ReviewWorkflowID(tenantID, initiativeID string) string {
	return fmt.Sprintf("initiative-review/%s/%s", tenantID, initiativeID)
}

// ReviewInput starts a review.
type ReviewInput struct {
	TenantID      string
	InitiativeID  string
	RemindAfter   time.Duration // wait before each reminder
	RemindersSent int           // carried across continue-as-new
}

// ReviewResult is how the review ended.
type ReviewResult struct {
	Decision      initiative.Status // the status the initiative left in_review for
	RemindersSent int
}

// InitiativeReviewWorkflow waits for the decision on an initiative in review,
// sending a reminder each time RemindAfter passes without one. The database
// is the truth: the workflow re-reads the status at start and after each
// reminder, so a lost or early signal cannot leave it waiting forever.
func InitiativeReviewWorkflow(ctx workflow.Context, in ReviewInput) (ReviewResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	info := workflow.GetInfo(ctx)
	ref := activities.ReviewRef{TenantID: in.TenantID, InitiativeID: in.InitiativeID, WorkflowID: info.WorkflowExecution.ID, RunID: info.FirstRunID}
	var a *activities.ReviewActivities
	result := ReviewResult{RemindersSent: in.RemindersSent}

	var status initiative.Status
	if err := workflow.ExecuteActivity(ctx, a.ReviewOpen, ref).Get(ctx, &status); err != nil {
		return result, err
	}
	decisions := workflow.GetSignalChannel(ctx, ReviewDecisionSignal)
	for status == initiative.InReview {
		timerCtx, cancelTimer := workflow.WithCancel(ctx)
		timer := workflow.NewTimer(timerCtx, in.RemindAfter)
		var decision initiative.Status
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(decisions, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &decision) })
		sel.AddFuture(timer, func(workflow.Future) {})
		sel.Select(ctx)
		cancelTimer()
		if decision != "" {
			status = decision
			break
		}
		if err := workflow.ExecuteActivity(ctx, a.ReviewRemind, ref).Get(ctx, nil); err != nil {
			return result, err
		}
		result.RemindersSent++
		if err := workflow.ExecuteActivity(ctx, a.ReviewStatus, ref).Get(ctx, &status); err != nil {
			return result, err
		}
		if status == initiative.InReview && info.GetContinueAsNewSuggested() {
			in.RemindersSent = result.RemindersSent
			return result, workflow.NewContinueAsNewError(ctx, InitiativeReviewWorkflow, in)
		}
	}
	result.Decision = status
	if status != "" {
		if err := workflow.ExecuteActivity(ctx, a.ReviewClose, ref, status).Get(ctx, nil); err != nil {
			return result, err
		}
	}
	return result, nil
}

// ReviewEvents is the outbox handler that drives review workflows from
// initiative.status_changed events: entering in_review starts one, leaving it
// signals the decision. Both are idempotent, so redelivered events are harmless.
type ReviewEvents struct {
	Temporal    client.Client
	RemindAfter time.Duration
}

// Name implements outbox.Handler.
func (h *ReviewEvents) Name() string { return "initiative-review" }

// StartTypes implements outbox.StartTypes: the relay gives these events the lane of workflow starts.
func (h *ReviewEvents) StartTypes() []string { return []string{outbox.InitiativeStatusChanged} }

// Handle implements outbox.Handler.
func (h *ReviewEvents) Handle(ctx context.Context, ev outbox.Event) error {
	if ev.Type != outbox.InitiativeStatusChanged {
		return nil
	}
	var change initiative.StatusChangedEvent
	if err := json.Unmarshal(ev.Data, &change); err != nil {
		return fmt.Errorf("decode %s: %w", ev.Type, err)
	}
	tenant := ev.TenantID.String()
	id := ReviewWorkflowID(tenant, change.InitiativeID)
	switch {
	case change.ToStatus == initiative.InReview:
		_, err := h.Temporal.ExecuteWorkflow(ctx, startOptions(id, ReviewTaskQueue, tenant, runs.Subject{Object: runs.Object{Type: runs.ObjectInitiative, ID: change.InitiativeID}, Summary: reviewSummary(change)}),
			InitiativeReviewWorkflow, ReviewInput{TenantID: tenant, InitiativeID: change.InitiativeID, RemindAfter: h.RemindAfter})
		return err
	case change.FromStatus == initiative.InReview:
		err := h.Temporal.SignalWorkflow(ctx, id, "", ReviewDecisionSignal, change.ToStatus)
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return nil // the review already ended (it re-reads the status itself)
		}
		return err
	}
	return nil
}

// reviewSummary names the review in words for the Temporal UI.
func reviewSummary(change initiative.StatusChangedEvent) string {
	if in, ok := change.Initiative.(map[string]any); ok {
		if name, ok := in["name"].(string); ok && name != "" {
			return fmt.Sprintf("Review of initiative %q", name)
		}
	}
	return "Review of initiative " + change.InitiativeID
}
