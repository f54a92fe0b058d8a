package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// IntegrationSyncTaskQueue is the task queue of integration syncs and their activities: a slow
// provider never delays exports, approvals or webhooks.
const IntegrationSyncTaskQueue = integration.TaskQueue

// IntegrationSyncWorkflowID names one sync of one integration.
func IntegrationSyncWorkflowID(tenantID, integrationID, syncID string) string {
	return runs.SyncRunID(tenantID, integrationID, syncID)
}

// IntegrationScheduleID names the Temporal Schedule of one integration. The schedule's action
// is IntegrationScheduledSyncWorkflow with the id IntegrationScheduleID + "/scheduled" (Temporal
// appends the firing time), which creates the sync row and runs the sync as its child.
func IntegrationScheduleID(tenantID, integrationID string) string {
	return runs.IntegrationScheduleID(tenantID, integrationID)
}

const integrationSchedulePrefix = "integration-sync/"

// IntegrationSyncInput starts a sync.
type IntegrationSyncInput struct {
	TenantID      string
	IntegrationID string
	SyncID        string
	// HeartbeatTimeout of the fetch activity (0: 10 s): how soon a killed worker's fetch is
	// retried elsewhere (the fetch heartbeats every 2 s, also during a slow page).
	HeartbeatTimeout time.Duration
}

// IntegrationSyncResult is how the sync ended ("" Status: nothing to do).
type IntegrationSyncResult struct {
	Status string
	Pages  int
	Error  string
}

// IntegrationSyncWorkflow runs one sync: begin, fetch-and-write page by page (one long activity
// heartbeating its cursor; retried with backoff on 429/5xx honouring Retry-After), finish.
func IntegrationSyncWorkflow(ctx workflow.Context, in IntegrationSyncInput) (IntegrationSyncResult, error) {
	ref := activities.SyncRef{TenantID: in.TenantID, IntegrationID: in.IntegrationID, SyncID: in.SyncID}
	var a *activities.IntegrationActivities
	short := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
	})
	var begun bool
	if err := workflow.ExecuteActivity(short, a.IntegrationSyncBegin, ref).Get(ctx, &begun); err != nil {
		if temporal.IsCanceledError(err) {
			return IntegrationSyncResult{}, markCanceled(ctx, a.IntegrationSyncCancel, ref)
		}
		return IntegrationSyncResult{}, err
	}
	if !begun {
		return IntegrationSyncResult{}, nil
	}
	hb := in.HeartbeatTimeout
	if hb <= 0 {
		hb = 10 * time.Second
	}
	fetch := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: 2 * time.Minute, MaximumAttempts: 8,
			NonRetryableErrorTypes: []string{activities.ErrTypeUnauthorized, activities.ErrTypePermanent, activities.ErrTypeRateLimited},
		},
	})
	var pages int
	err := workflow.ExecuteActivity(fetch, a.IntegrationSyncFetch, ref).Get(ctx, &pages)
	if temporal.IsCanceledError(err) || ctx.Err() != nil {
		return IntegrationSyncResult{}, markCanceled(ctx, a.IntegrationSyncCancel, ref)
	}
	end := activities.SyncEnd{}
	if err != nil {
		end = describeSyncError(err)
	}
	var status string
	if err := workflow.ExecuteActivity(short, a.IntegrationSyncFinish, ref, end).Get(ctx, &status); err != nil {
		return IntegrationSyncResult{}, err
	}
	return IntegrationSyncResult{Status: status, Pages: pages, Error: end.Error}, nil
}

// describeSyncError turns the fetch activity's failure into how the sync ends.
func describeSyncError(err error) activities.SyncEnd {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case activities.ErrTypeUnauthorized:
			return activities.SyncEnd{Error: integration.NeedsReauth + ": " + app.Message(), NeedsReauth: true}
		case activities.ErrTypeRateLimited:
			var after time.Duration
			if app.HasDetails() {
				_ = app.Details(&after)
			}
			return activities.SyncEnd{Error: app.Message(), RateLimited: true, RetryAfter: after}
		case activities.ErrTypeRetryable:
			return activities.SyncEnd{Error: "the provider kept failing; gave up after retries: " + app.Message()}
		}
		return activities.SyncEnd{Error: app.Message()}
	}
	if _, ok := errors.AsType[*temporal.TimeoutError](err); ok {
		return activities.SyncEnd{Error: "the sync took too long and was stopped"}
	}
	return activities.SyncEnd{Error: "the sync failed: " + err.Error()}
}

// IntegrationScheduledSyncInput is the schedule action's argument.
type IntegrationScheduledSyncInput struct {
	TenantID      string
	IntegrationID string
}

// IntegrationScheduledSyncWorkflow is what a schedule firing runs: it creates the sync row
// (trigger schedule; skipped when the integration is not active or already syncing) and runs
// the sync as a child named like a manual one. It waits for the child, so the schedule's
// overlap policy (skip) covers the whole sync.
func IntegrationScheduledSyncWorkflow(ctx workflow.Context, in IntegrationScheduledSyncInput) (IntegrationSyncResult, error) {
	var a *activities.IntegrationActivities
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var s activities.ScheduledSync
	if err := workflow.ExecuteActivity(actx, a.IntegrationSyncScheduled, in.TenantID, in.IntegrationID).Get(ctx, &s); err != nil {
		return IntegrationSyncResult{}, err
	}
	if s.SyncID == "" {
		return IntegrationSyncResult{}, nil
	}
	subject := runs.Subject{Object: runs.Object{Type: runs.ObjectIntegration, ID: in.IntegrationID}, ResourceType: runs.ResourceSync, ResourceID: s.SyncID,
		Summary: fmt.Sprintf("Scheduled sync of integration %q", s.Name)}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            IntegrationSyncWorkflowID(in.TenantID, in.IntegrationID, s.SyncID),
		TaskQueue:             IntegrationSyncTaskQueue,
		TypedSearchAttributes: searchAttributes(in.TenantID, subject.Object),
		Memo:                  subject.Memo(),
		StaticSummary:         subject.Summary,
	})
	var res IntegrationSyncResult
	err := workflow.ExecuteChildWorkflow(cctx, IntegrationSyncWorkflow, IntegrationSyncInput{TenantID: in.TenantID, IntegrationID: in.IntegrationID, SyncID: s.SyncID}).Get(ctx, &res)
	return res, err
}

// IntegrationEvents is the outbox handler of integrations: integration.changed makes the
// integration's Temporal Schedule match its row (create, update, pause, delete);
// integration.sync_requested starts a manual sync's workflow. Both are idempotent.
type IntegrationEvents struct {
	Temporal client.Client
	Store    integration.Store
}

// Name implements outbox.Handler.
func (h *IntegrationEvents) Name() string { return "integration" }

// StartTypes implements outbox.StartTypes: the relay gives these events the lane of workflow starts.
func (h *IntegrationEvents) StartTypes() []string {
	return []string{integration.EventChanged, integration.EventSyncRequested}
}

// Handle implements outbox.Handler.
func (h *IntegrationEvents) Handle(ctx context.Context, ev outbox.Event) error {
	switch ev.Type {
	case integration.EventChanged:
		var e integration.ChangedEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return fmt.Errorf("decode %s: %w", ev.Type, err)
		}
		id, err := uuid.Parse(e.ID)
		if err != nil {
			return fmt.Errorf("decode %s: %w", ev.Type, err)
		}
		want, err := h.Store.SchedulingFor(ctx, ev.TenantID, id)
		if err != nil {
			return err
		}
		return ApplyIntegrationSchedule(ctx, h.Temporal, want)
	case integration.EventSyncRequested:
		var e integration.SyncRequestedEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return fmt.Errorf("decode %s: %w", ev.Type, err)
		}
		tenant := ev.TenantID.String()
		id := IntegrationSyncWorkflowID(tenant, e.IntegrationID, e.SyncID)
		subject := runs.Subject{Object: runs.Object{Type: runs.ObjectIntegration, ID: e.IntegrationID}, ResourceType: runs.ResourceSync, ResourceID: e.SyncID,
			Summary: fmt.Sprintf("Manual sync of integration %q (%s)", e.Name, e.Provider)}
		_, err := h.Temporal.ExecuteWorkflow(ctx, startOptions(id, IntegrationSyncTaskQueue, tenant, subject),
			IntegrationSyncWorkflow, IntegrationSyncInput{TenantID: tenant, IntegrationID: e.IntegrationID, SyncID: e.SyncID})
		return err
	}
	return nil
}

// IntegrationScheduleSpec is the Temporal spec of a schedule: a calendar on the wall clock of
// the integration's time zone (TimeZoneName), so "daily at 02:00 Europe/Berlin" fires at 02:00
// Berlin time on both sides of a DST change.
func IntegrationScheduleSpec(s integration.Schedule) (client.ScheduleSpec, bool) {
	c, ok := s.Calendar()
	if !ok {
		return client.ScheduleSpec{}, false
	}
	cal := client.ScheduleCalendarSpec{Second: []client.ScheduleRange{{Start: 0}}, DayOfMonth: []client.ScheduleRange{{Start: 1, End: 31}},
		Month: []client.ScheduleRange{{Start: 1, End: 12}}, Comment: string(s.Frequency)}
	for _, m := range c.Minutes {
		cal.Minute = append(cal.Minute, client.ScheduleRange{Start: m})
	}
	if c.Hours == nil {
		cal.Hour = []client.ScheduleRange{{Start: 0, End: 23}}
	}
	for _, h := range c.Hours {
		cal.Hour = append(cal.Hour, client.ScheduleRange{Start: h})
	}
	if c.Weekday >= 0 {
		cal.DayOfWeek = []client.ScheduleRange{{Start: c.Weekday}}
	} else {
		cal.DayOfWeek = []client.ScheduleRange{{Start: 0, End: 6}}
	}
	return client.ScheduleSpec{Calendars: []client.ScheduleCalendarSpec{cal}, TimeZoneName: s.TimeZone}, true
}

// ApplyIntegrationSchedule makes the Temporal Schedule of one integration match want: created
// or updated (spec, paused) when wanted, deleted otherwise. Idempotent.
func ApplyIntegrationSchedule(ctx context.Context, tc client.Client, want integration.Scheduling) error {
	tenant, id := want.TenantID.String(), want.ID.String()
	sid := IntegrationScheduleID(tenant, id)
	handle := tc.ScheduleClient().GetHandle(ctx, sid)
	spec, ok := IntegrationScheduleSpec(want.Schedule)
	if !want.Wanted || !ok {
		err := handle.Delete(ctx)
		if _, notFound := errors.AsType[*serviceerror.NotFound](err); notFound {
			return nil
		}
		return err
	}
	note := runs.ScheduleNoteActive
	if want.Paused {
		note = runs.ScheduleNotePaused
	}
	// The schedule and every run it starts carry the tenant, the integration and a summary,
	// so the Temporal UI filters and names both, and GET /api/v1/agents/workflows lists the runs.
	subject := runs.Subject{Object: runs.Object{Type: runs.ObjectIntegration, ID: id}, Summary: fmt.Sprintf("Scheduled sync of integration %q", want.Name)}
	return upsertSchedule(ctx, tc, client.ScheduleOptions{
		ID:   sid,
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{
			ID:                    sid + "/scheduled",
			Workflow:              IntegrationScheduledSyncWorkflow,
			Args:                  []any{IntegrationScheduledSyncInput{TenantID: tenant, IntegrationID: id}},
			TaskQueue:             IntegrationSyncTaskQueue,
			TypedSearchAttributes: searchAttributes(tenant, subject.Object),
			Memo:                  subject.Memo(),
			StaticSummary:         subject.Summary,
		},
		Overlap:               enums.SCHEDULE_OVERLAP_POLICY_SKIP,
		Paused:                want.Paused,
		Note:                  note,
		Memo:                  subject.Memo(),
		TypedSearchAttributes: searchAttributes(tenant, subject.Object),
	}, true, runs.ScheduleNoteActive, runs.ScheduleNotePaused) // the database pauses the schedule; an operator's pause stays
}

// ReconcileIntegrationSchedules makes Temporal's integration schedules match the database at
// worker start: every wanted schedule is created or updated, and schedules of integrations
// that no longer want one (deleted, disconnected, manual) are deleted. Returns how many were
// applied and deleted.
func ReconcileIntegrationSchedules(ctx context.Context, tc client.Client, store integration.Store, log *slog.Logger) (applied, deleted int, err error) {
	wanted, err := store.AllSchedulings(ctx)
	if err != nil {
		return 0, 0, err
	}
	keep := map[string]bool{}
	for _, w := range wanted {
		keep[IntegrationScheduleID(w.TenantID.String(), w.ID.String())] = true
		if err := ApplyIntegrationSchedule(ctx, tc, w); err != nil {
			return applied, deleted, fmt.Errorf("schedule of integration %s: %w", w.ID, err)
		}
		applied++
	}
	it, err := tc.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 500})
	if err != nil {
		return applied, deleted, err
	}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return applied, deleted, err
		}
		if !strings.HasPrefix(e.ID, integrationSchedulePrefix) || keep[e.ID] {
			continue
		}
		err = tc.ScheduleClient().GetHandle(ctx, e.ID).Delete(ctx)
		if _, notFound := errors.AsType[*serviceerror.NotFound](err); err != nil && !notFound {
			return applied, deleted, err
		}
		deleted++
		if log != nil {
			log.Info("deleted a leftover integration schedule", "schedule_id", e.ID)
		}
	}
	return applied, deleted, nil
}
