package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Handler consumes events. Handle must be idempotent: after a crash the same
// event can come again. An error leaves the event for a later retry of this
// handler only; handlers that finished are not called again.
type Handler interface {
	Name() string
	Handle(ctx context.Context, ev Event) error
}

// Relay publishes committed outbox events to its handlers.
type Relay struct {
	Pool     *pgxpool.Pool
	Handlers []Handler
	Log      *slog.Logger
	// Batch is how many events one claim takes (default 100); Lease how long a
	// claimed event stays with this relay before another may take it (default 1m).
	Batch int
	Lease time.Duration
	// Parallel is how many events are handled at once (default 64). A slow
	// handler (a receiver taking its 30 s) holds one slot, not the others.
	Parallel int
	// PollEvery is how often an idle relay looks for due events (default 50ms): the
	// longest an event committed while the relay is idle waits to be claimed. Writers do
	// not NOTIFY (see Run).
	PollEvery time.Duration
	// StartTypes are the event types that start or signal workflows (an
	// export, a sync, an approval): they have a lane of their own, claimed
	// first and into StartSlots slots of their own (default 16), so that no
	// backlog of webhook deliveries delays them. Within each lane the claim
	// takes the tenants' oldest events in turns (OutboxClaim), so that one
	// tenant's backlog does not hold up another's events.
	StartTypes []string
	StartSlots int
}

// StartTypes is implemented by a handler that starts or signals workflows:
// it names the event types it acts on, which the relay gives their own lane.
// It acts on no other type.
type StartTypes interface {
	StartTypes() []string
}

// Selective is implemented by a handler that acts on an event only when its
// tenant asked for it (the webhook dispatcher: an active subscription that
// lists the type). Wants reports whether Handle would do anything for events
// of eventType of tenantID now.
type Selective interface {
	Wants(ctx context.Context, tenantID uuid.UUID, eventType string) (bool, error)
}

// wants reports whether h may act on events of eventType of tenantID: a
// handler that neither names its types nor is Selective wants every event.
func wants(ctx context.Context, h Handler, tenantID uuid.UUID, eventType string) (bool, error) {
	if st, ok := h.(StartTypes); ok {
		return slices.Contains(st.StartTypes(), eventType), nil
	}
	if s, ok := h.(Selective); ok {
		return s.Wants(ctx, tenantID, eventType)
	}
	return true, nil
}

// StartTypesOf collects the start types of the handlers that name theirs.
func StartTypesOf(handlers []Handler) []string {
	var out []string
	for _, h := range handlers {
		if st, ok := h.(StartTypes); ok {
			for _, t := range st.StartTypes() {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func (r *Relay) defaults() {
	if r.Batch <= 0 {
		r.Batch = 100
	}
	if r.Lease <= 0 {
		r.Lease = time.Minute
	}
	if r.Parallel <= 0 {
		r.Parallel = 64
	}
	if r.PollEvery <= 0 {
		r.PollEvery = DefaultPollEvery
	}
	if r.StartSlots <= 0 {
		r.StartSlots = 16
	}
	if r.StartTypes == nil {
		r.StartTypes = []string{} // an empty array, not NULL, for the claim's ALL/ANY
	}
	if r.Log == nil {
		r.Log = slog.Default()
	}
}

// DefaultPollEvery is Relay.PollEvery's default.
const DefaultPollEvery = 50 * time.Millisecond

// Run relays until ctx ends. Events are claimed into free handling slots as
// they come: a slow event never holds up the ones behind it. Each lane
// (workflow starts, deliveries) has slots of its own, and the start lane is
// claimed first. A busy relay claims again as slots free up; an idle one polls
// every PollEvery (an empty claim: one round trip reading the pending indexes).
//
// It does not LISTEN for a NOTIFY from the writers: PostgreSQL serialises the
// commits of every notifying transaction of the cluster on one lock held
// through the commit's WAL flush, so a NOTIFY per event made concurrent
// commits of different tenants flush one at a time instead of together
// (group commit), capping the API's event writes near one per fsync.
func (r *Relay) Run(ctx context.Context) error {
	r.defaults()
	lanes := []*lane{{starts: true, slots: make(chan struct{}, r.StartSlots)}, {slots: make(chan struct{}, r.Parallel)}}
	freed := make(chan struct{}, 1)
	published := make(chan int64, 4*r.Parallel)
	publisherDone := make(chan struct{})
	go func() {
		defer close(publisherDone)
		r.publisher(ctx, published)
	}()
	var wg sync.WaitGroup
	defer func() {
		wg.Wait() // every handling has sent its mark
		close(published)
		<-publisherDone
	}()
	idle := r.PollEvery
	for {
		claimed, backlog := false, false
		for _, l := range lanes {
			free := cap(l.slots) - len(l.slots)
			// Within ClaimEvery of its last claim a lane claims again only with a backlog
			// and a quarter of its slots free: freed slots gather into one claim instead of
			// one claim per finished event (a claim reads the pending indexes; claiming per
			// event cost about as much as handling it).
			recent := time.Since(l.claimedAt) < ClaimEvery
			if free == 0 || recent && (!l.backlog || free < min(r.Batch, cap(l.slots)/4)) {
				backlog = backlog || l.backlog
				continue
			}
			want := min(free, r.Batch)
			rows, err := r.claim(ctx, l.starts, want)
			if err != nil && ctx.Err() == nil {
				r.Log.Error("outbox relay: claim", "error", err)
			}
			l.claimedAt, l.backlog = time.Now(), len(rows) == want // slots were the limit: more may be waiting
			claimed, backlog = claimed || len(rows) > 0, backlog || l.backlog
			for _, row := range rows {
				l.slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					done, err := r.handle(ctx, row)
					if err != nil && ctx.Err() == nil {
						r.Log.Error("outbox relay: record", "event_id", row.ID, "error", err)
					}
					if done {
						published <- row.Seq
					}
					<-l.slots
					select {
					case freed <- struct{}{}:
					default:
					}
				}()
			}
		}
		// A backlog: claim as slots free up. Otherwise poll (freed slots bring
		// nothing new to claim): twice as often after a claim that found events,
		// down to every ClaimEvery, half as often after an empty one, up to
		// PollEvery, so that claims stay near one per event or fewer at any rate.
		var wait <-chan struct{}
		next := ClaimEvery
		switch {
		case backlog:
			wait = freed
		case claimed:
			idle = max(idle/2, ClaimEvery)
			next = idle
		default:
			idle = min(2*idle, r.PollEvery)
			next = idle
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wait:
		case <-time.After(next):
		}
	}
}

// ClaimEvery is how often a relay claims while events keep coming: often
// enough to add little to their delivery, seldom enough that a claim takes
// several events.
const ClaimEvery = 10 * time.Millisecond

// lane is one lane's handling slots.
type lane struct {
	starts    bool
	slots     chan struct{}
	backlog   bool      // the last claim filled every free slot
	claimedAt time.Time // of the last claim
}

// claimPlan keeps the delivery lane's claim an ordered walk of each tenant's pending events
// (outbox_events_pending_tenant) that stops at the batch, whatever the statistics of the moment:
// taken while a backlog was pending, they made the planner read and sort every pending (and not
// yet vacuumed) entry of each tenant on every claim, by a bitmap scan (944 events a tenant to take
// 8, in the webhooks benchmark) or, on a small table, a sequential scan. The claim's other steps
// are index scans anyway.
var claimPlan = db.NewSettings(db.Setting{Name: "enable_bitmapscan", Value: "off"}, db.Setting{Name: "enable_seqscan", Value: "off"})

// claim leases up to n due events of one lane, in one round trip (the claim
// is one statement). It commits without waiting for the WAL flush: a lease
// lost in a database crash only lets the event be claimed again, and handlers
// are idempotent.
func (r *Relay) claim(ctx context.Context, starts bool, n int) ([]dbsqlc.OutboxClaimRow, error) {
	if !starts {
		return db.Q.OutboxClaim(ctx, db.OneTripSystem(r.Pool, true, claimPlan),
			dbsqlc.OutboxClaimParams{StartTypes: r.StartTypes, LeaseSeconds: r.Lease.Seconds(), BatchSize: int32(n)})
	}
	if len(r.StartTypes) == 0 {
		return nil, nil
	}
	rows, err := db.Q.OutboxClaimStarts(ctx, db.OneTripSystem(r.Pool, true), dbsqlc.OutboxClaimStartsParams{StartTypes: r.StartTypes, LeaseSeconds: r.Lease.Seconds(), BatchSize: int32(n)})
	claimed := make([]dbsqlc.OutboxClaimRow, 0, len(rows))
	for _, row := range rows {
		claimed = append(claimed, dbsqlc.OutboxClaimRow(row))
	}
	return claimed, err
}

// RunOnce claims one batch of due events and handles all of it before it
// returns how many it claimed (for tests and one-shot use; Run does not wait).
func (r *Relay) RunOnce(ctx context.Context) (int, error) {
	r.defaults()
	claimed, err := r.claim(ctx, true, r.Batch)
	if err != nil {
		return 0, err
	}
	deliveries, err := r.claim(ctx, false, r.Batch)
	if err != nil {
		return 0, err
	}
	claimed = append(claimed, deliveries...)
	sem := make(chan struct{}, r.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	var done []int64
	for _, row := range claimed {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok, err := r.handle(ctx, row)
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				done = append(done, row.Seq)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(done) > 0 {
		if err := r.publish(ctx, done); err != nil {
			errs = append(errs, err)
		}
	}
	return len(claimed), errors.Join(errs...)
}

// Drain runs RunOnce until no event is due (a batch's events included) and
// returns how many rows it handled in all (for tests and one-shot use).
func (r *Relay) Drain(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := r.RunOnce(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// handle hands an event to the handlers that have not finished it and reports whether all
// have: its publication is left to the caller, which gathers many into one statement
// (publisher, publish). A handler's failure is recorded here, with the event's retry.
func (r *Relay) handle(ctx context.Context, row dbsqlc.OutboxClaimRow) (bool, error) {
	if row.Type == Batch {
		return false, r.expand(ctx, row)
	}
	ev := Event{ID: row.ID, TenantID: row.TenantID, Type: row.Type, Data: row.Data, CreatedAt: row.CreatedAt, Attempts: int(row.Attempts)}
	done := slices.Clone(row.HandledBy)
	var failures []error
	for _, h := range r.Handlers {
		if slices.Contains(done, h.Name()) {
			continue
		}
		if err := h.Handle(ctx, ev); err != nil {
			failures = append(failures, fmt.Errorf("%s: %w", h.Name(), err))
			continue
		}
		done = append(done, h.Name())
	}
	if len(failures) == 0 {
		return true, nil
	}
	err := errors.Join(failures...)
	delay := Backoff(int(row.Attempts) + 1)
	r.Log.Warn("outbox handler failed; retrying later", "event_id", ev.ID, "type", ev.Type, "retry_in", delay, "error", err)
	// One statement in one round trip, committed without waiting for the WAL flush: lost
	// in a database crash, the record only makes the event come back sooner.
	return false, db.Q.OutboxRetryLater(ctx, db.OneTripSystem(r.Pool, true), dbsqlc.OutboxRetryLaterParams{
		Seq: row.Seq, HandledBy: done, DelaySeconds: delay.Seconds(), LastError: err.Error(),
	})
}

// PublishEvery is how long the relay gathers the events its handlers finished before it
// publishes them in one statement (publisher): an event waits that much longer, leased to this
// relay, before it leaves the pending indexes; its deliveries are made already.
const PublishEvery = 20 * time.Millisecond

// publisher publishes the finished events sent on seqs, gathered over PublishEvery or a
// Batch, until seqs is closed; then it publishes the rest. An event whose publication is lost
// (a failed statement, a crash before it) comes back when its lease runs out and its handlers
// find their work done (they are idempotent): at least once, as promised.
func (r *Relay) publisher(ctx context.Context, seqs <-chan int64) {
	var pending []int64
	var due <-chan time.Time
	flush := func() {
		if len(pending) == 0 {
			return
		}
		// On shutdown too: the handling is done, and the mark saves a repeat after restart.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := r.publish(pctx, pending); err != nil {
			r.Log.Error("outbox relay: publish", "events", len(pending), "error", err)
		}
		pending, due = pending[:0], nil
	}
	for {
		select {
		case seq, ok := <-seqs:
			if !ok {
				flush()
				return
			}
			pending = append(pending, seq)
			if len(pending) >= r.Batch {
				flush()
			} else if due == nil {
				due = time.After(PublishEvery)
			}
		case <-due:
			flush()
		}
	}
}

// publish marks events every handler finished as published, in one statement in one round
// trip, committed without waiting for the WAL flush: lost in a database crash, the mark only
// makes the events come back, and handlers are idempotent (the webhook deliveries of an event
// are rows the next call finds).
func (r *Relay) publish(ctx context.Context, seqs []int64) error {
	names := make([]string, len(r.Handlers))
	for i, h := range r.Handlers {
		names[i] = h.Name()
	}
	return db.Q.OutboxPublish(ctx, db.OneTripSystem(r.Pool, true), dbsqlc.OutboxPublishParams{HandlerNames: names, Seqs: seqs})
}

// expand turns a batch row into its events, which come to the handlers as
// any others; a failure leaves the batch for a later retry. The handlers that
// want none of the batch's events (no webhook of the tenant lists the type:
// an import's actuals, most often) are recorded as done with each, and when no
// handler wants them they are written published: an import of 500,000 records
// then costs the relay one statement, not a claim, a fan-out and a publish per
// record. Whether a handler wants them is read once, just before the
// expansion, as the fan-out of each event would have read it a little later.
func (r *Relay) expand(ctx context.Context, row dbsqlc.OutboxClaimRow) error {
	done, err := r.unwanted(ctx, row)
	if err == nil {
		_, err = ExpandBatch(ctx, r.Pool, row.Seq, done, len(done) == len(r.Handlers))
	}
	if err != nil {
		delay := Backoff(int(row.Attempts) + 1)
		r.Log.Warn("outbox batch expansion failed; retrying later", "event_id", row.ID, "retry_in", delay, "error", err)
		return db.Q.OutboxRetryLater(ctx, db.OneTripSystem(r.Pool, true), dbsqlc.OutboxRetryLaterParams{
			Seq: row.Seq, HandledBy: row.HandledBy, DelaySeconds: delay.Seconds(), LastError: err.Error(),
		})
	}
	return nil
}

// unwanted names the handlers that want none of batch row's events.
func (r *Relay) unwanted(ctx context.Context, row dbsqlc.OutboxClaimRow) ([]string, error) {
	var batch struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(row.Data, &batch); err != nil {
		return nil, fmt.Errorf("batch %d: %w", row.Seq, err)
	}
	done := []string{}
	for _, h := range r.Handlers {
		ok, err := wants(ctx, h, row.TenantID, batch.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name(), err)
		}
		if !ok {
			done = append(done, h.Name())
		}
	}
	return done, nil
}

// Backoff is the wait before a handler's retry: 1s doubling, capped at 5 minutes.
func Backoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 9)
	return min(d, 5*time.Minute)
}
