// Package worker runs the background side of the service: the Temporal
// workers (workflows/ and activities/) and the outbox relay that feeds them.
package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
	"github.com/valuecase/valuecase/workflows"
)

// DialTemporal returns a client that connects on first use, so a process
// starts (and keeps serving) while Temporal is down.
func DialTemporal(cfg config.Config, log *slog.Logger, metrics client.MetricsHandler) (client.Client, error) {
	return client.NewLazyClient(client.Options{
		HostPort:       cfg.TemporalAddress,
		Namespace:      cfg.TemporalNamespace,
		Logger:         sdklog.NewStructuredLogger(log),
		MetricsHandler: metrics,
	})
}

// Worker is the set of Temporal workers plus the outbox relay.
type Worker struct {
	Config   config.Config
	Pool     *pgxpool.Pool
	Temporal client.Client
	Log      *slog.Logger
	// Webhooks delivers events to webhook subscriptions (an outbox handler and
	// the retry workflow's activities); Run builds it from Config when nil.
	Webhooks *dispatch.Dispatcher
}

// prepareWebhooks builds the webhook dispatcher and connects it to the retry workflow.
func (w *Worker) prepareWebhooks() error {
	if w.Webhooks == nil {
		d, err := dispatch.New(w.Config, w.Pool, w.Log)
		if err != nil {
			return err
		}
		w.Webhooks = d
	}
	if w.Webhooks.Retries == nil {
		w.Webhooks.Retries = &workflows.WebhookRetryStarter{Temporal: w.Temporal, Delays: w.Webhooks.Delays}
	}
	return nil
}

// Relay builds the outbox relay with every handler.
func (w *Worker) Relay() *outbox.Relay {
	handlers := []outbox.Handler{&workflows.ReviewEvents{Temporal: w.Temporal, RemindAfter: w.Config.ReviewReminderAfter}}
	if w.Webhooks != nil {
		handlers = append(handlers, w.Webhooks)
	}
	return &outbox.Relay{Pool: w.Pool, Handlers: handlers, Log: w.Log}
}

// temporalWorkers registers every workflow and activity on its task queue.
func (w *Worker) temporalWorkers() []worker.Worker {
	review := worker.New(w.Temporal, workflows.ReviewTaskQueue, worker.Options{})
	review.RegisterWorkflow(workflows.InitiativeReviewWorkflow)
	review.RegisterActivity(&activities.Review{Pool: w.Pool})
	hooks := worker.New(w.Temporal, workflows.WebhookRetryTaskQueue, worker.Options{})
	hooks.RegisterWorkflow(workflows.WebhookRetryWorkflow)
	hooks.RegisterActivity(&activities.WebhookActivities{Dispatcher: w.Webhooks})
	return []worker.Worker{review, hooks}
}

// Run relays and works until ctx ends. Temporal being down delays workflow
// work but not the relay: events wait in the outbox and workers keep retrying.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.prepareWebhooks(); err != nil {
		return err
	}
	relayDone := make(chan error, 1)
	go func() { relayDone <- w.Relay().Run(ctx) }()

	var started []worker.Worker
	for _, tw := range w.temporalWorkers() {
		for {
			err := tw.Start()
			if err == nil {
				started = append(started, tw)
				break
			}
			w.Log.Warn("temporal worker not started; retrying", "error", err)
			select {
			case <-ctx.Done():
				return errors.Join(ctx.Err(), <-relayDone)
			case <-time.After(5 * time.Second):
			}
		}
	}
	w.Log.Info("worker running", "task_queues", []string{workflows.ReviewTaskQueue, workflows.WebhookRetryTaskQueue})
	<-ctx.Done()
	for _, tw := range started {
		tw.Stop()
	}
	return <-relayDone
}
