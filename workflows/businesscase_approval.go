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
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// BusinessCaseApprovalTaskQueue is the task queue of the approval workflow and its activities.
const BusinessCaseApprovalTaskQueue = "business-case-approvals"

// BusinessCaseDecisionSignal carries the status that ended an approval (approved, rejected).
const BusinessCaseDecisionSignal = "decision"

// BusinessCaseApprovalWorkflowID names the approval of one case, so an operator finds it by what it is about.
func BusinessCaseApprovalWorkflowID(tenantID, caseID string) string {
	return fmt.Sprintf("business-case-approval/%s/%s", tenantID, caseID)
}

// BusinessCaseApprovalInput starts an approval round.
type BusinessCaseApprovalInput struct {
	TenantID      string
	CaseID        string
	RemindAfter   time.Duration // wait before each reminder to the approvers
	EscalateAfter time.Duration // wait from the start of the round before escalating (once)
	// Carried across continue-as-new.
	StartedAt     time.Time // zero: now
	RemindersSent int
	Escalated     bool
	Round         int // >0: a resubmission seen by this workflow (a new round record)
}

// BusinessCaseApprovalResult is how the round ended.
type BusinessCaseApprovalResult struct {
	Decision      businesscase.Status // approved, rejected, or "" (the case was deleted)
	RemindersSent int
	Escalated     bool
}

// BusinessCaseApprovalWorkflow waits for the decision on a case pending
// approval: a reminder each time RemindAfter passes, one escalation when
// EscalateAfter has passed since the round began. The database is the truth:
// the workflow re-reads the status at start and after each timer, so a lost
// or early signal cannot leave it waiting forever.
func BusinessCaseApprovalWorkflow(ctx workflow.Context, in BusinessCaseApprovalInput) (BusinessCaseApprovalResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	info := workflow.GetInfo(ctx)
	runID := info.FirstRunID
	if in.Round > 0 {
		runID = fmt.Sprintf("%s#%d", runID, in.Round)
	}
	ref := activities.ApprovalRef{TenantID: in.TenantID, CaseID: in.CaseID, WorkflowID: info.WorkflowExecution.ID, RunID: runID}
	var a *activities.BusinessCaseActivities
	result := BusinessCaseApprovalResult{RemindersSent: in.RemindersSent, Escalated: in.Escalated}
	if in.StartedAt.IsZero() {
		in.StartedAt = workflow.Now(ctx)
	}
	nextReminder := in.StartedAt.Add(time.Duration(in.RemindersSent+1) * in.RemindAfter)

	var status businesscase.Status
	if err := workflow.ExecuteActivity(ctx, a.BusinessCaseApprovalOpen, ref).Get(ctx, &status); err != nil {
		return result, err
	}
	decisions := workflow.GetSignalChannel(ctx, BusinessCaseDecisionSignal)
	for status == businesscase.PendingApproval {
		timerCtx, cancelTimers := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		var decision businesscase.Status
		var remind, escalate bool
		sel.AddReceive(decisions, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &decision) })
		sel.AddFuture(workflow.NewTimer(timerCtx, max(nextReminder.Sub(workflow.Now(ctx)), 0)), func(workflow.Future) { remind = true })
		if !result.Escalated {
			at := in.StartedAt.Add(in.EscalateAfter)
			sel.AddFuture(workflow.NewTimer(timerCtx, max(at.Sub(workflow.Now(ctx)), 0)), func(workflow.Future) { escalate = true })
		}
		sel.Select(ctx)
		cancelTimers()
		switch {
		case decision != "":
			status = decision
		case escalate:
			if err := workflow.ExecuteActivity(ctx, a.BusinessCaseApprovalEscalate, ref).Get(ctx, nil); err != nil {
				return result, err
			}
			result.Escalated = true
		case remind:
			if err := workflow.ExecuteActivity(ctx, a.BusinessCaseApprovalRemind, ref).Get(ctx, nil); err != nil {
				return result, err
			}
			result.RemindersSent++
			nextReminder = nextReminder.Add(in.RemindAfter)
		}
		if decision != "" {
			break
		}
		if err := workflow.ExecuteActivity(ctx, a.BusinessCaseApprovalStatus, ref).Get(ctx, &status); err != nil {
			return result, err
		}
		if status == businesscase.PendingApproval && info.GetContinueAsNewSuggested() {
			in.RemindersSent, in.Escalated = result.RemindersSent, result.Escalated
			return result, workflow.NewContinueAsNewError(ctx, BusinessCaseApprovalWorkflow, in)
		}
	}
	result.Decision = status
	if status == "" {
		return result, nil // the case was deleted: the round went with it
	}
	if err := workflow.ExecuteActivity(ctx, a.BusinessCaseApprovalClose, ref, status).Get(ctx, nil); err != nil {
		return result, err
	}
	if status == businesscase.Rejected {
		// A resubmission may have reached this still-running workflow (its
		// start found this run): it gets a round of its own.
		var now businesscase.Status
		if err := workflow.ExecuteActivity(ctx, a.BusinessCaseApprovalStatus, ref).Get(ctx, &now); err != nil {
			return result, err
		}
		if now == businesscase.PendingApproval {
			next := BusinessCaseApprovalInput{TenantID: in.TenantID, CaseID: in.CaseID, RemindAfter: in.RemindAfter, EscalateAfter: in.EscalateAfter, Round: in.Round + 1}
			return result, workflow.NewContinueAsNewError(ctx, BusinessCaseApprovalWorkflow, next)
		}
	}
	return result, nil
}

// BusinessCaseApprovalEvents is the outbox handler that drives approval
// workflows: business_case.submitted starts one, business_case.approved and
// business_case.rejected signal the decision. Both are idempotent, so
// redelivered events are harmless.
type BusinessCaseApprovalEvents struct {
	Temporal      client.Client
	RemindAfter   time.Duration
	EscalateAfter time.Duration
}

// Name implements outbox.Handler.
func (h *BusinessCaseApprovalEvents) Name() string { return "business-case-approval" }

// businessCaseEvent is what the handler reads of an event's data (the case).
type businessCaseEvent struct {
	ID      string              `json:"id"`
	Name    string              `json:"name"`
	Version int                 `json:"version"`
	Status  businesscase.Status `json:"status"`
}

// StartTypes implements outbox.StartTypes: the relay gives these events the lane of workflow starts.
func (h *BusinessCaseApprovalEvents) StartTypes() []string {
	return []string{outbox.BusinessCaseSubmitted, outbox.BusinessCaseApproved, outbox.BusinessCaseRejected}
}

// Handle implements outbox.Handler.
func (h *BusinessCaseApprovalEvents) Handle(ctx context.Context, ev outbox.Event) error {
	if ev.Type != outbox.BusinessCaseSubmitted && ev.Type != outbox.BusinessCaseApproved && ev.Type != outbox.BusinessCaseRejected {
		return nil
	}
	var bc businessCaseEvent
	if err := json.Unmarshal(ev.Data, &bc); err != nil {
		return fmt.Errorf("decode %s: %w", ev.Type, err)
	}
	tenant := ev.TenantID.String()
	id := BusinessCaseApprovalWorkflowID(tenant, bc.ID)
	if ev.Type == outbox.BusinessCaseSubmitted {
		summary := fmt.Sprintf("Approval of business case %q v%d", bc.Name, bc.Version)
		_, err := h.Temporal.ExecuteWorkflow(ctx, startOptions(id, BusinessCaseApprovalTaskQueue, tenant, runs.Subject{Object: runs.Object{Type: runs.ObjectBusinessCase, ID: bc.ID}, Summary: summary}), BusinessCaseApprovalWorkflow,
			BusinessCaseApprovalInput{TenantID: tenant, CaseID: bc.ID, RemindAfter: h.RemindAfter, EscalateAfter: h.EscalateAfter})
		return err
	}
	err := h.Temporal.SignalWorkflow(ctx, id, "", BusinessCaseDecisionSignal, bc.Status)
	if _, ok := errors.AsType[*serviceerror.NotFound](err); ok {
		return nil // no round running (approved straight from draft, or it already ended: it re-reads the status itself)
	}
	return err
}
