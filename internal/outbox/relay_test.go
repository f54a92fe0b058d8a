package outbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/testenv"
)

// recorder is a handler that counts what it saw and can be told to fail.
type recorder struct {
	name   string
	mu     sync.Mutex
	seen   map[uuid.UUID]int
	byType map[[2]string]int // (tenant, type) -> events handed over
	fail   bool
}

func newRecorder(name string) *recorder {
	return &recorder{name: name, seen: map[uuid.UUID]int{}, byType: map[[2]string]int{}}
}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Handle(_ context.Context, ev outbox.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("receiver down")
	}
	r.seen[ev.ID]++
	r.byType[[2]string{ev.TenantID.String(), ev.Type}]++
	return nil
}

// handed is how many events of the type of the tenant the handler was handed.
func (r *recorder) handed(tenant uuid.UUID, eventType string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byType[[2]string{tenant.String(), eventType}]
}

func (r *recorder) counts() map[uuid.UUID]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[uuid.UUID]int{}
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

var quiet = testenv.QuietLogger()

func writeEvents(t *testing.T, pool db.Beginner, tenant uuid.UUID, n int) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	err := db.InTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		for i := range n {
			ev, err := outbox.Write(context.Background(), tx, tenant, outbox.InitiativeCreated, map[string]int{"n": i})
			if err != nil {
				return err
			}
			ids = append(ids, ev.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestRelayDeliversEveryEventToEveryHandler(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenantA, tenantB := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	ids := append(writeEvents(t, pool, tenantA, 150), writeEvents(t, pool, tenantB, 30)...)
	a, b := newRecorder("a"), newRecorder("b")
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{a, b}, Log: quiet}
	if _, err := relay.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*recorder{a, b} {
		got := h.counts()
		for _, id := range ids {
			if got[id] != 1 {
				t.Fatalf("handler %s saw event %s %d times", h.name, id, got[id])
			}
		}
	}
}

func TestRelayRetriesOnlyTheFailedHandler(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	ids := writeEvents(t, pool, tenant, 1)
	ok, flaky := newRecorder("ok"), newRecorder("flaky")
	flaky.fail = true
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{ok, flaky}, Log: quiet}
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Not due again until its backoff (1 s) passes.
	if n, _ := relay.RunOnce(context.Background()); n != 0 {
		t.Fatalf("a failed event was claimed again before its backoff: %d", n)
	}
	flaky.mu.Lock()
	flaky.fail = false
	flaky.mu.Unlock()
	time.Sleep(1100 * time.Millisecond)
	if n, err := relay.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("retry claimed %d: %v", n, err)
	}
	if ok.counts()[ids[0]] != 1 || flaky.counts()[ids[0]] != 1 {
		t.Fatalf("after retry: ok saw %d, flaky saw %d (want 1 and 1)", ok.counts()[ids[0]], flaky.counts()[ids[0]])
	}
}

func TestRelayCrashBeforeFinishingIsRecoveredAfterTheLease(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	ids := writeEvents(t, pool, tenant, 3)
	// A relay that dies mid-handling: its handler never returns.
	ctx, cancel := context.WithCancel(context.Background())
	stuck := &blockingHandler{entered: make(chan struct{}, 3)}
	dead := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{stuck}, Lease: time.Second, Log: quiet}
	go func() { _, _ = dead.RunOnce(ctx) }()
	<-stuck.entered

	survivor := newRecorder("h") // same handler name: the work the dead relay did not finish
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{survivor}, Lease: time.Second, Log: quiet}
	if n, _ := relay.RunOnce(context.Background()); n != 0 {
		t.Fatalf("events leased to another relay were claimed: %d", n)
	}
	time.Sleep(1100 * time.Millisecond)
	if n, err := relay.RunOnce(context.Background()); err != nil || n != 3 {
		t.Fatalf("after the lease expired claimed %d: %v", n, err)
	}
	for _, id := range ids {
		if survivor.counts()[id] != 1 {
			t.Fatalf("event %s handled %d times after recovery", id, survivor.counts()[id])
		}
	}
	cancel()
}

type blockingHandler struct{ entered chan struct{} }

func (b *blockingHandler) Name() string { return "h" }
func (b *blockingHandler) Handle(ctx context.Context, _ outbox.Event) error {
	b.entered <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

func TestTwoRelaysNeverShareAnEvent(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	ids := writeEvents(t, pool, tenant, 400)
	shared := newRecorder("h")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{shared}, Batch: 25, Log: quiet}
			for ctx.Err() == nil {
				if n, err := r.RunOnce(ctx); err != nil || n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	got := shared.counts()
	for _, id := range ids {
		if got[id] != 1 {
			t.Fatalf("event %s handled %d times by two relays", id, got[id])
		}
	}
}

// An idle relay polls (writers do not NOTIFY): an event committed while it
// waits is claimed within its PollEvery.
func TestIdleRelayClaimsACommitWithinPollEvery(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	got := make(chan time.Time, 1)
	h := handlerFunc(func(outbox.Event) { got <- time.Now() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{h}, Log: quiet} // default PollEvery
	go func() { _ = relay.Run(ctx) }()
	time.Sleep(300 * time.Millisecond) // idle: several empty polls
	start := time.Now()
	writeEvents(t, pool, tenant, 1)
	select {
	case at := <-got:
		// PollEvery plus the handling; generous for -race on a loaded machine.
		if d := at.Sub(start); d > outbox.DefaultPollEvery+time.Second {
			t.Fatalf("handled %v after the commit; the idle relay polls every %v", d, outbox.DefaultPollEvery)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("event not handled: the idle relay did not poll")
	}
}

// Writing an event must not NOTIFY: PostgreSQL serialises the commits of all
// notifying transactions, WAL flush included, on one lock of the cluster, which
// capped concurrent creates of different tenants at about one per fsync.
func TestWritingAnEventSendsNoNotification(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN outbox_events"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, "UNLISTEN *") }()
	writeEvents(t, pool, tenant, 3)
	wait, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if n, err := conn.Conn().WaitForNotification(wait); err == nil {
		t.Fatalf("committing an event sent a notification on %q", n.Channel)
	}
}

type handlerFunc func(outbox.Event)

func (f handlerFunc) Name() string { return "f" }
func (f handlerFunc) Handle(_ context.Context, ev outbox.Event) error {
	f(ev)
	return nil
}

// A handler stuck on one event (a receiver taking its full timeout) must not
// delay the events behind it.
func TestRelaySlowEventDoesNotHoldUpOthers(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	release := make(chan struct{})
	defer close(release)
	delivered := make(chan uuid.UUID, 10)
	slowID := writeEvents(t, pool, tenant, 1)[0]
	h := handlerFunc(func(ev outbox.Event) {
		if ev.ID == slowID {
			<-release
			return
		}
		delivered <- ev.ID
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{h}, PollEvery: 100 * time.Millisecond, Log: quiet}
	go func() { _ = relay.Run(ctx) }()
	time.Sleep(300 * time.Millisecond) // the slow event is in hand
	fast := writeEvents(t, pool, tenant, 3)
	for range fast {
		select {
		case <-delivered:
		case <-time.After(3 * time.Second):
			t.Fatal("events behind a slow one were held up")
		}
	}
}

// One tenant's backlog of deliveries (each attempt slow, as to a receiver that
// fails) holds up neither another tenant's deliveries nor any tenant's
// workflow starts: the start lane has slots of its own, and each lane takes
// the tenants' events in turns.
func TestRelayIsFairAcrossTenantsAndLanes(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenantA, tenantB := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	const backlog = 20_000
	data := make([][]byte, backlog)
	for i := range data {
		data[i] = []byte(`{"n":1}`)
	}
	if err := db.InTenant(context.Background(), pool, tenantA, func(tx pgx.Tx) error {
		return outbox.WriteMany(context.Background(), tx, tenantA, outbox.InitiativeCreated, data)
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	handledA := 0
	seenB := map[string]time.Time{}
	h := handlerFunc(func(ev outbox.Event) {
		if ev.TenantID == tenantA {
			time.Sleep(10 * time.Millisecond) // one delivery attempt to a failing receiver
			mu.Lock()
			handledA++
			mu.Unlock()
			return
		}
		mu.Lock()
		seenB[ev.Type] = time.Now()
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{h}, Parallel: 8, PollEvery: 100 * time.Millisecond, Log: quiet,
		StartTypes: []string{outbox.BusinessCaseExportRequested}}
	done := make(chan struct{})
	go func() { _ = relay.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testenv.Eventually(t, 30*time.Second, "tenant A's backlog to be draining", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return handledA >= 100
	})
	start := time.Now()
	if err := db.InTenant(context.Background(), pool, tenantB, func(tx pgx.Tx) error {
		if _, err := outbox.Write(context.Background(), tx, tenantB, outbox.BusinessCaseExportRequested, map[string]string{"export": "x"}); err != nil {
			return err
		}
		_, err := outbox.Write(context.Background(), tx, tenantB, outbox.InitiativeCreated, map[string]string{"name": "B"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "tenant B's events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seenB) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	for typ, at := range seenB {
		t.Logf("tenant B's %s handled %s after its commit (tenant A: %d of %d handled)", typ, at.Sub(start).Round(time.Millisecond), handledA, backlog)
		if d := at.Sub(start); d > 2*time.Second {
			t.Errorf("tenant B's %s waited %s behind tenant A's backlog", typ, d)
		}
	}
}
