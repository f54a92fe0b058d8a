package bulk

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
)

// ImportRequestedEvent is the data of the internal bulk.import_requested event.
type ImportRequestedEvent struct {
	ID       string `json:"id"`
	Resource string `json:"resource"`
	Total    int    `json:"total"`
}

// StartJob stores an import too large for one request as a job with its
// records, read and stored ChunkRows at a time (so the request holds one chunk,
// not 500,000 records), and the event whose handler starts the workflow that
// runs it. A record that cannot be read fails it (*ParseError, ErrTooManyRows):
// the caller's transaction then writes nothing.
func StartJob(ctx context.Context, tx pgx.Tx, a Actor, o Options, records Records) (dbsqlc.BulkJob, error) {
	job, err := db.Q.BulkJobCreate(ctx, tx, dbsqlc.BulkJobCreateParams{TenantID: a.TenantID, Resource: string(o.Resource), Mode: string(o.Mode),
		DryRun: o.DryRun, Atomic: o.Atomic, Total: 0, RequestedBy: a.Subject, RequestedRoles: a.Roles})
	if err != nil {
		return job, err
	}
	total := 0
	for {
		chunk, err := ReadRecords(records, ChunkRows)
		if err != nil || len(chunk) == 0 {
			if err != nil {
				return job, err
			}
			break
		}
		raw, err := json.Marshal(chunk)
		if err != nil {
			return job, err
		}
		if err := db.Q.BulkJobChunkInsert(ctx, tx, dbsqlc.BulkJobChunkInsertParams{TenantID: a.TenantID, JobID: job.ID, FirstIdx: int32(total), Records: raw}); err != nil {
			return job, err
		}
		total += len(chunk)
	}
	if job, err = db.Q.BulkJobSetTotal(ctx, tx, dbsqlc.BulkJobSetTotalParams{TenantID: a.TenantID, ID: job.ID, Total: int32(total)}); err != nil {
		return job, err
	}
	_, err = outbox.Write(ctx, tx, a.TenantID, outbox.BulkImportRequested, ImportRequestedEvent{ID: job.ID.String(), Resource: job.Resource, Total: total})
	return job, err
}
