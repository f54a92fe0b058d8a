package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
)

// writeBatch commits one single event and then n events of one type through
// WriteMany, in one transaction, as a bulk import does.
func writeBatch(t *testing.T, pool db.Beginner, tenant uuid.UUID, n int) {
	t.Helper()
	err := db.InTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		if _, err := outbox.Write(context.Background(), tx, tenant, outbox.InitiativeCreated, map[string]string{"single": "yes"}); err != nil {
			return err
		}
		data := make([][]byte, n)
		for i := range data {
			data[i] = fmt.Appendf(nil, `{"n": %d, "tenant": %q}`, i, tenant)
		}
		return outbox.WriteMany(context.Background(), tx, tenant, outbox.BenefitActualRecorded, data)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storedEvent is an outbox row as the tenant reads it.
type storedEvent struct {
	ID        uuid.UUID
	Type      string
	N         int
	Tenant    uuid.UUID
	CreatedAt time.Time
	Published bool
}

func storedEvents(t *testing.T, pool db.Beginner, tenant uuid.UUID) []storedEvent {
	t.Helper()
	var out []storedEvent
	err := db.InTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `SELECT id, type, data, created_at, published_at IS NOT NULL FROM outbox_events ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e storedEvent
			var data []byte
			if err := rows.Scan(&e.ID, &e.Type, &data, &e.CreatedAt, &e.Published); err != nil {
				return err
			}
			var d struct {
				N      int       `json:"n"`
				Tenant uuid.UUID `json:"tenant"`
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return err
			}
			e.N, e.Tenant = d.N, d.Tenant
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A bulk import's events commit as one batch row; the relay turns it into one
// row per event, in order, with the batch's tenant and time, and its handlers
// see each event once and never the batch.
func TestRelayExpandsABatchIntoItsEvents(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenantA, tenantB := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	writeBatch(t, pool, tenantA, 500)
	writeBatch(t, pool, tenantB, 3)

	before := storedEvents(t, pool, tenantA)
	if len(before) != 2 || before[0].Type != outbox.InitiativeCreated || before[1].Type != outbox.Batch {
		t.Fatalf("before the relay: %+v; want the single event and one batch row", before)
	}

	var mu sync.Mutex
	seen := map[uuid.UUID]int{}
	types := map[string]int{}
	h := handlerFunc(func(ev outbox.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen[ev.ID]++
		types[ev.Type]++
	})
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{h}, Log: quiet}
	if _, err := relay.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if types[outbox.Batch] != 0 || types[outbox.BenefitActualRecorded] != 503 || types[outbox.InitiativeCreated] != 2 {
		t.Errorf("handler saw types %v; want 503 benefit.actual_recorded, 2 initiative.created, no batch", types)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("event %s handled %d times", id, c)
		}
	}

	for _, tc := range []struct {
		tenant uuid.UUID
		n      int
	}{{tenantA, 500}, {tenantB, 3}} {
		after := storedEvents(t, pool, tc.tenant)
		batch := after[1]
		events := after[2:]
		if batch.Type != outbox.Batch || !batch.Published || len(events) != tc.n {
			t.Fatalf("tenant %s after the relay: batch %+v and %d events; want the batch published and %d events", tc.tenant, batch, len(events), tc.n)
		}
		for i, e := range events {
			if e.Type != outbox.BenefitActualRecorded || e.N != i || e.Tenant != tc.tenant || !e.CreatedAt.Equal(batch.CreatedAt) || !e.Published {
				t.Fatalf("tenant %s event %d: %+v; want benefit.actual_recorded n=%d of this tenant at the batch's time %s, published",
					tc.tenant, i, e, i, batch.CreatedAt)
			}
			if seen[e.ID] != 1 {
				t.Fatalf("event %d (%s) was handled %d times", i, e.ID, seen[e.ID])
			}
		}
	}
}

// Relays racing on one batch (a lease that ran out mid-expansion) write its
// events once between them.
func TestBatchExpandsOnceUnderRacingRelays(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	writeBatch(t, pool, tenant, 2000)
	batchSeq := seqsOf(t, pool, tenant, "type = $1", outbox.Batch)[0]
	var wg sync.WaitGroup
	written := make([]int64, 4)
	errs := make([]error, 4)
	for i := range written {
		wg.Go(func() { written[i], errs[i] = outbox.ExpandBatch(context.Background(), pool, batchSeq, nil, false) })
	}
	wg.Wait()
	total := int64(0)
	for i := range written {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		total += written[i]
	}
	events := storedEvents(t, pool, tenant)
	if total != 2000 || len(events) != 2+2000 {
		t.Fatalf("racing expansions wrote %d events (%v), %d rows stored; want 2000 once", total, written, len(events)-2)
	}
	if n, err := outbox.ExpandBatch(context.Background(), pool, batchSeq, nil, false); err != nil || n != 0 {
		t.Fatalf("expanding again: %d, %v; want 0", n, err)
	}
}

type selective struct {
	*recorder
	wants func(tenant uuid.UUID, eventType string) bool
}

func (s selective) Wants(_ context.Context, tenant uuid.UUID, eventType string) (bool, error) {
	return s.wants(tenant, eventType), nil
}

type starter struct{ *recorder }

func (starter) StartTypes() []string { return []string{outbox.BulkImportRequested} }

// A batch whose events no handler wants (no webhook of the tenant lists the
// type, and it starts no workflow) is expanded into published events that no
// claim reads again; a handler that wants them still gets each one, and a
// handler that does not is recorded as done with them.
func TestBatchNoHandlerWantsIsPublishedWhenExpanded(t *testing.T) {
	pool := dbtest.NewPool(t)
	unsubscribed, subscribed := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	writeBatch(t, pool, unsubscribed, 300)
	writeBatch(t, pool, subscribed, 3)

	hooks := selective{newRecorder("hooks"), func(tenant uuid.UUID, eventType string) bool {
		return tenant == subscribed && eventType == outbox.BenefitActualRecorded
	}}
	starts := starter{newRecorder("starts")}
	relay := &outbox.Relay{Pool: pool, Handlers: []outbox.Handler{hooks, starts}, Log: quiet}
	relay.StartTypes = outbox.StartTypesOf(relay.Handlers)
	handled, err := relay.Drain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Claimed: each tenant's single event and batch row, and the subscribed tenant's 3 events.
	if handled != 2+2+3 {
		t.Errorf("the relay claimed %d rows; want 7 (the 300 unwanted events never claimed)", handled)
	}
	if n := hooks.handed(unsubscribed, outbox.BenefitActualRecorded); n != 0 {
		t.Errorf("the webhook handler was handed %d events of the tenant without a subscription; want 0", n)
	}
	if n := hooks.handed(subscribed, outbox.BenefitActualRecorded); n != 3 {
		t.Errorf("the webhook handler was handed %d events of the subscribed tenant; want 3", n)
	}
	if n := starts.handed(subscribed, outbox.BenefitActualRecorded) + starts.handed(unsubscribed, outbox.BenefitActualRecorded); n != 0 {
		t.Errorf("the start handler was handed %d batch events; want 0 (it starts nothing for them)", n)
	}
	for _, tc := range []struct {
		tenant  uuid.UUID
		n       int
		handled []string
	}{{unsubscribed, 300, []string{"hooks", "starts"}}, {subscribed, 3, []string{"starts", "hooks"}}} {
		var rows []struct {
			N         int
			Handled   []string
			Published bool
		}
		err := db.InTenant(context.Background(), pool, tc.tenant, func(tx pgx.Tx) error {
			r, err := tx.Query(context.Background(), `SELECT (data->>'n')::int, handled_by, published_at IS NOT NULL
				FROM outbox_events WHERE type = $1 ORDER BY seq`, outbox.BenefitActualRecorded)
			if err != nil {
				return err
			}
			defer r.Close()
			for r.Next() {
				var row struct {
					N         int
					Handled   []string
					Published bool
				}
				if err := r.Scan(&row.N, &row.Handled, &row.Published); err != nil {
					return err
				}
				rows = append(rows, row)
			}
			return r.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != tc.n {
			t.Fatalf("tenant %s: %d events stored; want %d, one row per event", tc.tenant, len(rows), tc.n)
		}
		for i, row := range rows {
			if row.N != i || !row.Published || fmt.Sprint(row.Handled) != fmt.Sprint(tc.handled) {
				t.Fatalf("tenant %s event %d: %+v; want n=%d, published, handled by %v", tc.tenant, i, row, i, tc.handled)
			}
		}
	}
}
