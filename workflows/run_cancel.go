package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// RunCancelEvents is the outbox handler of workflow.cancel_requested: it
// asks Temporal to cancel the run a client canceled (POST
// /api/v1/agents/workflows/{id}/cancel); the workflow then stops its work and
// records the cancel on its row. Idempotent: a run that has ended meanwhile,
// or is gone, is left as it is.
type RunCancelEvents struct {
	Temporal  client.Client
	Namespace string
}

// Name implements outbox.Handler.
func (h *RunCancelEvents) Name() string { return "run-cancel" }

// StartTypes implements outbox.StartTypes: a cancel must not wait behind webhook deliveries.
func (h *RunCancelEvents) StartTypes() []string { return []string{runs.EventCancelRequested} }

// Handle implements outbox.Handler.
func (h *RunCancelEvents) Handle(ctx context.Context, ev outbox.Event) error {
	if ev.Type != runs.EventCancelRequested {
		return nil
	}
	var e runs.CancelRequestedEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("decode %s: %w", ev.Type, err)
	}
	// The API checked the run's tenant before writing the event; checked again here, by the
	// run's own search attribute, so no event can reach another tenant's run.
	desc, err := h.Temporal.DescribeWorkflowExecution(ctx, e.WorkflowID, e.RunID)
	if _, nf := errors.AsType[*serviceerror.NotFound](err); nf {
		return nil
	}
	if err != nil {
		return err
	}
	sa := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[runs.TenantIDAttribute]
	if sa == nil || !runs.PayloadIs(sa, ev.TenantID.String()) {
		return nil
	}
	_, err = h.Temporal.WorkflowService().RequestCancelWorkflowExecution(ctx, &workflowservice.RequestCancelWorkflowExecutionRequest{
		Namespace:         h.Namespace,
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: e.WorkflowID, RunId: e.RunID},
		Identity:          "valuecase outbox relay",
		RequestId:         ev.ID.String(), // a redelivered event is the same request
		Reason:            "canceled over REST by " + e.By,
	})
	if _, nf := errors.AsType[*serviceerror.NotFound](err); nf {
		return nil // it ended meanwhile
	}
	return err
}
