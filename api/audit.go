package api

// The audit log (GET /v1/audit-events, permission admin:config). Rows are
// written by PostgreSQL triggers in the transaction of each change (migration
// 00015): no handler writes them, so no route can forget to. The actor and the
// request id reach the trigger through the tenant transaction (tenantTx puts
// them in the context, db.BeginTenant sets them).

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/wire"
)

// maxAuditPageSize bounds a page of audit events (as the value-model lists).
const maxAuditPageSize = 500

// maxAuditFilter bounds the text filters (the longest stored value is a request id of 128).
const maxAuditFilter = 200

func (s *Server) auditRoutes(v1 fiber.Router) {
	v1.Get("/audit-events", s.require(rbac.AdminConfig), s.listAuditEvents)
}

// auditEventJSON is one audit event.
type auditEventJSON struct {
	ID            string          `json:"id"`
	OccurredAt    string          `json:"occurred_at"`
	Actor         string          `json:"actor"`
	RequestID     *string         `json:"request_id"`
	Action        string          `json:"action"`
	ResourceType  string          `json:"resource_type"`
	ResourceID    string          `json:"resource_id"`
	ChangedFields []string        `json:"changed_fields"`
	Changes       json.RawMessage `json:"changes"`
}

func toAuditEventJSON(e dbsqlc.AuditEvent) auditEventJSON {
	return auditEventJSON{ID: strconv.FormatInt(e.ID, 10), OccurredAt: wire.Timestamp(e.OccurredAt), Actor: e.Actor, RequestID: e.RequestID,
		Action: e.Action, ResourceType: e.ResourceType, ResourceID: e.ResourceID,
		ChangedFields: nonNil(e.ChangedFields), Changes: e.Changes}
}

func (s *Server) listAuditEvents(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxAuditPageSize)
	p := dbsqlc.AuditEventListParams{TenantID: principal(c).TenantID, PageLimit: int32(size), PageOffset: int32((page - 1) * size)}
	for name, dst := range map[string]**string{"resource_type": &p.ResourceType, "resource_id": &p.ResourceID, "actor": &p.Actor, "action": &p.Action} {
		if v, ok := q.str(name); ok {
			if v == "" || len(v) > maxAuditFilter {
				return InvalidParameter("query parameter %s must be 1 to %d characters", name, maxAuditFilter)
			}
			*dst = &v
		}
	}
	for name, dst := range map[string]**time.Time{"from": &p.OccurredFrom, "to": &p.OccurredTo} {
		if v, ok := q.str(name); ok {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return InvalidParameter("query parameter %s must be an RFC 3339 date-time such as 2026-01-31T00:00:00Z", name)
			}
			*dst = &t
		}
	}
	if err := q.done(); err != nil {
		return err
	}
	if p.OccurredFrom != nil && p.OccurredTo != nil && !p.OccurredFrom.Before(*p.OccurredTo) {
		return InvalidParameter("query parameter from must be before to")
	}
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.AuditEventList(ctx, tx, p)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.AuditEventListRow) int64 { return r.Total },
		func(r dbsqlc.AuditEventListRow) auditEventJSON { return toAuditEventJSON(r.AuditEvent) },
		func() (int64, error) {
			return db.Q.AuditEventCount(ctx, tx, dbsqlc.AuditEventCountParams{TenantID: p.TenantID, ResourceType: p.ResourceType,
				ResourceID: p.ResourceID, Actor: p.Actor, Action: p.Action, OccurredFrom: p.OccurredFrom, OccurredTo: p.OccurredTo})
		})
}
