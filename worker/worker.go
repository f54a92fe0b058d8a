// Package worker runs the background side of the service: the Temporal
// workers (workflows/ and activities/) and the outbox relay that feeds them.
package worker

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/valuecase/valuecase/activities"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/retention"
	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/webhook"
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
		// schedule updates keep what an operator changed meanwhile (workflows.upsertSchedule)
		ConnectionOptions: client.ConnectionOptions{DialOptions: runs.ScheduleConflictDialOptions()},
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
	// OutboxLease is how long the relay holds a claimed event before another
	// worker may take it (its worker died); zero is the relay's default.
	OutboxLease time.Duration
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
	handlers := []outbox.Handler{
		&workflows.ReviewEvents{Temporal: w.Temporal, RemindAfter: w.Config.ReviewReminderAfter},
		&workflows.BusinessCaseApprovalEvents{Temporal: w.Temporal, RemindAfter: w.Config.BusinessCaseRemindAfter, EscalateAfter: w.Config.BusinessCaseEscalateAfter},
		&workflows.BusinessCaseExportEvents{Temporal: w.Temporal},
		&workflows.BulkImportEvents{Temporal: w.Temporal},
		&workflows.IntegrationEvents{Temporal: w.Temporal, Store: integration.Store{Pool: w.Pool}},
		&workflows.WebhookRedeliveryEvents{Temporal: w.Temporal},
		&workflows.RunCancelEvents{Temporal: w.Temporal, Namespace: w.Config.TemporalNamespace},
	}
	if w.Webhooks != nil {
		handlers = append(handlers, w.Webhooks)
	}
	return &outbox.Relay{Pool: w.Pool, Handlers: handlers, Log: w.Log, Lease: w.OutboxLease, StartTypes: outbox.StartTypesOf(handlers)}
}

// Purger is the housekeeping of the maintenance/retention schedule, with the configured periods.
func (w *Worker) Purger() retention.Purger {
	return retention.Purger{Pool: w.Pool, Periods: retention.Periods{
		Outbox: w.Config.RetentionOutbox, WebhookDeliveries: w.Config.RetentionWebhookDeliveries,
		Sessions: w.Config.RetentionSessions, AuditEvents: w.Config.RetentionAuditEvents,
	}}
}

// registration is what one task queue runs.
type registration struct {
	taskQueue  string
	workflows  []any
	activities []any // structs: every exported method is an activity
}

// registrations is the one table of task queues, workflows and activities:
// it builds the Temporal workers and names them in the log.
func (w *Worker) registrations() []registration {
	return []registration{
		{workflows.ReviewTaskQueue, []any{workflows.InitiativeReviewWorkflow}, []any{&activities.ReviewActivities{Reviews: initiative.Reviews{Pool: w.Pool}}}},
		{workflows.BusinessCaseApprovalTaskQueue, []any{workflows.BusinessCaseApprovalWorkflow}, []any{&activities.BusinessCaseActivities{Approvals: businesscase.Approvals{Pool: w.Pool}}}},
		{workflows.BusinessCaseExportTaskQueue, []any{workflows.BusinessCaseExportWorkflow}, []any{&activities.ExportActivities{Store: export.Store{Pool: w.Pool}, Retention: w.Config.ExportRetention}}},
		{workflows.BulkImportTaskQueue, []any{workflows.BulkImportWorkflow}, []any{&activities.BulkActivities{Jobs: bulk.Jobs{Pool: w.Pool, Importers: bulk.Importers()}}}},
		{workflows.WebhookRetryTaskQueue, []any{workflows.WebhookRetryWorkflow, workflows.WebhookRedeliveryWorkflow}, []any{&activities.WebhookActivities{Dispatcher: w.Webhooks}}},
		{workflows.IntegrationSyncTaskQueue, []any{workflows.IntegrationSyncWorkflow, workflows.IntegrationScheduledSyncWorkflow}, []any{&activities.IntegrationActivities{
			Store: integration.Store{Pool: w.Pool}, Secrets: w.Webhooks.Secrets, AllowHTTP: w.Config.OutboundAllowPrivateNetworks,
			HTTP: webhook.NewClient(webhook.ClientOptions{AllowPrivate: w.Config.OutboundAllowPrivateNetworks}).HTTP,
		}}},
		{workflows.MaintenanceTaskQueue, []any{workflows.RetentionWorkflow}, []any{&activities.RetentionActivities{Purger: w.Purger()}}},
	}
}

// temporalWorkers builds one Temporal worker per registration.
func (w *Worker) temporalWorkers(regs []registration) []worker.Worker {
	out := make([]worker.Worker, 0, len(regs))
	for _, r := range regs {
		// Writes of activities have no request behind them: the audit log names the task queue.
		tw := worker.New(w.Temporal, r.taskQueue, worker.Options{BackgroundActivityContext: db.WithActor(context.Background(), "system:"+r.taskQueue, "")})
		for _, wf := range r.workflows {
			tw.RegisterWorkflow(wf)
		}
		for _, a := range r.activities {
			tw.RegisterActivity(a)
		}
		out = append(out, tw)
	}
	return out
}

// Run relays and works until ctx ends. Temporal being down delays workflow
// work but not the relay: events wait in the outbox and workers keep retrying.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.prepareWebhooks(); err != nil {
		return err
	}
	relayDone := make(chan error, 1)
	go func() { relayDone <- w.Relay().Run(db.WithActor(ctx, "system:outbox-relay", "")) }()

	// The search attribute comes first: a workflow start that sets an
	// unregistered one is refused.
	steps := []func() error{
		func() error { return workflows.EnsureSearchAttributes(ctx, w.Temporal, w.Config.TemporalNamespace) },
		func() error {
			return workflows.EnsureRetentionSchedule(ctx, w.Temporal, cmp.Or(w.Config.RetentionEvery, config.DefaultRetentionEvery))
		},
	}
	regs := w.registrations()
	var started []worker.Worker
	for _, tw := range w.temporalWorkers(regs) {
		steps = append(steps, func() error {
			err := tw.Start()
			if err == nil {
				started = append(started, tw)
			}
			return err
		})
	}
	for _, step := range steps {
		for {
			err := step()
			if err == nil {
				break
			}
			w.Log.Warn("temporal not ready; retrying", "error", err)
			select {
			case <-ctx.Done():
				for _, tw := range started {
					tw.Stop()
				}
				return errors.Join(ctx.Err(), <-relayDone)
			case <-time.After(5 * time.Second):
			}
		}
	}
	queues := make([]string, len(regs))
	for i, r := range regs {
		queues[i] = r.taskQueue
	}
	w.Log.Info("worker running", "task_queues", queues)
	go w.reconcileSchedules(ctx)
	<-ctx.Done()
	for _, tw := range started {
		tw.Stop()
	}
	return <-relayDone
}

// reconcileSchedules makes the integration schedules in Temporal match the database (the
// truth): lost ones are recreated, changed ones updated, leftovers deleted. It retries until it
// succeeds once, without holding up the workers.
func (w *Worker) reconcileSchedules(ctx context.Context) {
	for {
		applied, deleted, err := workflows.ReconcileIntegrationSchedules(ctx, w.Temporal, integration.Store{Pool: w.Pool}, w.Log)
		if err == nil {
			w.Log.Info("integration schedules reconciled", "applied", applied, "deleted", deleted)
			return
		}
		w.Log.Warn("integration schedule reconcile failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}
