package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// TestJobResumesAfterAFailedChunk: a run that fails after its first chunk
// committed is retried (as the workflow retries the activity); the retry
// imports only the rows without an outcome, each once, in order, and the
// job's summary counts every row once.
func TestJobResumesAfterAFailedChunk(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise_plus")
	const total = 2*ChunkRows + 50
	jobID := startNumberedJob(t, pool, tenant, Options{Resource: Actuals, Mode: Create}, total)

	var seen, offsets []int // the first index of each chunk the importer was given, and the offset it was given with it
	calls, failOnCall := 0, 2
	importer := func(_ context.Context, _ pgx.Tx, _ Actor, _ Options, records []Record, offset int) ([]Result, error) {
		calls++
		if calls == failOnCall {
			return nil, errors.New("worker lost")
		}
		results := NewResults(len(records), offset)
		for i := range results {
			results[i].Status = Created
		}
		var first int
		if err := json.Unmarshal(records[0]["n"], &first); err != nil {
			return nil, err
		}
		seen, offsets = append(seen, first), append(offsets, offset)
		return results, nil
	}
	jobs := Jobs{Pool: pool, Importers: map[Resource]Importer{Actuals: importer}}
	if _, err := jobs.Run(ctx, tenant, jobID, func(int) {}); err == nil {
		t.Fatal("the run with a failing second chunk succeeded")
	}
	out, err := jobs.Run(ctx, tenant, jobID, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, ChunkRows, 2 * ChunkRows}; !slices.Equal(seen, want) {
		t.Errorf("chunks started at %v, want %v (each row once, the committed chunk not again)", seen, want)
	}
	if !slices.Equal(offsets, seen) {
		t.Errorf("chunks given offsets %v, want their first indexes %v (the rows an error names count from the job's start)", offsets, seen)
	}
	if out.Status != "succeeded" || out.Summary.Total != total || out.Summary.Created != total {
		t.Errorf("outcome %+v, want %d created of %d", out, total, total)
	}
	var withOutcome int
	var inOrder bool
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE o.v ->> 'status' = 'created'), coalesce(bool_and((o.v ->> 'index')::int = c.first_idx + o.n - 1), false)
			FROM bulk_job_chunks c, jsonb_array_elements(c.outcomes) WITH ORDINALITY o(v, n) WHERE c.job_id = $1`, jobID).Scan(&withOutcome, &inOrder)
	})
	if err != nil || withOutcome != total || !inOrder {
		t.Errorf("%d rows with an outcome, in order %v (%v), want %d", withOutcome, inOrder, err, total)
	}
}

// TestAtomicJobStoresEveryOutcome: an atomic job with a failing row writes
// nothing, and then stores the outcome of every row of every chunk, which the
// results read back by index across the chunks' boundaries.
func TestAtomicJobStoresEveryOutcome(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise_plus")
	const total = 2*ChunkRows + 50
	jobID := startNumberedJob(t, pool, tenant, Options{Resource: Actuals, Mode: Create, Atomic: true}, total)
	importer := func(_ context.Context, _ pgx.Tx, _ Actor, _ Options, records []Record, offset int) ([]Result, error) {
		results := NewResults(len(records), offset)
		for i, r := range records {
			if string(r["n"]) == fmt.Sprint(ChunkRows+7) {
				results[i].Fail([]FieldError{{Field: "n", Code: "invalid_value", Message: "no"}})
				continue
			}
			results[i].Status, results[i].ID = Created, new(uuid.New())
		}
		return results, nil
	}
	out, err := Jobs{Pool: pool, Importers: map[Resource]Importer{Actuals: importer}}.Run(ctx, tenant, jobID, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if out.Committed || out.Summary.Failed != 1 || out.Summary.Created != total-1 {
		t.Fatalf("outcome %+v, want not committed, 1 failed of %d", out, total)
	}
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for _, page := range []struct{ offset, limit, want int }{{0, 500, 500}, {ChunkRows - 3, 10, 10}, {2*ChunkRows - 5, 500, 55}, {total, 500, 0}} {
			rows, err := db.Q.BulkJobResults(ctx, tx, dbsqlc.BulkJobResultsParams{TenantID: tenant, JobID: jobID, PageOffset: int32(page.offset), PageLimit: int32(page.limit)})
			if err != nil {
				return err
			}
			if len(rows) != page.want {
				t.Errorf("page at %d: %d rows, want %d", page.offset, len(rows), page.want)
			}
			for i, r := range rows {
				var got Result
				if err := json.Unmarshal(r.Result, &got); err != nil {
					return err
				}
				wantStatus := Created
				if got.Index == ChunkRows+7 {
					wantStatus = Failed
				}
				if got.Index != page.offset+i || got.Status != wantStatus || r.Total != total {
					t.Errorf("page at %d, row %d: %+v (total %d)", page.offset, i, got, r.Total)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// startNumberedJob starts a job of total NDJSON records {"n": index} for the
// tenant's admin.
func startNumberedJob(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, o Options, total int) uuid.UUID {
	t.Helper()
	lines := make([]byte, 0, total*12)
	for i := range total {
		lines = fmt.Appendf(lines, "{\"n\":%d}\n", i)
	}
	a := Actor{TenantID: tenant, Subject: "importer", Roles: []string{"admin"}}
	var id uuid.UUID
	err := db.InTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		job, err := StartJob(context.Background(), tx, a, o, NewNDJSONRecords(lines))
		id = job.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
