package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// credentialsAD binds the sealed credentials (all secrets but the access token) to their row.
func credentialsAD(tenantID, id uuid.UUID) []byte {
	return []byte("integration-credentials:" + tenantID.String() + ":" + id.String())
}

// storedCredentials is the sealed JSON of credentials_sealed.
type storedCredentials struct {
	RefreshToken string `json:"refresh_token,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	APIToken     string `json:"api_token,omitempty"`
}

// SealCredentials encrypts the secrets of c other than the access token (nil when there are none).
func SealCredentials(box *secretbox.Box, tenantID, id uuid.UUID, c provider.Credentials) ([]byte, error) {
	sc := storedCredentials{RefreshToken: c.RefreshToken, ClientID: c.ClientID, ClientSecret: c.ClientSecret, APIToken: c.APIToken}
	if sc == (storedCredentials{}) {
		return nil, nil
	}
	b, _ := json.Marshal(sc)
	return box.Seal(b, credentialsAD(tenantID, id))
}

// OpenCredentials decrypts an integration's secrets.
func OpenCredentials(box *secretbox.Box, in dbsqlc.Integration) (provider.Credentials, error) {
	var c provider.Credentials
	var err error
	if c.AccessToken, err = OpenToken(box, in.TenantID, in.ID, in.TokenSealed); err != nil {
		return c, err
	}
	if in.TokenExpiresAt != nil {
		c.ExpiresAt = *in.TokenExpiresAt
	}
	if in.CredentialsSealed == nil {
		return c, nil
	}
	b, err := box.Open(in.CredentialsSealed, credentialsAD(in.TenantID, in.ID))
	if err != nil {
		return c, fmt.Errorf("integration %s: credentials: %w (was SECRETS_KEY changed?)", in.ID, err)
	}
	var sc storedCredentials
	if err := json.Unmarshal(b, &sc); err != nil {
		return c, fmt.Errorf("integration %s: credentials: %w", in.ID, err)
	}
	c.RefreshToken, c.ClientID, c.ClientSecret, c.APIToken = sc.RefreshToken, sc.ClientID, sc.ClientSecret, sc.APIToken
	return c, nil
}

// HeldSecrets are the secrets an integration holds after a write: the stored ones of current
// (nil on create) less those sent as null (cleared), replaced by those sent.
func HeldSecrets(box *secretbox.Box, current *dbsqlc.Integration, providerName string, sent provider.Credentials, cleared []string) (provider.Credentials, error) {
	held := sent
	if current == nil {
		return held, nil
	}
	stored, err := OpenCredentials(box, *current)
	if err != nil {
		return held, err
	}
	for _, k := range cleared {
		if f := stored.Field(k); f != nil {
			*f = ""
		}
	}
	for _, k := range provider.SecretKeys(providerName) {
		if *held.Field(k) == "" {
			*held.Field(k) = *stored.Field(k)
		}
	}
	return held, nil
}

// CheckDestination refuses a write that sends the stored credentials somewhere new: when the
// URLs a sync calls (instance_url, token_url, the Jira gateway; provider.CalledURLs) change,
// every stored credential must be sent again (client_id excepted, an identifier), so that
// write-only secrets cannot be redirected to another host by editing the config alone. It
// returns field errors by secret key (nil on create or when nothing moves).
func CheckDestination(box *secretbox.Box, current *dbsqlc.Integration, providerName string, cfg map[string]any, sent provider.Credentials, cleared []string) (map[string]string, error) {
	if current == nil {
		return nil, nil
	}
	before, err := Config(providerName, current.Config, true)
	if err != nil {
		return nil, nil // a config no longer valid: its destination is not a reference
	}
	if slices.Equal(provider.CalledURLs(providerName, before), provider.CalledURLs(providerName, cfg)) {
		return nil, nil
	}
	stored, err := OpenCredentials(box, *current)
	if err != nil {
		return nil, err
	}
	fe := map[string]string{}
	for _, k := range provider.SecretKeys(providerName) {
		if k == provider.ClientIDKey || slices.Contains(cleared, k) {
			continue
		}
		if *stored.Field(k) != "" && *sent.Field(k) == "" {
			fe[k] = "must be sent again (or as null to erase it): the config now sends the credentials to another address"
		}
	}
	return fe, nil
}

// SecretsSet lists the secret config keys an integration holds, sorted (the API's secrets_set).
func SecretsSet(box *secretbox.Box, in dbsqlc.Integration) []string {
	out := []string{}
	c, err := OpenCredentials(box, in)
	if err != nil {
		if in.TokenSealed != nil {
			out = append(out, provider.SecretKey)
		}
		return out
	}
	for _, k := range []string{provider.APITokenKey, provider.ClientIDKey, provider.ClientSecretKey, provider.SecretKey, provider.RefreshTokenKey} {
		if *c.Field(k) != "" {
			out = append(out, k)
		}
	}
	return out
}

// Tokens is the provider.TokenStore of one integration: its row. A refresh takes an advisory
// lock per integration (concurrent syncs on any worker refresh once; the others read the
// result), calls the provider's token endpoint, and stores the new access token, its expiry
// and a rotated refresh token in one UPDATE before the new token is used.
type Tokens struct {
	Pool         *pgxpool.Pool
	Box          *secretbox.Box
	TenantID, ID uuid.UUID
}

// Refresh implements provider.TokenStore.
func (t Tokens) Refresh(ctx context.Context, stale string, grant func(context.Context, provider.Credentials) (provider.Credentials, error)) (provider.Credentials, error) {
	var out provider.Credentials
	err := db.InTenant(ctx, t.Pool, t.TenantID, func(tx pgx.Tx) error {
		if err := db.Q.IntegrationTokenLock(ctx, tx, t.ID); err != nil {
			return err
		}
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: t.TenantID, ID: t.ID})
		if err != nil {
			return err
		}
		if State(in.State) == Disconnected {
			return ErrDisconnected
		}
		cur, err := OpenCredentials(t.Box, in)
		if err != nil {
			return err
		}
		if cur.AccessToken != "" && cur.AccessToken != stale {
			out = cur // another sync refreshed meanwhile
			return nil
		}
		next, err := grant(ctx, cur)
		if err != nil {
			return err
		}
		p := dbsqlc.IntegrationTokenStoreParams{TenantID: t.TenantID, ID: t.ID, TokenHint: new(secretbox.Hint(next.AccessToken))}
		if p.TokenSealed, err = SealToken(t.Box, t.TenantID, t.ID, next.AccessToken); err != nil {
			return err
		}
		if p.CredentialsSealed, err = SealCredentials(t.Box, t.TenantID, t.ID, next); err != nil {
			return err
		}
		if !next.ExpiresAt.IsZero() {
			p.TokenExpiresAt = &next.ExpiresAt
		}
		out = next
		return db.Q.IntegrationTokenStore(ctx, tx, p)
	})
	return out, err
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
		NextTryAt  *time.Time  `json:"next_try_at"`
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

// End is how a sync's fetch ended: Error "" when the feed was read to its end. NeedsReauth: the
// provider refused the credentials (the integration goes to state error). RateLimited: the
// provider's daily allowance is spent; RetryAfter is its Retry-After (0: none).
type End struct {
	Error       string
	NeedsReauth bool
	RateLimited bool
	RetryAfter  time.Duration
}

// Finish ends a sync. A feed read to its end makes it succeeded or partial (by the failed count)
// and advances the integration's watermark; a rate-limited one ends rate_limited with
// next_try_at (the first schedule firing at or after what the provider allows) and keeps the
// watermark; any other error fails it with that reason. NeedsReauth also puts the integration in
// state error (last_error needs_reauth), which pauses its schedule. The sync event goes out
// through the outbox (integration.sync_failed for failed and rate_limited).
func (s Store) Finish(ctx context.Context, tenantID, syncID uuid.UUID, end End) (dbsqlc.IntegrationSync, error) {
	var out dbsqlc.IntegrationSync
	err := db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		cur, err := db.Q.SyncGet(ctx, tx, dbsqlc.SyncGetParams{TenantID: tenantID, ID: syncID})
		if err != nil {
			return err
		}
		in, err := db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenantID, ID: cur.IntegrationID})
		if err != nil {
			return err
		}
		params := dbsqlc.SyncFinishParams{TenantID: tenantID, ID: syncID, Status: string(Outcome(int(cur.Failed)))}
		switch {
		case end.RateLimited:
			params.Status, params.Error = string(SyncRateLimited), &end.Error
			params.NextTryAt = NextTry(in, time.Now(), end.RetryAfter)
		case end.Error != "":
			params.Status, params.Error = string(SyncFailed), &end.Error
		}
		out, err = db.Q.SyncFinish(ctx, tx, params)
		if db.IsNotFound(err) {
			out = cur // already finished: nothing more to do
			return nil
		}
		if err != nil {
			return err
		}
		if err := db.Q.IntegrationSyncDone(ctx, tx, dbsqlc.IntegrationSyncDoneParams{
			TenantID: tenantID, ID: cur.IntegrationID, Advance: end.Error == "" && out.Watermark != "", Watermark: out.Watermark,
		}); err != nil {
			return err
		}
		if end.NeedsReauth {
			if err := db.Q.IntegrationSetError(ctx, tx, dbsqlc.IntegrationSetErrorParams{TenantID: tenantID, ID: cur.IntegrationID, LastError: new(NeedsReauth)}); err != nil {
				return err
			}
			if _, err := outbox.Write(ctx, tx, tenantID, EventChanged, ChangedEvent{ID: cur.IntegrationID.String()}); err != nil {
				return err
			}
			if in, err = db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenantID, ID: cur.IntegrationID}); err != nil {
				return err
			}
		}
		typ := EventSyncCompleted
		if SyncStatus(out.Status) == SyncFailed || SyncStatus(out.Status) == SyncRateLimited {
			typ = EventSyncFailed
		}
		_, err = outbox.Write(ctx, tx, tenantID, typ, NewSyncEvent(in, out))
		return err
	})
	return out, err
}

// NextTry is when a rate-limited sync of in is tried again: the first firing of its schedule at
// or after now + retryAfter; for a manual schedule now + retryAfter (nil when the provider said
// nothing: a person decides).
func NextTry(in dbsqlc.Integration, now time.Time, retryAfter time.Duration) *time.Time {
	from := now.Add(retryAfter)
	if next := SchedulingOf(in.TenantID, in.ID, in.Name, in.Frequency, in.ScheduleAt, in.DayOfWeek, in.Timezone, in.State).Schedule.Next(from.Add(-time.Second), 1); len(next) == 1 {
		return &next[0]
	}
	if retryAfter > 0 {
		return &from
	}
	return nil
}

// NewSyncEvent is the data of a sync event.
func NewSyncEvent(in dbsqlc.Integration, s dbsqlc.IntegrationSync) SyncEvent {
	var e SyncEvent
	e.Integration.ID, e.Integration.Name, e.Integration.Provider, e.Integration.State = in.ID.String(), in.Name, in.Provider, in.State
	e.Sync.ID, e.Sync.Trigger, e.Sync.Status, e.Sync.StartedAt, e.Sync.FinishedAt = s.ID.String(), s.Trigger, s.Status, s.StartedAt, s.FinishedAt
	e.Sync.Fetched, e.Sync.Created, e.Sync.Updated, e.Sync.Unchanged, e.Sync.Failed = s.Fetched, s.Created, s.Updated, s.Unchanged, s.Failed
	e.Sync.Error, e.Sync.NextTryAt = s.Error, s.NextTryAt
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
		// A sync that spent the provider's daily allowance holds the firings back until its next try.
		last, err := db.Q.SyncLatest(ctx, tx, dbsqlc.SyncLatestParams{TenantID: tenantID, IntegrationID: integrationID})
		if err != nil && !db.IsNotFound(err) {
			return err
		}
		if err == nil && SyncStatus(last.Status) == SyncRateLimited && last.NextTryAt != nil && time.Now().Before(*last.NextTryAt) {
			return nil
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
