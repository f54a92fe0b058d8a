package activities

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/webhook"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

// Outcomes a WebhookAttempt reports to the retry workflow. The first three
// are webhook.Outcome values.
const (
	WebhookOutcomeDelivered = string(webhook.OutcomeDelivered)
	WebhookOutcomeGone      = string(webhook.OutcomeGone)
	WebhookOutcomeFailed    = string(webhook.OutcomeFailed)
	// WebhookOutcomeSkipped: nothing was sent because the delivery or its
	// subscription no longer exists, the subscription is switched off or no
	// longer lists the event type, or the event is no longer stored. The retry
	// chain ends without disabling anything.
	WebhookOutcomeSkipped = dispatch.OutcomeSkipped
)

// WebhookActivities are the activities of the webhook retry workflow; the
// delivery logic and its database work live in the dispatcher.
type WebhookActivities struct {
	Dispatcher *dispatch.Dispatcher
}

// WebhookAttemptInput names one retry attempt of one event to one subscription.
type WebhookAttemptInput struct {
	TenantID  string
	WebhookID string
	EventID   string
	Attempt   int // 2, 3, ...: attempt 1 is made by the outbox relay
	// Final is true for the last attempt of the schedule: its failure ends the delivery.
	Final bool
	// NextAttemptAt is when the following attempt is due (shown in the delivery log).
	NextAttemptAt time.Time
}

// WebhookAttemptResult is what the workflow needs to decide its next step.
type WebhookAttemptResult struct {
	Outcome    string // one of the WebhookOutcome* constants
	StatusCode int
	DeliveryID string // empty when the delivery no longer exists
}

// WebhookDisableInput asks to disable a subscription after its deliveries of
// an event have failed for good (or the receiver answered 410 Gone).
type WebhookDisableInput struct {
	TenantID  string
	WebhookID string
	EventID   string
	Reason    string
}

func parseIDs(ids ...string) ([]uuid.UUID, error) {
	out := make([]uuid.UUID, len(ids))
	for i, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("bad id "+s, "BadInput", err)
		}
		out[i] = id
	}
	return out, nil
}

// WebhookAttempt makes one scheduled attempt and stores it. A failed delivery
// is an outcome, not an error; errors (database unavailable) are retried.
func (a *WebhookActivities) WebhookAttempt(ctx context.Context, in WebhookAttemptInput) (WebhookAttemptResult, error) {
	ids, err := parseIDs(in.TenantID, in.WebhookID, in.EventID)
	if err != nil {
		return WebhookAttemptResult{}, err
	}
	res, err := a.Dispatcher.Retry(ctx, dispatch.RetryAttempt{
		TenantID: ids[0], WebhookID: ids[1], EventID: ids[2],
		Attempt: in.Attempt, Final: in.Final, NextAttemptAt: in.NextAttemptAt,
	})
	if err != nil {
		return WebhookAttemptResult{}, err
	}
	out := WebhookAttemptResult{Outcome: res.Outcome, StatusCode: res.StatusCode}
	if res.DeliveryID != uuid.Nil {
		out.DeliveryID = res.DeliveryID.String()
	}
	return out, nil
}

// WebhookDisable sets the subscription inactive with disabled_at and the
// reason, unless it is already switched off. It reports whether it changed anything.
func (a *WebhookActivities) WebhookDisable(ctx context.Context, in WebhookDisableInput) (bool, error) {
	ids, err := parseIDs(in.TenantID, in.WebhookID)
	if err != nil {
		return false, err
	}
	return a.Dispatcher.Disable(ctx, ids[0], ids[1], in.Reason)
}

// WebhookRedeliverInput names the delivery a client asked to send again.
type WebhookRedeliverInput struct {
	TenantID   string
	WebhookID  string
	DeliveryID string
}

// WebhookRedeliverResult is what the one extra attempt did.
type WebhookRedeliverResult struct {
	Outcome        string // delivered, failed, ...
	StatusCode     int
	DeliveryStatus string
}

// ErrTypeDeliveryGone is the failure type of a redelivery that cannot be made: the delivery or
// its event is gone (its message is written for the client).
const ErrTypeDeliveryGone = "DeliveryGone"

// WebhookRedeliver sends a delivery's event again as one extra attempt (what
// POST /v1/webhooks/{id}/deliveries/{d}/redeliver does at once). A delivery
// whose attempt 1 is still in flight is retried later; a gone delivery or
// event fails the run with the reason.
func (a *WebhookActivities) WebhookRedeliver(ctx context.Context, in WebhookRedeliverInput) (WebhookRedeliverResult, error) {
	ids, err := parseIDs(in.TenantID, in.WebhookID, in.DeliveryID)
	if err != nil {
		return WebhookRedeliverResult{}, err
	}
	res, err := a.Dispatcher.Redeliver(ctx, ids[0], ids[1], ids[2])
	switch {
	case errors.Is(err, dispatch.ErrDeliveryNotFound):
		return WebhookRedeliverResult{}, temporal.NewNonRetryableApplicationError("the delivery no longer exists", ErrTypeDeliveryGone, nil)
	case errors.Is(err, dispatch.ErrEventGone):
		return WebhookRedeliverResult{}, temporal.NewNonRetryableApplicationError("the event of this delivery is no longer stored and cannot be sent again", ErrTypeDeliveryGone, nil)
	case err != nil:
		return WebhookRedeliverResult{}, err // in flight, database: retried
	}
	return WebhookRedeliverResult{Outcome: string(res.Outcome), StatusCode: res.StatusCode, DeliveryStatus: res.Status}, nil
}
