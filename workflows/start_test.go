package workflows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/workflows"
)

// A cluster without the search attributes (TenantId, ObjectType, ObjectId) gets them from
// the worker's start, and a second call leaves them as they are.
func TestEnsureSearchAttributesRegistersTenantID(t *testing.T) {
	c := testenv.TemporalClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := "sa-" + time.Now().Format("150405.000000")
	if _, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	has := func() bool {
		res, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"TenantId", "ObjectType", "ObjectId"} {
			if _, ok := res.GetCustomAttributes()[name]; !ok {
				return false
			}
		}
		return true
	}
	if has() {
		t.Fatal("a new namespace already has the attributes: the test proves nothing")
	}
	for range 2 {
		if err := workflows.EnsureSearchAttributes(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
		if !has() {
			t.Fatal("the search attributes are not registered")
		}
	}
}

// An operator pauses a schedule in the Temporal UI while the service is updating it (after
// the update read the schedule, before it lands): the update is redone on the paused
// schedule, so the new spec applies and the operator's pause and note stay. The same race
// with the SDK's plain update (no conflict token) loses the pause: the scenario is real.
func TestScheduleUpdateKeepsAPauseThatLandsMidUpdate(t *testing.T) {
	c := testenv.TemporalClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const operatorNote = "provider maintenance until Monday"
	own := []string{"service active", "service paused"}
	opts := func(id string, hour int) client.ScheduleOptions {
		return client.ScheduleOptions{
			ID:     id,
			Spec:   client.ScheduleSpec{Calendars: []client.ScheduleCalendarSpec{{Hour: []client.ScheduleRange{{Start: hour}}, Minute: []client.ScheduleRange{{Start: 0}}}}, TimeZoneName: "UTC"},
			Action: &client.ScheduleWorkflowAction{ID: id + "/run", Workflow: "ScheduleRaceTestWorkflow", TaskQueue: "schedule-race-test-nothing-runs-here"},
			Note:   own[0],
		}
	}
	race := func(t *testing.T, update func(id string, do func(client.ScheduleUpdateInput) (*client.ScheduleUpdate, error)) error) (*client.ScheduleDescription, int) {
		id := "schedule-race-test/" + uuid.NewString()
		if err := workflows.UpsertSchedule(ctx, c, opts(id, 6), true, own...); err != nil {
			t.Fatal(err)
		}
		h := c.ScheduleClient().GetHandle(ctx, id)
		t.Cleanup(func() { _ = h.Delete(context.Background()) })
		calls := 0
		do := workflows.ScheduleUpdate(opts(id, 7), true, own)
		err := update(id, func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			calls++
			if calls == 1 { // the operator's pause lands after the description this call received
				if in.Description.Schedule.State.Paused {
					t.Fatal("paused before the race")
				}
				if err := h.Pause(ctx, client.SchedulePauseOptions{Note: operatorNote}); err != nil {
					t.Fatal(err)
				}
			}
			return do(in)
		})
		if err != nil {
			t.Fatal(err)
		}
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d, calls
	}
	hours := func(d *client.ScheduleDescription) []client.ScheduleRange {
		return d.Schedule.Spec.Calendars[0].Hour
	}

	d, calls := race(t, func(id string, do func(client.ScheduleUpdateInput) (*client.ScheduleUpdate, error)) error {
		return workflows.UpdateSchedule(ctx, c, id, do)
	})
	if st := d.Schedule.State; !st.Paused || st.Note != operatorNote {
		t.Errorf("the operator's pause was lost: paused=%v note=%q", st.Paused, st.Note)
	}
	if h := hours(d); len(h) != 1 || h[0].Start != 7 {
		t.Errorf("the new spec did not apply: hours %+v", h)
	}
	if calls != 2 {
		t.Errorf("the update ran %d times, want 2 (once dropped by Temporal, once applied)", calls)
	}

	d, _ = race(t, func(id string, do func(client.ScheduleUpdateInput) (*client.ScheduleUpdate, error)) error {
		return c.ScheduleClient().GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{DoUpdate: do})
	})
	if d.Schedule.State.Paused {
		t.Error("the SDK's plain update kept the pause: the race above proves nothing")
	}
}

// A client dialed without runs.ScheduleConflictDialOptions cannot make the update
// conditional: the upsert refuses to send it rather than risk overwriting an operator's pause.
func TestScheduleUpdateRefusedWithoutTheConflictToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	plain, err := client.Dial(client.Options{HostPort: testenv.TemporalAddress(t), Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	id := "schedule-plain-client-test/" + uuid.NewString()
	opts := func(hour int) client.ScheduleOptions {
		return client.ScheduleOptions{
			ID:     id,
			Spec:   client.ScheduleSpec{Calendars: []client.ScheduleCalendarSpec{{Hour: []client.ScheduleRange{{Start: hour}}, Minute: []client.ScheduleRange{{Start: 0}}}}},
			Action: &client.ScheduleWorkflowAction{ID: id + "/run", Workflow: "ScheduleRaceTestWorkflow", TaskQueue: "schedule-race-test-nothing-runs-here"},
		}
	}
	if err := workflows.UpsertSchedule(ctx, plain, opts(6), false); err != nil { // a create needs no token
		t.Fatal(err)
	}
	h := plain.ScheduleClient().GetHandle(ctx, id)
	t.Cleanup(func() { _ = h.Delete(context.Background()) })
	err = workflows.UpsertSchedule(ctx, plain, opts(7), false)
	if err == nil || !strings.Contains(err.Error(), "ScheduleConflictDialOptions") {
		t.Fatalf("update through a plain client: %v", err)
	}
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Schedule.Spec.Calendars[0].Hour; len(got) != 1 || got[0].Start != 6 {
		t.Errorf("the refused update changed the schedule: hours %+v", got)
	}
}
