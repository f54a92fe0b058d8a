package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// BulkImportTaskQueue is the task queue of bulk import jobs: a large import
// never delays approvals, exports or webhooks.
const BulkImportTaskQueue = "bulk-imports"

// BulkImportTimeout bounds one job (MaxRows rows at well over 1,000 rows/s).
const BulkImportTimeout = 30 * time.Minute

// BulkImportWorkflowID names one job.
func BulkImportWorkflowID(tenantID, jobID string) string {
	return fmt.Sprintf("bulk-import/%s/%s", tenantID, jobID)
}

// BulkImportInput starts a job. The rows are in PostgreSQL, not here.
type BulkImportInput struct {
	TenantID string
	JobID    string
}

// BulkImportWorkflow runs the job's one activity; the rows, their outcomes
// and the progress are in PostgreSQL (bulk_jobs, bulk_job_chunks). A retried
// activity resumes where the last committed chunk ended.
func BulkImportWorkflow(ctx workflow.Context, in BulkImportInput) (bulk.Outcome, error) {
	var a *activities.BulkActivities
	ref := activities.BulkJobRef{TenantID: in.TenantID, JobID: in.JobID}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: BulkImportTimeout,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
	var out bulk.Outcome
	if err := workflow.ExecuteActivity(actx, a.BulkImportRun, ref).Get(ctx, &out); err != nil {
		fctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
		reason := "the import stopped: " + err.Error()
		if ferr := workflow.ExecuteActivity(fctx, a.BulkImportFail, ref, reason).Get(ctx, nil); ferr != nil {
			return bulk.Outcome{}, ferr
		}
		return bulk.Outcome{Found: true, Status: "failed"}, nil
	}
	return out, nil
}

// BulkImportEvents is the outbox handler that starts the workflow of each
// bulk.import_requested event (idempotent: the workflow id is the job's).
type BulkImportEvents struct {
	Temporal client.Client
}

// Name implements outbox.Handler.
func (h *BulkImportEvents) Name() string { return "bulk-import" }

type bulkImportEvent struct {
	ID       string `json:"id"`
	Resource string `json:"resource"`
	Total    int    `json:"total"`
}

// StartTypes implements outbox.StartTypes: the relay gives these events the lane of workflow starts.
func (h *BulkImportEvents) StartTypes() []string { return []string{outbox.BulkImportRequested} }

// Handle implements outbox.Handler.
func (h *BulkImportEvents) Handle(ctx context.Context, ev outbox.Event) error {
	if ev.Type != outbox.BulkImportRequested {
		return nil
	}
	var e bulkImportEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("decode %s: %w", ev.Type, err)
	}
	tenant := ev.TenantID.String()
	summary := fmt.Sprintf("bulk import of %d %s", e.Total, e.Resource)
	_, err := h.Temporal.ExecuteWorkflow(ctx, startOptions(BulkImportWorkflowID(tenant, e.ID), BulkImportTaskQueue, tenant, runs.Subject{Object: runs.Object{Type: runs.ObjectBulkJob, ID: e.ID}, Summary: summary}),
		BulkImportWorkflow, BulkImportInput{TenantID: tenant, JobID: e.ID})
	return err
}
