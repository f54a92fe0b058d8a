package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/runs"
)

var workflowsSuite = suite{
	name: "workflows",
	help: "GET /api/v1/agents/workflows (one page of 50 of a tenant's 1,000 runs) against a direct Temporal visibility query of the same page",
	run:  runWorkflows,
}

const (
	workflowsRuns     = 1000
	workflowsPage     = 50
	workflowsClients  = 2 // a latency goal: measured at light load, not at saturation
	workflowsGoalP99  = 100 * time.Millisecond
	workflowsSeedTQ   = "bench-workflows-seed"
	workflowsIdleTQ   = "bench-workflows-idle" // no worker: runs started here stay running
	workflowsRunning  = 20
	workflowsTerminal = 40
)

// seedRun is the workflow the seeding worker runs under the service's workflow type names:
// it completes at once. The runs carry what the service's starts set (readable ids, the
// TenantId/ObjectType/ObjectId search attributes, the memo summary and resource), so the list
// and visibility see exactly what they see in production; what a run did is not what is measured.
func seedRun(workflow.Context, any) error { return nil }

func runWorkflows(ctx context.Context, e *env) error {
	if exportTemporal == "" {
		return errors.New("the workflows suite needs a Temporal frontend (--temporal or BENCH_TEMPORAL_ADDRESS; make bench starts a dev server and points the API at it)")
	}
	tc, err := client.Dial(client.Options{HostPort: exportTemporal, Namespace: "default"})
	if err != nil {
		return err
	}
	defer tc.Close()
	t, err := benchutil.NewTenant(ctx, e.pool, e.keys, "bench workflows "+time.Now().UTC().Format(time.RFC3339Nano), benchSubject, []string{rbac.RoleAdmin}, rbac.Names())
	if err != nil {
		return err
	}
	if err := seedWorkflowRuns(ctx, tc, t.ID); err != nil {
		return err
	}
	all := runs.Readable(func(rbac.Permission) bool { return true })
	query, err := runs.Query(t.ID, all, runs.Filter{})
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/api/v1/agents/workflows?page_size=%d", workflowsPage)

	per := max(e.duration/time.Duration(max(e.rounds, 1)), time.Second)
	loop := func(ctx context.Context, once func(context.Context) error) ([]benchutil.Sample, int, error) {
		var (
			mu      sync.Mutex
			samples []benchutil.Sample
			errs    int
			wg      sync.WaitGroup
		)
		end := time.Now().Add(per)
		for range workflowsClients {
			wg.Go(func() {
				for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
					start := time.Now()
					err := once(ctx)
					s := benchutil.Sample{Start: start, End: time.Now()}
					mu.Lock()
					if err != nil {
						errs++
						if errs <= 3 {
							e.fail("workflows list", "side", err.Error())
						}
					} else if n >= e.warmup {
						samples = append(samples, s)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return samples, errs, ctx.Err()
	}
	apiSide := func(ctx context.Context, _ int) ([]benchutil.Sample, int, error) {
		return loop(ctx, func(ctx context.Context) error {
			req, err := e.request(ctx, http.MethodGet, path, t, nil)
			if err != nil {
				return err
			}
			res, err := e.client.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %d %.200s", path, res.StatusCode, body)
			}
			return nil
		})
	}
	visibilitySide := func(ctx context.Context, _ int) ([]benchutil.Sample, int, error) {
		return loop(ctx, func(ctx context.Context) error {
			res, err := tc.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: workflowsPage, Query: query})
			if err == nil && len(res.GetExecutions()) != workflowsPage {
				err = fmt.Errorf("visibility answered %d runs, want %d", len(res.GetExecutions()), workflowsPage)
			}
			return err
		})
	}
	got, err := benchutil.Alternate(ctx, e.rounds, apiSide, visibilitySide)
	if err != nil {
		return err
	}
	c := benchutil.NewComparison("workflows: GET /api/v1/agents/workflows (page of 50 of 1,000 runs)",
		"ListWorkflowExecutions on the dev server with the same query (TenantId, the kinds' workflow types) and page size, from the benchmark process", workflowsClients, got,
		fmt.Sprintf("%d runs in one tenant (%d completed, %d terminated, %d running; exports, syncs, webhook retries), started with the service's ids, search attributes and memo; %d clients per side", workflowsRuns, workflowsRuns-workflowsRunning-workflowsTerminal, workflowsTerminal, workflowsRunning, workflowsClients),
		"the API side: authentication, tenant, rate limit, the tenant transaction (caller's permissions), the same visibility query, the page's terminated runs' last_failure (their close events, read once per API process: a closed run's close event is final), JSON",
		fmt.Sprintf("goal: p99 under %s (p99 %.1f ms: %s)", workflowsGoalP99, got.API.P99MS, verdict(got.API.P99MS < float64(workflowsGoalP99.Milliseconds()))),
	)
	c.SideNames = []string{"GET /api/v1/agents/workflows", "visibility query"}
	e.report.Runs = append(e.report.Runs, c)
	return nil
}

// seedWorkflowRuns starts workflowsRuns runs in the tenant: most complete at once on a
// seeding worker, workflowsRunning stay running and workflowsTerminal are terminated by an
// "operator"; it returns once visibility shows them all.
func seedWorkflowRuns(ctx context.Context, tc client.Client, tenantID uuid.UUID) error {
	w := sdkworker.New(tc, workflowsSeedTQ, sdkworker.Options{})
	for _, name := range []string{"BusinessCaseExportWorkflow", "IntegrationSyncWorkflow", "WebhookRetryWorkflow"} {
		w.RegisterWorkflowWithOptions(seedRun, workflow.RegisterOptions{Name: name})
	}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	tenant := tenantID.String()
	caseID, integrationID, hookID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	started := time.Now()
	var idle []string
	for i := range workflowsRuns {
		var id, typ string
		var subject runs.Subject
		row := uuid.NewString()
		switch {
		case i%10 < 6:
			id, typ = runs.ExportRunID(tenant, caseID, row), "BusinessCaseExportWorkflow"
			subject = runs.Subject{Object: runs.Object{Type: runs.ObjectBusinessCase, ID: caseID}, ResourceType: runs.ResourceExport, ResourceID: row, Summary: fmt.Sprintf("PDF export of \"Benchmark case\" v%d", i)}
		case i%10 < 9:
			id, typ = runs.SyncRunID(tenant, integrationID, row), "IntegrationSyncWorkflow"
			subject = runs.Subject{Object: runs.Object{Type: runs.ObjectIntegration, ID: integrationID}, ResourceType: runs.ResourceSync, ResourceID: row, Summary: "Manual sync of integration \"Benchmark feed\" (http_feed)"}
		default:
			id, typ = "webhook-retry/"+tenant+"/"+hookID+"/"+row, "WebhookRetryWorkflow"
			subject = runs.Subject{Object: runs.Object{Type: runs.ObjectWebhook, ID: hookID}, Summary: "Retries of initiative.created event " + row}
		}
		tq := workflowsSeedTQ
		if i >= workflowsRuns-workflowsRunning-workflowsTerminal {
			tq = workflowsIdleTQ
			idle = append(idle, id)
		}
		_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: id, TaskQueue: tq, StaticSummary: subject.Summary, Memo: subject.Memo(),
			TypedSearchAttributes: temporal.NewSearchAttributes(
				temporal.NewSearchAttributeKeyKeyword(runs.TenantIDAttribute).ValueSet(tenant),
				temporal.NewSearchAttributeKeyKeyword(runs.ObjectTypeAttribute).ValueSet(string(subject.Object.Type)),
				temporal.NewSearchAttributeKeyKeyword(runs.ObjectIDAttribute).ValueSet(subject.Object.ID)),
		}, typ, nil)
		if err != nil {
			return fmt.Errorf("seeding run %d: %w", i, err)
		}
	}
	for _, id := range idle[:workflowsTerminal] {
		if err := tc.TerminateWorkflow(ctx, id, "", "benchmark: an operator ended a stuck run"); err != nil {
			return err
		}
	}
	count := func(q string) (int64, error) {
		res, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default", Query: q})
		return res.GetCount(), err
	}
	base := fmt.Sprintf("%s = '%s'", runs.TenantIDAttribute, tenant)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		total, err1 := count(base)
		open, err2 := count(base + " AND ExecutionStatus = 'Running'")
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if total == workflowsRuns && open == workflowsRunning {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("seeding: visibility shows %d runs, %d running, after 5 minutes", total, open)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	logf("workflows: %d runs seeded in tenant %s in %s", workflowsRuns, tenant, time.Since(started).Round(time.Millisecond))
	return nil
}
