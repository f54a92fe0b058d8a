package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// BusinessCaseExportTaskQueue is the task queue of the export workflow and
// its activities: rendering never delays approvals or webhooks.
const BusinessCaseExportTaskQueue = "business-case-exports"

// ExportDeadline is the spec's limit for one export (section 8): past it the
// export fails with a clear error instead of staying running.
const ExportDeadline = 60 * time.Second

// BusinessCaseExportWorkflowID names one export of one case.
func BusinessCaseExportWorkflowID(tenantID, caseID, exportID string) string {
	return runs.ExportRunID(tenantID, caseID, exportID)
}

// BusinessCaseExportInput starts an export.
type BusinessCaseExportInput struct {
	TenantID string
	CaseID   string
	ExportID string
	Deadline time.Duration // 0: ExportDeadline
}

// BusinessCaseExportResult is how the export ended.
type BusinessCaseExportResult struct {
	Status string // succeeded, failed, or "" (nothing to do: gone or already finished)
	Size   int
	Error  string
}

// BusinessCaseExportWorkflow marks the export running, then renders and
// stores the document. Only ids and the moment of the snapshot pass through
// its history: the render activity reads the case itself, so a case of any
// accepted size stays far below Temporal's payload limit. Every activity is
// bounded by what is left of the deadline, and the render heartbeats, so a
// killed worker's attempt is retried on the next one; past the deadline the
// export is marked failed.
//
// Runs started before the case left the history replay on this code without
// a version marker: the activities, their order and options are unchanged,
// ExportSnapshot only lost its case (an old result decodes, the case
// ignored) and ExportRender reads the case by id whatever snapshot it is
// given (see docs/exports.md, "Deploying").
func BusinessCaseExportWorkflow(ctx workflow.Context, in BusinessCaseExportInput) (BusinessCaseExportResult, error) {
	deadline := in.Deadline
	if deadline <= 0 {
		deadline = ExportDeadline
	}
	end := workflow.Now(ctx).Add(deadline)
	ref := activities.ExportRef{TenantID: in.TenantID, ExportID: in.ExportID}
	var a *activities.ExportActivities
	options := func() workflow.Context {
		return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			ScheduleToCloseTimeout: max(end.Sub(workflow.Now(ctx)), time.Second),
			StartToCloseTimeout:    deadline,
			HeartbeatTimeout:       10 * time.Second,
			RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumInterval: 2 * time.Second},
		})
	}
	fail := func(err error) (BusinessCaseExportResult, error) {
		if temporal.IsCanceledError(err) {
			return BusinessCaseExportResult{}, markCanceled(ctx, a.ExportCancel, ref)
		}
		reason := describe(err, deadline)
		fctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
		if ferr := workflow.ExecuteActivity(fctx, a.ExportFail, ref, reason).Get(ctx, nil); ferr != nil {
			return BusinessCaseExportResult{}, ferr
		}
		return BusinessCaseExportResult{Status: "failed", Error: reason}, nil
	}
	var snap activities.ExportSnapshot
	if err := workflow.ExecuteActivity(options(), a.ExportTakeSnapshot, ref).Get(ctx, &snap); err != nil {
		return fail(err)
	}
	if !snap.Found {
		return BusinessCaseExportResult{}, nil
	}
	if ctx.Err() != nil { // canceled while the snapshot was taken
		return BusinessCaseExportResult{}, markCanceled(ctx, a.ExportCancel, ref)
	}
	var size int
	if err := workflow.ExecuteActivity(options(), a.ExportRender, ref, snap).Get(ctx, &size); err != nil {
		return fail(err)
	}
	return BusinessCaseExportResult{Status: "succeeded", Size: size}, nil
}

// markCanceled runs the activity that records a canceled run on its row, in a
// context the cancel does not reach, and returns the cancel (the run ends
// canceled: the Temporal UI and GET /api/v1/agents/workflows say so).
func markCanceled(ctx workflow.Context, activity, ref any) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	if err := workflow.ExecuteActivity(dctx, activity, ref, runs.CanceledReason).Get(dctx, nil); err != nil {
		return err
	}
	return temporal.NewCanceledError()
}

// describe turns an activity failure into the export's error text.
func describe(err error, deadline time.Duration) string {
	if _, ok := errors.AsType[*temporal.TimeoutError](err); ok {
		return fmt.Sprintf("the export took longer than %s and was stopped; try again, or without appendices", deadline)
	}
	if f, ok := activities.ExportFailureOf(err); ok {
		if f.Kind == activities.ExportInvalidCase {
			return "the document could not be rendered: " + f.Reason
		}
		return "the export failed: " + f.Reason
	}
	if app, ok := errors.AsType[*temporal.ApplicationError](err); ok {
		return "the export failed: " + app.Message()
	}
	return "the export failed: " + err.Error()
}

// BusinessCaseExportEvents is the outbox handler that starts an export
// workflow for each business_case.export_requested event (idempotent: the
// workflow id is the export's).
type BusinessCaseExportEvents struct {
	Temporal client.Client
}

// Name implements outbox.Handler.
func (h *BusinessCaseExportEvents) Name() string { return "business-case-export" }

// StartTypes implements outbox.StartTypes: the relay gives these events the lane of workflow starts.
func (h *BusinessCaseExportEvents) StartTypes() []string {
	return []string{outbox.BusinessCaseExportRequested}
}

// Handle implements outbox.Handler.
func (h *BusinessCaseExportEvents) Handle(ctx context.Context, ev outbox.Event) error {
	if ev.Type != outbox.BusinessCaseExportRequested {
		return nil
	}
	var e export.RequestedEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("decode %s: %w", ev.Type, err)
	}
	tenant := ev.TenantID.String()
	id := BusinessCaseExportWorkflowID(tenant, e.BusinessCaseID, e.ID)
	summary := fmt.Sprintf("%s export of %q v%d", strings.ToUpper(e.Format), e.CaseName, e.CaseVersion)
	subject := runs.Subject{Object: runs.Object{Type: runs.ObjectBusinessCase, ID: e.BusinessCaseID}, ResourceType: runs.ResourceExport, ResourceID: e.ID, Summary: summary}
	_, err := h.Temporal.ExecuteWorkflow(ctx, startOptions(id, BusinessCaseExportTaskQueue, tenant, subject), BusinessCaseExportWorkflow,
		BusinessCaseExportInput{TenantID: tenant, CaseID: e.BusinessCaseID, ExportID: e.ID})
	return err
}
