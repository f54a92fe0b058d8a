package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/secretbox"
)

// IntegrationActivities are the activities of the integration sync workflow: adapters over
// internal/integration (the database side and what a sync writes) and the provider clients.
type IntegrationActivities struct {
	Store   integration.Store
	Secrets *secretbox.Box
	HTTP    *http.Client // the webhook client's: the dial-time SSRF guard applies to every provider call
	// AllowHTTP: OUTBOUND_ALLOW_PRIVATE_NETWORKS (http instance URLs, for local testing).
	AllowHTTP bool
	// FetchTimeout bounds one provider call (0: 60 s).
	FetchTimeout time.Duration
}

// SyncRef names one sync.
type SyncRef struct {
	TenantID      string
	IntegrationID string
	SyncID        string
}

func (r SyncRef) ids() (tenant, sync uuid.UUID, err error) {
	if tenant, err = uuid.Parse(r.TenantID); err != nil {
		return tenant, sync, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	if sync, err = uuid.Parse(r.SyncID); err != nil {
		return tenant, sync, temporal.NewNonRetryableApplicationError("bad sync id", "BadInput", err)
	}
	return tenant, sync, nil
}

// Error types of the fetch activity the workflow tells apart.
const (
	ErrTypeUnauthorized = "ProviderUnauthorized" // 401/403: the integration needs a new token
	ErrTypeRetryable    = "ProviderRetryable"    // 429/5xx/network: retried, honouring Retry-After
	ErrTypeRateLimited  = "ProviderRateLimited"  // the daily allowance is spent: the sync ends rate_limited (details: Retry-After)
	ErrTypePermanent    = "ProviderPermanent"    // anything else: the sync fails with the reason
)

// IntegrationSyncBegin marks the sync running. false: nothing to do (gone or finished).
func (a *IntegrationActivities) IntegrationSyncBegin(ctx context.Context, ref SyncRef) (bool, error) {
	tenant, id, err := ref.ids()
	if err != nil {
		return false, err
	}
	_, err = a.Store.Begin(ctx, tenant, id)
	if errors.Is(err, integration.ErrNoSync) {
		return false, nil
	}
	return err == nil, err
}

// SyncProgress is the fetch activity's heartbeat: the cursor reached and the pages written.
type SyncProgress struct {
	Cursor string
	Pages  int
}

// IntegrationSyncFetch reads the provider page by page from the sync's cursor and writes each
// page with the cursor's move in one transaction, heartbeating the cursor. A retried attempt
// (e.g. on another worker after this one was killed) resumes from the last written page: no
// page is written twice. Provider errors come back typed (ErrType*); 429 and 5xx carry the
// provider's Retry-After as the next retry delay.
func (a *IntegrationActivities) IntegrationSyncFetch(ctx context.Context, ref SyncRef) (int, error) {
	tenant, id, err := ref.ids()
	if err != nil {
		return 0, err
	}
	job, err := a.Store.Load(ctx, tenant, id)
	if errors.Is(err, integration.ErrNoSync) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	in := job.Integration
	if err := integration.CheckSync(integration.State(in.State)); err != nil {
		return 0, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePermanent, err)
	}
	cfg, err := integration.Config(in.Provider, in.Config, a.AllowHTTP)
	if err != nil {
		return 0, temporal.NewNonRetryableApplicationError("the stored config is not valid: "+err.Error(), ErrTypePermanent, err)
	}
	creds, err := integration.OpenCredentials(a.Secrets, in)
	if err != nil {
		return 0, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePermanent, err)
	}
	tokens := integration.Tokens{Pool: a.Store.Pool, Box: a.Secrets, TenantID: in.TenantID, ID: in.ID}
	client, err := provider.New(in.Provider, cfg, creds, a.HTTP, tokens)
	if err != nil {
		return 0, temporal.NewNonRetryableApplicationError("the provider client could not be built: "+err.Error(), ErrTypePermanent, err)
	}
	target := integration.Target{TenantID: in.TenantID, IntegrationID: in.ID, Provider: in.Provider}
	if in.Provider == provider.Jira {
		target.InitiativeID, _ = uuid.Parse(fmt.Sprint(cfg["initiative_id"]))
	}
	timeout := a.FetchTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	cursor, pages := job.Sync.Cursor, int(job.Sync.Pages)
	// Heartbeat the cursor reached every few seconds, also while a slow page is in flight, so
	// only a dead worker (not a slow provider) makes Temporal retry the fetch elsewhere.
	var mu sync.Mutex
	progress := SyncProgress{Cursor: cursor, Pages: pages}
	beat := func(p *SyncProgress) {
		mu.Lock()
		defer mu.Unlock()
		if p != nil {
			progress = *p
		}
		activity.RecordHeartbeat(ctx, progress)
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				beat(nil)
			}
		}
	}()
	for {
		beat(&SyncProgress{Cursor: cursor, Pages: pages})
		fctx, cancel := context.WithTimeout(ctx, timeout)
		page, err := client.Fetch(fctx, job.Sync.Since, cursor)
		cancel()
		if err != nil {
			return pages, fetchError(err)
		}
		_, recorded, err := a.Store.RecordPage(ctx, id, integration.Page{AtCursor: cursor, Next: page.Next, Watermark: page.Watermark, Target: target},
			func(tx pgx.Tx) (integration.Counts, error) {
				return integration.WritePage(ctx, tx, target, page.Items, time.Now())
			})
		if _, stopped := errors.AsType[*integration.NotActiveError](err); stopped || errors.Is(err, integration.ErrTargetGone) {
			return pages, temporal.NewNonRetryableApplicationError("stopped: "+err.Error(), ErrTypePermanent, err)
		}
		if err != nil {
			return pages, err
		}
		if !recorded { // another attempt got here first: read where it is
			if job, err = a.Store.Load(ctx, tenant, id); err != nil {
				return pages, err
			}
			cursor, pages = job.Sync.Cursor, int(job.Sync.Pages)
			if cursor == "" {
				return pages, nil
			}
			continue
		}
		pages++
		if page.Next == "" {
			beat(&SyncProgress{Cursor: "", Pages: pages})
			return pages, nil
		}
		cursor = page.Next
	}
}

// fetchError types a provider error for the workflow's retry policy.
func fetchError(err error) error {
	if errors.Is(err, provider.ErrUnauthorized) {
		return temporal.NewNonRetryableApplicationError("the provider refused the credentials: "+err.Error(), ErrTypeUnauthorized, nil)
	}
	var rl *provider.RateLimitedError
	if errors.As(err, &rl) {
		return temporal.NewNonRetryableApplicationError(rl.Error(), ErrTypeRateLimited, nil, rl.After)
	}
	var re *provider.RetryableError
	if errors.As(err, &re) {
		return temporal.NewApplicationErrorWithOptions(re.Error(), ErrTypeRetryable, temporal.ApplicationErrorOptions{NextRetryDelay: re.After})
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // the activity was cancelled or one call timed out: retried
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePermanent, nil)
}

// SyncEnd is how the fetch ended (see integration.End).
type SyncEnd = integration.End

// IntegrationSyncFinish records the end of the sync (status, integration state, event) and
// returns its status.
func (a *IntegrationActivities) IntegrationSyncFinish(ctx context.Context, ref SyncRef, end SyncEnd) (string, error) {
	tenant, id, err := ref.ids()
	if err != nil {
		return "", err
	}
	s, err := a.Store.Finish(ctx, tenant, id, end)
	if err != nil {
		return "", err
	}
	return s.Status, nil
}

// ScheduledSync is the sync a schedule firing created ("" SyncID: skipped).
type ScheduledSync struct {
	SyncID string
	Name   string
}

// IntegrationSyncScheduled creates the sync of a schedule firing, unless the integration is not
// active or already syncing.
func (a *IntegrationActivities) IntegrationSyncScheduled(ctx context.Context, tenantID, integrationID string) (ScheduledSync, error) {
	t, err1 := uuid.Parse(tenantID)
	i, err2 := uuid.Parse(integrationID)
	if err := errors.Join(err1, err2); err != nil {
		return ScheduledSync{}, temporal.NewNonRetryableApplicationError("bad ids", "BadInput", err)
	}
	s, in, ok, err := a.Store.Scheduled(ctx, t, i)
	if err != nil || !ok {
		return ScheduledSync{}, err
	}
	return ScheduledSync{SyncID: s.ID.String(), Name: in.Name}, nil
}

// IntegrationSyncCancel marks the sync canceled (its run was canceled, from REST or the
// Temporal UI); a sync that finished keeps its outcome.
func (a *IntegrationActivities) IntegrationSyncCancel(ctx context.Context, ref SyncRef, reason string) error {
	tenant, id, err := ref.ids()
	if err != nil {
		return err
	}
	return a.Store.Cancel(ctx, tenant, id, reason)
}
