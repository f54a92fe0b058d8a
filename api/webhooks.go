package api

import (
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/webhook"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
	"github.com/valuecase/valuecase/internal/wire"
)

// Limits of spec section 8.
const (
	minWebhookSecretLen = 16
	maxWebhookSecretLen = 256
	maxDeliveryPageSize = 200
	maxWebhookListPage  = 200
)

// webhookJSON is the webhook resource. The secret is write-only: only its
// last 4 characters come back, as secret_hint.
type webhookJSON struct {
	ID             string            `json:"id"`
	URL            string            `json:"url"`
	Events         []string          `json:"events"`
	Active         bool              `json:"active"`
	SecretHint     string            `json:"secret_hint"`
	DisabledAt     *string           `json:"disabled_at"`
	DisabledReason *string           `json:"disabled_reason"`
	LastDelivery   *lastDeliveryJSON `json:"last_delivery"`
	CreatedAt      string            `json:"created_at"`
	UpdatedAt      string            `json:"updated_at"`
}

// lastDeliveryJSON summarises the webhook's most recent delivery.
type lastDeliveryJSON struct {
	Status      string  `json:"status"`
	AttemptedAt *string `json:"attempted_at"`
	StatusCode  *int32  `json:"status_code"`
}

type deliveryJSON struct {
	ID             string        `json:"id"`
	WebhookID      string        `json:"webhook_id"`
	EventID        string        `json:"event_id"`
	EventType      string        `json:"event_type"`
	Status         string        `json:"status"`
	AttemptCount   int           `json:"attempt_count"`
	LastAttemptAt  *string       `json:"last_attempt_at"`
	NextAttemptAt  *string       `json:"next_attempt_at"`
	LastStatusCode *int32        `json:"last_status_code"`
	LastError      *string       `json:"last_error"`
	CreatedAt      string        `json:"created_at"`
	UpdatedAt      string        `json:"updated_at"`
	Attempts       []attemptJSON `json:"attempts"`
}

type attemptJSON struct {
	Attempt         int     `json:"attempt"`
	Trigger         string  `json:"trigger"`
	Outcome         string  `json:"outcome"`
	StartedAt       string  `json:"started_at"`
	LatencyMS       float64 `json:"latency_ms"`
	StatusCode      *int32  `json:"status_code"`
	Error           *string `json:"error"`
	ResponseSnippet string  `json:"response_snippet"`
}

// attemptResultJSON answers POST .../test and .../redeliver: what the one attempt did.
type attemptResultJSON struct {
	DeliveryID      string  `json:"delivery_id"`
	EventID         string  `json:"event_id"`
	EventType       string  `json:"event_type"`
	Attempt         int     `json:"attempt"`
	Outcome         string  `json:"outcome"`
	StatusCode      *int    `json:"status_code"`
	LatencyMS       float64 `json:"latency_ms"`
	Error           *string `json:"error"`
	ResponseSnippet string  `json:"response_snippet"`
	DeliveryStatus  string  `json:"delivery_status"`
}

func toWebhookJSON(w dbsqlc.Webhook, last *lastDeliveryJSON) webhookJSON {
	return webhookJSON{
		ID: w.ID.String(), URL: w.URL, Events: w.Events, Active: w.Active, SecretHint: w.SecretHint,
		DisabledAt: optTimestamp(w.DisabledAt), DisabledReason: w.DisabledReason, LastDelivery: last,
		CreatedAt: wire.Timestamp(w.CreatedAt), UpdatedAt: wire.Timestamp(w.UpdatedAt),
	}
}

func toDeliveryJSON(d dbsqlc.WebhookDelivery, attempts []dbsqlc.WebhookDeliveryAttempt) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID.String(), WebhookID: d.WebhookID.String(), EventID: d.EventID.String(), EventType: d.EventType,
		Status: d.Status, AttemptCount: int(d.Attempts), LastAttemptAt: optTimestamp(d.LastAttemptAt),
		NextAttemptAt: optTimestamp(d.NextAttemptAt), LastStatusCode: d.LastStatusCode, LastError: d.LastError,
		CreatedAt: wire.Timestamp(d.CreatedAt), UpdatedAt: wire.Timestamp(d.UpdatedAt), Attempts: make([]attemptJSON, 0, len(attempts)),
	}
	for _, a := range attempts {
		out.Attempts = append(out.Attempts, attemptJSON{
			Attempt: int(a.Attempt), Trigger: a.Trigger, Outcome: a.Outcome, StartedAt: wire.Timestamp(a.StartedAt),
			LatencyMS: a.LatencyMS, StatusCode: a.StatusCode, Error: a.Error, ResponseSnippet: a.ResponseSnippet,
		})
	}
	return out
}

// lastDeliveries loads the last_delivery field of the given webhooks.
func lastDeliveries(c *fiber.Ctx, ids ...uuid.UUID) (map[uuid.UUID]*lastDeliveryJSON, error) {
	rows, err := db.Q.WebhookLastDeliveries(c.UserContext(), requestTx(c), dbsqlc.WebhookLastDeliveriesParams{TenantID: principal(c).TenantID, WebhookIds: ids})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]*lastDeliveryJSON, len(rows))
	for _, r := range rows {
		out[r.WebhookID] = &lastDeliveryJSON{Status: r.Status, AttemptedAt: optTimestamp(r.LastAttemptAt), StatusCode: r.LastStatusCode}
	}
	return out, nil
}

// webhookFields are the writable fields of create, PUT and PATCH.
type webhookFields struct {
	url    *string
	events []string
	secret *string
	active *bool
	has    map[string]bool
}

var readOnlyWebhookFields = []string{"id", "secret_hint", "disabled_at", "disabled_reason", "last_delivery", "created_at", "updated_at"}

// readWebhookFields reads and validates a webhook body. create: url, events
// and secret are required; replace (PUT): url and events are; PATCH: none.
// A URL is checked as the delivery would be: its host must resolve to public
// addresses unless OUTBOUND_ALLOW_PRIVATE_NETWORKS is true.
func (s *Server) readWebhookFields(c *fiber.Ctx, create, replace bool) (webhookFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return webhookFields{}, err
	}
	f := webhookFields{has: map[string]bool{}}
	for _, name := range []string{"url", "events", "secret", "active"} {
		f.has[name] = b.Has(name)
	}
	f.url = b.Text("url", create || replace || f.has["url"], webhook.MaxURLLength)
	f.events = b.EnumList("events", "event type", create || replace || f.has["events"], outbox.EventTypes)
	f.secret = b.Text("secret", create || f.has["secret"], maxWebhookSecretLen)
	if f.secret != nil && utf8.RuneCountInString(*f.secret) < minWebhookSecretLen {
		b.Fail("secret", "invalid_value", "must be %d to %d characters", minWebhookSecretLen, maxWebhookSecretLen)
	}
	f.active = b.Boolean("active")
	b.Ignore(readOnlyWebhookFields...)
	if f.url != nil {
		var ue *webhook.URLError
		if err := webhook.ValidateURL(*f.url); errors.As(err, &ue) {
			b.Fail("url", "invalid_format", "%s", ue.Reason)
		} else if err := webhook.CheckURL(c.UserContext(), *f.url, s.Config.OutboundAllowPrivateNetworks); err != nil {
			if !errors.As(err, &ue) {
				return webhookFields{}, err
			}
			b.Fail("url", "invalid_value", "%s", ue.Reason) // resolves to a refused address
		}
	}
	if err := b.Done(); err != nil {
		return webhookFields{}, err
	}
	return f, nil
}

func (s *Server) listWebhooks(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxWebhookListPage)
	var active *bool
	if _, ok := q.str("active"); ok {
		active = new(q.oneOf("active", "", []string{"true", "false"}) == "true")
	}
	if err := q.done(); err != nil {
		return err
	}
	p := principal(c)
	rows, err := db.Q.WebhookList(c.UserContext(), requestTx(c), dbsqlc.WebhookListParams{
		TenantID: p.TenantID, Active: active, PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.Webhook.ID
	}
	last, err := lastDeliveries(c, ids...)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.WebhookListRow) int64 { return r.Total },
		func(r dbsqlc.WebhookListRow) webhookJSON { return toWebhookJSON(r.Webhook, last[r.Webhook.ID]) },
		func() (int64, error) {
			return db.Q.WebhookCount(c.UserContext(), requestTx(c), dbsqlc.WebhookCountParams{TenantID: p.TenantID, Active: active})
		})
}

func (s *Server) createWebhook(c *fiber.Ctx) error {
	f, err := s.readWebhookFields(c, true, false)
	if err != nil {
		return err
	}
	w, err := s.Webhooks.CreateWebhook(c.UserContext(), requestTx(c), principal(c).actor(), dispatch.WebhookInput{
		URL: *f.url, Events: f.events, Secret: *f.secret, Active: f.active,
	})
	if errors.Is(err, dispatch.ErrWebhookLimit) {
		return Conflict("%s", err.Error())
	}
	if err != nil {
		return err
	}
	c.Location("/v1/webhooks/" + w.ID.String())
	return c.Status(fiber.StatusCreated).JSON(toWebhookJSON(w, nil))
}

func (s *Server) loadWebhook(c *fiber.Ctx, forUpdate bool) (dbsqlc.Webhook, error) {
	id, err := pathID(c, "id", "webhook")
	if err != nil {
		return dbsqlc.Webhook{}, err
	}
	if forUpdate {
		w, err := dispatch.LockWebhook(c.UserContext(), requestTx(c), principal(c).TenantID, id)
		if errors.Is(err, dispatch.ErrWebhookNotFound) {
			return w, NotFound("webhook")
		}
		if err != nil {
			return w, err
		}
		return w, checkIfMatch(c, w.UpdatedAt)
	}
	w, err := db.Q.WebhookGet(c.UserContext(), requestTx(c), dbsqlc.WebhookGetParams{TenantID: principal(c).TenantID, ID: id})
	return w, found("webhook", err)
}

func (s *Server) getWebhook(c *fiber.Ctx) error {
	w, err := s.loadWebhook(c, false)
	if err != nil {
		return err
	}
	last, err := lastDeliveries(c, w.ID)
	if err != nil {
		return err
	}
	return sendRecord(c, w.UpdatedAt, toWebhookJSON(w, last[w.ID]))
}

func (s *Server) replaceWebhook(c *fiber.Ctx) error { return s.updateWebhook(c, true) }
func (s *Server) patchWebhook(c *fiber.Ctx) error   { return s.updateWebhook(c, false) }

// updateWebhook is PUT (url and events required) and PATCH (only the fields
// sent change). An absent secret or active keeps its value in both. Setting
// active=true re-enables a disabled webhook and clears disabled_at and
// disabled_reason; active=false switches it off with a reason naming the caller.
func (s *Server) updateWebhook(c *fiber.Ctx, replace bool) error {
	f, err := s.readWebhookFields(c, false, replace)
	if err != nil {
		return err
	}
	w, err := s.loadWebhook(c, true)
	if err != nil {
		return err
	}
	updated, err := s.Webhooks.UpdateWebhook(c.UserContext(), requestTx(c), principal(c).actor(), w, dispatch.WebhookChange{
		URL: f.url, Events: f.events, Secret: f.secret, Active: f.active,
	})
	if err != nil {
		return err
	}
	last, err := lastDeliveries(c, w.ID)
	if err != nil {
		return err
	}
	return sendRecord(c, updated.UpdatedAt, toWebhookJSON(updated, last[w.ID]))
}

func (s *Server) deleteWebhook(c *fiber.Ctx) error {
	w, err := s.loadWebhook(c, true) // locked: If-Match is checked against the row the delete removes
	if err != nil {
		return err
	}
	err = dispatch.DeleteWebhook(c.UserContext(), requestTx(c), w)
	if errors.Is(err, dispatch.ErrWebhookNotFound) {
		return NotFound("webhook")
	}
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxDeliveryPageSize)
	var status, eventType *string
	if _, ok := q.str("status"); ok {
		status = new(q.oneOf("status", "", dispatch.Statuses))
	}
	if _, ok := q.str("event_type"); ok {
		eventType = new(q.oneOf("event_type", "", append(slices.Clone(outbox.EventTypes), webhook.EventTest)))
	}
	if err := q.done(); err != nil {
		return err
	}
	w, err := s.loadWebhook(c, false)
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.WebhookDeliveryList(ctx, tx, dbsqlc.WebhookDeliveryListParams{
		TenantID: w.TenantID, WebhookID: w.ID, Status: status, EventType: eventType,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.WebhookDelivery.ID
	}
	attempts, err := db.Q.WebhookDeliveryAttemptList(ctx, tx, dbsqlc.WebhookDeliveryAttemptListParams{TenantID: w.TenantID, DeliveryIds: ids})
	if err != nil {
		return err
	}
	byDelivery := map[uuid.UUID][]dbsqlc.WebhookDeliveryAttempt{}
	for _, a := range attempts {
		byDelivery[a.DeliveryID] = append(byDelivery[a.DeliveryID], a)
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.WebhookDeliveryListRow) int64 { return r.Total },
		func(r dbsqlc.WebhookDeliveryListRow) deliveryJSON {
			return toDeliveryJSON(r.WebhookDelivery, byDelivery[r.WebhookDelivery.ID])
		},
		func() (int64, error) {
			return db.Q.WebhookDeliveryCount(ctx, tx, dbsqlc.WebhookDeliveryCountParams{TenantID: w.TenantID, WebhookID: w.ID, Status: status, EventType: eventType})
		})
}

func (s *Server) getDelivery(c *fiber.Ctx) error {
	w, err := s.loadWebhook(c, false)
	if err != nil {
		return err
	}
	id, err := pathID(c, "delivery_id", "delivery")
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
	d, err := db.Q.WebhookDeliveryGet(ctx, tx, dbsqlc.WebhookDeliveryGetParams{TenantID: w.TenantID, WebhookID: w.ID, ID: id})
	if err := found("delivery", err); err != nil {
		return err
	}
	attempts, err := db.Q.WebhookDeliveryAttemptList(ctx, tx, dbsqlc.WebhookDeliveryAttemptListParams{TenantID: w.TenantID, DeliveryIds: []uuid.UUID{d.ID}})
	if err != nil {
		return err
	}
	return sendRecord(c, d.UpdatedAt, toDeliveryJSON(d, attempts))
}

func toAttemptResultJSON(r dispatch.Result) attemptResultJSON {
	out := attemptResultJSON{
		DeliveryID: r.DeliveryID.String(), EventID: r.EventID.String(), EventType: r.EventType, Attempt: r.Number,
		Outcome: string(r.Outcome), LatencyMS: float64(r.Latency.Microseconds()) / 1000, ResponseSnippet: r.ResponseSnippet,
		DeliveryStatus: r.Status,
	}
	if r.StatusCode != 0 {
		out.StatusCode = new(r.StatusCode)
	}
	if r.Error != "" {
		out.Error = new(r.Error)
	}
	return out
}

// testWebhook sends a webhook.test event now and answers with the attempt's
// outcome (200 whatever the receiver said). Inactive webhooks can be tested.
func (s *Server) testWebhook(c *fiber.Ctx) error {
	id, err := pathID(c, "id", "webhook")
	if err != nil {
		return err
	}
	if err := endTx(c); err != nil { // the attempt may wait 30 s on the receiver
		return err
	}
	res, err := s.Webhooks.SendTest(c.UserContext(), principal(c).TenantID, id)
	if errors.Is(err, dispatch.ErrWebhookNotFound) {
		return NotFound("webhook")
	}
	if err != nil {
		return err
	}
	return c.JSON(toAttemptResultJSON(res))
}

// redeliverDelivery sends a delivery's event again now, as one more attempt
// with the same event id and body, and answers with the outcome.
func (s *Server) redeliverDelivery(c *fiber.Ctx) error {
	hookID, err := pathID(c, "id", "webhook")
	if err != nil {
		return err
	}
	deliveryID, err := pathID(c, "delivery_id", "delivery")
	if err != nil {
		return err
	}
	if err := endTx(c); err != nil { // the attempt may wait 30 s on the receiver
		return err
	}
	ctx := c.UserContext()
	res, err := s.Webhooks.Redeliver(ctx, principal(c).TenantID, hookID, deliveryID)
	switch {
	case errors.Is(err, dispatch.ErrDeliveryNotFound):
		return NotFound("delivery")
	case errors.Is(err, dispatch.ErrDeliveryInFlight):
		return Conflict("attempt 1 of this delivery is still in flight; retry in a minute")
	case errors.Is(err, dispatch.ErrEventGone):
		return Conflict("the event of this delivery is no longer stored and cannot be sent again")
	case err != nil:
		return err
	}
	return c.JSON(toAttemptResultJSON(res))
}
