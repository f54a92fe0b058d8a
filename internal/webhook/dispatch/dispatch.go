// Package dispatch delivers outbox events to webhook subscriptions with the
// database as the record: the relay's fan-out and attempt 1, the attempts the
// retry workflow makes, disabling, manual redelivery and test events. Every
// attempt is stored; the HTTP call never runs inside a database transaction.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/secretbox"
	"github.com/valuecase/valuecase/internal/webhook"
)

// Delivery statuses (webhook_deliveries.status).
const (
	StatusPending   = "pending"   // attempt 1 in flight
	StatusRetrying  = "retrying"  // an attempt failed; more are scheduled
	StatusDelivered = "delivered" // a receiver answered 2xx
	StatusFailed    = "failed"    // no more attempts
)

// Statuses lists the delivery statuses, for filters.
var Statuses = []string{StatusPending, StatusRetrying, StatusDelivered, StatusFailed}

// Attempt triggers (webhook_delivery_attempts.trigger).
const (
	TriggerRelay     = "relay"
	TriggerRetry     = "retry"
	TriggerRedeliver = "redeliver"
	TriggerTest      = "test"
)

// OutcomeSkipped: a retry found nothing to send (see Retry).
const OutcomeSkipped = "skipped"

// Errors the API maps to responses.
var (
	ErrWebhookNotFound  = errors.New("webhook not found")
	ErrDeliveryNotFound = errors.New("delivery not found")
	ErrDeliveryInFlight = errors.New("attempt 1 of this delivery is still in flight")
	ErrEventGone        = errors.New("the event of this delivery is no longer stored")
)

// Retry asks for the timed retries of one delivery whose attempt 1 failed.
type Retry struct {
	TenantID, WebhookID, EventID uuid.UUID
	EventType                    string // names the run for operators (its summary)
	FirstAttemptAt               time.Time
}

// RetryScheduler hands failed deliveries to the durable retry schedule (the
// Temporal workflow). It must be idempotent: after a crash the same Retry can
// come again and must not start a second schedule.
type RetryScheduler interface {
	ScheduleRetry(ctx context.Context, r Retry) error
}

// Dispatcher delivers webhooks. The zero value is not usable; see New.
type Dispatcher struct {
	Pool    *pgxpool.Pool
	Client  *webhook.Client
	Secrets *secretbox.Box
	// Retries receives deliveries whose attempt 1 failed; only the process
	// running the outbox relay (the worker) needs it.
	Retries RetryScheduler
	// Delays are the waits before attempts 2, 3, ... (WEBHOOK_RETRY_DELAYS);
	// here they only set next_attempt_at, the workflow keeps the time.
	Delays []time.Duration
	Log    *slog.Logger
	// ClaimLease is how long a relay holds attempt 1 of a delivery before
	// another may take it over (its relay died); default the attempt timeout + 30 s.
	ClaimLease time.Duration
}

// New builds a Dispatcher from the configuration: the SSRF guard honours
// OUTBOUND_ALLOW_PRIVATE_NETWORKS and secrets are sealed under SECRETS_KEY.
func New(cfg config.Config, pool *pgxpool.Pool, log *slog.Logger) (*Dispatcher, error) {
	box, err := secretbox.New(cfg.SecretsKey)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	if box.Development {
		log.Warn("SECRETS_KEY is not set: webhook secrets are sealed with the fixed development key; set SECRETS_KEY in production")
	}
	return &Dispatcher{
		Pool:    pool,
		Client:  webhook.NewClient(webhook.ClientOptions{AllowPrivate: cfg.OutboundAllowPrivateNetworks}),
		Secrets: box,
		Delays:  cfg.WebhookRetryDelays, // WEBHOOK_RETRY_DELAYS, default 5m,25m (config)
		Log:     log,
	}, nil
}

// lease is how long a relay holds attempt 1 of a delivery: the attempt's own
// limit plus room for the database work around it.
func (d *Dispatcher) lease() time.Duration {
	if d.ClaimLease > 0 {
		return d.ClaimLease
	}
	t := d.Client.Timeout
	if t <= 0 {
		t = webhook.DefaultAttemptTimeout
	}
	return t + 30*time.Second
}

func secretAD(tenantID, webhookID uuid.UUID) []byte {
	return []byte("webhook-secret:" + tenantID.String() + ":" + webhookID.String())
}

// SealSecret encrypts a webhook's signing secret for storage.
func (d *Dispatcher) SealSecret(tenantID, webhookID uuid.UUID, secret string) ([]byte, error) {
	return d.Secrets.Seal([]byte(secret), secretAD(tenantID, webhookID))
}

func (d *Dispatcher) openSecret(tenantID, webhookID uuid.UUID, sealed []byte) (string, error) {
	b, err := d.Secrets.Open(sealed, secretAD(tenantID, webhookID))
	if err != nil {
		return "", fmt.Errorf("webhook %s: signing secret: %w (was SECRETS_KEY changed?)", webhookID, err)
	}
	return string(b), nil
}

// bookkeeping runs one relay bookkeeping statement (fan-out claim, attempt
// record) in one round trip, committing without waiting for the WAL flush.
// That is safe here: events committed synchronously with the changes that
// made them, and the WAL is flushed in order, so a PostgreSQL crash can only
// lose a suffix of it together with the later "event handled" mark; the relay
// then handles the event again and repeats the delivery with the same event
// id (at least once, as promised). A crash of the worker itself loses nothing.
func (d *Dispatcher) bookkeeping(tenantID uuid.UUID) dbsqlc.DBTX {
	return db.OneTrip(d.Pool, tenantID, true)
}

// Name implements outbox.Handler.
func (d *Dispatcher) Name() string { return "webhooks" }

// Wants implements outbox.Selective: an active webhook of the tenant lists the
// type, so the fan-out would create deliveries.
func (d *Dispatcher) Wants(ctx context.Context, tenantID uuid.UUID, eventType string) (bool, error) {
	if !slices.Contains(outbox.EventTypes, eventType) {
		return false, nil
	}
	return db.Q.WebhookSubscribed(ctx, d.bookkeeping(tenantID), dbsqlc.WebhookSubscribedParams{TenantID: tenantID, EventType: eventType})
}

// Handle implements outbox.Handler: it fans the event out to every active
// subscription of its tenant that lists its type and makes attempt 1 of each
// at once; a failed attempt is handed to the retry schedule. Handle is
// idempotent (the relay may call it again after a crash): deliveries already
// attempted are not attempted again, only a hand-over that did not happen yet
// is repeated. An error leaves the event in the outbox for a later call.
func (d *Dispatcher) Handle(ctx context.Context, ev outbox.Event) error {
	if !slices.Contains(outbox.EventTypes, ev.Type) {
		return nil
	}
	todo, err := db.Q.WebhookDeliveryFanOut(ctx, d.bookkeeping(ev.TenantID), dbsqlc.WebhookDeliveryFanOutParams{
		TenantID: ev.TenantID, EventID: ev.ID, EventType: ev.Type, LeaseSeconds: d.lease().Seconds(),
	})
	if err != nil || len(todo) == 0 {
		return err
	}
	payload, perr := webhook.NewPayload(webhook.Envelope{
		ID: ev.ID.String(), Type: ev.Type, CreatedAt: ev.CreatedAt, TenantID: ev.TenantID.String(), Data: ev.Data,
	})

	// Attempts 1 go out at once. Their records are stored as they come back, those that come
	// back within StoreWait of each other together, in one statement (a receiver that answers at
	// once is recorded at once, not after a slow one: a crash in between would repeat it).
	results := make(chan firstResult, len(todo))
	for i, row := range todo { // at most 20 webhooks per tenant
		go func() {
			r := firstResult{i: i}
			if row.Status == StatusPending {
				r.rec, r.err = d.firstAttempt(ctx, ev, row, payload, perr)
			} else if row.LastAttemptAt != nil {
				r.err = d.handOver(ctx, Retry{TenantID: ev.TenantID, WebhookID: row.WebhookID, EventID: ev.ID, EventType: ev.Type, FirstAttemptAt: *row.LastAttemptAt}, row.ID)
			}
			results <- r
		}()
	}
	errs := make([]error, len(todo))
	for received := 0; received < len(todo); {
		batch := []firstResult{<-results}
		received++
		wait := time.NewTimer(StoreWait)
	gather:
		for received < len(todo) {
			select {
			case r := <-results:
				batch = append(batch, r)
				received++
			case <-wait.C:
				break gather
			}
		}
		wait.Stop()
		for _, r := range batch {
			errs[r.i] = r.err
		}
		if err := d.storeFirstAttempts(ctx, ev, batch, errs); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

// StoreWait is how long the relay waits, after one attempt 1 of an event came back, for the
// others to come back and be stored in the same statement.
const StoreWait = 5 * time.Millisecond

// firstResult is what one delivery of Handle came back with: the attempt 1 to store, if any.
type firstResult struct {
	i   int // the delivery's place in the fan-out
	rec *stored
	err error
}

// storeFirstAttempts stores the attempts 1 of one event that came back together (one statement
// for all but those that disable their webhook, which take a transaction) and hands the failed
// ones to the retry schedule, setting errs[i] to a hand-over's error.
func (d *Dispatcher) storeFirstAttempts(ctx context.Context, ev outbox.Event, batch []firstResult, errs []error) error {
	var plain, disabling []stored
	for _, b := range batch {
		switch r := b.rec; {
		case r == nil:
		case r.disable == "":
			plain = append(plain, *r)
		default:
			disabling = append(disabling, *r)
		}
	}
	if len(plain) > 0 {
		if _, err := d.storeAll(ctx, d.bookkeeping(ev.TenantID), ev.TenantID, ev.ID, plain); err != nil {
			return err
		}
	}
	if len(disabling) > 0 { // two statements: one transaction
		if err := db.InTenant(ctx, d.Pool, ev.TenantID, func(tx pgx.Tx) error {
			_, err := d.storeAll(ctx, tx, ev.TenantID, ev.ID, disabling)
			return err
		}); err != nil {
			return err
		}
	}
	for _, b := range batch {
		r := b.rec
		if r == nil {
			continue
		}
		d.logAttempt(ev.TenantID, r.webhookID, ev.ID, 1, r.attempt)
		if r.status == StatusRetrying {
			errs[b.i] = d.handOver(ctx, Retry{TenantID: ev.TenantID, WebhookID: r.webhookID, EventID: ev.ID, EventType: ev.Type, FirstAttemptAt: r.attempt.StartedAt}, r.deliveryID)
		}
	}
	return nil
}

// firstAttempt makes attempt 1 of a delivery and returns its record for Handle to store
// (nil when there is none to store: the webhook was switched off, or shutting down).
func (d *Dispatcher) firstAttempt(ctx context.Context, ev outbox.Event, row dbsqlc.WebhookDeliveryFanOutRow, p webhook.Payload, perr error) (*stored, error) {
	if !row.Active { // reclaimed after a crash, and switched off since
		return nil, d.finish(ctx, ev.TenantID, row.ID, "the webhook was switched off before the event could be sent")
	}
	var a webhook.Attempt
	if perr != nil {
		a = webhook.Attempt{StartedAt: time.Now(), Outcome: webhook.OutcomeFailed, Error: "not sent: " + perr.Error()}
	} else {
		secret, err := d.openSecret(ev.TenantID, row.WebhookID, row.SecretSealed)
		if err != nil {
			return nil, err // a configuration problem: keep the event until it is fixed
		}
		a = webhook.Deliver(ctx, d.Client, webhook.Target{URL: row.URL, Secret: secret}, p)
		if ctx.Err() != nil {
			// Shutting down: record nothing. The claim runs out and the
			// event's next relay makes this attempt again (same event id).
			return nil, ctx.Err()
		}
	}
	rec := record{attempt: a, trigger: TriggerRelay}
	switch {
	case a.Outcome == webhook.OutcomeDelivered:
		rec.status = StatusDelivered
	case a.Outcome == webhook.OutcomeGone:
		rec.status = StatusFailed
		rec.disable = "the receiver answered 410 Gone to attempt 1 of event " + ev.ID.String()
	case perr != nil || len(d.Delays) == 0:
		rec.status = StatusFailed
	default:
		rec.status = StatusRetrying
		next := a.StartedAt.Add(d.Delays[0])
		rec.next = &next
	}
	return &stored{webhookID: row.WebhookID, deliveryID: row.ID, record: rec}, nil
}

// handOver starts the retry schedule and marks the delivery as handed over.
func (d *Dispatcher) handOver(ctx context.Context, r Retry, deliveryID uuid.UUID) error {
	if d.Retries == nil {
		return errors.New("dispatch: no retry scheduler configured")
	}
	if err := d.Retries.ScheduleRetry(ctx, r); err != nil {
		return fmt.Errorf("schedule webhook retry: %w", err)
	}
	return db.Q.WebhookDeliveryRetryScheduled(ctx, d.bookkeeping(r.TenantID), dbsqlc.WebhookDeliveryRetryScheduledParams{TenantID: r.TenantID, ID: deliveryID})
}

func (d *Dispatcher) finish(ctx context.Context, tenantID, deliveryID uuid.UUID, reason string) error {
	return db.InTenant(ctx, d.Pool, tenantID, func(tx pgx.Tx) error {
		return db.Q.WebhookDeliveryFinish(ctx, tx, dbsqlc.WebhookDeliveryFinishParams{TenantID: tenantID, ID: deliveryID, Reason: &reason})
	})
}

// record is one attempt and the delivery state it leads to.
type record struct {
	attempt        webhook.Attempt
	trigger        string
	status         string
	next           *time.Time
	retryScheduled bool
	disable        string // non-empty: disable the webhook with this reason
}

// store writes an attempt of a delivery (and disables the webhook when asked) in tx.
func (d *Dispatcher) store(ctx context.Context, tx dbsqlc.DBTX, del dbsqlc.WebhookDelivery, r record) (int, error) {
	n, err := d.storeAll(ctx, tx, del.TenantID, del.EventID, []stored{{webhookID: del.WebhookID, deliveryID: del.ID, record: r}})
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

// stored is one delivery's attempt for storeAll.
type stored struct {
	webhookID, deliveryID uuid.UUID
	record
}

// storeAll writes attempts of several deliveries of one event in one statement
// (the relay's attempts 1 of an event: one round trip, not one per delivery)
// and disables the webhooks asked for; it returns each attempt's number, in order.
func (d *Dispatcher) storeAll(ctx context.Context, tx dbsqlc.DBTX, tenantID, eventID uuid.UUID, recs []stored) ([]int, error) {
	p := dbsqlc.WebhookDeliveryRecordAttemptsParams{TenantID: tenantID, EventID: eventID}
	for _, r := range recs {
		a := r.attempt
		var next time.Time
		if r.next != nil {
			next = *r.next
		}
		p.Ids, p.Triggers, p.Outcomes = append(p.Ids, r.deliveryID), append(p.Triggers, r.trigger), append(p.Outcomes, string(a.Outcome))
		p.StartedAts, p.LatenciesMs = append(p.StartedAts, a.StartedAt), append(p.LatenciesMs, float64(a.Latency.Microseconds())/1000)
		p.StatusCodes, p.Errors = append(p.StatusCodes, int32(a.StatusCode)), append(p.Errors, a.Error) // 0 and "": none
		p.ResponseSnippets, p.Statuses = append(p.ResponseSnippets, a.ResponseSnippet), append(p.Statuses, r.status)
		p.RetryScheduled, p.HasNext, p.NextAttemptAts = append(p.RetryScheduled, r.retryScheduled), append(p.HasNext, r.next != nil), append(p.NextAttemptAts, next)
	}
	rows, err := db.Q.WebhookDeliveryRecordAttempts(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	numbers := make([]int, len(recs))
	for i, r := range recs {
		k := slices.IndexFunc(rows, func(row dbsqlc.WebhookDeliveryRecordAttemptsRow) bool { return row.DeliveryID == r.deliveryID })
		if k < 0 {
			return nil, fmt.Errorf("dispatch: delivery %s: %w", r.deliveryID, pgx.ErrNoRows)
		}
		numbers[i] = int(rows[k].Attempt)
	}
	for _, r := range recs {
		if r.disable == "" {
			continue
		}
		changed, err := db.Q.WebhookDisable(ctx, tx, dbsqlc.WebhookDisableParams{TenantID: tenantID, ID: r.webhookID, Reason: &r.disable})
		if err != nil {
			return nil, err
		}
		if changed > 0 {
			d.Log.Warn("webhook disabled", "tenant_id", tenantID, "webhook_id", r.webhookID, "reason", r.disable)
		}
	}
	return numbers, nil
}

func (d *Dispatcher) logAttempt(tenantID, webhookID, eventID uuid.UUID, n int, a webhook.Attempt) {
	level := slog.LevelDebug
	if a.Outcome != webhook.OutcomeDelivered {
		level = slog.LevelInfo
	}
	d.Log.Log(context.Background(), level, "webhook attempt", "tenant_id", tenantID, "webhook_id", webhookID, "event_id", eventID,
		"attempt", n, "outcome", a.Outcome, "status_code", a.StatusCode, "latency_ms", a.Latency.Milliseconds(), "error", a.Error)
}

// RetryAttempt is one attempt of the retry schedule.
type RetryAttempt struct {
	TenantID, WebhookID, EventID uuid.UUID
	Attempt                      int       // 2, 3, ... in the schedule
	Final                        bool      // no attempt follows a failure of this one
	NextAttemptAt                time.Time // when the next one is due (not Final)
}

// AttemptResult reports one attempt.
type AttemptResult struct {
	Outcome    string // delivered, gone, failed or skipped
	StatusCode int
	DeliveryID uuid.UUID
}

// Retry makes one scheduled attempt. It sends nothing (outcome skipped) when
// the delivery or its webhook is gone, the webhook is switched off or no
// longer lists the event type, or the event is no longer stored; it reports
// delivered without sending when a redelivery already got the event through.
func (d *Dispatcher) Retry(ctx context.Context, in RetryAttempt) (AttemptResult, error) {
	var (
		del     dbsqlc.WebhookDelivery
		hook    dbsqlc.Webhook
		payload webhook.Payload
		skip    string
	)
	err := db.InTenant(ctx, d.Pool, in.TenantID, func(tx pgx.Tx) error {
		var err error
		del, err = db.Q.WebhookDeliveryGetByEvent(ctx, tx, dbsqlc.WebhookDeliveryGetByEventParams{TenantID: in.TenantID, WebhookID: in.WebhookID, EventID: in.EventID})
		if db.IsNotFound(err) {
			skip = "-" // deleted with its webhook
			return nil
		}
		if err != nil {
			return err
		}
		if del.Status == StatusDelivered || del.Status == StatusFailed {
			return nil
		}
		hook, err = db.Q.WebhookGet(ctx, tx, dbsqlc.WebhookGetParams{TenantID: in.TenantID, ID: in.WebhookID})
		switch {
		case db.IsNotFound(err):
			skip = "-"
			return nil
		case err != nil:
			return err
		case !hook.Active:
			skip = "the webhook was switched off; not retried"
			return nil
		case !slices.Contains(hook.Events, del.EventType):
			skip = "the webhook no longer subscribes to " + del.EventType + "; not retried"
			return nil
		}
		payload, err = loadPayload(ctx, tx, del)
		if errors.Is(err, ErrEventGone) {
			skip = "the event is no longer stored; not retried"
			return nil
		}
		return err
	})
	if err != nil {
		return AttemptResult{}, err
	}
	res := AttemptResult{DeliveryID: del.ID}
	switch {
	case skip == "-":
		res.Outcome = OutcomeSkipped
		return res, nil
	case skip != "":
		res.Outcome = OutcomeSkipped
		return res, d.finish(ctx, in.TenantID, del.ID, skip)
	case del.Status == StatusDelivered:
		res.Outcome = string(webhook.OutcomeDelivered)
		return res, nil
	case del.Status == StatusFailed:
		res.Outcome = OutcomeSkipped
		return res, nil
	}
	secret, err := d.openSecret(in.TenantID, in.WebhookID, hook.SecretSealed)
	if err != nil {
		return res, err
	}
	a := webhook.Deliver(ctx, d.Client, webhook.Target{URL: hook.URL, Secret: secret}, payload)
	if ctx.Err() != nil {
		return res, ctx.Err() // the activity is retried; nothing recorded
	}
	err = db.InTenant(ctx, d.Pool, in.TenantID, func(tx pgx.Tx) error {
		cur, err := db.Q.WebhookDeliveryGetForUpdate(ctx, tx, dbsqlc.WebhookDeliveryGetForUpdateParams{TenantID: in.TenantID, ID: del.ID})
		if err != nil {
			return err
		}
		rec := record{attempt: a, trigger: TriggerRetry, retryScheduled: cur.RetryScheduled}
		switch {
		case a.Outcome == webhook.OutcomeDelivered || cur.Status == StatusDelivered:
			rec.status = StatusDelivered
		case a.Outcome == webhook.OutcomeGone || in.Final:
			rec.status = StatusFailed
		default:
			rec.status = StatusRetrying
			next := in.NextAttemptAt
			rec.next = &next
		}
		_, err = d.store(ctx, tx, del, rec)
		return err
	})
	if err != nil {
		return res, err
	}
	d.logAttempt(in.TenantID, in.WebhookID, in.EventID, in.Attempt, a)
	res.Outcome, res.StatusCode = string(a.Outcome), a.StatusCode
	return res, nil
}

// Disable switches a webhook off after its deliveries of an event failed for
// good; it reports whether the webhook was still active.
func (d *Dispatcher) Disable(ctx context.Context, tenantID, webhookID uuid.UUID, reason string) (bool, error) {
	var n int64
	err := db.InTenant(ctx, d.Pool, tenantID, func(tx pgx.Tx) error {
		var err error
		n, err = db.Q.WebhookDisable(ctx, tx, dbsqlc.WebhookDisableParams{TenantID: tenantID, ID: webhookID, Reason: &reason})
		return err
	})
	if err == nil && n > 0 {
		d.Log.Warn("webhook disabled", "tenant_id", tenantID, "webhook_id", webhookID, "reason", reason)
	}
	return n > 0, err
}

// loadPayload rebuilds the envelope of a delivery: its own for test events,
// else from the outbox event (marshalled the same way, so the same bytes).
func loadPayload(ctx context.Context, tx pgx.Tx, del dbsqlc.WebhookDelivery) (webhook.Payload, error) {
	if del.Payload != nil {
		return webhook.Payload{EventID: del.EventID.String(), EventType: del.EventType, Body: del.Payload}, nil
	}
	ev, err := db.Q.WebhookEventGet(ctx, tx, dbsqlc.WebhookEventGetParams{TenantID: del.TenantID, ID: del.EventID})
	if db.IsNotFound(err) {
		return webhook.Payload{}, ErrEventGone
	}
	if err != nil {
		return webhook.Payload{}, err
	}
	return webhook.NewPayload(webhook.Envelope{
		ID: ev.ID.String(), Type: ev.Type, CreatedAt: ev.CreatedAt, TenantID: ev.TenantID.String(), Data: ev.Data,
	})
}

// Result is the outcome of a test event or a redelivery.
type Result struct {
	DeliveryID uuid.UUID
	EventID    uuid.UUID
	EventType  string
	Number     int    // the attempt's number within its delivery
	Status     string // the delivery's status afterwards
	webhook.Attempt
}

// TestData is the data of a webhook.test event.
type TestData struct {
	WebhookID string `json:"webhook_id"`
	Message   string `json:"message"`
}

// SendTest sends a webhook.test event to one webhook now, whether or not it
// is active, and records it as a delivery with one attempt. It never
// retries and never disables the webhook: the caller sees the outcome.
func (d *Dispatcher) SendTest(ctx context.Context, tenantID, webhookID uuid.UUID) (Result, error) {
	var hook dbsqlc.Webhook
	err := db.InTenant(ctx, d.Pool, tenantID, func(tx pgx.Tx) error {
		var err error
		hook, err = db.Q.WebhookGet(ctx, tx, dbsqlc.WebhookGetParams{TenantID: tenantID, ID: webhookID})
		return err
	})
	if db.IsNotFound(err) {
		return Result{}, ErrWebhookNotFound
	}
	if err != nil {
		return Result{}, err
	}
	data, _ := json.Marshal(TestData{WebhookID: webhookID.String(), Message: "This is a test event from Valuecase."})
	eventID := uuid.New()
	payload, err := webhook.NewPayload(webhook.Envelope{
		ID: eventID.String(), Type: webhook.EventTest, CreatedAt: time.Now(), TenantID: tenantID.String(), Data: data,
	})
	if err != nil {
		return Result{}, err
	}
	secret, err := d.openSecret(tenantID, webhookID, hook.SecretSealed)
	if err != nil {
		return Result{}, err
	}
	a := webhook.Deliver(ctx, d.Client, webhook.Target{URL: hook.URL, Secret: secret}, payload)
	res := Result{EventID: eventID, EventType: webhook.EventTest, Number: 1, Attempt: a}
	rec := record{attempt: a, trigger: TriggerTest, status: StatusFailed}
	if a.Outcome == webhook.OutcomeDelivered {
		rec.status = StatusDelivered
	}
	res.Status = rec.status
	ctx = context.WithoutCancel(ctx) // the attempt was made: record it even if the caller went away
	err = db.InTenant(ctx, d.Pool, tenantID, func(tx pgx.Tx) error {
		del, err := db.Q.WebhookDeliveryCreate(ctx, tx, dbsqlc.WebhookDeliveryCreateParams{
			TenantID: tenantID, WebhookID: webhookID, EventID: eventID, EventType: webhook.EventTest, Payload: payload.Body,
		})
		if err != nil {
			return err
		}
		res.DeliveryID = del.ID
		_, err = d.store(ctx, tx, del, rec)
		return err
	})
	if isForeignKeyViolation(err) { // deleted while the test ran
		return Result{}, ErrWebhookNotFound
	}
	return res, err
}

// Redeliver sends a delivery's event again, now, to its webhook (active or
// not), with the same event id and body, as an extra attempt. A success marks
// the delivery delivered; a failure leaves its state (and any running retry
// schedule) as it was. It never disables the webhook.
func (d *Dispatcher) Redeliver(ctx context.Context, tenantID, webhookID, deliveryID uuid.UUID) (Result, error) {
	var (
		del     dbsqlc.WebhookDelivery
		hook    dbsqlc.Webhook
		payload webhook.Payload
	)
	err := db.InTenant(ctx, d.Pool, tenantID, func(tx pgx.Tx) error {
		var err error
		del, err = db.Q.WebhookDeliveryGet(ctx, tx, dbsqlc.WebhookDeliveryGetParams{TenantID: tenantID, WebhookID: webhookID, ID: deliveryID})
		if db.IsNotFound(err) {
			return ErrDeliveryNotFound
		}
		if err != nil {
			return err
		}
		if del.Status == StatusPending {
			return ErrDeliveryInFlight
		}
		if hook, err = db.Q.WebhookGet(ctx, tx, dbsqlc.WebhookGetParams{TenantID: tenantID, ID: webhookID}); err != nil {
			return err
		}
		payload, err = loadPayload(ctx, tx, del)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	secret, err := d.openSecret(tenantID, webhookID, hook.SecretSealed)
	if err != nil {
		return Result{}, err
	}
	a := webhook.Deliver(ctx, d.Client, webhook.Target{URL: hook.URL, Secret: secret}, payload)
	res := Result{DeliveryID: del.ID, EventID: del.EventID, EventType: del.EventType, Attempt: a}
	ctx = context.WithoutCancel(ctx) // the attempt was made: record it even if the caller went away
	err = db.InTenant(ctx, d.Pool, tenantID, func(tx pgx.Tx) error {
		cur, err := db.Q.WebhookDeliveryGetForUpdate(ctx, tx, dbsqlc.WebhookDeliveryGetForUpdateParams{TenantID: tenantID, ID: del.ID})
		if db.IsNotFound(err) {
			return ErrDeliveryNotFound
		}
		if err != nil {
			return err
		}
		rec := record{attempt: a, trigger: TriggerRedeliver, status: cur.Status, next: cur.NextAttemptAt, retryScheduled: cur.RetryScheduled}
		if a.Outcome == webhook.OutcomeDelivered {
			rec.status, rec.next = StatusDelivered, nil
		}
		res.Status = rec.status
		res.Number, err = d.store(ctx, tx, del, rec)
		return err
	})
	return res, err
}

func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}
