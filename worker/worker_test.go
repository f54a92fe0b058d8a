package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

// runWorker runs a worker with the interval until the returned stop is called.
func runWorker(t *testing.T, tc client.Client, cfg config.Config, every time.Duration) (stop func()) {
	t.Helper()
	cfg.RetentionEvery = every
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	w := &worker.Worker{Config: cfg, Pool: dbtest.NewPool(t), Temporal: tc, Log: testenv.QuietLogger()}
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("worker: %v", err)
		}
	}
}

// retentionSchedules lists the schedules with the retention schedule's id.
func retentionSchedules(t *testing.T, tc client.Client) int {
	t.Helper()
	it, err := tc.ScheduleClient().List(context.Background(), client.ScheduleListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.HasNext() {
		s, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if s.ID == workflows.RetentionScheduleID {
			n++
		}
	}
	return n
}

func interval(t *testing.T, tc client.Client) time.Duration {
	t.Helper()
	d, err := tc.ScheduleClient().GetHandle(context.Background(), workflows.RetentionScheduleID).Describe(context.Background())
	if err != nil {
		return 0
	}
	if iv := d.Schedule.Spec.Intervals; len(iv) == 1 {
		return iv[0].Every
	}
	return -1
}

// TestWorkerKeepsOneRetentionSchedule: a worker creates maintenance/retention
// at start; a second start with another interval updates it, never adds a
// second; a triggered run removes what is past retention (an expired
// idempotency key) in the worker's database.
func TestWorkerKeepsOneRetentionSchedule(t *testing.T) {
	tc := testenv.TemporalClient(t)
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = tc.ScheduleClient().GetHandle(ctx, workflows.RetentionScheduleID).Delete(ctx) // the dev server is shared by the test binary

	stop := runWorker(t, tc, cfg, 2*time.Hour)
	testenv.Eventually(t, 30*time.Second, "the schedule exists after the first start", func() bool { return interval(t, tc) == 2*time.Hour })
	stop()

	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (tenant_id, key, request_hash, method, path, created_at, expires_at)
			VALUES ($1, 'expired', '\x00', 'POST', '/v1/x', now() - interval '25 hours', now() - interval '1 hour')`, tenant)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cfg.RetentionEvery = 3 * time.Hour
	w := &worker.Worker{Config: cfg, Pool: pool, Temporal: tc, Log: testenv.QuietLogger()}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("worker: %v", err)
		}
	}()
	testenv.Eventually(t, 30*time.Second, "the second start updates the interval", func() bool { return interval(t, tc) == 3*time.Hour })
	// Listing is eventually consistent: wait for the one schedule to show.
	testenv.Eventually(t, 30*time.Second, "one schedule named maintenance/retention after two starts", func() bool { return retentionSchedules(t, tc) == 1 })

	if err := tc.ScheduleClient().GetHandle(ctx, workflows.RetentionScheduleID).Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "the triggered run removes the expired key", func() bool {
		var n int
		_ = db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
			return tx.QueryRow(ctx, "SELECT count(*) FROM idempotency_keys").Scan(&n)
		})
		return n == 0
	})
}
