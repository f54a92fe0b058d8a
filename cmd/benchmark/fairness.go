package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/runs"
)

var (
	fairnessEvents int
	fairnessStarts int
)

var fairnessSuite = suite{
	name: "fairness",
	help: "export start of one tenant while another drains a backlog of webhook deliveries to a refusing receiver, against the same start on an idle worker (API + worker on a Temporal dev server)",
	flags: func(fs *flag.FlagSet) {
		fs.IntVar(&fairnessEvents, "fairness-events", envInt("BENCH_FAIRNESS_EVENTS", 100_000), "fairness: tenant A's backlog of events [BENCH_FAIRNESS_EVENTS]")
		fs.IntVar(&fairnessStarts, "fairness-starts", envInt("BENCH_FAIRNESS_STARTS", 5), "fairness: tenant B's exports per side and round [BENCH_FAIRNESS_STARTS]")
	},
	run: runFairness,
}

// fairnessGoal: tenant B's export starts within 2 s while tenant A drains its backlog.
const fairnessGoal = 2 * time.Second

func runFairness(ctx context.Context, e *env) error {
	if exportTemporal == "" {
		return errors.New("the fairness suite needs a Temporal frontend (--temporal or BENCH_TEMPORAL_ADDRESS; make bench starts a dev server)")
	}
	stopWorker, _, err := e.startWorker(ctx, "fairness", exportTemporal)
	if err != nil {
		return err
	}
	defer stopWorker()
	if err := e.waitOutboxDrained(ctx, time.Minute); err != nil {
		return err
	}
	perms := []string{string(rbac.InitiativesWrite), string(rbac.InitiativesRead), string(rbac.BusinessCasesRead), string(rbac.BusinessCasesWrite), string(rbac.AdminConfig)}
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	a, err := benchutil.NewTenant(ctx, e.pool, e.keys, "bench fairness A "+stamp, benchSubject, []string{rbac.RoleAdmin}, perms)
	if err != nil {
		return err
	}
	b, err := benchutil.NewTenant(ctx, e.pool, e.keys, "bench fairness B "+stamp, benchSubject, []string{rbac.RoleAdmin}, perms)
	if err != nil {
		return err
	}
	// Tenant A: a webhook to a loopback port with no listener (every attempt refused), and a backlog.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	refusing := "http://" + l.Addr().String() + "/hook"
	l.Close()
	if err := e.post(ctx, a, "/v1/webhooks", map[string]any{"url": refusing, "events": []string{outbox.BenefitActualRecorded}, "secret": "benchmark-secret-0123456789"}, nil); err != nil {
		return err
	}
	events := make([][]byte, fairnessEvents)
	for i := range events {
		events[i] = fmt.Appendf(nil, `{"benefit_id":%q,"period":"2026-%02d","value":%d,"revision":1}`, uuid.NewString(), i%12+1, i)
	}
	if err := db.InTenant(ctx, e.pool, a.ID, func(tx pgx.Tx) error {
		return outbox.WriteMany(ctx, tx, a.ID, outbox.BenefitActualRecorded, events)
	}); err != nil {
		return err
	}
	// Tenant B: a case to export.
	var in, bc struct {
		ID string `json:"id"`
	}
	if err := e.post(ctx, b, "/v1/initiatives", map[string]any{"name": "Fairness benchmark"}, &in); err != nil {
		return err
	}
	if err := e.post(ctx, b, "/v1/business-cases", map[string]any{"initiative_id": in.ID, "name": "B's case", "template": "executive_summary",
		"sections": []string{"executive_summary", "financial_analysis"}}, &bc); err != nil {
		return err
	}
	exportPath := "/v1/business-cases/" + bc.ID + "/export"
	logf("fairness: tenant A %s has %d events for a refusing receiver; tenant B %s exports", a.ID, fairnessEvents, b.ID)

	// Tenant A's backlog is parked (not due) for the idle side and due again for the loaded one.
	var dueSince time.Time // while A's backlog is due: since when
	var due time.Duration  // A's backlog was due in all
	endDue := func() {
		if !dueSince.IsZero() {
			due += time.Since(dueSince)
			dueSince = time.Time{}
		}
	}
	park := func(ctx context.Context, parked bool) error {
		at := "now()"
		if parked {
			at = "now() + interval '1 day'"
		}
		_, err := e.updatePendingEvents(ctx, a.ID, "next_attempt_at = "+at)
		if endDue(); !parked {
			dueSince = time.Now()
		}
		if err == nil {
			time.Sleep(2 * time.Second) // deliveries in flight finish (parked) or the relay is busy again (due)
		}
		return err
	}
	starts := func(parked bool) benchutil.Side {
		return func(ctx context.Context, _ int) ([]benchutil.Sample, int, error) {
			if err := park(ctx, parked); err != nil {
				return nil, 0, err
			}
			var out []benchutil.Sample
			errs := 0
			for range fairnessStarts {
				start := time.Now()
				if err := e.exportStart(ctx, b, exportPath); err != nil {
					errs++
					e.fail("fairness", "export start", err.Error())
					continue
				}
				out = append(out, benchutil.Sample{Start: start, End: time.Now()})
			}
			return out, errs, nil
		}
	}
	got, err := benchutil.Alternate(ctx, e.rounds, starts(false), starts(true))
	if err != nil {
		return err
	}
	pending, err := e.pendingEvents(ctx, a.ID)
	if err != nil {
		return err
	}
	endDue()
	handled := fairnessEvents - pending
	c := benchutil.NewComparison("export start while another tenant drains a webhook backlog",
		"the same export start with that backlog parked (not due), on the same worker", 1, got,
		fmt.Sprintf("%d exports of tenant B per side and round, one at a time: POST /export → 202, then GET the status every 25 ms until it leaves queued (the relay claimed the event and the workflow's first activity ran)", fairnessStarts),
		fmt.Sprintf("tenant A: %d benefit.actual_recorded events for a webhook whose receiver refuses every connection (each failure hands over to a retry workflow); %d handled while due (%.1f s: %.0f/s), %d still pending at the end",
			fairnessEvents, handled, due.Seconds(), float64(handled)/max(due.Seconds(), 0.001), pending),
		fmt.Sprintf("goal: under %s while A drains (p99 %.0f ms: %s)", fairnessGoal, got.API.P99MS, verdict(got.API.P99MS <= float64(fairnessGoal.Milliseconds()))),
	)
	c.SideNames = []string{"while tenant A drains", "tenant A parked"}
	e.report.Runs = append(e.report.Runs, c)
	// Leave no backlog for the suites after this one (they wait for an empty outbox): the
	// receiver refuses for good, so A's events are published unrelayed.
	if err := e.publishTenantEvents(ctx, a.ID); err != nil {
		return err
	}
	// Nor A's retry workflows: each delivery the receiver refused waits 5 minutes for attempt 2,
	// which would otherwise run on the worker of a later suite, inside its measurement (about
	// 1,900 attempts fell inside the scaling suite's 100,000-record sync).
	ended, err := endTenantRuns(ctx, a.ID)
	logf("fairness: ended tenant A's %d running workflows (webhook retries)", ended)
	return err
}

// endTenantRuns terminates the tenant's running workflows on the suites' dev server and
// returns how many it ended.
func endTenantRuns(ctx context.Context, tenantID uuid.UUID) (int, error) {
	tc, err := client.Dial(client.Options{HostPort: exportTemporal, Namespace: "default"})
	if err != nil {
		return 0, err
	}
	defer tc.Close()
	query := fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'", runs.TenantIDAttribute, tenantID)
	ended := 0
	for {
		res, err := tc.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1000, Query: query})
		if err != nil {
			return ended, err
		}
		if len(res.GetExecutions()) == 0 {
			return ended, nil
		}
		ids := make(chan string)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				for id := range ids {
					err := tc.TerminateWorkflow(ctx, id, "", "benchmark: the fairness suite's receiver refuses for good")
					if _, done := errors.AsType[*serviceerror.NotFound](err); err != nil && !done && errs[i] == nil { // done: finished meanwhile
						errs[i] = err
					}
				}
			})
		}
		for _, ex := range res.GetExecutions() {
			ids <- ex.GetExecution().GetWorkflowId()
		}
		close(ids)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return ended, err
		}
		ended += len(res.GetExecutions())
	}
}

// exportStart requests a PDF export and waits until it leaves queued.
func (e *env) exportStart(ctx context.Context, t benchutil.Tenant, path string) error {
	var created struct {
		StatusURL string `json:"status_url"`
	}
	if err := e.post(ctx, t, path, map[string]any{"format": "pdf"}, &created); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		body, status, err := e.getBody(ctx, t, created.StatusURL)
		if err != nil {
			return err
		}
		var st struct {
			Status string `json:"status"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &st) != nil {
			return fmt.Errorf("GET %s: %d %.200s", created.StatusURL, status, body)
		}
		if st.Status != "queued" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("export still queued after 2 minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
