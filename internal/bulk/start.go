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
// records (in chunks of ChunkRows), and the event whose handler starts the
// workflow that runs it.
func StartJob(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record) (dbsqlc.BulkJob, error) {
	job, err := db.Q.BulkJobCreate(ctx, tx, dbsqlc.BulkJobCreateParams{TenantID: a.TenantID, Resource: string(o.Resource), Mode: string(o.Mode),
		DryRun: o.DryRun, Atomic: o.Atomic, Total: int32(len(records)), RequestedBy: a.Subject, RequestedRoles: a.Roles})
	if err != nil {
		return job, err
	}
	for from := 0; from < len(records); from += ChunkRows {
		chunk := records[from:min(from+ChunkRows, len(records))]
		raw, idxs := make([][]byte, len(chunk)), make([]int32, len(chunk))
		for i, r := range chunk {
			if raw[i], err = json.Marshal(r); err != nil {
				return job, err
			}
			idxs[i] = int32(from + i)
		}
		if err := db.Q.BulkJobRowsInsert(ctx, tx, dbsqlc.BulkJobRowsInsertParams{TenantID: a.TenantID, JobID: job.ID, Idxs: idxs, Records: raw}); err != nil {
			return job, err
		}
	}
	_, err = outbox.Write(ctx, tx, a.TenantID, outbox.BulkImportRequested, ImportRequestedEvent{ID: job.ID.String(), Resource: job.Resource, Total: len(records)})
	return job, err
}
