package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/workflows"
)

// nextFires creates a schedule with the integration's spec starting at start on the dev
// server and returns the fire times Temporal itself computes (describe → NextActionTimes).
func nextFires(t *testing.T, c client.Client, s integration.Schedule, start time.Time) []time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec, ok := workflows.IntegrationScheduleSpec(s)
	if !ok {
		t.Fatalf("no spec for %+v", s)
	}
	spec.StartAt = start
	id := "dst-test/" + uuid.NewString()
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: id, Spec: spec, Action: &client.ScheduleWorkflowAction{
		ID: id, Workflow: workflows.IntegrationScheduledSyncWorkflow, TaskQueue: "dst-test-nothing-runs-here",
		Args: []any{workflows.IntegrationScheduledSyncInput{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Delete(context.Background()) })
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d.Info.NextActionTimes
}

// A schedule "daily at 02:00 Europe/Berlin" fires at 02:00 Berlin time on both sides of the
// October change (00:00Z in summer time, 01:00Z after; on the night 02:00 comes twice it fires
// once, at the second, CET, occurrence), and "daily at 02:30" across the March change, when
// 02:30 does not exist (no firing that day). The golden UTC times are worked out by hand from the
// offsets (CEST = UTC+2 until 03:00 CEST on the last Sunday of October, CET = UTC+1 after;
// CET until 02:00 CET on the last Sunday of March, CEST after); Temporal's own computation
// (NextActionTimes from the dev server) and the API's next_sync_at (Schedule.Next) must both
// give them.
func TestIntegrationScheduleFiresOnBerlinWallClockAcrossDST(t *testing.T) {
	c := testenv.TemporalClient(t)
	z := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name  string
		sched integration.Schedule
		start time.Time
		want  []time.Time
	}{
		{
			// 2027-10-31 is the last Sunday of October: 02:00 comes twice (CEST, then CET).
			// (Temporal computes from now or StartAt, whichever is later: future dates only.)
			name:  "october, daily 02:00",
			sched: integration.Schedule{Frequency: integration.Daily, At: "02:00", TimeZone: "Europe/Berlin"},
			start: z("2027-10-29T12:00:00Z"),
		},
		{
			// 2027-03-28 is the last Sunday of March: the clock jumps from 02:00 to 03:00.
			name:  "march, daily 02:30",
			sched: integration.Schedule{Frequency: integration.Daily, At: "02:30", TimeZone: "Europe/Berlin"},
			start: z("2027-03-26T12:00:00Z"),
		},
		{
			name:  "march, weekly sunday 09:15",
			sched: integration.Schedule{Frequency: integration.Weekly, At: "09:15", DayOfWeek: "sunday", TimeZone: "Europe/Berlin"},
			start: z("2027-03-20T00:00:00Z"),
			want:  nil,
		},
	}
	cases[0].want = []time.Time{z("2027-10-30T00:00:00Z"), z("2027-10-31T01:00:00Z"), z("2027-11-01T01:00:00Z"), z("2027-11-02T01:00:00Z")}
	cases[1].want = []time.Time{z("2027-03-27T01:30:00Z"), z("2027-03-29T00:30:00Z"), z("2027-03-30T00:30:00Z")} // none on the 28th
	cases[2].want = []time.Time{z("2027-03-21T08:15:00Z"), z("2027-03-28T07:15:00Z"), z("2027-04-04T07:15:00Z")}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if errs := tc.sched.Normalize(); len(errs) > 0 {
				t.Fatal(errs)
			}
			temporal := nextFires(t, c, tc.sched, tc.start)
			ours := tc.sched.Next(tc.start, len(temporal))
			t.Logf("temporal: %v", temporal)
			if len(temporal) < 3 {
				t.Fatalf("temporal gave %d next times", len(temporal))
			}
			for i := range temporal {
				if !temporal[i].Equal(ours[i]) {
					t.Errorf("fire %d: temporal %s, next_sync_at computation %s", i, temporal[i].UTC(), ours[i])
				}
			}
			for i, w := range tc.want {
				if !temporal[i].Equal(w) {
					t.Errorf("fire %d: temporal %s, golden %s", i, temporal[i].UTC(), w)
				}
			}
		})
	}
}

// The reconcile at worker start makes Temporal match the database: a lost schedule is
// recreated (paused for a paused integration), a leftover one is deleted, manual and
// disconnected integrations own none.
func TestReconcileIntegrationSchedules(t *testing.T) {
	c := testenv.TemporalClient(t)
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	ctx := t.Context()
	type row struct {
		id               uuid.UUID
		frequency, state string
	}
	rows := []row{{uuid.New(), "daily", "active"}, {uuid.New(), "hourly", "paused"}, {uuid.New(), "manual", "active"}, {uuid.New(), "weekly", "disconnected"}}
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		for i, r := range rows {
			var at, day *string
			if r.frequency == "daily" || r.frequency == "weekly" {
				at = new("02:00")
			}
			if r.frequency == "weekly" {
				day = new("monday")
			}
			if _, err := tx.Exec(ctx, `INSERT INTO integrations (tenant_id, id, provider, name, config, frequency, schedule_at, day_of_week, timezone, state)
				VALUES ($1, $2, 'http_feed', $3, '{"instance_url":"https://feed.example.com/a"}', $4, $5, $6, 'Europe/Berlin', $7)`,
				tenant, r.id, "feed "+string(rune('a'+i)), r.frequency, at, day, r.state); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sid := func(id uuid.UUID) string { return workflows.IntegrationScheduleID(tenant.String(), id.String()) }
	// A leftover: its integration is not in the database.
	leftover := integration.Scheduling{TenantID: tenant, ID: uuid.New(), Name: "gone", Wanted: true,
		Schedule: integration.Schedule{Frequency: integration.Hourly, TimeZone: "UTC"}}
	if err := workflows.ApplyIntegrationSchedule(ctx, c, leftover); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range rows {
			_ = c.ScheduleClient().GetHandle(context.Background(), sid(r.id)).Delete(context.Background())
		}
	})
	store := integration.Store{Pool: pool}
	testenv.Eventually(t, 30*time.Second, "the leftover schedule to be deleted", func() bool {
		if _, _, err := workflows.ReconcileIntegrationSchedules(ctx, c, store, nil); err != nil {
			t.Fatal(err)
		}
		_, err := c.ScheduleClient().GetHandle(ctx, sid(leftover.ID)).Describe(ctx)
		_, gone := errors.AsType[*serviceerror.NotFound](err)
		return gone
	})
	for _, r := range rows {
		d, err := c.ScheduleClient().GetHandle(ctx, sid(r.id)).Describe(ctx)
		_, missing := errors.AsType[*serviceerror.NotFound](err)
		wanted := r.frequency != "manual" && r.state != "disconnected"
		switch {
		case wanted && err != nil:
			t.Errorf("%s/%s: no schedule: %v", r.frequency, r.state, err)
		case !wanted && !missing:
			t.Errorf("%s/%s: has a schedule (%v)", r.frequency, r.state, err)
		case wanted:
			if d.Schedule.State.Paused != (r.state != "active") || d.Schedule.Spec.TimeZoneName != "Europe/Berlin" || d.Schedule.Policy.Overlap.String() != "Skip" {
				t.Errorf("%s/%s: paused %v, zone %q, overlap %v", r.frequency, r.state, d.Schedule.State.Paused, d.Schedule.Spec.TimeZoneName, d.Schedule.Policy.Overlap)
			}
		}
	}
}
