package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/secretbox"
)

// Events of integrations. The two sync events are extensions of spec section 6 that webhooks
// may subscribe to; Changed and SyncRequested are internal (the relay keeps the Temporal
// Schedule in step with the row, and starts a manual sync).
const (
	EventSyncCompleted = outbox.IntegrationSyncCompleted
	EventSyncFailed    = outbox.IntegrationSyncFailed
	EventChanged       = "integration.changed"
	EventSyncRequested = "integration.sync_requested"
)

// TaskQueue is the Temporal task queue of syncs (workflows.IntegrationSyncTaskQueue); the
// ingestion health checks that workers poll it.
const TaskQueue = "integration-syncs"

// tokenAD binds a sealed token to its row.
func tokenAD(tenantID, id uuid.UUID) []byte {
	return []byte("integration:" + tenantID.String() + ":" + id.String())
}

// SealToken encrypts an integration's token for its row.
func SealToken(box *secretbox.Box, tenantID, id uuid.UUID, token string) ([]byte, error) {
	return box.Seal([]byte(token), tokenAD(tenantID, id))
}

// OpenToken decrypts a sealed token ("" when none is stored).
func OpenToken(box *secretbox.Box, tenantID, id uuid.UUID, sealed []byte) (string, error) {
	if sealed == nil {
		return "", nil
	}
	b, err := box.Open(sealed, tokenAD(tenantID, id))
	if err != nil {
		return "", fmt.Errorf("integration %s: token: %w (was SECRETS_KEY changed?)", id, err)
	}
	return string(b), nil
}

// ChangedEvent is the data of the internal integration.changed event.
type ChangedEvent struct {
	ID string `json:"id"`
}

// SyncRequestedEvent is the data of the internal integration.sync_requested event.
type SyncRequestedEvent struct {
	IntegrationID string `json:"integration_id"`
	SyncID        string `json:"sync_id"`
	Name          string `json:"name"`
	Provider      string `json:"provider"`
}

// SyncEvent is the data of integration.sync_completed and integration.sync_failed.
type SyncEvent struct {
	Integration struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Provider string `json:"provider"`
		State    string `json:"state"`
	} `json:"integration"`
	Sync struct {
		ID         string      `json:"id"`
		Trigger    string      `json:"trigger"`
		Status     string      `json:"status"`
		StartedAt  *time.Time  `json:"started_at"`
		FinishedAt *time.Time  `json:"finished_at"`
		Fetched    int32       `json:"fetched"`
		Created    int32       `json:"created"`
		Updated    int32       `json:"updated"`
		Unchanged  int32       `json:"unchanged"`
		Failed     int32       `json:"failed"`
		Error      *string     `json:"error"`
		Errors     []ItemError `json:"errors"`
	} `json:"sync"`
}

// Store is the database side of a sync (used by the sync workflow's activities).
type Store struct {
	Pool *pgxpool.Pool
}

// Job is what a sync needs to run.
type Job struct {
	Integration dbsqlc.Integration
	Sync        dbsqlc.IntegrationSync
}

// ErrNoSync: the sync is gone or already finished (a replayed start does nothing).
var ErrNoSync = errors.New("integration: sync not found or finished")

// Begin marks the sync running and returns the integration. A sync of an integration that is
// no longer active is finished as failed with the reason (ErrNoSync is returned then).
func (s Store) Begin(ctx context.Context, tenantID, syncID uuid.UUID) (Job, error) {
	var j Job
	err := db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		sync, err := db.Q.SyncStart(ctx, tx, dbsqlc.SyncStartParams{TenantID: tenantID, ID: syncID})
		if db.IsNotFound(err) {
			return ErrNoSync
		}
		if err != nil {
			return err
		}
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenantID, ID: sync.IntegrationID})
		if err != nil {
			return err
		}
		j = Job{Integration: in, Sync: sync}
		return nil
	})
	return j, err
}

// Load reads the integration and sync of a running sync (a resumed fetch reads its cursor here).
func (s Store) Load(ctx context.Context, tenantID, syncID uuid.UUID) (Job, error) {
	var j Job
	err := db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		sync, err := db.Q.SyncGet(ctx, tx, dbsqlc.SyncGetParams{TenantID: tenantID, ID: syncID})
		if db.IsNotFound(err) || (err == nil && SyncStatus(sync.Status) != SyncRunning) {
			return ErrNoSync
		}
		if err != nil {
			return err
		}
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenantID, ID: sync.IntegrationID})
		j = Job{Integration: in, Sync: sync}
		return err
	})
	return j, err
}

// Page is a fetched page to record: the items and where the provider's cursor goes next.
type Page struct {
	AtCursor  string // the cursor the page was fetched at
	Next      string
	Watermark string
	Target    Target
}

// RecordPage writes a page and moves the sync's cursor in one transaction, so a page is written
// exactly once: a retried attempt whose first try committed finds the cursor moved on and
// writes nothing (recorded false). An integration no longer active stops it (*NotActiveError).
func (s Store) RecordPage(ctx context.Context, syncID uuid.UUID, p Page, write func(tx pgx.Tx) (Counts, error)) (c Counts, recorded bool, err error) {
	err = db.InTenant(ctx, s.Pool, p.Target.TenantID, func(tx pgx.Tx) error {
		// A pause, a disconnect or an error set meanwhile stops the sync before the next page.
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: p.Target.TenantID, ID: p.Target.IntegrationID})
		if err != nil {
			return err
		}
		if err := CheckSync(State(in.State)); err != nil {
			return err
		}
		var werr error
		if c, werr = write(tx); werr != nil {
			return werr
		}
		errs := c.Errors
		if len(errs) > MaxKeptErrors {
			errs = errs[:MaxKeptErrors]
		}
		if errs == nil {
			errs = []ItemError{}
		}
		b, _ := json.Marshal(errs)
		_, err = db.Q.SyncPage(ctx, tx, dbsqlc.SyncPageParams{
			TenantID: p.Target.TenantID, ID: syncID, AtCursor: p.AtCursor, NextCursor: p.Next, Watermark: p.Watermark,
			Fetched: int32(c.Fetched), Created: int32(c.Created), Updated: int32(c.Updated), Unchanged: int32(c.Unchanged), Failed: int32(c.Failed),
			Errors: b,
		})
		if db.IsNotFound(err) {
			return errAlreadyRecorded
		}
		return err
	})
	if errors.Is(err, errAlreadyRecorded) {
		return Counts{}, false, nil
	}
	return c, err == nil, err
}

var errAlreadyRecorded = errors.New("page already recorded")

// Finish ends a sync. errText "" means the feed was read to its end (succeeded or partial by
// the failed count, and the integration's watermark advances); otherwise the sync failed with
// that reason. needsReauth also puts the integration in state error (last_error needs_reauth),
// which pauses its schedule. The sync event goes out through the outbox.
func (s Store) Finish(ctx context.Context, tenantID, syncID uuid.UUID, errText string, needsReauth bool) (dbsqlc.IntegrationSync, error) {
	var out dbsqlc.IntegrationSync
	err := db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		cur, err := db.Q.SyncGet(ctx, tx, dbsqlc.SyncGetParams{TenantID: tenantID, ID: syncID})
		if err != nil {
			return err
		}
		status := Outcome(int(cur.Failed))
		var reason *string
		if errText != "" {
			status, reason = SyncFailed, &errText
		}
		out, err = db.Q.SyncFinish(ctx, tx, dbsqlc.SyncFinishParams{TenantID: tenantID, ID: syncID, Status: string(status), Error: reason})
		if db.IsNotFound(err) {
			out = cur // already finished: nothing more to do
			return nil
		}
		if err != nil {
			return err
		}
		if err := db.Q.IntegrationSyncDone(ctx, tx, dbsqlc.IntegrationSyncDoneParams{
			TenantID: tenantID, ID: cur.IntegrationID, Advance: errText == "" && out.Watermark != "", Watermark: out.Watermark,
		}); err != nil {
			return err
		}
		if needsReauth {
			if err := db.Q.IntegrationSetError(ctx, tx, dbsqlc.IntegrationSetErrorParams{TenantID: tenantID, ID: cur.IntegrationID, LastError: new(NeedsReauth)}); err != nil {
				return err
			}
			if _, err := outbox.Write(ctx, tx, tenantID, EventChanged, ChangedEvent{ID: cur.IntegrationID.String()}); err != nil {
				return err
			}
		}
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenantID, ID: cur.IntegrationID})
		if err != nil {
			return err
		}
		typ := EventSyncCompleted
		if status == SyncFailed {
			typ = EventSyncFailed
		}
		_, err = outbox.Write(ctx, tx, tenantID, typ, NewSyncEvent(in, out))
		return err
	})
	return out, err
}

// NewSyncEvent is the data of a sync event.
func NewSyncEvent(in dbsqlc.Integration, s dbsqlc.IntegrationSync) SyncEvent {
	var e SyncEvent
	e.Integration.ID, e.Integration.Name, e.Integration.Provider, e.Integration.State = in.ID.String(), in.Name, in.Provider, in.State
	e.Sync.ID, e.Sync.Trigger, e.Sync.Status, e.Sync.StartedAt, e.Sync.FinishedAt = s.ID.String(), s.Trigger, s.Status, s.StartedAt, s.FinishedAt
	e.Sync.Fetched, e.Sync.Created, e.Sync.Updated, e.Sync.Unchanged, e.Sync.Failed = s.Fetched, s.Created, s.Updated, s.Unchanged, s.Failed
	e.Sync.Error = s.Error
	e.Sync.Errors = []ItemError{}
	_ = json.Unmarshal(s.Errors, &e.Sync.Errors)
	return e
}

// Scheduled creates the sync a schedule fires (trigger schedule), unless the integration is not
// active or a sync is already queued or running (then ok is false: the firing is skipped).
func (s Store) Scheduled(ctx context.Context, tenantID, integrationID uuid.UUID) (sync dbsqlc.IntegrationSync, in dbsqlc.Integration, ok bool, err error) {
	err = db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		var err error
		in, err = db.Q.IntegrationGetForUpdate(ctx, tx, dbsqlc.IntegrationGetForUpdateParams{TenantID: tenantID, ID: integrationID})
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil || CheckSync(State(in.State)) != nil {
			return err
		}
		if _, err := db.Q.SyncOpen(ctx, tx, dbsqlc.SyncOpenParams{TenantID: tenantID, IntegrationID: integrationID}); err == nil || !db.IsNotFound(err) {
			return err
		}
		sync, err = db.Q.SyncCreate(ctx, tx, dbsqlc.SyncCreateParams{TenantID: tenantID, IntegrationID: integrationID, Trigger: "schedule", RequestedBy: "schedule", Since: in.Watermark})
		ok = err == nil
		return err
	})
	return
}

// Scheduling is an integration's schedule as the worker keeps it in Temporal.
type Scheduling struct {
	TenantID, ID uuid.UUID
	Name         string
	Schedule     Schedule
	Paused       bool // not active
	Wanted       bool // false: no schedule (manual, disconnected, gone)
}

// SchedulingOf is the Temporal Schedule an integration row wants.
func SchedulingOf(tenantID, id uuid.UUID, name, frequency string, at, day *string, tz, state string) Scheduling {
	s := Scheduling{TenantID: tenantID, ID: id, Name: name, Schedule: Schedule{Frequency: Frequency(frequency), TimeZone: tz}}
	if at != nil {
		s.Schedule.At = *at
	}
	if day != nil {
		s.Schedule.DayOfWeek = *day
	}
	s.Wanted = s.Schedule.Frequency != Manual && State(state) != Disconnected
	s.Paused = State(state) != Active
	return s
}

// SchedulingFor reads what one integration wants (Wanted false when it is gone).
func (s Store) SchedulingFor(ctx context.Context, tenantID, id uuid.UUID) (Scheduling, error) {
	out := Scheduling{TenantID: tenantID, ID: id}
	err := db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenantID, ID: id})
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		out = SchedulingOf(tenantID, id, in.Name, in.Frequency, in.ScheduleAt, in.DayOfWeek, in.Timezone, in.State)
		return nil
	})
	return out, err
}

// AllSchedulings reads every tenant's wanted schedules, one tenant transaction each (the
// tenant registry is not tenant-scoped; integrations are, with no system-scope policy).
func (s Store) AllSchedulings(ctx context.Context) ([]Scheduling, error) {
	tenants, err := db.Q.TenantList(ctx, s.Pool)
	if err != nil {
		return nil, err
	}
	var out []Scheduling
	for _, tn := range tenants {
		tenant := tn.ID
		err := db.InTenant(ctx, s.Pool, tenant, func(tx pgx.Tx) error {
			rows, err := db.Q.IntegrationScheduleAll(ctx, tx, tenant)
			for _, r := range rows {
				out = append(out, SchedulingOf(r.TenantID, r.ID, r.Name, r.Frequency, r.ScheduleAt, r.DayOfWeek, r.Timezone, r.State))
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Config reads a stored config back for provider.New: it is validated again (JSON numbers come
// back as floats, and a config stored under older rules must still pass today's).
func Config(providerName string, raw []byte, allowHTTP bool) (map[string]any, error) {
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	norm, fields, err := provider.Validate(providerName, cfg, allowHTTP)
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 {
		for k, v := range fields {
			return nil, fmt.Errorf("config.%s %s", k, v)
		}
	}
	return norm, nil
}

// SyncOpenError: a sync of the integration is already queued or running (one at a time).
type SyncOpenError struct {
	IntegrationID, SyncID uuid.UUID
	Status                string
}

func (e *SyncOpenError) Error() string {
	return fmt.Sprintf("sync %s of this integration is already %s; see /v1/integrations/%s/syncs/%s", e.SyncID, e.Status, e.IntegrationID, e.SyncID)
}

// QueueSync queues a manual sync of an integration in the caller's tenant transaction: the
// sync row (queued) and the event that starts its workflow. The integration must exist (the
// driver's not-found otherwise), be active (*NotActiveError) and have no sync open
// (*SyncOpenError). POST /v1/integrations/{id}/sync and the agents' integration_sync start
// both come here.
func QueueSync(ctx context.Context, tx pgx.Tx, tenantID, integrationID uuid.UUID, requestedBy string) (dbsqlc.IntegrationSync, dbsqlc.Integration, error) {
	in, err := db.Q.IntegrationGetForUpdate(ctx, tx, dbsqlc.IntegrationGetForUpdateParams{TenantID: tenantID, ID: integrationID})
	if err != nil {
		return dbsqlc.IntegrationSync{}, in, err
	}
	if err := CheckSync(State(in.State)); err != nil {
		return dbsqlc.IntegrationSync{}, in, err
	}
	open, err := db.Q.SyncOpen(ctx, tx, dbsqlc.SyncOpenParams{TenantID: tenantID, IntegrationID: in.ID})
	if err == nil {
		return dbsqlc.IntegrationSync{}, in, &SyncOpenError{IntegrationID: in.ID, SyncID: open.ID, Status: open.Status}
	}
	if !db.IsNotFound(err) {
		return dbsqlc.IntegrationSync{}, in, err
	}
	sync, err := db.Q.SyncCreate(ctx, tx, dbsqlc.SyncCreateParams{TenantID: tenantID, IntegrationID: in.ID, Trigger: "manual", RequestedBy: requestedBy, Since: in.Watermark})
	if err != nil {
		return dbsqlc.IntegrationSync{}, in, err
	}
	_, err = outbox.Write(ctx, tx, tenantID, EventSyncRequested, SyncRequestedEvent{
		IntegrationID: in.ID.String(), SyncID: sync.ID.String(), Name: in.Name, Provider: in.Provider,
	})
	return sync, in, err
}

// CancelSync marks a queued or running sync canceled with reason; false when it had finished.
func CancelSync(ctx context.Context, tx dbsqlc.DBTX, tenantID, syncID uuid.UUID, reason string) (bool, error) {
	n, err := db.Q.SyncCancel(ctx, tx, dbsqlc.SyncCancelParams{TenantID: tenantID, ID: syncID, Error: &reason})
	return n > 0, err
}

// Cancel marks a sync canceled in a transaction of its own (the sync workflow, canceled).
func (s Store) Cancel(ctx context.Context, tenantID, syncID uuid.UUID, reason string) error {
	return db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		_, err := CancelSync(ctx, tx, tenantID, syncID, reason)
		return err
	})
}
