package dispatch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/secretbox"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/webhook"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

var quiet = testenv.QuietLogger()

const testSecret = "subscriber-secret-0123456789"

// fixture is a fresh database with one tenant and a dispatcher on it.
type fixture struct {
	t      *testing.T
	pool   *pgxpool.Pool
	tenant uuid.UUID
	d      *dispatch.Dispatcher
	sched  *fakeScheduler
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool := dbtest.NewPool(t)
	box, err := secretbox.New("")
	if err != nil {
		t.Fatal(err)
	}
	sched := &fakeScheduler{}
	d := &dispatch.Dispatcher{
		Pool:    pool,
		Client:  webhook.NewClient(webhook.ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second}),
		Secrets: box,
		Retries: sched,
		Delays:  []time.Duration{5 * time.Minute, 25 * time.Minute},
		Log:     quiet,
	}
	return &fixture{t: t, pool: pool, tenant: dbtest.NewTenant(t, pool, "starter"), d: d, sched: sched}
}

// webhook creates a subscription.
func (f *fixture) webhook(url string, active bool, events ...string) uuid.UUID {
	f.t.Helper()
	id := uuid.New()
	sealed, err := f.d.SealSecret(f.tenant, id, testSecret)
	if err != nil {
		f.t.Fatal(err)
	}
	f.inTenant(func(tx pgx.Tx) error {
		_, err := db.Q.WebhookCreate(context.Background(), tx, dbsqlc.WebhookCreateParams{
			TenantID: f.tenant, ID: id, URL: url, Events: events, SecretSealed: sealed, SecretHint: "6789", Active: active,
		})
		return err
	})
	return id
}

// event commits an event to the outbox, as the API does with a change.
func (f *fixture) event(typ string, data any) outbox.Event {
	f.t.Helper()
	var ev outbox.Event
	f.inTenant(func(tx pgx.Tx) error {
		var err error
		ev, err = outbox.Write(context.Background(), tx, f.tenant, typ, data)
		return err
	})
	return ev
}

func (f *fixture) inTenant(fn func(tx pgx.Tx) error) {
	f.t.Helper()
	if err := db.InTenant(context.Background(), f.pool, f.tenant, fn); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) delivery(webhookID, eventID uuid.UUID) dbsqlc.WebhookDelivery {
	f.t.Helper()
	var d dbsqlc.WebhookDelivery
	f.inTenant(func(tx pgx.Tx) error {
		var err error
		d, err = db.Q.WebhookDeliveryGetByEvent(context.Background(), tx, dbsqlc.WebhookDeliveryGetByEventParams{TenantID: f.tenant, WebhookID: webhookID, EventID: eventID})
		return err
	})
	return d
}

// status is the delivery's status, "" while it does not exist.
func (f *fixture) status(webhookID, eventID uuid.UUID) string {
	f.t.Helper()
	var st string
	f.inTenant(func(tx pgx.Tx) error {
		d, err := db.Q.WebhookDeliveryGetByEvent(context.Background(), tx, dbsqlc.WebhookDeliveryGetByEventParams{TenantID: f.tenant, WebhookID: webhookID, EventID: eventID})
		if db.IsNotFound(err) {
			return nil
		}
		st = d.Status
		return err
	})
	return st
}

func (f *fixture) deliveryCount() int {
	f.t.Helper()
	var n int
	f.inTenant(func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "SELECT count(*) FROM webhook_deliveries").Scan(&n)
	})
	return n
}

func (f *fixture) attempts(deliveryID uuid.UUID) []dbsqlc.WebhookDeliveryAttempt {
	f.t.Helper()
	var out []dbsqlc.WebhookDeliveryAttempt
	f.inTenant(func(tx pgx.Tx) error {
		var err error
		out, err = db.Q.WebhookDeliveryAttemptList(context.Background(), tx, dbsqlc.WebhookDeliveryAttemptListParams{TenantID: f.tenant, DeliveryIds: []uuid.UUID{deliveryID}})
		return err
	})
	return out
}

func (f *fixture) hook(id uuid.UUID) dbsqlc.Webhook {
	f.t.Helper()
	var w dbsqlc.Webhook
	f.inTenant(func(tx pgx.Tx) error {
		var err error
		w, err = db.Q.WebhookGet(context.Background(), tx, dbsqlc.WebhookGetParams{TenantID: f.tenant, ID: id})
		return err
	})
	return w
}

// fakeScheduler records hand-overs to the retry schedule.
type fakeScheduler struct {
	mu    sync.Mutex
	calls []dispatch.Retry
	err   error
}

func (s *fakeScheduler) ScheduleRetry(_ context.Context, r dispatch.Retry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, r)
	return s.err
}

func (s *fakeScheduler) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func newReceiver(t *testing.T, status int) *testenv.Receiver {
	return testenv.NewReceiver(t, testSecret, status)
}
