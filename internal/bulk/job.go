package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Jobs runs stored import jobs (the bulk-import workflow's activity is an
// adapter over Run). The records and their outcomes live in bulk_job_chunks,
// one row per chunk of ChunkRows records.
type Jobs struct {
	Pool      *pgxpool.Pool
	Importers map[Resource]Importer
}

// Outcome is how a run ended.
type Outcome struct {
	Found     bool // false: the job is gone or already finished
	Status    string
	Committed bool
	Summary   Summary
}

// errDiscard rolls back a dry run's or a failed atomic import's transaction.
var errDiscard = errors.New("bulk: discard the writes")

// Run processes a job. Without dry_run and atomic, each chunk of rows commits
// with its outcomes and the progress, so a retried run resumes at the first
// row without an outcome. A dry run or an atomic import runs every chunk in
// one transaction that commits (with the outcomes) or rolls back, after
// which the outcomes are stored. heartbeat reports the rows processed.
func (j Jobs) Run(ctx context.Context, tenantID, jobID uuid.UUID, heartbeat func(processed int)) (Outcome, error) {
	var job dbsqlc.BulkJob
	err := db.InTenant(ctx, j.Pool, tenantID, func(tx pgx.Tx) error {
		var err error
		job, err = db.Q.BulkJobStart(ctx, tx, dbsqlc.BulkJobStartParams{TenantID: tenantID, ID: jobID})
		return err
	})
	if db.IsNotFound(err) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	o := Options{Resource: Resource(job.Resource), Mode: Mode(job.Mode), DryRun: job.DryRun, Atomic: job.Atomic}
	imp := j.Importers[o.Resource]
	if imp == nil {
		return j.fail(ctx, job, fmt.Sprintf("bulk import of %s is not available", o.Resource))
	}
	actor := Actor{TenantID: tenantID, Subject: job.RequestedBy, Roles: job.RequestedRoles}
	sum := Summary{Total: int(job.Total), Created: int(job.Created), Updated: int(job.Updated), Unchanged: int(job.Unchanged), Failed: int(job.Failed)}
	if !o.DryRun && !o.Atomic {
		// Chunks are taken in index order and a chunk's outcomes commit with its writes, so every
		// chunk below the next index has them: each read starts there.
		for next := int(job.Processed); ; {
			n, last := 0, 0
			err := db.InTenant(ctx, j.Pool, tenantID, func(tx pgx.Tx) error {
				results, err := j.chunk(ctx, tx, imp, actor, o, job, next)
				n = len(results)
				if err != nil || n == 0 {
					return err
				}
				last = results[n-1].Index
				return record(ctx, tx, job, results, &sum)
			})
			if err != nil {
				return Outcome{}, err
			}
			if n == 0 {
				break
			}
			next = last + 1
			heartbeat(int(job.Processed) + n)
			job.Processed += int32(n)
		}
		return j.finish(ctx, job, sum, true)
	}
	all := make([]Result, 0, job.Total) // every outcome is kept until the end: no doubling copies of 500,000
	commit := false
	err = db.InTenant(ctx, j.Pool, tenantID, func(tx pgx.Tx) error {
		all = all[:0]
		for from := 0; ; {
			results, err := j.chunk(ctx, tx, imp, actor, o, job, from)
			if err != nil || len(results) == 0 {
				if err != nil {
					return err
				}
				break
			}
			all = append(all, results...)
			from = results[len(results)-1].Index + 1
			heartbeat(len(all))
		}
		if commit = o.Commit(Summarise(all)); !commit {
			return errDiscard
		}
		return record(ctx, tx, job, all, &sum)
	})
	if err != nil && !errors.Is(err, errDiscard) {
		return Outcome{}, err
	}
	if !commit { // the writes are gone; the outcomes say what would have happened
		for from := 0; from < len(all); from += ChunkRows {
			chunk := all[from:min(from+ChunkRows, len(all))]
			if err := db.InTenant(ctx, j.Pool, tenantID, func(tx pgx.Tx) error { return record(ctx, tx, job, chunk, &sum) }); err != nil {
				return Outcome{}, err
			}
		}
	}
	return j.finish(ctx, job, sum, commit)
}

// chunk imports the first chunk without outcomes from index from on.
func (j Jobs) chunk(ctx context.Context, tx pgx.Tx, imp Importer, a Actor, o Options, job dbsqlc.BulkJob, from int) ([]Result, error) {
	c, err := db.Q.BulkJobChunkPending(ctx, tx, dbsqlc.BulkJobChunkPendingParams{TenantID: job.TenantID, JobID: job.ID, FromIdx: int32(from)})
	if db.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var records []Record
	if err := json.Unmarshal(c.Records, &records); err != nil {
		return nil, fmt.Errorf("bulk job %s chunk at %d: %w", job.ID, c.FirstIdx, err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("bulk job %s chunk at %d holds no records", job.ID, c.FirstIdx)
	}
	// The chunk's first index as the offset: results and the rows an error
	// names (a duplicate's first row) count from the job's first record.
	return imp(ctx, tx, a, o, records, int(c.FirstIdx))
}

// record stores the outcomes of whole chunks (results in index order, from a
// chunk's first record on) and adds them to the job's counters.
func record(ctx context.Context, tx pgx.Tx, job dbsqlc.BulkJob, results []Result, sum *Summary) error {
	var add Summary
	for _, r := range results {
		add.Add(r.Status)
	}
	processed := len(results)
	for len(results) > 0 {
		first := results[0].Index
		n := min(ChunkRows-first%ChunkRows, len(results)) // StartJob stores chunks of ChunkRows from index 0 on
		outcomes, err := json.Marshal(results[:n])
		if err != nil {
			return err
		}
		stored, err := db.Q.BulkJobChunkRecord(ctx, tx, dbsqlc.BulkJobChunkRecordParams{TenantID: job.TenantID, JobID: job.ID,
			FirstIdx: int32(first), Outcomes: outcomes})
		if err != nil {
			return err
		}
		if stored != 1 {
			return fmt.Errorf("bulk job %s: no chunk of %d records at %d for the outcomes", job.ID, n, first)
		}
		results = results[n:]
	}
	sum.Created, sum.Updated, sum.Unchanged, sum.Failed = sum.Created+add.Created, sum.Updated+add.Updated, sum.Unchanged+add.Unchanged, sum.Failed+add.Failed
	return db.Q.BulkJobProgress(ctx, tx, dbsqlc.BulkJobProgressParams{TenantID: job.TenantID, ID: job.ID, Processed: int32(processed),
		Created: int32(add.Created), Updated: int32(add.Updated), Unchanged: int32(add.Unchanged), Failed: int32(add.Failed)})
}

func (j Jobs) finish(ctx context.Context, job dbsqlc.BulkJob, sum Summary, committed bool) (Outcome, error) {
	err := db.InTenant(ctx, j.Pool, job.TenantID, func(tx pgx.Tx) error {
		return db.Q.BulkJobFinish(ctx, tx, dbsqlc.BulkJobFinishParams{TenantID: job.TenantID, ID: job.ID, Status: "succeeded"})
	})
	return Outcome{Found: true, Status: "succeeded", Committed: committed, Summary: sum}, err
}

func (j Jobs) fail(ctx context.Context, job dbsqlc.BulkJob, reason string) (Outcome, error) {
	return Outcome{Found: true, Status: "failed"}, j.Fail(ctx, job.TenantID, job.ID, reason)
}

// Fail marks a job failed with a reason a person understands.
func (j Jobs) Fail(ctx context.Context, tenantID, jobID uuid.UUID, reason string) error {
	return db.InTenant(ctx, j.Pool, tenantID, func(tx pgx.Tx) error {
		return db.Q.BulkJobFinish(ctx, tx, dbsqlc.BulkJobFinishParams{TenantID: tenantID, ID: jobID, Status: "failed", Error: &reason})
	})
}
