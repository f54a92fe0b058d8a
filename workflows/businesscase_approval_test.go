package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/businesscase"
)

type approvalHarness struct {
	env       *testsuite.TestWorkflowEnvironment
	start     time.Time
	reminders []time.Duration // when each reminder ran, from the start
	escalated []time.Duration
	closed    []businesscase.Status
	rounds    []string // run ids (round keys) opened
}

// newApprovalHarness mocks the activities: statuses are what Open and each
// later Status return, in order (then pending_approval).
func newApprovalHarness(t *testing.T, statuses ...businesscase.Status) *approvalHarness {
	var s testsuite.WorkflowTestSuite
	h := &approvalHarness{env: s.NewTestWorkflowEnvironment()}
	h.start = h.env.Now()
	var a *activities.BusinessCaseActivities
	current := businesscase.PendingApproval // after the queue: pending until a decision is recorded
	next := func() businesscase.Status {
		if len(statuses) == 0 {
			return current
		}
		st := statuses[0]
		statuses = statuses[1:]
		return st
	}
	h.env.RegisterActivity(a)
	h.env.OnActivity(a.BusinessCaseApprovalOpen, mock.Anything, mock.Anything).Return(func(_ context.Context, ref activities.ApprovalRef) (businesscase.Status, error) {
		h.rounds = append(h.rounds, ref.RunID)
		return next(), nil
	})
	h.env.OnActivity(a.BusinessCaseApprovalStatus, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ApprovalRef) (businesscase.Status, error) { return next(), nil })
	h.env.OnActivity(a.BusinessCaseApprovalRemind, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ApprovalRef) error {
		h.reminders = append(h.reminders, h.env.Now().Sub(h.start))
		return nil
	})
	h.env.OnActivity(a.BusinessCaseApprovalEscalate, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ApprovalRef) error {
		h.escalated = append(h.escalated, h.env.Now().Sub(h.start))
		return nil
	})
	h.env.OnActivity(a.BusinessCaseApprovalClose, mock.Anything, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ApprovalRef, d businesscase.Status) error {
		h.closed = append(h.closed, d)
		current = d
		return nil
	})
	return h
}

func (h *approvalHarness) run(t *testing.T) BusinessCaseApprovalResult {
	t.Helper()
	h.env.ExecuteWorkflow(BusinessCaseApprovalWorkflow, BusinessCaseApprovalInput{TenantID: "t", CaseID: "c", RemindAfter: 48 * time.Hour, EscalateAfter: 120 * time.Hour})
	if !h.env.IsWorkflowCompleted() || h.env.GetWorkflowError() != nil {
		t.Fatalf("workflow did not complete cleanly: %v", h.env.GetWorkflowError())
	}
	var r BusinessCaseApprovalResult
	if err := h.env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestApprovalDecisionBeforeReminder(t *testing.T) {
	h := newApprovalHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(BusinessCaseDecisionSignal, businesscase.Approved) }, 24*time.Hour)
	r := h.run(t)
	if r.Decision != businesscase.Approved || r.RemindersSent != 0 || r.Escalated || len(h.reminders) != 0 || len(h.closed) != 1 || h.closed[0] != businesscase.Approved {
		t.Fatalf("result %+v, reminders %v, closed %v", r, h.reminders, h.closed)
	}
}

// Reminders every 48 h keep their rhythm around the escalation at 120 h;
// the escalation happens once.
func TestApprovalRemindsThenEscalatesOnce(t *testing.T) {
	h := newApprovalHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(BusinessCaseDecisionSignal, businesscase.Rejected) }, 250*time.Hour)
	r := h.run(t)
	want := []time.Duration{48 * time.Hour, 96 * time.Hour, 144 * time.Hour, 192 * time.Hour, 240 * time.Hour}
	if r.Decision != businesscase.Rejected || r.RemindersSent != len(want) || !r.Escalated {
		t.Fatalf("result %+v", r)
	}
	if len(h.reminders) != len(want) {
		t.Fatalf("reminders at %v, want %v", h.reminders, want)
	}
	for i := range want {
		if h.reminders[i] != want[i] {
			t.Fatalf("reminders at %v, want %v", h.reminders, want)
		}
	}
	if len(h.escalated) != 1 || h.escalated[0] != 120*time.Hour {
		t.Fatalf("escalated at %v, want once at 120h", h.escalated)
	}
	if len(h.closed) != 1 || h.closed[0] != businesscase.Rejected {
		t.Fatalf("closed %v", h.closed)
	}
}

// The database is the truth: a decision whose signal was lost is found at the next reminder.
func TestApprovalLostSignalFoundAfterReminder(t *testing.T) {
	h := newApprovalHarness(t, businesscase.PendingApproval, businesscase.Approved)
	r := h.run(t)
	if r.Decision != businesscase.Approved || r.RemindersSent != 1 || len(h.closed) != 1 || h.closed[0] != businesscase.Approved {
		t.Fatalf("result %+v closed %v", r, h.closed)
	}
}

// A case no longer pending at start (approved straight away, a late start) ends at once.
func TestApprovalNotPendingAtStart(t *testing.T) {
	h := newApprovalHarness(t, businesscase.Approved)
	r := h.run(t)
	if r.Decision != businesscase.Approved || len(h.reminders) != 0 || len(h.closed) != 1 {
		t.Fatalf("result %+v reminders %v closed %v", r, h.reminders, h.closed)
	}
}

// A deleted case ends the round without a decision to record.
func TestApprovalCaseDeleted(t *testing.T) {
	h := newApprovalHarness(t, businesscase.PendingApproval, "")
	r := h.run(t)
	if r.Decision != "" || r.RemindersSent != 1 || len(h.closed) != 0 {
		t.Fatalf("result %+v closed %v", r, h.closed)
	}
}

// A resubmission that reached the run before it ended gets a round of its own.
func TestApprovalResubmittedDuringRejection(t *testing.T) {
	// Open: pending; after the rejection signal the status is pending again
	// (resubmitted); the next round opens pending and is approved.
	h := newApprovalHarness(t, businesscase.PendingApproval, businesscase.PendingApproval, businesscase.PendingApproval)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(BusinessCaseDecisionSignal, businesscase.Rejected) }, time.Hour)
	h.env.ExecuteWorkflow(BusinessCaseApprovalWorkflow, BusinessCaseApprovalInput{TenantID: "t", CaseID: "c", RemindAfter: 48 * time.Hour, EscalateAfter: 120 * time.Hour})
	err := h.env.GetWorkflowError()
	if err == nil || !isContinueAsNew(err) {
		t.Fatalf("want continue-as-new for the new round, got %v", err)
	}
	if len(h.closed) != 1 || h.closed[0] != businesscase.Rejected {
		t.Fatalf("closed %v", h.closed)
	}
}

func isContinueAsNew(err error) bool {
	_, ok := errors.AsType[*workflow.ContinueAsNewError](err)
	return ok
}
