package api

// Bulk import and export of initiatives: a row is the body of POST
// /v1/initiatives, read by the same readInitiative and checked by the same
// rules (checkDates, initiative.CheckCreateStatus and CheckCanCreate under the
// tenant's create lock); its key is the name, compared case-insensitively as
// the unique index does. An existing initiative is replaced as PUT
// /v1/initiatives/{id} replaces it (CheckWritable, authorizeOwnerChange and,
// for a status change, authorizeTransition with the caller's roles), keeping
// the same history and emitting the same events as the single routes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/outbox"
)

// initiativeExportColumns are the fields of an exported initiative (id is read-only on import).
var initiativeExportColumns = []string{"id", "name", "description", "status", "industry", "segment", "owner_id",
	"expected_start_date", "expected_end_date"}

func importInitiatives(ctx context.Context, t pgx.Tx, a bulk.Actor, o bulk.Options, records []bulk.Record, offset int) ([]bulk.Result, error) {
	p := &Principal{TenantID: a.TenantID, Subject: a.Subject, Roles: a.Roles} // whom the single routes' checks ask about
	results := bulk.NewResults(len(records), offset)
	rows := make([]initiativeFields, len(records))
	// 1. Each row as the single create reads its body; the key is the lower-case name.
	firstOf := map[string]int{}
	var keyNames []string
	var keyRows []int
	for i, rec := range records {
		b := input.New(rec)
		rows[i] = readInitiative(b, true)
		_ = b.Done()
		if len(b.Errors()) > 0 {
			results[i].Fail(bulk.RowErrors(b.Errors(), nil))
			continue
		}
		if err := checkDates(rows[i].start, rows[i].end); err != nil {
			results[i].Fail(apiRowErrors("expected_end_date", err))
			continue
		}
		key := strings.ToLower(*rows[i].name)
		if j, dup := firstOf[key]; dup {
			results[i].Fail([]bulk.FieldError{{Field: "name", Code: "duplicate",
				Message: fmt.Sprintf("row %d already has this name (names compare case-insensitively)", offset+j)}})
			continue
		}
		firstOf[key] = i
		keyNames, keyRows = append(keyNames, *rows[i].name), append(keyRows, i)
	}
	if len(keyNames) == 0 {
		return results, nil
	}
	// 2. The tenant's create lock and live count (the single create's cap),
	// then the stored initiatives at the keys, locked as PUT locks one.
	if err := db.Q.InitiativeLockTenantCreates(ctx, t, a.TenantID); err != nil {
		return nil, err
	}
	live, err := db.Q.InitiativeCountLive(ctx, t, a.TenantID)
	if err != nil {
		return nil, err
	}
	existing := map[int]dbsqlc.Initiative{} // by row
	list, err := db.Q.BulkInitiativesExisting(ctx, t, dbsqlc.BulkInitiativesExistingParams{TenantID: a.TenantID, Names: keyNames})
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		existing[keyRows[e.KeyN-1]] = e.Initiative
	}
	// 3. Created, updated or unchanged, each by the single route's rules.
	var ins dbsqlc.BulkInitiativesInsertParams
	var upd dbsqlc.BulkInitiativesUpdateParams
	created := map[string]int{}                 // row by the exact name inserted
	before := map[uuid.UUID]dbsqlc.Initiative{} // stored state of the replaced ones
	updatedRow := map[uuid.UUID]int{}
	for i := range rows {
		if results[i].Status == bulk.Failed {
			continue
		}
		f := rows[i]
		e, stored := existing[i]
		if !stored {
			if err := initiative.CheckCreateStatus((*initiative.Status)(f.status)); err != nil {
				results[i].Fail(bulk.RowErrors(nil, err))
				continue
			}
			if err := initiative.CheckCanCreate(live + int64(len(ins.Names))); err != nil {
				results[i].Fail([]bulk.FieldError{{Field: "name", Code: "conflict", Message: err.Error()}})
				continue
			}
			created[*f.name] = i
			ins.Names, ins.Descriptions = append(ins.Names, *f.name), append(ins.Descriptions, deref(f.description))
			ins.Industries, ins.Segments = append(ins.Industries, deref(f.industry)), append(ins.Segments, deref(f.segment))
			ins.OwnerIds = append(ins.OwnerIds, initiative.Owner(f.ownerID, a.Subject))
			ins.StartDates, ins.EndDates = append(ins.StartDates, bulk.DateText(f.start)), append(ins.EndDates, bulk.DateText(f.end))
			results[i].Status = bulk.Created
			continue
		}
		if o.Mode == bulk.Create {
			results[i].Fail([]bulk.FieldError{{Field: "name", Code: "already_exists",
				Message: "an initiative with this name already exists (names compare case-insensitively); import with mode upsert to replace it"}})
			continue
		}
		// PUT's replace: absent optional fields are cleared, an absent status is kept.
		next := e
		next.Name, next.Description, next.Industry, next.Segment, next.OwnerID = *f.name, deref(f.description), f.industry, f.segment, f.ownerID
		next.ExpectedStartDate, next.ExpectedEndDate = f.start, f.end
		if f.status != nil {
			next.Status = *f.status
		}
		// An equal row writes nothing, so it is unchanged even when archived (an export round trip).
		if sameInitiative(e, next) {
			results[i].Status, results[i].ID = bulk.Unchanged, new(e.ID)
			continue
		}
		if err := initiative.CheckWritable(initiative.Status(e.Status)); err != nil {
			results[i].Fail([]bulk.FieldError{{Field: "name", Code: "conflict", Message: err.Error()}})
			continue
		}
		if err := authorizeOwnerChange(p, e, next.OwnerID); err != nil {
			results[i].Fail(apiRowErrors("owner_id", err))
			continue
		}
		if next.Status != e.Status {
			if err := authorizeTransition(p, e, initiative.Status(next.Status)); err != nil {
				results[i].Fail(apiRowErrors("status", err))
				continue
			}
		}
		before[e.ID], updatedRow[e.ID] = e, i
		upd.Ids, upd.Names, upd.Descriptions = append(upd.Ids, e.ID), append(upd.Names, next.Name), append(upd.Descriptions, next.Description)
		upd.Statuses, upd.Industries = append(upd.Statuses, next.Status), append(upd.Industries, deref(next.Industry))
		upd.Segments, upd.OwnerIds = append(upd.Segments, deref(next.Segment)), append(upd.OwnerIds, deref(next.OwnerID))
		upd.StartDates, upd.EndDates = append(upd.StartDates, bulk.DateText(next.ExpectedStartDate)), append(upd.EndDates, bulk.DateText(next.ExpectedEndDate))
		results[i].Status, results[i].ID = bulk.Updated, new(e.ID)
	}
	// 4. The writes: one statement each for the new initiatives, the replaced
	// ones, their history, the projects archived with them and each event type.
	var hist dbsqlc.BulkInitiativesHistoryAddParams
	addHistory := func(id uuid.UUID, kind, fromStatus, toStatus, fromOwner, toOwner, reason string) {
		hist.InitiativeIds, hist.Kinds = append(hist.InitiativeIds, id), append(hist.Kinds, kind)
		hist.FromStatuses, hist.ToStatuses = append(hist.FromStatuses, fromStatus), append(hist.ToStatuses, toStatus)
		hist.FromOwners, hist.ToOwners = append(hist.FromOwners, fromOwner), append(hist.ToOwners, toOwner)
		hist.Reasons = append(hist.Reasons, reason)
	}
	var createdEvents, statusEvents [][]byte
	var archived []uuid.UUID
	if len(ins.Names) > 0 {
		ins.TenantID = a.TenantID
		list, err := db.Q.BulkInitiativesInsert(ctx, t, ins)
		if db.IsUniqueViolation(err, "initiatives_tenant_name") {
			// Only if PostgreSQL's lower() pairs two names Go's does not: the single route's 409.
			return nil, AlreadyExists("two initiatives of this import have the same name (names are unique ignoring case)")
		}
		if err != nil {
			return nil, err
		}
		byName := map[string]dbsqlc.Initiative{}
		for _, in := range list {
			byName[in.Name] = in
		}
		for _, name := range ins.Names { // in row order, as the single creates would have written them
			in := byName[name]
			if !o.DryRun {
				results[created[in.Name]].ID = new(in.ID)
			}
			addHistory(in.ID, historyStatus, "", in.Status, "", "", "created")
			data, err := json.Marshal(toInitiativeJSON(in))
			if err != nil {
				return nil, err
			}
			createdEvents = append(createdEvents, data)
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID = a.TenantID
		list, err := db.Q.BulkInitiativesUpdate(ctx, t, upd)
		if err != nil {
			return nil, err
		}
		byID := map[uuid.UUID]dbsqlc.Initiative{}
		for _, in := range list {
			byID[in.ID] = in
		}
		for _, id := range upd.Ids { // in row order, as the single routes would have written them
			in, was := byID[id], before[id]
			if in.Status != was.Status {
				addHistory(id, historyStatus, was.Status, in.Status, "", "", "")
				if initiative.ArchivesProjects(initiative.Status(in.Status)) {
					archived = append(archived, id)
				}
				data, err := json.Marshal(initiative.StatusChangedEvent{InitiativeID: id.String(), FromStatus: initiative.Status(was.Status),
					ToStatus: initiative.Status(in.Status), Actor: a.Subject, ChangedAt: timestamp(in.UpdatedAt), Initiative: toInitiativeJSON(in)})
				if err != nil {
					return nil, err
				}
				statusEvents = append(statusEvents, data)
			}
			if from, to := deref(was.OwnerID), deref(in.OwnerID); from != to {
				addHistory(id, historyOwner, in.Status, in.Status, from, to, initiative.OwnerChangeReason(from, to))
			}
		}
	}
	if len(hist.Kinds) > 0 {
		hist.TenantID, hist.Actor = a.TenantID, a.Subject
		if err := db.Q.BulkInitiativesHistoryAdd(ctx, t, hist); err != nil {
			return nil, err
		}
	}
	if len(archived) > 0 {
		if err := db.Q.BulkInitiativesArchiveProjects(ctx, t, dbsqlc.BulkInitiativesArchiveProjectsParams{TenantID: a.TenantID, InitiativeIds: archived}); err != nil {
			return nil, err
		}
	}
	if err := outbox.WriteMany(ctx, t, a.TenantID, outbox.InitiativeCreated, createdEvents); err != nil {
		return nil, err
	}
	return results, outbox.WriteMany(ctx, t, a.TenantID, outbox.InitiativeStatusChanged, statusEvents)
}

// sameInitiative reports whether next leaves every writable field of e as it is.
func sameInitiative(e, next dbsqlc.Initiative) bool {
	return e.Name == next.Name && e.Description == next.Description && e.Status == next.Status &&
		deref(e.Industry) == deref(next.Industry) && deref(e.Segment) == deref(next.Segment) && deref(e.OwnerID) == deref(next.OwnerID) &&
		bulk.DateText(e.ExpectedStartDate) == bulk.DateText(next.ExpectedStartDate) && bulk.DateText(e.ExpectedEndDate) == bulk.DateText(next.ExpectedEndDate)
}

// apiRowErrors turns a single route's refusal into a row's errors: a 422's
// elements as they are, any other answer as one element on field (code
// forbidden for a 403, conflict for a 409, invalid_value for a 400).
func apiRowErrors(field string, err error) []bulk.FieldError {
	var e *Error
	if !errors.As(err, &e) {
		return bulk.RowErrors(nil, err)
	}
	if len(e.Fields) > 0 {
		out := make([]bulk.FieldError, len(e.Fields))
		for i, f := range e.Fields {
			out[i] = bulk.FieldError(f)
		}
		return out
	}
	code := "invalid_value"
	switch e.Status {
	case http.StatusForbidden:
		code = "forbidden"
	case http.StatusConflict:
		code = "conflict"
	}
	return []bulk.FieldError{{Field: field, Code: code, Message: e.Message}}
}

// exportInitiatives reads a page of the tenant's initiatives, archived included, in lower-case name order.
func exportInitiatives(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkInitiativesExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterName = cur.after[0].(string)
	}
	rows, err := db.Q.BulkInitiativesExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		out.records[i] = map[string]any{"id": r.ID.String(), "name": r.Name, "description": r.Description, "status": r.Status,
			"industry": r.Industry, "segment": r.Segment, "owner_id": r.OwnerID,
			"expected_start_date": optDate(r.ExpectedStartDate), "expected_end_date": optDate(r.ExpectedEndDate)}
		out.after = []any{r.NameKey}
	}
	return out
}
