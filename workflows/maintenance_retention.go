package workflows

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/retention"
	"github.com/valuecase/valuecase/internal/runs"
)

// MaintenanceTaskQueue runs the service's own housekeeping.
const MaintenanceTaskQueue = "maintenance"

// RetentionScheduleID is the one Temporal Schedule of the housekeeping (and
// the prefix of its runs' workflow ids), as an operator finds it in the UI.
const RetentionScheduleID = "maintenance/retention"

// RetentionWorkflow removes the rows past their retention (internal/retention)
// and returns how many of each kind.
func RetentionWorkflow(ctx workflow.Context) (retention.Result, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Second, MaximumInterval: 5 * time.Minute, MaximumAttempts: 5},
	})
	var a *activities.RetentionActivities
	var res retention.Result
	err := workflow.ExecuteActivity(ctx, a.RetentionPurge).Get(ctx, &res)
	return res, err
}

// retentionSchedule is what the schedule should be: RetentionWorkflow every
// `every`, one run at a time (a run still going when the next is due skips it).
func retentionSchedule(every time.Duration) (client.ScheduleSpec, *client.ScheduleWorkflowAction) {
	// It belongs to no tenant: no search attributes; its runs carry the summary (UI and memo).
	subject := runs.Subject{Summary: "Housekeeping: remove rows past their retention (outbox, deliveries, sessions, exports, idempotency keys, audit events)"}
	return client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		&client.ScheduleWorkflowAction{
			ID:            RetentionScheduleID,
			Workflow:      RetentionWorkflow,
			TaskQueue:     MaintenanceTaskQueue,
			StaticSummary: subject.Summary,
			Memo:          subject.Memo(),
		}
}

// EnsureRetentionSchedule creates the maintenance/retention schedule, or
// brings an existing one to the configured interval: every worker calls it
// at start, so there is always exactly one, updated and never duplicated.
func EnsureRetentionSchedule(ctx context.Context, c client.Client, every time.Duration) error {
	spec, action := retentionSchedule(every)
	err := upsertSchedule(ctx, c, client.ScheduleOptions{
		ID: RetentionScheduleID, Spec: spec, Action: action,
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP,
		Note:    "created by the valuecase worker (RETENTION_* settings)",
	}, false) // an operator's pause in the UI stays
	if err != nil {
		return fmt.Errorf("schedule %s: %w", RetentionScheduleID, err)
	}
	return nil
}
