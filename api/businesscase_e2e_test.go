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

// TestBusinessCaseApprovalEndToEnd: submit starts the approval workflow on
// the dev server through the outbox; it reminds, escalates once, and ends
// with the approval, recording each step on the case's approval round.
func TestBusinessCaseApprovalEndToEnd(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	tc := testenv.TemporalClient(t)
	cfg := testConfig(t)
	cfg.BusinessCaseRemindAfter, cfg.BusinessCaseEscalateAfter = time.Second, 2*time.Second
	runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: tc, Log: testenv.QuietLogger()})

	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Approved end to end"})
	ts.createBenefit(admin, benefitBody(initID, "Savings"))
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 1000, "currency": "EUR", "period": monthsAgo(6)}), 201)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	body := businessCaseBody(initID, "Data centre exit")
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r := ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	id := r.json(t)["id"].(string)
	path := "/v1/business-cases/" + id
	expect(t, ts.do(&admin, "POST", path+"/submit", nil), 200)

	round := func() map[string]any {
		m, _ := ts.do(&admin, "GET", path, nil).json(t)["approval_round"].(map[string]any)
		return m
	}
	testenv.Eventually(t, 30*time.Second, "a reminder and the escalation", func() bool {
		r := round()
		return r != nil && r["reminders_sent"].(float64) >= 1 && r["escalated_at"] != nil
	})
	wfID := workflows.BusinessCaseApprovalWorkflowID(ts.tenant.String(), id)
	if round()["workflow_id"] != wfID {
		t.Fatalf("round names workflow %v, want %s", round()["workflow_id"], wfID)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	desc, err := tc.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(desc.GetExecutionConfig().GetUserMetadata().GetSummary().GetData()); got != `"Approval of business case \"Data centre exit\" v1"` {
		t.Errorf("summary %s", got)
	}
	if q := desc.GetExecutionConfig().GetTaskQueue().GetName(); q != workflows.BusinessCaseApprovalTaskQueue {
		t.Errorf("task queue %s", q)
	}
	testenv.Eventually(t, 10*time.Second, "the run listed under its TenantId", func() bool {
		res, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "TenantId = '" + ts.tenant.String() + "'"})
		return err == nil && len(res.Executions) == 1 && res.Executions[0].GetExecution().GetWorkflowId() == wfID
	})

	expect(t, ts.do(&admin, "POST", path+"/approve", map[string]any{"approval_level": "board"}), 200)
	var result workflows.BusinessCaseApprovalResult
	if err := tc.GetWorkflow(ctx, wfID, "").Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if result.Decision != "approved" || result.RemindersSent < 1 || !result.Escalated {
		t.Fatalf("workflow result %+v", result)
	}
	testenv.Eventually(t, 5*time.Second, "the decision on the round", func() bool { return round()["decision"] == "approved" })
}

// TestBusinessCaseApprovalStartsOnceTemporalIsBack: with Temporal down the
// API still submits; the submitted event stays in the outbox and the
// approval workflow starts once Temporal is back.
func TestBusinessCaseApprovalStartsOnceTemporalIsBack(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Temporal outage"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Waiting case"))
	expect(t, r, 201)
	id := r.json(t)["id"].(string)
	expect(t, ts.do(&admin, "POST", "/v1/business-cases/"+id+"/submit", nil), 200)

	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	relay := &outbox.Relay{Pool: ts.pool, Handlers: []outbox.Handler{&workflows.BusinessCaseApprovalEvents{Temporal: down, RemindAfter: time.Hour, EscalateAfter: 2 * time.Hour}}, Log: testenv.QuietLogger()}
	if _, err := relay.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var attempts int
	var pending bool
	err = db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT attempts, published_at IS NULL FROM outbox_events WHERE type = 'business_case.submitted'").Scan(&attempts, &pending)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !pending || attempts != 1 {
		t.Fatalf("with Temporal down the submitted event must stay pending: attempts=%d pending=%v", attempts, pending)
	}

	tc := testenv.TemporalClient(t)
	startWorker(t, ts, tc, time.Hour)
	wfID := workflows.BusinessCaseApprovalWorkflowID(ts.tenant.String(), id)
	testenv.Eventually(t, 25*time.Second, "the approval workflow to start and open its round", func() bool {
		if _, err := tc.DescribeWorkflowExecution(ctx, wfID, ""); err != nil {
			return false
		}
		m, _ := ts.do(&admin, "GET", "/v1/business-cases/"+id, nil).json(t)["approval_round"].(map[string]any)
		return m != nil && m["workflow_id"] == wfID
	})
}
