package workflows

import (
	"context"
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
