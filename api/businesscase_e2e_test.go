package api_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/valuecase/valuecase/internal/config"
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
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BusinessCaseRemindAfter, cfg.BusinessCaseEscalateAfter = time.Second, 2*time.Second
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: tc, Log: testenv.QuietLogger()}
	go func() { defer close(done); _ = w.Run(wctx) }()
	t.Cleanup(func() { stop(); <-done })

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
