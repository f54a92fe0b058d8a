// Package workflows holds the Temporal workflow definitions, each with its
// names (task queue, workflow id builder) and input and result types beside it.
package workflows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

// WebhookRetryTaskQueue is the task queue of the webhook retry workflow and its activities.
const WebhookRetryTaskQueue = "webhooks"

// WebhookRetryWorkflowID names the retry run of one event to one subscription,
// e.g. webhook-retry/<tenant>/<webhook>/<event>. Starting it twice for the same
// triple is refused by Temporal, which makes the hand-over from the relay idempotent.
func WebhookRetryWorkflowID(tenantID, webhookID, eventID string) string {
	return "webhook-retry/" + tenantID + "/" + webhookID + "/" + eventID
}

// DefaultWebhookRetryDelays are the waits before attempts 2 and 3 (spec
// section 6 rule 3: attempt 2 after 5 minutes, attempt 3 25 minutes later);
// WEBHOOK_RETRY_DELAYS (parsed by internal/config) overrides them.
var DefaultWebhookRetryDelays = []time.Duration{5 * time.Minute, 25 * time.Minute}

// WebhookRetryInput starts the retries of one event to one subscription after
// the relay's attempt 1 failed.
type WebhookRetryInput struct {
	TenantID  string
	WebhookID string
	EventID   string
	// Delays before attempts 2, 3, ...; DefaultWebhookRetryDelays when empty.
	// Fixed at start, so a configuration change affects only new runs.
	Delays []time.Duration
	// FirstAttemptAt is when attempt 1 was made. Attempt n+1 is due at
	// FirstAttemptAt + Delays[0] + ... + Delays[n-1] (attempt 2 five minutes
	// after attempt 1, attempt 3 25 minutes after that), so a hand-over that
	// was delayed (Temporal briefly unavailable) does not push the schedule
	// back; an attempt already overdue runs at once. Zero: the workflow start.
	FirstAttemptAt time.Time
}

// Results of a webhook retry run.
const (
	WebhookRetryDelivered = "delivered" // a retry succeeded
	WebhookRetryDisabled  = "disabled"  // every attempt failed, or 410 Gone: the subscription was disabled
	WebhookRetrySkipped   = "skipped"   // the subscription went away or was switched off meanwhile
)

// WebhookRetryResult reports how a run ended.
type WebhookRetryResult struct {
	Outcome  string // one of the WebhookRetry* constants above
	Attempts int    // attempts made in total, attempt 1 included
}

// WebhookRetryAttemptOptions bound one attempt activity: the HTTP attempt has
// its own 30 s limit; the rest is database work. Errors of the activity itself
// (database unavailable, worker lost) are retried with backoff without end,
// since giving up would lose the attempt; they show in the Temporal UI. A
// failed delivery is not an activity error but an outcome.
var WebhookRetryAttemptOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    5 * time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    2 * time.Minute,
	},
}

// WebhookRetryWorkflow makes the timed retries of one event to one
// subscription: it waits on durable timers, then runs an attempt. It ends on
// the first delivered attempt; a 410 Gone disables the subscription at once;
// when the last attempt fails the subscription is disabled.
func WebhookRetryWorkflow(ctx workflow.Context, in WebhookRetryInput) (WebhookRetryResult, error) {
	delays := retryDelays(in.Delays)
	ctx = workflow.WithActivityOptions(ctx, WebhookRetryAttemptOptions)
	var a *activities.WebhookActivities

	due := in.FirstAttemptAt
	if due.IsZero() {
		due = workflow.Now(ctx)
	}
	res := WebhookRetryResult{Attempts: 1}
	last := activities.WebhookAttemptResult{Outcome: activities.WebhookOutcomeFailed}
	for i, d := range delays {
		due = due.Add(d)
		if wait := due.Sub(workflow.Now(ctx)); wait > 0 {
			if err := workflow.Sleep(ctx, wait); err != nil {
				return res, err
			}
		}
		attempt := i + 2
		final := i == len(delays)-1
		var next time.Time
		if !final {
			next = due.Add(delays[i+1])
		}
		err := workflow.ExecuteActivity(ctx, a.WebhookAttempt, activities.WebhookAttemptInput{
			TenantID: in.TenantID, WebhookID: in.WebhookID, EventID: in.EventID, Attempt: attempt,
			Final: final, NextAttemptAt: next,
		}).Get(ctx, &last)
		if err != nil {
			return res, err
		}
		res.Attempts = attempt
		switch last.Outcome {
		case activities.WebhookOutcomeDelivered:
			res.Outcome = WebhookRetryDelivered
			return res, nil
		case activities.WebhookOutcomeSkipped:
			res.Attempts = attempt - 1 // nothing was sent
			res.Outcome = WebhookRetrySkipped
			return res, nil
		}
		if last.Outcome == activities.WebhookOutcomeGone {
			break
		}
	}

	reason := fmt.Sprintf("%d delivery attempts failed for event %s", res.Attempts, in.EventID)
	if last.Outcome == activities.WebhookOutcomeGone {
		reason = fmt.Sprintf("receiver answered 410 Gone to attempt %d for event %s", res.Attempts, in.EventID)
	}
	err := workflow.ExecuteActivity(ctx, a.WebhookDisable, activities.WebhookDisableInput{
		TenantID: in.TenantID, WebhookID: in.WebhookID, EventID: in.EventID, Reason: reason,
	}).Get(ctx, nil)
	if err != nil {
		return res, err
	}
	res.Outcome = WebhookRetryDisabled
	return res, nil
}

// WebhookRetryStarter hands deliveries whose attempt 1 failed to
// WebhookRetryWorkflow; the outbox relay's webhook handler uses it
// (dispatch.RetryScheduler). Starting is idempotent: the workflow id names
// tenant, webhook and event, a running one is reused and a finished one is
// not started again.
type WebhookRetryStarter struct {
	Temporal client.Client
	Delays   []time.Duration // WEBHOOK_RETRY_DELAYS

	once  sync.Once
	slots chan struct{} // RetryStartsInFlight of them
}

// RetryStartsInFlight bounds the starts a WebhookRetryStarter has waiting on
// Temporal at once: a refusing receiver's backlog fails as fast as the relay
// can claim it, and unbounded its starts filled Temporal's queue ahead of
// every other run's. Measured on the dev server (docs/outbox-relay.md):
// another tenant's export start p99 0.22 s with 8, 0.29 s with 16, 0.8 s with
// 64, for a fifth fewer refused deliveries handed over per second than 64.
const RetryStartsInFlight = 8

// retryDelays are the waits before attempts 2, 3, ...: delays, or
// DefaultWebhookRetryDelays when there are none.
func retryDelays(delays []time.Duration) []time.Duration {
	if len(delays) == 0 {
		return DefaultWebhookRetryDelays
	}
	return delays
}

// retryStartDelay is how long the retry run's start waits before its code
// first runs: until attempt 2 is due. Temporal keeps the run with only its
// start recorded meanwhile (no workflow task, no timer, nothing in a worker's
// cache), so a refusing receiver's backlog costs one write per delivery until
// attempt 2 instead of a workflow task and a timer each, which other tenants'
// runs on the same cluster would queue behind. The workflow still sleeps any
// time left when it runs (its clock is Temporal's).
func retryStartDelay(firstAttemptAt time.Time, delays []time.Duration, now time.Time) time.Duration {
	if firstAttemptAt.IsZero() {
		return 0
	}
	return max(firstAttemptAt.Add(retryDelays(delays)[0]).Sub(now), 0)
}

// ScheduleRetry implements dispatch.RetryScheduler.
func (s *WebhookRetryStarter) ScheduleRetry(ctx context.Context, r dispatch.Retry) error {
	s.once.Do(func() { s.slots = make(chan struct{}, RetryStartsInFlight) })
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	tenant, hook, event := r.TenantID.String(), r.WebhookID.String(), r.EventID.String()
	opts := startOptions(WebhookRetryWorkflowID(tenant, hook, event), WebhookRetryTaskQueue, tenant, runs.Subject{
		Object:  runs.Object{Type: runs.ObjectWebhook, ID: hook},
		Summary: fmt.Sprintf("Retries of %s event %s to webhook %s", cmp.Or(r.EventType, "an"), event, hook),
	})
	opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	opts.StartDelay = retryStartDelay(r.FirstAttemptAt, s.Delays, time.Now())
	_, err := s.Temporal.ExecuteWorkflow(ctx, opts, WebhookRetryWorkflow, WebhookRetryInput{
		TenantID: tenant, WebhookID: hook, EventID: event, Delays: s.Delays, FirstAttemptAt: r.FirstAttemptAt,
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil // it ran already: the hand-over happened before a crash
	}
	return err
}
