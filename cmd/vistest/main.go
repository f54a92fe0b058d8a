package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/runs"
)

const (
	workflowsRuns     = 1000
	workflowsSeedTQ   = "bench-workflows-seed"
	workflowsIdleTQ   = "bench-workflows-idle"
	workflowsRunning  = 20
	workflowsTerminal = 40
)

func seedRun(workflow.Context, any) error { return nil }
func logf(f string, a ...any) { log.Printf(f, a...) }

func main() {
	addr := flag.String("addr", "", "")
	tenant := flag.String("tenant", "", "existing tenant (skip seeding)")
	n := flag.Int("n", 400, "")
	clients := flag.Int("c", 2, "")
	q := flag.String("q", "", "query override")
	size := flag.Int("size", 50, "")
	flag.Parse()
	ctx := context.Background()
	tc, err := client.Dial(client.Options{HostPort: *addr, Namespace: "default"})
	if err != nil { log.Fatal(err) }
	var tid uuid.UUID
	if *tenant == "" {
		tid = uuid.New()
		if err := seedWorkflowRuns(ctx, tc, tid); err != nil { log.Fatal(err) }
		fmt.Println("tenant", tid)
		return
	}
	tid = uuid.MustParse(*tenant)
	all := runs.Readable(func(rbac.Permission) bool { return true })
	query, _ := runs.Query(tid, all, runs.Filter{})
	if *q != "" { query = fmt.Sprintf(*q, tid) }
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for range *clients {
		wg.Go(func() {
			for range *n / *clients {
				s := time.Now()
				res, err := tc.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: int32(*size), Query: query})
				if err != nil { log.Fatal(err) }
				_ = res
				mu.Lock(); lat = append(lat, time.Since(s)); mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	p := func(x float64) time.Duration { return lat[int(x*float64(len(lat)-1))] }
	fmt.Printf("%q n=%d p50=%v p95=%v p99=%v max=%v\n", query, len(lat), p(.5), p(.95), p(.99), lat[len(lat)-1])
}

var _ = errors.New
var _ = temporal.NewSearchAttributeKeyKeyword

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
