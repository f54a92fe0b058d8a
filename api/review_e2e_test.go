package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/db"

	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

// startWorker runs the real worker (Temporal workers + outbox relay) against the test's database.
func startWorker(t *testing.T, ts *testServer, tc client.Client, remindAfter time.Duration) {
	t.Helper()
	cfg := testConfig(t)
	cfg.ReviewReminderAfter = remindAfter
	runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: tc, Log: testenv.QuietLogger()})
}

func TestReviewWorkflowEndToEnd(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	tc := testenv.TemporalClient(t)
	startWorker(t, ts, tc, time.Second)
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Needs review"})
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "in_review"}), 200)

	review := func() map[string]any {
		r, _ := ts.do(&admin, "GET", "/v1/initiatives/"+id, nil).json(t)["review"].(map[string]any)
		return r
	}
	// The relay starts the workflow, which records the round and sends reminders every second.
	testenv.Eventually(t, 20*time.Second, "a review reminder", func() bool { r := review(); return r != nil && r["reminders_sent"].(float64) >= 1 })
	wfID := workflows.ReviewWorkflowID(ts.tenant.String(), id)
	if review()["workflow_id"] != wfID {
		t.Fatalf("review names workflow %v, want %s", review()["workflow_id"], wfID)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Operators find the run by tenant and read what it is about without opening it.
	desc, err := tc.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(desc.GetExecutionConfig().GetUserMetadata().GetSummary().GetData()); got != `"Review of initiative \"Needs review\""` {
		t.Errorf("summary %s", got)
	}
	testenv.Eventually(t, 10*time.Second, "the run listed under its TenantId", func() bool {
		res, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "TenantId = '" + ts.tenant.String() + "'"})
		return err == nil && len(res.Executions) == 1 && res.Executions[0].GetExecution().GetWorkflowId() == wfID
	})

	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "approved"}), 200)
	var result workflows.ReviewResult
	if err := tc.GetWorkflow(ctx, wfID, "").Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if result.Decision != "approved" || result.RemindersSent < 1 {
		t.Fatalf("workflow result %+v", result)
	}
	testenv.Eventually(t, 5*time.Second, "the decision on the initiative", func() bool { return review()["decision"] == "approved" })
}

func TestReviewStartsOnceTemporalIsBack(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Temporal outage"})
	// Temporal is down: the API still works.
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "in_review"}), 200)

	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{&workflows.ReviewEvents{Temporal: down, RemindAfter: time.Hour}}, Log: testenv.QuietLogger()}
	if _, err := relay.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var attempts int
	var pending bool
	var lastError string
	err = db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT attempts, published_at IS NULL, coalesce(last_error, '') FROM outbox_events WHERE type = 'initiative.status_changed'").Scan(&attempts, &pending, &lastError)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !pending || attempts != 1 || lastError == "" {
		t.Fatalf("with Temporal down the event must stay pending for a retry: attempts=%d pending=%v error=%q", attempts, pending, lastError)
	}

	// Temporal is back: the worker's relay picks the event up after its backoff.
	tc := testenv.TemporalClient(t)
	startWorker(t, ts, tc, time.Hour)
	wfID := workflows.ReviewWorkflowID(ts.tenant.String(), id)
	testenv.Eventually(t, 20*time.Second, "the review workflow to start", func() bool {
		_, err := tc.DescribeWorkflowExecution(ctx, wfID, "")
		return err == nil
	})
}
