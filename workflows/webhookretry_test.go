package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/valuecase/valuecase/activities"
)

var retryStart = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// retryHarness runs WebhookRetryWorkflow with mocked activities; outcomes[i]
// is what attempt i+2 reports. It records, on the test environment's clock,
// when each attempt and each disable ran, relative to the workflow start.
type retryHarness struct {
	env       *testsuite.TestWorkflowEnvironment
	attempts  []activities.WebhookAttemptInput
	attemptAt []time.Duration
	disables  []activities.WebhookDisableInput
	disableAt []time.Duration
}

func runRetry(t *testing.T, in WebhookRetryInput, outcomes ...string) (*retryHarness, WebhookRetryResult) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(retryStart)
	h := &retryHarness{env: env}
	var a *activities.WebhookActivities
	env.RegisterActivity(a)

	env.OnActivity(a.WebhookAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WebhookAttemptInput) (activities.WebhookAttemptResult, error) {
			h.attempts = append(h.attempts, in)
			h.attemptAt = append(h.attemptAt, env.Now().Sub(retryStart))
			if len(h.attempts) > len(outcomes) {
				t.Fatalf("unexpected attempt %d", in.Attempt)
			}
			o := outcomes[len(h.attempts)-1]
			code := map[string]int{"delivered": 200, "gone": 410, "failed": 500}[o]
			return activities.WebhookAttemptResult{Outcome: o, StatusCode: code}, nil
		})
	env.OnActivity(a.WebhookDisable, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WebhookDisableInput) (bool, error) {
			h.disables = append(h.disables, in)
			h.disableAt = append(h.disableAt, env.Now().Sub(retryStart))
			return true, nil
		})

	env.ExecuteWorkflow(WebhookRetryWorkflow, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var res WebhookRetryResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return h, res
}

var retryIn = WebhookRetryInput{TenantID: "t1", WebhookID: "w1", EventID: "e1"}

func wantDurations(t *testing.T, what string, got []time.Duration, want ...time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s at %v, want %v", what, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s %d at +%s, want +%s", what, i+1, got[i], want[i])
		}
	}
}

func TestWebhookRetrySucceedsOnAttempt2(t *testing.T) {
	h, res := runRetry(t, retryIn, "delivered")
	wantDurations(t, "attempt", h.attemptAt, 5*time.Minute)
	want := activities.WebhookAttemptInput{TenantID: "t1", WebhookID: "w1", EventID: "e1", Attempt: 2,
		NextAttemptAt: retryStart.Add(30 * time.Minute)}
	if h.attempts[0] != want {
		t.Errorf("attempt input: %+v", h.attempts[0])
	}
	if len(h.disables) != 0 {
		t.Error("disabled after success")
	}
	if res != (WebhookRetryResult{Outcome: WebhookRetryDelivered, Attempts: 2}) {
		t.Errorf("result %+v", res)
	}
}

func TestWebhookRetrySucceedsOnAttempt3(t *testing.T) {
	h, res := runRetry(t, retryIn, "failed", "delivered")
	wantDurations(t, "attempt", h.attemptAt, 5*time.Minute, 30*time.Minute)
	if h.attempts[0].Final || !h.attempts[1].Final || !h.attempts[1].NextAttemptAt.IsZero() {
		t.Errorf("only the last attempt is final: %+v", h.attempts)
	}
	if h.attempts[1].Attempt != 3 || len(h.disables) != 0 {
		t.Errorf("attempts %+v disables %+v", h.attempts, h.disables)
	}
	if res != (WebhookRetryResult{Outcome: WebhookRetryDelivered, Attempts: 3}) {
		t.Errorf("result %+v", res)
	}
}

func TestWebhookRetryAllFailDisablesOnce(t *testing.T) {
	h, res := runRetry(t, retryIn, "failed", "failed")
	wantDurations(t, "attempt", h.attemptAt, 5*time.Minute, 30*time.Minute)
	wantDurations(t, "disable", h.disableAt, 30*time.Minute)
	d := h.disables[0]
	if d.TenantID != "t1" || d.WebhookID != "w1" || d.EventID != "e1" || d.Reason != "3 delivery attempts failed for event e1" {
		t.Errorf("disable input %+v", d)
	}
	if res != (WebhookRetryResult{Outcome: WebhookRetryDisabled, Attempts: 3}) {
		t.Errorf("result %+v", res)
	}
}

func TestWebhookRetryGoneDisablesAtOnce(t *testing.T) {
	h, res := runRetry(t, retryIn, "gone")
	wantDurations(t, "attempt", h.attemptAt, 5*time.Minute) // no attempt 3
	wantDurations(t, "disable", h.disableAt, 5*time.Minute)
	if !strings.Contains(h.disables[0].Reason, "410 Gone") {
		t.Errorf("reason %q", h.disables[0].Reason)
	}
	if res != (WebhookRetryResult{Outcome: WebhookRetryDisabled, Attempts: 2}) {
		t.Errorf("result %+v", res)
	}
}

func TestWebhookRetrySkippedEndsQuietly(t *testing.T) {
	h, res := runRetry(t, retryIn, "failed", "skipped")
	if len(h.disables) != 0 || res != (WebhookRetryResult{Outcome: WebhookRetrySkipped, Attempts: 2}) {
		t.Errorf("disables %v result %+v", h.disables, res)
	}
}

func TestWebhookRetryCustomDelays(t *testing.T) {
	in := retryIn
	in.Delays = []time.Duration{time.Second, time.Minute, time.Hour}
	h, res := runRetry(t, in, "failed", "failed", "failed")
	wantDurations(t, "attempt", h.attemptAt, time.Second, time.Second+time.Minute, time.Second+time.Minute+time.Hour)
	wantDurations(t, "disable", h.disableAt, time.Second+time.Minute+time.Hour)
	if res.Attempts != 4 || h.disables[0].Reason != "4 delivery attempts failed for event e1" {
		t.Errorf("result %+v reason %q", res, h.disables[0].Reason)
	}
}

func TestWebhookRetryScheduleCountsFromAttempt1(t *testing.T) {
	// The hand-over came 2 minutes after attempt 1: attempt 2 is due 3 minutes
	// into the run and attempt 3 25 minutes after that.
	in := retryIn
	in.FirstAttemptAt = retryStart.Add(-2 * time.Minute)
	h, _ := runRetry(t, in, "failed", "delivered")
	wantDurations(t, "attempt", h.attemptAt, 3*time.Minute, 28*time.Minute)

	// A hand-over 40 minutes late runs both overdue attempts at once.
	in.FirstAttemptAt = retryStart.Add(-40 * time.Minute)
	h, _ = runRetry(t, in, "failed", "failed")
	wantDurations(t, "attempt", h.attemptAt, 0, 0)
	wantDurations(t, "disable", h.disableAt, 0)
}

func TestWebhookRetryWorkflowID(t *testing.T) {
	if got := WebhookRetryWorkflowID("t", "w", "e"); got != "webhook-retry/t/w/e" {
		t.Errorf("id %q", got)
	}
}
