package dispatch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/webhook"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

func TestHandleFansOutToActiveSubscriptionsOfTheType(t *testing.T) {
	f := newFixture(t)
	match := newReceiver(t, 200)
	both := newReceiver(t, 204)
	otherType := newReceiver(t, 200)
	inactive := newReceiver(t, 200)
	hMatch := f.webhook(match.URL, true, outbox.InitiativeCreated)
	hBoth := f.webhook(both.URL, true, outbox.InitiativeStatusChanged, outbox.InitiativeCreated)
	f.webhook(otherType.URL, true, outbox.InitiativeStatusChanged)
	f.webhook(inactive.URL, false, outbox.InitiativeCreated)

	// Another tenant's subscription never sees this tenant's events.
	ev := f.event(outbox.InitiativeCreated, map[string]string{"name": "Cloud migration"})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	for name, rc := range map[string]*testenv.Receiver{"match": match, "both": both} {
		got := rc.Requests()
		if len(got) != 1 || got[0].EventID != ev.ID.String() || got[0].Type != outbox.InitiativeCreated {
			t.Fatalf("%s received %+v", name, got)
		}
		if rc.SignatureErrors() != 0 {
			t.Errorf("%s: signature did not verify", name)
		}
		if !bytes.Contains(got[0].Body, []byte(`"data":{"name":"Cloud migration"}`)) || !bytes.Contains(got[0].Body, []byte(`"tenant_id":"`+f.tenant.String()+`"`)) {
			t.Errorf("%s: envelope %s", name, got[0].Body)
		}
	}
	if string(match.Requests()[0].Body) != string(both.Requests()[0].Body) {
		t.Error("subscriptions got different bytes for the same event")
	}
	if len(otherType.Requests())+len(inactive.Requests()) != 0 {
		t.Error("an inactive or non-matching subscription was called")
	}
	for _, h := range []uuid.UUID{hMatch, hBoth} {
		d := f.delivery(h, ev.ID)
		if d.Status != dispatch.StatusDelivered || d.Attempts != 1 || d.LockedUntil != nil {
			t.Errorf("delivery %+v", d)
		}
		a := f.attempts(d.ID)
		if len(a) != 1 || a[0].Attempt != 1 || a[0].Trigger != "relay" || a[0].Outcome != "delivered" || a[0].StatusCode == nil || a[0].LatencyMS <= 0 {
			t.Errorf("attempts %+v", a)
		}
	}
	if f.sched.count() != 0 {
		t.Error("a delivered event was handed to the retry schedule")
	}

	// Handling the same event again (the relay after a crash) sends nothing more.
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(match.Requests()) != 1 || len(both.Requests()) != 1 || f.deliveryCount() != 2 {
		t.Errorf("redelivered outbox event was sent again: %d %d rows %d", len(match.Requests()), len(both.Requests()), f.deliveryCount())
	}
}

func TestHandleIgnoresTypesNobodyCanSubscribeTo(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 200)
	f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event("internal.something", map[string]int{})
	if err := f.d.Handle(context.Background(), ev); err != nil || len(rc.Requests()) != 0 || f.deliveryCount() != 0 {
		t.Fatalf("err %v requests %d rows %d", err, len(rc.Requests()), f.deliveryCount())
	}
}

func TestHandleFailureIsHandedToTheRetrySchedule(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{})

	// Temporal is unavailable at first: the attempt is stored, the hand-over is retried later.
	f.sched.err = errors.New("temporal unavailable")
	if err := f.d.Handle(context.Background(), ev); err == nil || !strings.Contains(err.Error(), "temporal unavailable") {
		t.Fatalf("Handle: %v", err)
	}
	d := f.delivery(h, ev.ID)
	if d.Status != dispatch.StatusRetrying || d.RetryScheduled || d.Attempts != 1 || *d.LastStatusCode != 500 {
		t.Fatalf("after a failed hand-over: %+v", d)
	}
	if d.NextAttemptAt == nil || d.NextAttemptAt.Sub(*d.LastAttemptAt) != 5*time.Minute {
		t.Errorf("next attempt %v, last %v", d.NextAttemptAt, d.LastAttemptAt)
	}

	// The relay calls again: only the hand-over is repeated, not the attempt.
	f.sched.err = nil
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Fatalf("receiver called %d times", n)
	}
	if d = f.delivery(h, ev.ID); !d.RetryScheduled || d.Status != dispatch.StatusRetrying {
		t.Fatalf("after the hand-over: %+v", d)
	}
	calls := f.sched.calls
	if len(calls) != 2 || calls[1] != (dispatch.Retry{TenantID: f.tenant, WebhookID: h, EventID: ev.ID, EventType: ev.Type, FirstAttemptAt: *d.LastAttemptAt}) {
		t.Errorf("schedule calls %+v", calls)
	}
	// Once handed over, nothing more happens on a further call.
	if err := f.d.Handle(context.Background(), ev); err != nil || f.sched.count() != 2 || len(rc.Requests()) != 1 {
		t.Errorf("third call: %v, %d schedules, %d requests", err, f.sched.count(), len(rc.Requests()))
	}
}

func TestHandleGoneDisablesAtOnce(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, http.StatusGone)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	w := f.hook(h)
	if w.Active || w.DisabledAt == nil || w.DisabledReason == nil || !strings.Contains(*w.DisabledReason, "410 Gone") {
		t.Fatalf("webhook after 410: %+v", w)
	}
	if d := f.delivery(h, ev.ID); d.Status != dispatch.StatusFailed || f.sched.count() != 0 {
		t.Errorf("delivery %+v, schedules %d", d, f.sched.count())
	}
	// Later events are not sent to it.
	rc.SetStatus(200)
	if err := f.d.Handle(context.Background(), f.event(outbox.InitiativeCreated, map[string]string{})); err != nil {
		t.Fatal(err)
	}
	if len(rc.Requests()) != 1 {
		t.Errorf("a disabled webhook got %d requests", len(rc.Requests()))
	}
}

func TestHandleRefusesPrivateTargetsUnlessAllowed(t *testing.T) {
	f := newFixture(t)
	f.d.Client = webhook.NewClient(webhook.ClientOptions{Timeout: 2 * time.Second}) // OUTBOUND_ALLOW_PRIVATE_NETWORKS=false
	rc := newReceiver(t, 200)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated) // stored earlier, when private targets were allowed
	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(rc.Requests()) != 0 {
		t.Fatal("the guard let a loopback delivery through")
	}
	d := f.delivery(h, ev.ID)
	if d.Status != dispatch.StatusRetrying || d.LastError == nil || !strings.Contains(*d.LastError, "loopback") {
		t.Errorf("delivery %+v", d)
	}
}

func TestHandleTimeoutIsAFailedAttempt(t *testing.T) {
	f := newFixture(t)
	f.d.Client.Timeout = 300 * time.Millisecond
	rc := newReceiver(t, 200)
	release := make(chan struct{})
	defer close(release)
	rc.SetHandler(func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	d := f.delivery(h, ev.ID)
	if d.Status != dispatch.StatusRetrying || d.LastStatusCode != nil || *d.LastError != "timed out after 300ms" || f.sched.count() != 1 {
		t.Errorf("delivery %+v schedules %d", d, f.sched.count())
	}
}

func TestRetryAttempts(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{"k": "v"})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	next := time.Now().Add(25 * time.Minute).UTC().Truncate(time.Microsecond)
	res, err := f.d.Retry(context.Background(), dispatch.RetryAttempt{TenantID: f.tenant, WebhookID: h, EventID: ev.ID, Attempt: 2, NextAttemptAt: next})
	if err != nil || res.Outcome != "failed" || res.StatusCode != 500 {
		t.Fatalf("attempt 2: %+v %v", res, err)
	}
	d := f.delivery(h, ev.ID)
	if d.Status != dispatch.StatusRetrying || d.Attempts != 2 || !d.NextAttemptAt.Equal(next) {
		t.Errorf("after attempt 2: %+v", d)
	}
	rc.SetStatus(200)
	res, err = f.d.Retry(context.Background(), dispatch.RetryAttempt{TenantID: f.tenant, WebhookID: h, EventID: ev.ID, Attempt: 3, Final: true})
	if err != nil || res.Outcome != "delivered" {
		t.Fatalf("attempt 3: %+v %v", res, err)
	}
	got := rc.Requests()
	if len(got) != 3 || got[0].EventID != got[2].EventID || string(got[0].Body) != string(got[2].Body) {
		t.Fatalf("retries must carry the same event id and bytes: %d requests", len(got))
	}
	d = f.delivery(h, ev.ID)
	a := f.attempts(d.ID)
	if d.Status != dispatch.StatusDelivered || d.NextAttemptAt != nil || len(a) != 3 || a[1].Trigger != "retry" || a[2].Outcome != "delivered" {
		t.Errorf("after attempt 3: %+v attempts %+v", d, a)
	}
	// A retry of a delivered delivery sends nothing (a redelivery got there first).
	res, err = f.d.Retry(context.Background(), dispatch.RetryAttempt{TenantID: f.tenant, WebhookID: h, EventID: ev.ID, Attempt: 3, Final: true})
	if err != nil || res.Outcome != "delivered" || len(rc.Requests()) != 3 {
		t.Errorf("retry after delivered: %+v %v %d", res, err, len(rc.Requests()))
	}
}

func TestRetryFinalFailureAndSkips(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 503)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{})
	_ = f.d.Handle(context.Background(), ev)
	res, err := f.d.Retry(context.Background(), dispatch.RetryAttempt{TenantID: f.tenant, WebhookID: h, EventID: ev.ID, Attempt: 3, Final: true})
	if err != nil || res.Outcome != "failed" {
		t.Fatal(res, err)
	}
	if d := f.delivery(h, ev.ID); d.Status != dispatch.StatusFailed || d.NextAttemptAt != nil {
		t.Errorf("final failure: %+v", d)
	}
	if changed, err := f.d.Disable(context.Background(), f.tenant, h, "3 delivery attempts failed"); err != nil || !changed {
		t.Fatal(changed, err)
	}
	if changed, _ := f.d.Disable(context.Background(), f.tenant, h, "again"); changed {
		t.Error("disabling twice changed it twice")
	}
	if w := f.hook(h); w.Active || *w.DisabledReason != "3 delivery attempts failed" {
		t.Errorf("webhook %+v", w)
	}

	// A retry for a webhook switched off meanwhile is skipped and ends the delivery.
	h2 := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev2 := f.event(outbox.InitiativeCreated, map[string]string{})
	_ = f.d.Handle(context.Background(), ev2)
	if _, err := f.d.Disable(context.Background(), f.tenant, h2, "off"); err != nil {
		t.Fatal(err)
	}
	before := len(rc.Requests())
	res, err = f.d.Retry(context.Background(), dispatch.RetryAttempt{TenantID: f.tenant, WebhookID: h2, EventID: ev2.ID, Attempt: 2})
	if err != nil || res.Outcome != dispatch.OutcomeSkipped || len(rc.Requests()) != before {
		t.Errorf("switched off: %+v %v", res, err)
	}
	if d := f.delivery(h2, ev2.ID); d.Status != dispatch.StatusFailed || !strings.Contains(*d.LastError, "switched off") {
		t.Errorf("delivery %+v", d)
	}

	// A deleted webhook: skipped, nothing to record.
	h3 := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev3 := f.event(outbox.InitiativeCreated, map[string]string{})
	_ = f.d.Handle(context.Background(), ev3)
	f.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), "DELETE FROM webhooks WHERE id = $1", h3)
		return err
	})
	res, err = f.d.Retry(context.Background(), dispatch.RetryAttempt{TenantID: f.tenant, WebhookID: h3, EventID: ev3.ID, Attempt: 2})
	if err != nil || res.Outcome != dispatch.OutcomeSkipped {
		t.Errorf("deleted: %+v %v", res, err)
	}
}

func TestSendTestAndRedeliver(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, false, outbox.InitiativeCreated) // inactive webhooks can be tested

	res, err := f.d.SendTest(context.Background(), f.tenant, h)
	if err != nil || res.Outcome != webhook.OutcomeFailed || res.StatusCode != 500 || res.Status != dispatch.StatusFailed || res.Number != 1 {
		t.Fatalf("test: %+v %v", res, err)
	}
	got := rc.Requests()
	if len(got) != 1 || got[0].Type != webhook.EventTest || got[0].EventID != res.EventID.String() || rc.SignatureErrors() != 0 {
		t.Fatalf("received %+v", got)
	}
	if w := f.hook(h); w.Active || w.DisabledAt != nil {
		t.Error("a failed test changed the webhook")
	}

	// The test delivery can be redelivered: same event id, same bytes.
	rc.SetStatus(200)
	red, err := f.d.Redeliver(context.Background(), f.tenant, h, res.DeliveryID)
	if err != nil || red.Outcome != webhook.OutcomeDelivered || red.Number != 2 || red.Status != dispatch.StatusDelivered || red.EventID != res.EventID {
		t.Fatalf("redeliver: %+v %v", red, err)
	}
	got = rc.Requests()
	if len(got) != 2 || string(got[0].Body) != string(got[1].Body) {
		t.Errorf("redelivery changed the body")
	}
	a := f.attempts(res.DeliveryID)
	if len(a) != 2 || a[0].Trigger != "test" || a[1].Trigger != "redeliver" {
		t.Errorf("attempts %+v", a)
	}

	if _, err := f.d.SendTest(context.Background(), f.tenant, uuid.New()); !errors.Is(err, dispatch.ErrWebhookNotFound) {
		t.Errorf("unknown webhook: %v", err)
	}
	if _, err := f.d.Redeliver(context.Background(), f.tenant, h, uuid.New()); !errors.Is(err, dispatch.ErrDeliveryNotFound) {
		t.Errorf("unknown delivery: %v", err)
	}
}

func TestRedeliverOutboxEventKeepsRetryState(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 500)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{"n": "1"})
	_ = f.d.Handle(context.Background(), ev)
	d := f.delivery(h, ev.ID)

	red, err := f.d.Redeliver(context.Background(), f.tenant, h, d.ID)
	if err != nil || red.Outcome != webhook.OutcomeFailed || red.Status != dispatch.StatusRetrying {
		t.Fatalf("failed redelivery: %+v %v", red, err)
	}
	after := f.delivery(h, ev.ID)
	if !after.RetryScheduled || !after.NextAttemptAt.Equal(*d.NextAttemptAt) {
		t.Errorf("a failed redelivery changed the retry state: %+v", after)
	}
	rc.SetStatus(200)
	if red, err = f.d.Redeliver(context.Background(), f.tenant, h, d.ID); err != nil || red.Status != dispatch.StatusDelivered {
		t.Fatalf("redelivery: %+v %v", red, err)
	}
	got := rc.Requests()
	if len(got) != 3 || string(got[0].Body) != string(got[2].Body) || got[2].EventID != ev.ID.String() {
		t.Errorf("redelivered bytes or id differ")
	}
}

func TestPayloadOver1MBIsRecordedNotSent(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 200)
	h := f.webhook(rc.URL, true, outbox.InitiativeCreated)
	ev := f.event(outbox.InitiativeCreated, map[string]string{"blob": strings.Repeat("x", webhook.MaxPayloadBytes)})
	if err := f.d.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	d := f.delivery(h, ev.ID)
	if len(rc.Requests()) != 0 || d.Status != dispatch.StatusFailed || !strings.Contains(*d.LastError, "exceeds 1 MB") || f.sched.count() != 0 {
		t.Errorf("delivery %+v, requests %d", d, len(rc.Requests()))
	}
	if !f.hook(h).Active {
		t.Error("our own oversized event disabled the webhook")
	}
}

// Wants answers what the fan-out would find: an active webhook of the tenant
// listing the type. Through the relay, a batch of events (a bulk import's) is
// delivered to the tenant that subscribed to its type, and written published,
// with no delivery, for the tenant whose webhooks do not ask for it.
func TestBatchEventsReachOnlyASubscriptionOfTheirType(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, 200)
	f.webhook(rc.URL, true, outbox.InitiativeCreated)
	f.webhook(rc.URL, false, outbox.BenefitActualRecorded)
	ctx := context.Background()
	for typ, want := range map[string]bool{outbox.InitiativeCreated: true, outbox.BenefitActualRecorded: false, "internal.something": false} {
		if got, err := f.d.Wants(ctx, f.tenant, typ); err != nil || got != want {
			t.Fatalf("Wants(%s) = %v, %v; want %v", typ, got, err, want)
		}
	}

	subscribed := &fixture{t: t, pool: f.pool, tenant: dbtest.NewTenant(t, f.pool, "starter"), d: f.d, sched: f.sched}
	hook := subscribed.webhook(rc.URL, true, outbox.BenefitActualRecorded)
	if got, err := f.d.Wants(ctx, subscribed.tenant, outbox.BenefitActualRecorded); err != nil || !got {
		t.Fatalf("Wants for the subscribed tenant = %v, %v; want true", got, err)
	}
	batch := func(fx *fixture, n int) {
		fx.inTenant(func(tx pgx.Tx) error {
			data := make([][]byte, n)
			for i := range data {
				data[i] = fmt.Appendf(nil, `{"n": %d}`, i)
			}
			return outbox.WriteMany(ctx, tx, fx.tenant, outbox.BenefitActualRecorded, data)
		})
	}
	batch(f, 50)
	batch(subscribed, 5)
	relay := &outbox.Relay{Pool: f.pool, Handlers: []outbox.Handler{f.d}, Log: quiet}
	if _, err := relay.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rc.Requests(); len(got) != 5 {
		t.Fatalf("the receiver got %d deliveries; want the subscribed tenant's 5 events", len(got))
	}
	for _, r := range rc.Requests() {
		if r.Type != outbox.BenefitActualRecorded || subscribed.status(hook, uuid.MustParse(r.EventID)) != dispatch.StatusDelivered {
			t.Errorf("delivery %s of type %s is not the subscribed tenant's, delivered", r.EventID, r.Type)
		}
	}
	if n := f.deliveryCount(); n != 0 {
		t.Errorf("the tenant without a subscription to the type has %d deliveries; want 0", n)
	}
	var events, published int
	f.inTenant(func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE published_at IS NOT NULL AND handled_by = '{webhooks}')
			FROM outbox_events WHERE type = $1`, outbox.BenefitActualRecorded).Scan(&events, &published)
	})
	if events != 50 || published != 50 {
		t.Errorf("the unsubscribed tenant's batch: %d events, %d published as handled by webhooks; want 50 and 50", events, published)
	}
}
