package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/valuecase/valuecase/internal/retention"
)

// RetentionActivities run the housekeeping of internal/retention.
type RetentionActivities struct {
	Purger retention.Purger
}

// RetentionPurge removes every row past its retention, in batches, and
// heartbeats the running counts after each batch: a worker that dies is
// noticed within the heartbeat timeout and the retry starts over (what was
// removed stays removed).
func (a *RetentionActivities) RetentionPurge(ctx context.Context) (retention.Result, error) {
	return a.Purger.Run(ctx, activity.GetInfo(ctx).StartedTime, func(r retention.Result) { activity.RecordHeartbeat(ctx, r) })
}
