package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/validation"
)

// Workflow ids of the runs a client may start (the workflows' id builders
// use these): readable, unique per business object and tenant.

// ExportRunID names the run of one export of one case.
func ExportRunID(tenantID, caseID, exportID string) string {
	return fmt.Sprintf("business-case-export/%s/%s/%s", tenantID, caseID, exportID)
}

// SyncRunID names the run of one sync of one integration.
func SyncRunID(tenantID, integrationID, syncID string) string {
	return fmt.Sprintf("integration-sync/%s/%s/%s", tenantID, integrationID, syncID)
}

// RedeliveryRunID names one requested redelivery of one delivery.
func RedeliveryRunID(tenantID, webhookID, deliveryID, redeliveryID string) string {
	return fmt.Sprintf("webhook-redelivery/%s/%s/%s/%s", tenantID, webhookID, deliveryID, redeliveryID)
}

// IntegrationScheduleID names the Temporal Schedule of one integration.
func IntegrationScheduleID(tenantID, integrationID string) string {
	return fmt.Sprintf("integration-sync/%s/%s", tenantID, integrationID)
}

// The notes the service sets on an integration's schedule; a paused schedule
// with any other note was paused by an operator (Temporal UI or CLI).
const (
	ScheduleNoteActive = "integration active"
	ScheduleNotePaused = "integration not active (paused, or in error until fixed)"
)

// Name is a workflow a client may start by name (POST /api/v1/agents/workflows).
type Name string

// The allow-listed names.
const (
	NameIntegrationSync    Name = "integration_sync"
	NameBusinessCaseExport Name = "business_case_export"
	NameWebhookRedelivery  Name = "webhook_redelivery"
)

// startable is the allow-list: each name with the permission of the /v1
// route that starts the same work (POST /v1/integrations/{id}/sync,
// POST /v1/business-cases/{id}/export, POST /v1/webhooks/{id}/deliveries/{d}/redeliver).
var startable = []struct {
	name Name
	perm rbac.Permission
}{
	{NameIntegrationSync, rbac.AdminConfig},
	{NameBusinessCaseExport, rbac.BusinessCasesRead},
	{NameWebhookRedelivery, rbac.WebhooksManage},
}

// Names lists the names a client may start.
func Names() []string {
	out := make([]string, len(startable))
	for i, s := range startable {
		out[i] = string(s.name)
	}
	return out
}

// StartPermission is the permission to start name ("" for a name not on the list).
func StartPermission(name Name) rbac.Permission {
	for _, s := range startable {
		if s.name == name {
			return s.perm
		}
	}
	return ""
}

// ErrUnknownName: a name not on the allow-list.
var ErrUnknownName = errors.New("runs: not a workflow a client may start")

// Started is a run queued by Start: its workflow id and the row that tracks it.
type Started struct {
	ID      string
	Kind    Kind
	Subject Subject
}

// maxInputBytes bounds a start's input object.
const maxInputBytes = 16 << 10

// decodeInput reads input (a JSON object) into v, refusing unknown fields;
// field errors are named input.<field>.
func decodeInput(raw json.RawMessage, v any) error {
	if len(raw) > maxInputBytes {
		return validation.New("input", validation.CodeTooLong, "must be at most %d bytes of JSON", maxInputBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if ue, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && ue.Field != "" {
			return validation.New("input."+ue.Field, validation.CodeInvalidFormat, "has the wrong type")
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return validation.New("input", validation.CodeNotAllowed, "has a field this workflow does not take")
		}
		return validation.New("input", validation.CodeInvalidFormat, "must be a JSON object")
	}
	return nil
}

// uuidField checks a required id of an input.
func uuidField(errs *validation.Errors, field, s string) uuid.UUID {
	if s == "" {
		errs.Add("input."+field, validation.CodeRequired, "is required")
		return uuid.Nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		errs.Add("input."+field, validation.CodeInvalidFormat, "must be a UUID")
	}
	return id
}

// ObjectNotFound: the object a start's input names is not the tenant's (404).
type ObjectNotFound struct{ What string }

func (e *ObjectNotFound) Error() string { return e.What + " not found" }

// Start queues the run name asks for, in the caller's tenant transaction,
// the way its /v1 route does (a row and an outbox event, committed
// together; the relay starts the workflow): it never calls Temporal.
// Refusals: ErrUnknownName, validation errors (422), *ObjectNotFound (404),
// *integration.SyncOpenError, *integration.NotActiveError (409).
func Start(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, requestedBy string, name Name, input json.RawMessage) (Started, error) {
	tenant := tenantID.String()
	switch name {
	case NameIntegrationSync:
		var in struct {
			IntegrationID string `json:"integration_id"`
		}
		if err := decodeInput(input, &in); err != nil {
			return Started{}, err
		}
		var errs validation.Errors
		id := uuidField(&errs, "integration_id", in.IntegrationID)
		if err := errs.Err(); err != nil {
			return Started{}, err
		}
		sync, integ, err := integration.QueueSync(ctx, tx, tenantID, id, requestedBy)
		if db.IsNotFound(err) {
			return Started{}, &ObjectNotFound{What: "integration"}
		}
		if err != nil {
			return Started{}, err
		}
		return Started{ID: SyncRunID(tenant, integ.ID.String(), sync.ID.String()), Kind: KindIntegrationSync, Subject: Subject{
			Object: Object{Type: ObjectIntegration, ID: integ.ID.String()}, ResourceType: ResourceSync, ResourceID: sync.ID.String(),
			Summary: fmt.Sprintf("Manual sync of integration %q (%s)", integ.Name, integ.Provider),
		}}, nil

	case NameBusinessCaseExport:
		var in struct {
			BusinessCaseID    string  `json:"business_case_id"`
			Format            string  `json:"format"`
			IncludeAppendices *bool   `json:"include_appendices"`
			Watermark         *string `json:"watermark"`
		}
		if err := decodeInput(input, &in); err != nil {
			return Started{}, err
		}
		var errs validation.Errors
		caseID := uuidField(&errs, "business_case_id", in.BusinessCaseID)
		req := export.Request{Format: render.Format(in.Format), IncludeAppendices: in.IncludeAppendices != nil && *in.IncludeAppendices}
		if in.Watermark != nil {
			req.Watermark = strings.TrimSpace(*in.Watermark)
		}
		if in.Format == "" {
			errs.Add("input.format", validation.CodeRequired, "is required")
		} else if err := req.Check(); err != nil {
			if list, ok := errors.AsType[validation.Errors](err); ok {
				for _, e := range list {
					errs.Add("input."+e.Field, e.Code, "%s", e.Message)
				}
			}
		}
		if err := errs.Err(); err != nil {
			return Started{}, err
		}
		row, err := export.Queue(ctx, tx, tenantID, caseID, req, requestedBy)
		if db.IsNotFound(err) {
			return Started{}, &ObjectNotFound{What: "business case"}
		}
		if err != nil {
			return Started{}, err
		}
		return Started{ID: ExportRunID(tenant, caseID.String(), row.ID.String()), Kind: KindExport, Subject: Subject{
			Object: Object{Type: ObjectBusinessCase, ID: caseID.String()}, ResourceType: ResourceExport, ResourceID: row.ID.String(),
			Summary: strings.ToUpper(row.Format) + " export of a business case",
		}}, nil

	case NameWebhookRedelivery:
		var in struct {
			WebhookID  string `json:"webhook_id"`
			DeliveryID string `json:"delivery_id"`
		}
		if err := decodeInput(input, &in); err != nil {
			return Started{}, err
		}
		var errs validation.Errors
		hookID := uuidField(&errs, "webhook_id", in.WebhookID)
		deliveryID := uuidField(&errs, "delivery_id", in.DeliveryID)
		if err := errs.Err(); err != nil {
			return Started{}, err
		}
		del, err := db.Q.WebhookDeliveryGet(ctx, tx, dbsqlc.WebhookDeliveryGetParams{TenantID: tenantID, WebhookID: hookID, ID: deliveryID})
		if db.IsNotFound(err) {
			return Started{}, &ObjectNotFound{What: "delivery"}
		}
		if err != nil {
			return Started{}, err
		}
		ev := RedeliveryRequestedEvent{WebhookID: hookID.String(), DeliveryID: del.ID.String(), RedeliveryID: uuid.NewString(), EventType: del.EventType}
		if _, err := outbox.Write(ctx, tx, tenantID, EventRedeliveryRequested, ev); err != nil {
			return Started{}, err
		}
		return Started{ID: RedeliveryRunID(tenant, ev.WebhookID, ev.DeliveryID, ev.RedeliveryID), Kind: KindWebhookRedelivery, Subject: ev.Subject()}, nil
	}
	return Started{}, ErrUnknownName
}

// Internal events of this package (no webhook subscribes to them).
const (
	// EventRedeliveryRequested: a client asked for a delivery to be sent again; the relay starts its run.
	EventRedeliveryRequested = "webhook.redelivery_requested"
	// EventCancelRequested: a client canceled a run; the relay cancels it in Temporal.
	EventCancelRequested = "workflow.cancel_requested"
)

// RedeliveryRequestedEvent is the data of EventRedeliveryRequested.
type RedeliveryRequestedEvent struct {
	WebhookID    string `json:"webhook_id"`
	DeliveryID   string `json:"delivery_id"`
	RedeliveryID string `json:"redelivery_id"`
	EventType    string `json:"event_type"`
}

// Subject of the redelivery's run.
func (e RedeliveryRequestedEvent) Subject() Subject {
	return Subject{
		Object: Object{Type: ObjectWebhook, ID: e.WebhookID}, ResourceType: ResourceDelivery, ResourceID: e.DeliveryID,
		Summary: fmt.Sprintf("Redelivery of %s delivery %s to webhook %s", e.EventType, e.DeliveryID, e.WebhookID),
	}
}

// CancelRequestedEvent is the data of EventCancelRequested.
type CancelRequestedEvent struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	By         string `json:"by"` // the caller, named in the reason the canceled row records
}

// ErrNotRunning: the run has ended; there is nothing to cancel.
var ErrNotRunning = errors.New("runs: the run is not running")

// ErrNotCancelable: runs of this kind are not canceled over REST.
var ErrNotCancelable = errors.New("runs: runs of this kind cannot be canceled")

// CanceledReason is the error text a canceled row carries (its workflow
// writes it; who asked is in the run's history, as the cancel request's reason).
const CanceledReason = "the run was canceled (over REST or in the Temporal UI)"

// Cancel requests the cancel of run, the tenant's (read by Reader.Get,
// which checked its TenantId search attribute), in the caller's tenant
// transaction: an outbox event makes the relay cancel the Temporal run, and
// the workflow, canceled, stops its work and marks its row canceled (with the
// name of who asked). The row is not marked here: the run and its row must
// agree, and a run that finishes before the cancel reaches it keeps its
// outcome in both (the same path as a cancel in the Temporal UI).
func Cancel(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, run Run, by string) error {
	if CancelPermission(run.Kind) == "" {
		return ErrNotCancelable
	}
	if run.Status != Running {
		return ErrNotRunning
	}
	_, err := outbox.Write(ctx, tx, tenantID, EventCancelRequested, CancelRequestedEvent{WorkflowID: run.ID, RunID: run.RunID, By: by})
	return err
}
