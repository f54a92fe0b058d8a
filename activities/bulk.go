package activities

import (
	"context"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/bulk"
)

// BulkActivities are the activities of the bulk-import workflow, adapters
// over internal/bulk's job runner.
type BulkActivities struct {
	Jobs bulk.Jobs
}

// BulkJobRef names one import job.
type BulkJobRef struct {
	TenantID string
	JobID    string
}

func (r BulkJobRef) ids() (uuid.UUID, uuid.UUID, error) {
	t, err := uuid.Parse(r.TenantID)
	if err != nil {
		return uuid.Nil, uuid.Nil, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	id, err := uuid.Parse(r.JobID)
	if err != nil {
		return uuid.Nil, uuid.Nil, temporal.NewNonRetryableApplicationError("bad job id", "BadInput", err)
	}
	return t, id, nil
}

// BulkImportRun processes the job's rows, heartbeating the rows done.
func (a *BulkActivities) BulkImportRun(ctx context.Context, ref BulkJobRef) (bulk.Outcome, error) {
	t, id, err := ref.ids()
	if err != nil {
		return bulk.Outcome{}, err
	}
	return a.Jobs.Run(ctx, t, id, func(processed int) { activity.RecordHeartbeat(ctx, processed) })
}

// BulkImportFail marks the job failed with a reason.
func (a *BulkActivities) BulkImportFail(ctx context.Context, ref BulkJobRef, reason string) error {
	t, id, err := ref.ids()
	if err != nil {
		return err
	}
	return a.Jobs.Fail(ctx, t, id, reason)
}
