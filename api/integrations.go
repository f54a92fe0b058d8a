package api

// Integrations: connections to Salesforce, HubSpot, Jira or an HTTP feed that sync
// records in, on a Temporal Schedule in the integration's time zone or on demand. Rules live
// in internal/integration (states, schedules, what a sync writes) and
// internal/integration/provider (config keys, the clients); the sync itself is a workflow
// (workflows/integration_sync.go) started through the outbox. Tokens are sealed at rest and
// never returned.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/secretbox"
	"github.com/valuecase/valuecase/internal/webhook"
	"github.com/valuecase/valuecase/internal/wire"
)

const (
	maxIntegrationPageSize = 100
	maxSyncPageSize        = 100
	maxIntegrationNameLen  = 200
	maxConfigBytes         = 16 << 10
)

// integrationsRoutes mounts the integration routes on the authenticated /v1 group.
func (s *Server) integrationsRoutes(v1 fiber.Router) {
	admin := s.require(rbac.AdminConfig)
	v1.Get("/integrations", admin, s.listIntegrations)
	v1.Post("/integrations", admin, s.createIntegration)
	v1.Get("/integrations/:id", admin, s.getIntegration)
	v1.Put("/integrations/:id", admin, s.replaceIntegration)
	v1.Patch("/integrations/:id", admin, s.patchIntegration)
	v1.Delete("/integrations/:id", admin, s.deleteIntegration)
	v1.Get("/integrations/:id/syncs", admin, s.listSyncs)
	v1.Get("/integrations/:id/syncs/:sync_id", admin, s.getSync)
	v1.Post("/integrations/:id/sync", admin, s.triggerSync)
}

type scheduleJSON struct {
	Frequency string  `json:"frequency"`
	At        *string `json:"at"`
	DayOfWeek *string `json:"day_of_week"`
	Timezone  string  `json:"timezone"`
}

// integrationJSON is the integration resource. config never holds a secret: oauth_token_set
// and oauth_token_hint say whether an access token is stored, secrets_set names every secret
// config key stored (oauth_token, refresh_token, client_id, client_secret, api_token).
type integrationJSON struct {
	ID             string         `json:"id"`
	Provider       string         `json:"provider"`
	Name           string         `json:"name"`
	Config         map[string]any `json:"config"`
	OAuthTokenSet  bool           `json:"oauth_token_set"`
	OAuthTokenHint *string        `json:"oauth_token_hint"`
	SecretsSet     []string       `json:"secrets_set"`
	SyncSchedule   scheduleJSON   `json:"sync_schedule"`
	State          string         `json:"state"`
	LastError      *string        `json:"last_error"`
	Watermark      *string        `json:"watermark"`
	NextSyncAt     *string        `json:"next_sync_at"`
	LastSyncAt     *string        `json:"last_sync_at"`
	SyncsURL       string         `json:"syncs_url"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
	DisconnectedAt *string        `json:"disconnected_at"`
	// ScheduleState is the Temporal Schedule as it stands (GET of one integration only): an
	// operator may pause it in the Temporal UI without changing the integration's state.
	ScheduleState *scheduleStateJSON `json:"schedule_state,omitempty"`
}

type scheduleStateJSON struct {
	Status   string  `json:"status"`
	PausedBy *string `json:"paused_by"`
	Note     *string `json:"note"`
}

func scheduleOf(in dbsqlc.Integration) integration.Schedule {
	return integration.SchedulingOf(in.TenantID, in.ID, in.Name, in.Frequency, in.ScheduleAt, in.DayOfWeek, in.Timezone, in.State).Schedule
}

func toIntegrationJSON(in dbsqlc.Integration, box *secretbox.Box, now time.Time) integrationJSON {
	cfg := map[string]any{}
	_ = json.Unmarshal(in.Config, &cfg)
	j := integrationJSON{
		ID: in.ID.String(), Provider: in.Provider, Name: in.Name, Config: cfg, OAuthTokenSet: in.TokenSealed != nil, OAuthTokenHint: in.TokenHint,
		SyncSchedule: scheduleJSON{Frequency: in.Frequency, At: in.ScheduleAt, DayOfWeek: in.DayOfWeek, Timezone: in.Timezone},
		SecretsSet:   integration.SecretsSet(box, in),
		State:        in.State, LastError: in.LastError, Watermark: input.NoneIfBlank(&in.Watermark), LastSyncAt: optTimestamp(in.LastSyncAt),
		SyncsURL:  "/v1/integrations/" + in.ID.String() + "/syncs",
		CreatedAt: wire.Timestamp(in.CreatedAt), UpdatedAt: wire.Timestamp(in.UpdatedAt), DisconnectedAt: optTimestamp(in.DisconnectedAt),
	}
	if integration.State(in.State) == integration.Active {
		if next := scheduleOf(in).Next(now, 1); len(next) == 1 {
			j.NextSyncAt = new(wire.Timestamp(next[0]))
		}
	}
	return j
}

type syncCountsJSON struct {
	Fetched   int32 `json:"fetched"`
	Created   int32 `json:"created"`
	Updated   int32 `json:"updated"`
	Unchanged int32 `json:"unchanged"`
	Failed    int32 `json:"failed"`
}

// syncJSON is one sync of the history.
type syncJSON struct {
	ID            string                  `json:"id"`
	IntegrationID string                  `json:"integration_id"`
	Trigger       string                  `json:"trigger"`
	Status        string                  `json:"status"`
	StatusURL     string                  `json:"status_url"`
	Counts        syncCountsJSON          `json:"counts"`
	Pages         int32                   `json:"pages"`
	Errors        []integration.ItemError `json:"errors"`
	Error         *string                 `json:"error"`
	NextTryAt     *string                 `json:"next_try_at"`
	Cursor        *string                 `json:"cursor"`
	Since         *string                 `json:"since"`
	Watermark     *string                 `json:"watermark"`
	RequestedBy   string                  `json:"requested_by"`
	CreatedAt     string                  `json:"created_at"`
	StartedAt     *string                 `json:"started_at"`
	FinishedAt    *string                 `json:"finished_at"`
}

func toSyncJSON(s dbsqlc.IntegrationSync) syncJSON {
	errs := []integration.ItemError{}
	_ = json.Unmarshal(s.Errors, &errs)
	return syncJSON{
		ID: s.ID.String(), IntegrationID: s.IntegrationID.String(), Trigger: s.Trigger, Status: s.Status,
		StatusURL: fmt.Sprintf("/v1/integrations/%s/syncs/%s", s.IntegrationID, s.ID),
		Counts:    syncCountsJSON{Fetched: s.Fetched, Created: s.Created, Updated: s.Updated, Unchanged: s.Unchanged, Failed: s.Failed},
		Pages:     s.Pages, Errors: errs, Error: s.Error, NextTryAt: optTimestamp(s.NextTryAt), Cursor: input.NoneIfBlank(&s.Cursor), Since: input.NoneIfBlank(&s.Since), Watermark: input.NoneIfBlank(&s.Watermark),
		RequestedBy: s.RequestedBy, CreatedAt: wire.Timestamp(s.CreatedAt), StartedAt: optTimestamp(s.StartedAt), FinishedAt: optTimestamp(s.FinishedAt),
	}
}

// integrationFields are the writable fields of create, PUT and PATCH, checked.
type integrationFields struct {
	provider string
	name     *string
	config   map[string]any       // validated and normalised, without the secrets (nil: not sent)
	sent     provider.Credentials // the secrets sent ("": not sent, the stored one is kept)
	secrets  provider.Credentials // the secrets the integration holds after this change
	cleared  []string             // secret keys sent as null: the stored secret is erased
	schedule *integration.Schedule
	state    *string
}

var readOnlyIntegrationFields = []string{"id", "oauth_token_set", "oauth_token_hint", "secrets_set", "last_error", "watermark", "next_sync_at",
	"last_sync_at", "syncs_url", "created_at", "updated_at", "disconnected_at", "schedule_state"}

// readIntegrationFields reads a body. mode: "create" (provider, name, config required),
// "put" (name and config required; provider may be repeated, not changed), "patch" (none).
// For PATCH, config keys merge into the stored config (a null value removes a key). A config
// is validated for its provider (unknown keys refused), instance_url must be https (http only
// with OUTBOUND_ALLOW_PRIVATE_NETWORKS) and resolve to public addresses, and a jira
// initiative_id must name an initiative of the tenant.
func (s *Server) readIntegrationFields(c *fiber.Ctx, mode string, current *dbsqlc.Integration) (integrationFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return integrationFields{}, err
	}
	create := mode == "create"
	var f integrationFields
	prov := b.Enum("provider", create, provider.Names())
	switch {
	case prov != nil && current != nil && *prov != current.Provider:
		b.Fail("provider", "invalid_value", "cannot change (%s); create a new integration instead", current.Provider)
	case prov != nil:
		f.provider = *prov
	case current != nil:
		f.provider = current.Provider
	}
	f.name = b.Text("name", mode != "patch" || b.Has("name"), maxIntegrationNameLen) // a PATCH may leave it out, not blank it
	f.name = input.Trimmed(f.name)
	f.state = b.Enum("state", false, integration.Settable)
	b.Ignore(readOnlyIntegrationFields...)

	// config: an object, the token taken out before validation.
	var raw map[string]any
	if b.Has("config") && !b.IsNull("config") {
		if len(b.Raw("config")) > maxConfigBytes {
			b.Fail("config", "too_long", "must be at most %d bytes of JSON", maxConfigBytes)
		} else if err := json.Unmarshal(b.Raw("config"), &raw); err != nil || raw == nil {
			b.Fail("config", "invalid_type", "must be an object")
			raw = nil
		}
	} else if mode != "patch" {
		b.Fail("config", "required", "is required")
	}
	if raw != nil && f.provider != "" {
		for _, k := range provider.SecretKeys(f.provider) {
			if v, sent := raw[k]; sent && v == nil {
				f.cleared = append(f.cleared, k)
			}
		}
		if mode == "patch" && current != nil {
			merged := map[string]any{}
			_ = json.Unmarshal(current.Config, &merged)
			for k, v := range raw {
				if v == nil {
					delete(merged, k)
				} else {
					merged[k] = v
				}
			}
			raw = merged
		}
		rest, sent, fe := provider.SplitSecrets(f.provider, raw)
		for k, msg := range fe {
			b.Fail("config."+k, "invalid_value", "%s", msg)
		}
		norm, fields, err := provider.Validate(f.provider, rest, s.Config.OutboundAllowPrivateNetworks)
		if err != nil {
			b.Fail("provider", "invalid_value", "%s", err.Error())
		}
		if err == nil && len(fields) == 0 {
			held, err := integration.HeldSecrets(s.Webhooks.Secrets, current, f.provider, sent, f.cleared)
			if err != nil {
				return f, err
			}
			fields = provider.CheckCredentials(f.provider, norm, held)
			moved, err := integration.CheckDestination(s.Webhooks.Secrets, current, f.provider, norm, sent, f.cleared)
			if err != nil {
				return f, err
			}
			maps.Copy(fields, moved)
			f.secrets = held
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.Fail("config."+k, "invalid_value", "%s", fields[k])
		}
		if err == nil && len(fields) == 0 {
			f.config, f.sent = norm, sent
			for _, k := range []string{"instance_url", "token_url", "gateway_url"} {
				u, _ := norm[k].(string)
				if u == "" || !slices.Contains(provider.CalledURLs(f.provider, norm), u) {
					continue
				}
				var ue *webhook.URLError
				if err := webhook.CheckURL(c.UserContext(), u, s.Config.OutboundAllowPrivateNetworks); errors.As(err, &ue) {
					b.Fail("config."+k, "invalid_value", "%s", ue.Reason)
				} else if err != nil {
					return f, err
				}
			}
			if f.provider == provider.Jira {
				id, _ := uuid.Parse(fmt.Sprint(norm["initiative_id"]))
				if _, err := db.Q.InitiativeGet(c.UserContext(), requestTx(c), dbsqlc.InitiativeGetParams{TenantID: principal(c).TenantID, ID: id}); db.IsNotFound(err) {
					b.Fail("config.initiative_id", "invalid_value", "no initiative of this tenant has this id")
				} else if err != nil {
					return f, err
				}
			}
		}
	}

	// sync_schedule: an object; absent in create and PUT means manual in UTC.
	if b.Has("sync_schedule") && !b.IsNull("sync_schedule") {
		var sj map[string]json.RawMessage
		if err := json.Unmarshal(b.Raw("sync_schedule"), &sj); err != nil || sj == nil {
			b.Fail("sync_schedule", "invalid_type", "must be an object")
		} else {
			sch, ok := readSchedule(b, sj)
			if ok {
				f.schedule = &sch
			}
		}
	} else if mode != "patch" {
		f.schedule = &integration.Schedule{Frequency: integration.Manual, TimeZone: "UTC"}
	}
	if err := b.Done(); err != nil {
		return f, err
	}
	return f, nil
}

// readSchedule reads the sync_schedule object, reporting on sync_schedule.<key>.
func readSchedule(b *input.Object, sj map[string]json.RawMessage) (integration.Schedule, bool) {
	var sch integration.Schedule
	ok := true
	str := func(k string) string {
		v, has := sj[k]
		if !has || string(v) == "null" {
			return ""
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil || len(s) > 64 {
			b.Fail("sync_schedule."+k, "invalid_type", "must be a string of at most 64 characters")
			ok = false
		}
		return s
	}
	for k := range sj {
		switch k {
		case "frequency", "at", "day_of_week", "timezone":
		default:
			b.Fail("sync_schedule."+k, "unknown_field", "is not a field of sync_schedule (frequency, at, day_of_week, timezone)")
			ok = false
		}
	}
	sch = integration.Schedule{Frequency: integration.Frequency(str("frequency")), At: str("at"), DayOfWeek: str("day_of_week"), TimeZone: str("timezone")}
	if !ok {
		return sch, false
	}
	errs := sch.Normalize()
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.Fail(k, "invalid_value", "%s", errs[k])
	}
	return sch, len(errs) == 0
}

func (s *Server) listIntegrations(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxIntegrationPageSize)
	var state, prov *string
	if _, ok := q.str("state"); ok {
		state = new(q.oneOf("state", "", integration.States))
	}
	if _, ok := q.str("provider"); ok {
		prov = new(q.oneOf("provider", "", provider.Names()))
	}
	if err := q.done(); err != nil {
		return err
	}
	p, ctx, tx, now := principal(c), c.UserContext(), requestTx(c), time.Now()
	rows, err := db.Q.IntegrationList(ctx, tx, dbsqlc.IntegrationListParams{TenantID: p.TenantID, State: state, Provider: prov,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.IntegrationListRow) int64 { return r.Total },
		func(r dbsqlc.IntegrationListRow) integrationJSON {
			return toIntegrationJSON(r.Integration, s.Webhooks.Secrets, now)
		},
		func() (int64, error) {
			return db.Q.IntegrationCount(ctx, tx, dbsqlc.IntegrationCountParams{TenantID: p.TenantID, State: state, Provider: prov})
		})
}

// integrationError maps the domain's typed errors.
func integrationError(err error) error {
	var na *integration.NotActiveError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, integration.ErrLimit):
		return Conflict("the tenant already has %d active integrations; pause or delete one first", integration.MaxActive)
	case errors.Is(err, integration.ErrDisconnected):
		return Conflict("the integration is disconnected; create a new one")
	case errors.Is(err, integration.ErrNotFound):
		return NotFound("integration")
	case errors.Is(err, integration.ErrNameTaken):
		return AlreadyExists("%s", err.Error())
	case errors.As(err, &na):
		return Conflict("%s", na.Error())
	}
	return err
}

func (s *Server) createIntegration(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := s.readIntegrationFields(c, "create", nil)
	if err != nil {
		return err
	}
	state := integration.Active
	if f.state != nil {
		state = integration.State(*f.state)
	}
	in, err := integration.Create(c.UserContext(), requestTx(c), s.Webhooks.Secrets, principal(c).TenantID, integration.Input{
		Provider: f.provider, Name: *f.name, State: state, Config: f.config, Token: f.sent.AccessToken, Secrets: f.secrets, Schedule: *f.schedule,
	})
	if err != nil {
		return integrationError(err)
	}
	c.Location("/v1/integrations/" + in.ID.String())
	return c.Status(fiber.StatusCreated).JSON(toIntegrationJSON(in, s.Webhooks.Secrets, time.Now()))
}

func loadIntegration(c *fiber.Ctx, forUpdate bool) (dbsqlc.Integration, error) {
	id, err := pathID(c, "id", "integration")
	if err != nil {
		return dbsqlc.Integration{}, err
	}
	if forUpdate {
		in, err := integration.Lock(c.UserContext(), requestTx(c), principal(c).TenantID, id)
		return in, integrationError(err)
	}
	in, err := db.Q.IntegrationGet(c.UserContext(), requestTx(c), dbsqlc.IntegrationGetParams{TenantID: principal(c).TenantID, ID: id})
	return in, found("integration", err)
}

func (s *Server) getIntegration(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	in, err := loadIntegration(c, false)
	if err != nil {
		return err
	}
	body := toIntegrationJSON(in, s.Webhooks.Secrets, time.Now())
	if s.Temporal != nil {
		if err := endTx(c); err != nil { // free the connection while Temporal answers
			return err
		}
		st := s.runsReader().Schedule(c.UserContext(), in.TenantID, in.ID.String())
		body.ScheduleState = &scheduleStateJSON{Status: st.Status, PausedBy: nonEmpty(st.PausedBy), Note: nonEmpty(st.Note)}
	}
	return c.JSON(body)
}

func (s *Server) replaceIntegration(c *fiber.Ctx) error { return s.updateIntegration(c, "put") }
func (s *Server) patchIntegration(c *fiber.Ctx) error   { return s.updateIntegration(c, "patch") }

// updateIntegration is PUT (name and config required; an absent sync_schedule means manual
// in UTC) and PATCH (only what is sent changes; config keys merge). A secret config key not
// sent keeps the stored secret; one sent as null erases it. state may be active or paused; an integration in error goes
// back to active when a new secret is sent or state active is asked for (last_error cleared).
func (s *Server) updateIntegration(c *fiber.Ctx, mode string) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	id, err := pathID(c, "id", "integration")
	if err != nil {
		return err
	}
	in, err := integration.LockForChange(c.UserContext(), requestTx(c), principal(c).TenantID, id)
	if err != nil {
		return integrationError(err)
	}
	f, err := s.readIntegrationFields(c, mode, &in)
	if err != nil {
		return err
	}
	var to *integration.State
	if f.state != nil {
		to = new(integration.State(*f.state))
	}
	updated, err := integration.Update(c.UserContext(), requestTx(c), s.Webhooks.Secrets, in, integration.Change{
		Name: f.name, State: to, Config: f.config, Sent: f.sent, Secrets: f.secrets, Cleared: f.cleared, Schedule: f.schedule,
	})
	if err != nil {
		return integrationError(err)
	}
	return c.JSON(toIntegrationJSON(updated, s.Webhooks.Secrets, time.Now()))
}

// deleteIntegration disconnects: state disconnected, token erased, schedule deleted (by the
// relay). The record and its sync history stay readable. Deleting again is a no-op (204).
func (s *Server) deleteIntegration(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	in, err := loadIntegration(c, true)
	if err != nil {
		return err
	}
	if err := integration.Disconnect(c.UserContext(), requestTx(c), in); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) listSyncs(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxSyncPageSize)
	if err := q.done(); err != nil {
		return err
	}
	in, err := loadIntegration(c, false)
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.SyncList(ctx, tx, dbsqlc.SyncListParams{TenantID: in.TenantID, IntegrationID: in.ID, PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.SyncListRow) int64 { return r.Total },
		func(r dbsqlc.SyncListRow) syncJSON { return toSyncJSON(r.IntegrationSync) },
		func() (int64, error) {
			return db.Q.SyncCount(ctx, tx, dbsqlc.SyncCountParams{TenantID: in.TenantID, IntegrationID: in.ID})
		})
}

func (s *Server) getSync(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	in, err := loadIntegration(c, false)
	if err != nil {
		return err
	}
	id, err := pathID(c, "sync_id", "sync")
	if err != nil {
		return err
	}
	sync, err := db.Q.SyncGet(c.UserContext(), requestTx(c), dbsqlc.SyncGetParams{TenantID: in.TenantID, ID: id})
	if err == nil && sync.IntegrationID != in.ID {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return found("sync", err)
	}
	return c.JSON(toSyncJSON(sync))
}

// triggerSync queues a manual sync (no body): 202 with the sync and its status URL. A sync
// already queued or running is a 409 naming it; so is an integration that is not active.
func (s *Server) triggerSync(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	if len(c.Body()) > 0 {
		return InvalidParameter("this request takes no body")
	}
	id, err := pathID(c, "id", "integration")
	if err != nil {
		return err
	}
	sync, _, err := integration.QueueSync(c.UserContext(), requestTx(c), principal(c).TenantID, id, principal(c).Subject)
	if err != nil {
		return syncQueueError(err)
	}
	body := toSyncJSON(sync)
	c.Location(body.StatusURL)
	return c.Status(fiber.StatusAccepted).JSON(body)
}

// syncQueueError maps the refusals of integration.QueueSync.
func syncQueueError(err error) error {
	if open, ok := errors.AsType[*integration.SyncOpenError](err); ok {
		return Conflict("%s", open.Error())
	}
	return integrationError(found("integration", err))
}
