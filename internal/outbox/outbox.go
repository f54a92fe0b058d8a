// Package outbox is the transactional outbox: events are written in the same
// transaction as the change they describe, and a relay hands each committed
// event to every handler (webhook fan-out, workflow starts and signals) at
// least once, surviving crashes of any process in between.
package outbox

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Event types of spec section 6.
const (
	InitiativeCreated       = "initiative.created"
	InitiativeStatusChanged = "initiative.status_changed"
	BusinessCaseApproved    = "business_case.approved"
	BusinessCaseRejected    = "business_case.rejected"
	StakeholderEngagement   = "stakeholder.engagement"
	BenefitActualRecorded   = "benefit.actual_recorded"
	UserInvited             = "user.invited"
	UserDeactivated         = "user.deactivated"
)

// BusinessCaseSubmitted is internal (no webhook subscribes to it): a case
// was submitted for approval; the relay starts its approval workflow.
const BusinessCaseSubmitted = "business_case.submitted"

// BusinessCaseExportRequested is internal: an export was requested; the
// relay starts its export workflow.
const BusinessCaseExportRequested = "business_case.export_requested"

// BulkImportRequested is internal: a bulk import too large for one request
// was stored as a job; the relay starts its workflow.
const BulkImportRequested = "bulk.import_requested"

// Events beyond the spec's list (extensions): a sync of an integration finished
// (succeeded or partial) or failed.
const (
	IntegrationSyncCompleted = "integration.sync_completed"
	IntegrationSyncFailed    = "integration.sync_failed"
)

// EventTypes lists the types subscribers may ask for.
var EventTypes = []string{
	InitiativeCreated, InitiativeStatusChanged, BusinessCaseApproved, BusinessCaseRejected,
	StakeholderEngagement, BenefitActualRecorded, UserInvited, UserDeactivated,
	IntegrationSyncCompleted, IntegrationSyncFailed,
}

// Event is one committed event.
type Event struct {
	ID        uuid.UUID
	TenantID  uuid.UUID
	Type      string
	Data      json.RawMessage
	CreatedAt time.Time
	Attempts  int // earlier relay attempts that left a handler unfinished
}

// Write records an event inside the caller's tenant transaction (tx: the
// transaction, or a db.Pipeline step's q within it).
func Write(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID, eventType string, data any) (Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Event{}, err
	}
	row, err := db.Q.OutboxInsert(ctx, tx, dbsqlc.OutboxInsertParams{TenantID: tenantID, Type: eventType, Data: b})
	if err != nil {
		return Event{}, err
	}
	return Event{ID: row.ID, TenantID: tenantID, Type: eventType, Data: b, CreatedAt: row.CreatedAt}, nil
}

// Batch is the type of a batch row (WriteMany): the relay expands it into
// one row per event and no handler sees it.
const Batch = "outbox.batch"

// WriteMany records many events of one type (bulk import) inside the caller's
// tenant transaction; data holds each event's JSON. They are written as one
// batch row (one JSON array: 10,000 rows cost the import ~0.3 s, the batch
// ~35 ms) that the relay expands after commit into one row per event, in
// order, before any handler sees them (migration 00020). One event is written
// as Write writes it, in one statement either way (a db.Pipeline step can
// run it).
func WriteMany(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID, eventType string, data [][]byte) error {
	if len(data) == 0 {
		return nil
	}
	if len(data) == 1 { // a batch of one (a single route) is the plain row Write would write
		_, err := Write(ctx, tx, tenantID, eventType, json.RawMessage(data[0]))
		return err
	}
	size := 1 + len(data)
	for _, d := range data {
		size += len(d)
	}
	events := make([]byte, 0, size)
	events = append(events, '[')
	for i, d := range data {
		if i > 0 {
			events = append(events, ',')
		}
		events = append(events, d...)
	}
	events = append(events, ']')
	return db.Q.OutboxInsertBatch(ctx, tx, dbsqlc.OutboxInsertBatchParams{
		TenantID: tenantID, EventType: eventType, Count: int32(len(data)), Events: events,
	})
}

// ExpandBatch replaces the pending batch row seq by its events, in one
// statement of its own transaction (system scope), and returns how many it
// wrote: 0 when it was expanded already. Every event records the handlers in
// done as finished with it; published (done names every handler) writes them
// published, and no claim reads them again.
func ExpandBatch(ctx context.Context, pool *pgxpool.Pool, seq int64, done []string, published bool) (int64, error) {
	if done == nil {
		done = []string{} // an empty array, not NULL: handled_by is NOT NULL
	}
	return db.Q.OutboxExpandBatch(ctx, db.OneTripSystem(pool, false), dbsqlc.OutboxExpandBatchParams{Seq: seq, HandledBy: done, Published: published})
}
