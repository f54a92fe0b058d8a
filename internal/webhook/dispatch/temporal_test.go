package dispatch_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/enums/v1"

	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

// runWorker runs the real worker (outbox relay + Temporal workers) against the
// test's database and the shared Temporal dev server, with short retry delays.
func runWorker(t *testing.T, f *fixture, delays ...time.Duration) {
	t.Helper()
	f.d.Delays = delays
	f.d.Retries = nil // the worker connects it to the retry workflow
	w := &worker.Worker{
		Config:   config.Config{TemporalNamespace: "default", WebhookRetryDelays: delays, ReviewReminderAfter: time.Hour, OutboundAllowPrivateNetworks: true},
		Pool:     f.pool,
		Temporal: testenv.TemporalClient(t),
		Log:      quiet,
		Webhooks: f.d,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("worker: %v", err)
		}
	})
}

func TestRetriesOnTemporalSucceedOnAttempt3(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	var calls atomic.Int32
	rc.SetHandler(func(w http.ResponseWriter, r *http.Request) bool {
		if calls.Add(1) == 3 {
			w.WriteHeader(200)
			return true
		}
		return false
	})
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	runWorker(t, f, time.Second, 2*time.Second)

	ev := f.event(outbox.InitiativeCreated, map[string]string{"name": "x"})
	testenv.Eventually(t, 30*time.Second, "the delivery to succeed", func() bool { return f.status(h, ev.ID) == dispatch.StatusDelivered })

	got := rc.Requests()
	if len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	// Attempt 2 one second after attempt 1, attempt 3 two seconds after that (timers, not sleeps).
	if d := got[1].At.Sub(got[0].At); d < 900*time.Millisecond || d > 5*time.Second {
		t.Errorf("attempt 2 after %s", d)
	}
	if d := got[2].At.Sub(got[0].At); d < 2900*time.Millisecond || d > 8*time.Second {
		t.Errorf("attempt 3 after %s", d)
	}
	for _, g := range got {
		if g.EventID != ev.ID.String() || string(g.Body) != string(got[0].Body) {
			t.Fatal("attempts differ in event id or body")
		}
	}
	a := f.attempts(f.delivery(h, ev.ID).ID)
	if len(a) != 3 || a[0].Trigger != "relay" || a[1].Trigger != "retry" || a[2].Outcome != "delivered" {
		t.Errorf("attempts %+v", a)
	}
	var res workflows.WebhookRetryResult
	run := testenv.TemporalClient(t).GetWorkflow(context.Background(), workflows.WebhookRetryWorkflowID(f.tenant.String(), h.String(), ev.ID.String()), "")
	if err := run.Get(context.Background(), &res); err != nil || res != (workflows.WebhookRetryResult{Outcome: workflows.WebhookRetryDelivered, Attempts: 3}) {
		t.Errorf("workflow result %+v %v", res, err)
	}
	if !f.hook(h).Active {
		t.Error("a delivered webhook was disabled")
	}
}

func TestRetriesOnTemporalAllFailDisables(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	runWorker(t, f, 500*time.Millisecond, 500*time.Millisecond)

	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	testenv.Eventually(t, 30*time.Second, "the webhook to be disabled", func() bool { return !f.hook(h).Active })
	w := f.hook(h)
	if w.DisabledAt == nil || !strings.Contains(*w.DisabledReason, "3 delivery attempts failed") {
		t.Errorf("webhook %+v", w)
	}
	if d := f.delivery(h, ev.ID); d.Status != dispatch.StatusFailed || d.Attempts != 3 {
		t.Errorf("delivery %+v", d)
	}
	// Later events are not sent to a disabled webhook.
	before := len(rc.Requests())
	ev2 := f.event(outbox.InitiativeCreated, map[string]string{})
	testenv.Eventually(t, 10*time.Second, "the relay to publish the next event", func() bool { return published(f, ev2.ID) })
	if len(rc.Requests()) != before || before != 3 {
		t.Errorf("requests: %d before, %d after", before, len(rc.Requests()))
	}
}

func TestRetriesOnTemporalGoneDisablesAtOnce(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	runWorker(t, f, 500*time.Millisecond, time.Hour) // attempt 3 would be an hour later
	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	testenv.Eventually(t, 10*time.Second, "attempt 1", func() bool { return len(rc.Requests()) == 1 })
	rc.SetStatus(http.StatusGone)
	testenv.Eventually(t, 20*time.Second, "the webhook to be disabled", func() bool { return !f.hook(h).Active })
	if w := f.hook(h); !strings.Contains(*w.DisabledReason, "410 Gone") {
		t.Errorf("reason %q", *w.DisabledReason)
	}
	if d := f.delivery(h, ev.ID); d.Status != dispatch.StatusFailed || d.Attempts != 2 {
		t.Errorf("delivery %+v", d)
	}
}

func published(f *fixture, id any) bool {
	var ok bool
	f.inTenant(func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "SELECT published_at IS NOT NULL FROM outbox_events WHERE id = $1", id).Scan(&ok)
	})
	return ok
}

// A refused delivery's retry run waits for attempt 2 as a delayed start: until it is due the run
// has only its start in Temporal (no workflow task a worker must run, no timer), and the run's
// detail still shows the wait as a timer, due the first delay after attempt 1.
func TestRetryRunWaitsForAttempt2WithoutAWorker(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	runWorker(t, f, time.Hour, time.Hour)

	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	testenv.Eventually(t, 30*time.Second, "the hand-over to the retry run", func() bool {
		return f.status(h, ev.ID) == dispatch.StatusRetrying && f.delivery(h, ev.ID).RetryScheduled
	})
	first := f.attempts(f.delivery(h, ev.ID).ID)[0].StartedAt

	tc := testenv.TemporalClient(t)
	id := workflows.WebhookRetryWorkflowID(f.tenant.String(), h.String(), ev.ID.String())
	t.Cleanup(func() { _ = tc.TerminateWorkflow(context.Background(), id, "", "test over") })
	time.Sleep(time.Second) // room for a workflow task, had one been scheduled
	var events []enums.EventType
	history := tc.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for history.HasNext() {
		e, err := history.Next()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e.GetEventType())
	}
	if len(events) != 1 || events[0] != enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
		t.Errorf("history while attempt 2 is not due: %v, want its start alone", events)
	}

	d, err := runs.Reader{Temporal: tc, Namespace: "default"}.Get(context.Background(), f.tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Steps) != 1 || d.Steps[0].Type != runs.StepTimer || d.Steps[0].Status != runs.StepWaiting ||
		!strings.HasPrefix(d.Steps[0].Description, "Waits for the next delivery attempt, due at ") {
		t.Fatalf("steps %+v", d.Steps)
	}
	if due := d.Steps[0].FiresAt.Sub(first.Add(time.Hour)); due < -time.Second || due > time.Second {
		t.Errorf("attempt 2 due %s, attempt 1 at %s: %s off the first delay", d.Steps[0].FiresAt, first, due)
	}
}
