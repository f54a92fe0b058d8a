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

	"github.com/valuecase/valuecase/db"
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
	lines := make([]byte, 0, total*12)
	for i := range total {
		lines = fmt.Appendf(lines, "{\"n\":%d}\n", i)
	}
	a := Actor{TenantID: tenant, Subject: "importer", Roles: []string{"admin"}}
	jobID := func() (id uuid.UUID) {
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			job, err := StartJob(ctx, tx, a, Options{Resource: Actuals, Mode: Create}, NewNDJSONRecords(lines))
			id = job.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}()

	var seen []int // the first index of each chunk the importer was given
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
		seen = append(seen, first)
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
	if out.Status != "succeeded" || out.Summary.Total != total || out.Summary.Created != total {
		t.Errorf("outcome %+v, want %d created of %d", out, total, total)
	}
	var withOutcome int
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM bulk_job_rows WHERE job_id = $1 AND status = 'created'`, jobID).Scan(&withOutcome)
	})
	if err != nil || withOutcome != total {
		t.Errorf("%d rows with an outcome (%v), want %d", withOutcome, err, total)
	}
}
