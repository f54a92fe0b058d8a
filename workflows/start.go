package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/runs"
)

// The search attributes every workflow start (and every schedule) sets, so an
// operator filters runs by tenant and by business object in the Temporal UI
// (`TenantId = "<uuid>" AND ObjectType = "business_case"`), and
// GET /api/v1/agents/workflows lists a tenant's runs (internal/runs).
var (
	TenantIDAttribute   = temporal.NewSearchAttributeKeyKeyword(runs.TenantIDAttribute)
	ObjectTypeAttribute = temporal.NewSearchAttributeKeyKeyword(runs.ObjectTypeAttribute)
	ObjectIDAttribute   = temporal.NewSearchAttributeKeyKeyword(runs.ObjectIDAttribute)
)

// searchAttributes are the tenant and the business object a run or schedule is about.
func searchAttributes(tenantID string, object runs.Object) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(TenantIDAttribute.ValueSet(tenantID),
		ObjectTypeAttribute.ValueSet(string(object.Type)), ObjectIDAttribute.ValueSet(object.ID))
}

// startOptions are the options of every workflow start: a readable id, its
// task queue, the tenant and business object as search attributes and a
// one-line summary in words that the UI shows without opening the run.
func startOptions(id, taskQueue, tenantID string, subject runs.Subject) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		TypedSearchAttributes:    searchAttributes(tenantID, subject.Object),
		Memo:                     subject.Memo(),
		StaticSummary:            subject.Summary,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
}

// EnsureSearchAttributes registers the search attributes on the namespace
// when they are missing: a real cluster learns them from the first worker
// that starts (the dev servers of `make run` and the tests declare them at
// their start).
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enums.IndexedValueType{}
	for _, name := range runs.SearchAttributes {
		if _, ok := have.GetCustomAttributes()[name]; !ok {
			missing[name] = enums.INDEXED_VALUE_TYPE_KEYWORD
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return fmt.Errorf("register search attributes: %w", err)
	}
	return nil
}

// upsertSchedule creates the schedule opts describes or, when it exists
// already, brings its spec, action, overlap policy and search attributes to
// opts; with setState also its paused state and note (when the caller's data
// is the truth about them). A pause an operator set in the Temporal UI (a
// note that is not one of ownNotes) stays until they resume it: the
// caller's data may pause the schedule, not resume an operator's pause, and
// a pause that lands while the update is under way is kept (updateSchedule).
// Idempotent: every worker start and every change may call it.
func upsertSchedule(ctx context.Context, c client.Client, opts client.ScheduleOptions, setState bool, ownNotes ...string) error {
	_, err := c.ScheduleClient().Create(ctx, opts)
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return err
	}
	return updateSchedule(ctx, c, opts.ID, scheduleUpdate(opts, setState, ownNotes))
}

// scheduleUpdate is the DoUpdate of upsertSchedule: the current description with opts'
// spec, action, overlap policy and search attributes, and with setState its state unless an
// operator paused it.
func scheduleUpdate(opts client.ScheduleOptions, setState bool, ownNotes []string) func(client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
	return func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := in.Description.Schedule
		s.Spec, s.Action = &opts.Spec, opts.Action
		if s.Policy == nil {
			s.Policy = &client.SchedulePolicies{}
		}
		s.Policy.Overlap = opts.Overlap
		if setState {
			if s.State == nil {
				s.State = &client.ScheduleState{}
			}
			operatorPause := s.State.Paused && !slices.Contains(ownNotes, s.State.Note)
			if opts.Paused || !operatorPause {
				s.State.Paused, s.State.Note = opts.Paused, opts.Note
			}
		}
		update := &client.ScheduleUpdate{Schedule: &s}
		if opts.TypedSearchAttributes.Size() > 0 {
			update.TypedSearchAttributes = &opts.TypedSearchAttributes
		}
		return update, nil
	}
}

// maxScheduleUpdateAttempts bounds the redos of an update that something else's change
// (an operator pausing or resuming in the UI) kept Temporal from applying.
const maxScheduleUpdateAttempts = 5

// updateSchedule applies do to the schedule's current description as a conditional update:
// Temporal applies it only if nothing changed the schedule since that description (its
// conflict token, runs.ScheduleConflictInterceptor). Otherwise Temporal drops it, which
// shows as the schedule's last full update not moving, and do runs again on the new
// description (which has the operator's pause, so do keeps it). The client must be dialed
// with runs.ScheduleConflictDialOptions.
func updateSchedule(ctx context.Context, c client.Client, id string, do func(client.ScheduleUpdateInput) (*client.ScheduleUpdate, error)) error {
	handle := c.ScheduleClient().GetHandle(ctx, id)
	for range maxScheduleUpdateAttempts {
		cctx, cond := runs.ConditionalScheduleUpdate(ctx)
		err := handle.Update(cctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			if _, described := cond.Described(); !described { // no token to send: refuse rather than overwrite
				return nil, fmt.Errorf("schedule %s: the Temporal client was dialed without runs.ScheduleConflictDialOptions, so the update could overwrite an operator's change", id)
			}
			return do(in)
		}})
		if err != nil {
			return err
		}
		before, _ := cond.Described()
		if !cond.Sent() {
			return nil // do skipped it
		}
		// Describe is a query: it answers after the update's signal has been processed.
		desc, err := handle.Describe(ctx)
		if err != nil {
			return err
		}
		if !desc.Info.LastUpdateAt.Equal(before.AsTime()) {
			return nil // a full update landed after the description: ours
		}
	}
	return fmt.Errorf("schedule %s: changed by someone else during each of %d updates", id, maxScheduleUpdateAttempts)
}
