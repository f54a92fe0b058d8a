// Package activities holds Temporal activity implementations as structs that
// carry their dependencies (pool, HTTP client, ...).
package activities

import (
	"context"
	"errors"

	"github.com/valuecase/valuecase/internal/webhook"
)

// Outcomes a WebhookAttempt reports to the retry workflow. The first three
// are webhook.Outcome values.
const (
	WebhookOutcomeDelivered = string(webhook.OutcomeDelivered)
	WebhookOutcomeGone      = string(webhook.OutcomeGone)
	WebhookOutcomeFailed    = string(webhook.OutcomeFailed)
	// WebhookOutcomeSkipped: nothing was sent because the subscription no
	// longer exists, is inactive (disabled or switched off) or no longer
	// lists the event type. The retry chain ends without disabling anything.
	WebhookOutcomeSkipped = "skipped"
)

// WebhookActivities are the activities of the webhook retry workflow.
type WebhookActivities struct {
	Client *webhook.Client // SSRF-guarded delivery client

	// PHASE A PLACEHOLDER: the database dependencies (pool, queries, secret
	// decryption) are added with the webhooks migration.
}

// WebhookAttemptInput names one retry attempt of one event to one subscription.
type WebhookAttemptInput struct {
	TenantID  string
	WebhookID string
	EventID   string
	Attempt   int // 2, 3, ...: attempt 1 is made by the outbox relay
}

// WebhookAttemptResult is what the workflow needs to decide its next step.
type WebhookAttemptResult struct {
	Outcome    string // one of the WebhookOutcome* constants
	StatusCode int
	DeliveryID string // the stored attempt row; empty when skipped
}

// WebhookDisableInput asks to disable a subscription after its deliveries of
// an event have failed for good (or the receiver answered 410 Gone).
type WebhookDisableInput struct {
	TenantID  string
	WebhookID string
	EventID   string
	Reason    string
}

// errNotWired marks the Phase A placeholders below.
var errNotWired = errors.New("activities: webhook activities need the database (not wired yet)")

// WebhookAttempt loads the event and the subscription, makes one delivery
// attempt and stores it.
//
// PHASE A PLACEHOLDER: the body needs the webhooks tables.
func (a *WebhookActivities) WebhookAttempt(ctx context.Context, in WebhookAttemptInput) (WebhookAttemptResult, error) {
	return WebhookAttemptResult{}, errNotWired
}

// WebhookDisable sets the subscription inactive with disabled_at and the
// reason, unless it is already disabled. It reports whether it changed anything.
//
// PHASE A PLACEHOLDER: the body needs the webhooks tables.
func (a *WebhookActivities) WebhookDisable(ctx context.Context, in WebhookDisableInput) (bool, error) {
	return false, errNotWired
}
