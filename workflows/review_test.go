package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/initiative"
)

type reviewHarness struct {
	env       *testsuite.TestWorkflowEnvironment
	start     time.Time
	reminders []time.Duration // when each reminder ran, from the start
	closed    []initiative.Status
}

// newReviewHarness mocks the activities: statuses are what ReviewOpen and each
// later ReviewStatus return, in order.
func newReviewHarness(t *testing.T, statuses ...initiative.Status) *reviewHarness {
	var s testsuite.WorkflowTestSuite
	h := &reviewHarness{env: s.NewTestWorkflowEnvironment()}
	h.start = h.env.Now()
	var a *activities.ReviewActivities
	next := func() initiative.Status {
		if len(statuses) == 0 {
			return "in_review"
		}
		st := statuses[0]
		statuses = statuses[1:]
		return st
	}
	h.env.RegisterActivity(a)
	h.env.OnActivity(a.ReviewOpen, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ReviewRef) (initiative.Status, error) { return next(), nil })
	h.env.OnActivity(a.ReviewStatus, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ReviewRef) (initiative.Status, error) { return next(), nil })
	h.env.OnActivity(a.ReviewRemind, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ReviewRef) error {
		h.reminders = append(h.reminders, h.env.Now().Sub(h.start))
		return nil
	})
	h.env.OnActivity(a.ReviewClose, mock.Anything, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ReviewRef, d initiative.Status) error {
		h.closed = append(h.closed, d)
		return nil
	})
	return h
}

func (h *reviewHarness) run(t *testing.T) ReviewResult {
	t.Helper()
	h.env.ExecuteWorkflow(InitiativeReviewWorkflow, ReviewInput{TenantID: "t", InitiativeID: "i", RemindAfter: 72 * time.Hour})
	if !h.env.IsWorkflowCompleted() || h.env.GetWorkflowError() != nil {
		t.Fatalf("workflow did not complete cleanly: %v", h.env.GetWorkflowError())
	}
	var r ReviewResult
	if err := h.env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReviewDecisionBeforeReminder(t *testing.T) {
	h := newReviewHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(ReviewDecisionSignal, "approved") }, 24*time.Hour)
	r := h.run(t)
	if r.Decision != "approved" || r.RemindersSent != 0 || len(h.reminders) != 0 || len(h.closed) != 1 || h.closed[0] != "approved" {
		t.Fatalf("result %+v, reminders %v, closed %v", r, h.reminders, h.closed)
	}
}

func TestReviewRemindsEachPeriodUntilDecided(t *testing.T) {
	h := newReviewHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(ReviewDecisionSignal, "rejected") }, 150*time.Hour)
	r := h.run(t)
	if r.Decision != "rejected" || r.RemindersSent != 2 {
		t.Fatalf("result %+v", r)
	}
	if len(h.reminders) != 2 || h.reminders[0] != 72*time.Hour || h.reminders[1] != 144*time.Hour {
		t.Fatalf("reminders at %v, want 72h and 144h", h.reminders)
	}
}

func TestReviewEndsAtOnceWhenAlreadyDecided(t *testing.T) {
	// Started late (Temporal was down) after the decision was already made.
	h := newReviewHarness(t, "approved")
	r := h.run(t)
	if r.Decision != "approved" || len(h.reminders) != 0 || h.env.Now().Sub(h.start) != 0 {
		t.Fatalf("result %+v after %v", r, h.env.Now().Sub(h.start))
	}
}

func TestReviewNoticesALostSignalAtTheNextReminder(t *testing.T) {
	// No signal ever arrives; the status read after the first reminder shows the decision.
	h := newReviewHarness(t, "in_review", "rejected")
	r := h.run(t)
	if r.Decision != "rejected" || len(h.reminders) != 1 || len(h.closed) != 1 {
		t.Fatalf("result %+v reminders %v closed %v", r, h.reminders, h.closed)
	}
}

func TestReviewWorkflowID(t *testing.T) {
	if got := ReviewWorkflowID("t1", "i1"); got != "initiative-review/t1/i1" {
		t.Fatal(got)
	}
}
