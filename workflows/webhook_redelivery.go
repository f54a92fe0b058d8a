package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/runs"
)

// WebhookRedeliveryWorkflowID names one requested redelivery of one delivery
// (POST /api/v1/agents/workflows, name webhook_redelivery); it runs on WebhookRetryTaskQueue.
func WebhookRedeliveryWorkflowID(tenantID, webhookID, deliveryID, redeliveryID string) string {
	return runs.RedeliveryRunID(tenantID, webhookID, deliveryID, redeliveryID)
}

// WebhookRedeliveryWorkflow makes one extra attempt of a delivery, as the
// synchronous POST /v1/webhooks/{id}/deliveries/{d}/redeliver does: a
// failed attempt is an outcome (the run completes and says so), an attempt
// that cannot be made (the delivery or its event gone) fails the run, and a
// delivery whose attempt 1 is still in flight is tried again shortly.
func WebhookRedeliveryWorkflow(ctx workflow.Context, in activities.WebhookRedeliverInput) (activities.WebhookRedeliverResult, error) {
	var a *activities.WebhookActivities
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{activities.ErrTypeDeliveryGone}},
	})
	var res activities.WebhookRedeliverResult
	err := workflow.ExecuteActivity(ctx, a.WebhookRedeliver, in).Get(ctx, &res)
	return res, err
}

// WebhookRedeliveryEvents is the outbox handler that starts the run of each
// webhook.redelivery_requested event (idempotent: the workflow id names the request).
type WebhookRedeliveryEvents struct {
	Temporal client.Client
}

// Name implements outbox.Handler.
func (h *WebhookRedeliveryEvents) Name() string { return "webhook-redelivery" }

// StartTypes implements outbox.StartTypes: a redelivery a client asked for starts a run.
func (h *WebhookRedeliveryEvents) StartTypes() []string {
	return []string{runs.EventRedeliveryRequested}
}

// Handle implements outbox.Handler.
func (h *WebhookRedeliveryEvents) Handle(ctx context.Context, ev outbox.Event) error {
	if ev.Type != runs.EventRedeliveryRequested {
		return nil
	}
	var e runs.RedeliveryRequestedEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("decode %s: %w", ev.Type, err)
	}
	tenant := ev.TenantID.String()
	id := WebhookRedeliveryWorkflowID(tenant, e.WebhookID, e.DeliveryID, e.RedeliveryID)
	opts := startOptions(id, WebhookRetryTaskQueue, tenant, e.Subject())
	// A redelivered event must not send the delivery again once its run has ended.
	opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	_, err := h.Temporal.ExecuteWorkflow(ctx, opts, WebhookRedeliveryWorkflow,
		activities.WebhookRedeliverInput{TenantID: tenant, WebhookID: e.WebhookID, DeliveryID: e.DeliveryID})
	if _, started := errors.AsType[*serviceerror.WorkflowExecutionAlreadyStarted](err); started {
		return nil
	}
	return err
}
