package workflows

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// TenantIDAttribute is the search attribute every workflow start sets, so an
// operator filters runs by tenant in the Temporal UI (`TenantId = "<uuid>"`).
var TenantIDAttribute = temporal.NewSearchAttributeKeyKeyword("TenantId")

// startOptions are the options of every workflow start: a readable id, its
// task queue, the tenant as a search attribute and a one-line summary in
// words that the UI shows without opening the run.
func startOptions(id, taskQueue, tenantID, summary string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		TypedSearchAttributes:    temporal.NewSearchAttributes(TenantIDAttribute.ValueSet(tenantID)),
		StaticSummary:            summary,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
}

// EnsureSearchAttributes registers TenantId on the namespace when it is
// missing: a real cluster learns it from the first worker that starts (the
// dev servers of `make run` and the tests declare it at their start).
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	name := TenantIDAttribute.GetName()
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	if _, ok := have.GetCustomAttributes()[name]; ok {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: map[string]enums.IndexedValueType{name: enums.INDEXED_VALUE_TYPE_KEYWORD},
	})
	if err != nil {
		return fmt.Errorf("register search attribute %s: %w", name, err)
	}
	return nil
}

// upsertSchedule creates the schedule opts describes or, when it exists
// already, brings its spec, action and overlap policy to opts; with setState
// also its paused state and note (when the caller's data is the truth about
// them, not an operator's click in the UI). Idempotent: every worker start
// and every change may call it.
func upsertSchedule(ctx context.Context, c client.Client, opts client.ScheduleOptions, setState bool) error {
	_, err := c.ScheduleClient().Create(ctx, opts)
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return err
	}
	return c.ScheduleClient().GetHandle(ctx, opts.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
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
				s.State.Paused, s.State.Note = opts.Paused, opts.Note
			}
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
}
