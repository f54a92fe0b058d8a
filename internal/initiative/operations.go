package initiative

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/wire"
)

// The operations on initiatives: batch-first, in the caller's transaction,
// for the single routes (a batch of one) and the bulk import (a page). Each
// item that breaks a rule comes back with its typed error and writes
// nothing; the others are written with their history and events.

// Errors of an item the handlers map once.
var (
	// ErrNameTaken: another initiative of the tenant has the name (case-insensitively).
	ErrNameTaken = errors.New("an initiative with this name already exists in this tenant (names are unique ignoring case)")
	// ErrNotFound: no initiative of the tenant has the id.
	ErrNotFound = errors.New("no such initiative")
	// ErrEndBeforeStart: the expected dates are the wrong way round.
	ErrEndBeforeStart = errors.New("expected_end_date must not be before expected_start_date")
)

// Kinds of status-history entries.
const (
	HistoryStatus = "status"
	HistoryOwner  = "owner" // an owner_id change; the status stays
)

// Outcome is what an operation did with one item.
type Outcome struct {
	Initiative dbsqlc.Initiative // as written (or as it stands, when Err is set)
	Err        error             // the item's refusal: nothing of it was written
}

func checkDates(in dbsqlc.Initiative) error {
	if in.ExpectedStartDate != nil && in.ExpectedEndDate != nil && in.ExpectedEndDate.Before(*in.ExpectedStartDate) {
		return ErrEndBeforeStart
	}
	return nil
}

// Create creates initiatives from create bodies: as draft, owned by the
// owner named or else the actor (an integration owns nothing: its records
// have the owner it names or none), within the tenant's limit counted under
// its create lock. Names must be new (an import sorts out its duplicates first).
func Create(ctx context.Context, tx pgx.Tx, actor Actor, items []Fields) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	// The tenant's create lock, then the count it guards, in one round trip: a
	// pipeline runs its statements in order, and the count's snapshot is taken
	// once the lock is held.
	var live int64
	if err := db.Pipeline(ctx, tx,
		func(q dbsqlc.DBTX) error { return db.Q.InitiativeLockTenantCreates(ctx, q, actor.TenantID) },
		func(q dbsqlc.DBTX) (err error) {
			live, err = db.Q.InitiativeCountLive(ctx, q, actor.TenantID)
			return err
		},
	); err != nil {
		return nil, err
	}
	ins := dbsqlc.BulkInitiativesInsertParams{TenantID: actor.TenantID, Source: actor.Source}
	var rows []int // item of each inserted name
	for i, f := range items {
		if out[i].Err = CheckCreateStatus((*Status)(f.Status)); out[i].Err != nil {
			continue
		}
		next := Merge(dbsqlc.Initiative{}, f, true)
		if out[i].Err = checkDates(next); out[i].Err != nil {
			continue
		}
		if out[i].Err = CheckCanCreate(live + int64(len(rows))); out[i].Err != nil {
			continue
		}
		rows = append(rows, i)
		ins.Names, ins.Descriptions = append(ins.Names, next.Name), append(ins.Descriptions, next.Description)
		ins.Industries, ins.Segments = append(ins.Industries, text(next.Industry)), append(ins.Segments, text(next.Segment))
		owner := Owner(f.OwnerID, actor.Subject)
		if actor.Source != "" {
			owner = text(f.OwnerID)
		}
		ins.OwnerIds, ins.ExternalIds = append(ins.OwnerIds, owner), append(ins.ExternalIds, f.ExternalID)
		ins.StartDates, ins.EndDates = append(ins.StartDates, db.DateText(next.ExpectedStartDate)), append(ins.EndDates, db.DateText(next.ExpectedEndDate))
	}
	if len(rows) == 0 {
		return out, nil
	}
	list, err := db.Q.BulkInitiativesInsert(ctx, tx, ins)
	if db.IsUniqueViolation(err, "initiatives_tenant_name") {
		return nil, ErrNameTaken
	}
	if err != nil {
		return nil, err
	}
	byName := map[string]dbsqlc.Initiative{}
	for _, in := range list {
		byName[in.Name] = in
	}
	var hist history
	events := make([][]byte, len(rows))
	for k, i := range rows { // in item order, as one create after another would write them
		in := byName[ins.Names[k]]
		out[i].Initiative = in
		hist.add(in.ID, HistoryStatus, "", in.Status, "", "", "created")
		if events[k], err = json.Marshal(ViewOf(in)); err != nil {
			return nil, err
		}
	}
	// The history and the events in one round trip.
	return out, db.Pipeline(ctx, tx,
		func(q dbsqlc.DBTX) error { return hist.write(ctx, q, actor) },
		func(q dbsqlc.DBTX) error {
			return outbox.WriteMany(ctx, q, actor.TenantID, outbox.InitiativeCreated, events)
		},
	)
}

// Replacement is a replace (PUT, an import row) or a PATCH of an initiative
// the caller holds locked.
type Replacement struct {
	Current dbsqlc.Initiative
	Fields  Fields
	Replace bool // PUT: absent optional fields are cleared; else PATCH
}

// Replace writes replacements: the initiative must be writable, an owner
// change must be the actor's to make, the dates in order, and a status
// change a transition the actor may make (its history, the projects
// archived with it and its event follow).
func Replace(ctx context.Context, tx pgx.Tx, actor Actor, items []Replacement) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	var changes []change
	var at []int
	for i, r := range items {
		cur := r.Current
		out[i].Initiative = cur
		if out[i].Err = CheckWritable(Status(cur.Status)); out[i].Err != nil {
			continue
		}
		next := Merge(cur, r.Fields, r.Replace)
		if out[i].Err = CheckOwnerChange(text(cur.OwnerID), text(next.OwnerID), actor); out[i].Err != nil {
			continue
		}
		if out[i].Err = checkDates(next); out[i].Err != nil {
			continue
		}
		if next.Status != cur.Status {
			if out[i].Err = checkTransition(cur, Status(next.Status), actor); out[i].Err != nil {
				continue
			}
		}
		changes, at = append(changes, change{before: cur, after: next}), append(at, i)
	}
	written, err := apply(ctx, tx, actor, changes)
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		out[i].Initiative = written[k]
	}
	return out, nil
}

// StatusChange moves an initiative the caller holds locked to another status.
type StatusChange struct {
	Current dbsqlc.Initiative
	To      Status
	Reason  string
	// Deleting is DELETE: to archived from any state; the route's
	// permission is the only check.
	Deleting bool
}

// ChangeStatus makes status changes: the initiative must be writable and the
// transition one the actor may make; the history, the projects archived
// with it and the initiative.status_changed event follow.
func ChangeStatus(ctx context.Context, tx pgx.Tx, actor Actor, items []StatusChange) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	var changes []change
	var at []int
	for i, s := range items {
		out[i].Initiative = s.Current
		if out[i].Err = CheckWritable(Status(s.Current.Status)); out[i].Err != nil {
			continue
		}
		if !s.Deleting {
			if out[i].Err = checkTransition(s.Current, s.To, actor); out[i].Err != nil {
				continue
			}
		}
		next := s.Current
		next.Status = string(s.To)
		changes, at = append(changes, change{before: s.Current, after: next, reason: s.Reason}), append(at, i)
	}
	written, err := apply(ctx, tx, actor, changes)
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		out[i].Initiative = written[k]
	}
	return out, nil
}

// checkTransition is CheckTransition of an initiative, its refusal naming the states allowed.
func checkTransition(cur dbsqlc.Initiative, to Status, actor Actor) error {
	err := CheckTransition(Status(cur.Status), to, text(cur.OwnerID), actor)
	if te, ok := errors.AsType[*TransitionError](err); ok && !te.Forbidden {
		te.Next = Next(te.From)
	}
	return err
}

// change is one initiative's update: before and after.
type change struct {
	before, after dbsqlc.Initiative
	reason        string
}

// apply writes changes in one statement each for the initiatives, their
// history, the projects archived with them and the events, in item order.
func apply(ctx context.Context, tx pgx.Tx, actor Actor, changes []change) ([]dbsqlc.Initiative, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	upd := dbsqlc.BulkInitiativesUpdateParams{TenantID: actor.TenantID}
	for _, c := range changes {
		n := c.after
		upd.Ids, upd.Names, upd.Descriptions = append(upd.Ids, n.ID), append(upd.Names, n.Name), append(upd.Descriptions, n.Description)
		upd.Statuses, upd.Industries = append(upd.Statuses, n.Status), append(upd.Industries, text(n.Industry))
		upd.Segments, upd.OwnerIds = append(upd.Segments, text(n.Segment)), append(upd.OwnerIds, text(n.OwnerID))
		upd.StartDates, upd.EndDates = append(upd.StartDates, db.DateText(n.ExpectedStartDate)), append(upd.EndDates, db.DateText(n.ExpectedEndDate))
	}
	list, err := db.Q.BulkInitiativesUpdate(ctx, tx, upd)
	if db.IsUniqueViolation(err, "initiatives_tenant_name") {
		return nil, ErrNameTaken
	}
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]dbsqlc.Initiative{}
	for _, in := range list {
		byID[in.ID] = in
	}
	written := make([]dbsqlc.Initiative, len(changes))
	var hist history
	var archived []uuid.UUID
	var events [][]byte
	for k, c := range changes {
		in, was := byID[c.after.ID], c.before
		written[k] = in
		if in.Status != was.Status {
			hist.add(in.ID, HistoryStatus, was.Status, in.Status, "", "", c.reason)
			if ArchivesProjects(Status(in.Status)) {
				archived = append(archived, in.ID)
			}
			data, err := json.Marshal(StatusChangedEvent{InitiativeID: in.ID.String(), FromStatus: Status(was.Status),
				ToStatus: Status(in.Status), Reason: c.reason, Actor: actor.Subject, ChangedAt: wire.Timestamp(in.UpdatedAt), Initiative: ViewOf(in)})
			if err != nil {
				return nil, err
			}
			events = append(events, data)
		}
		if from, to := text(was.OwnerID), text(in.OwnerID); from != to {
			hist.add(in.ID, HistoryOwner, in.Status, in.Status, from, to, OwnerChangeReason(from, to))
		}
	}
	if err := hist.write(ctx, tx, actor); err != nil {
		return nil, err
	}
	if len(archived) > 0 {
		if err := db.Q.BulkInitiativesArchiveProjects(ctx, tx, dbsqlc.BulkInitiativesArchiveProjectsParams{TenantID: actor.TenantID, InitiativeIds: archived}); err != nil {
			return nil, err
		}
	}
	return written, outbox.WriteMany(ctx, tx, actor.TenantID, outbox.InitiativeStatusChanged, events)
}

// history collects status-history entries for one statement.
type history dbsqlc.BulkInitiativesHistoryAddParams

func (h *history) add(id uuid.UUID, kind, fromStatus, toStatus, fromOwner, toOwner, reason string) {
	h.InitiativeIds, h.Kinds = append(h.InitiativeIds, id), append(h.Kinds, kind)
	h.FromStatuses, h.ToStatuses = append(h.FromStatuses, fromStatus), append(h.ToStatuses, toStatus)
	h.FromOwners, h.ToOwners = append(h.FromOwners, fromOwner), append(h.ToOwners, toOwner)
	h.Reasons = append(h.Reasons, reason)
}

func (h *history) write(ctx context.Context, tx dbsqlc.DBTX, actor Actor) error {
	if len(h.Kinds) == 0 {
		return nil
	}
	h.TenantID, h.Actor = actor.TenantID, actor.Subject
	return db.Q.BulkInitiativesHistoryAdd(ctx, tx, dbsqlc.BulkInitiativesHistoryAddParams(*h))
}

// AddProjects adds projects to an initiative the caller holds locked: it
// must be writable and stay within its limit of projects.
func AddProjects(ctx context.Context, tx pgx.Tx, in dbsqlc.Initiative, items []ProjectFields) ([]dbsqlc.Project, error) {
	if err := CheckWritable(Status(in.Status)); err != nil {
		return nil, err
	}
	existing, err := db.Q.ProjectListByInitiative(ctx, tx, dbsqlc.ProjectListByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return nil, err
	}
	out := make([]dbsqlc.Project, len(items))
	for i, f := range items {
		if err := CheckCanAddProject(len(existing) + i); err != nil {
			return nil, err
		}
		if out[i], err = db.Q.ProjectCreate(ctx, tx, dbsqlc.ProjectCreateParams{TenantID: in.TenantID, InitiativeID: in.ID, Name: f.Name, Description: f.Description}); err != nil {
			return nil, fmt.Errorf("create project: %w", err)
		}
	}
	return out, nil
}

// SourcedProject is a project as an integration's record gives it.
type SourcedProject struct {
	ExternalID, Name, Description string
}

// UpsertSourcedProjects writes an integration's projects of an initiative
// (locked; it must exist and be writable) by the source's ids, as active
// projects (archived with their initiative). It returns each item's
// outcome: created, updated or unchanged.
func UpsertSourcedProjects(ctx context.Context, tx pgx.Tx, actor Actor, initiativeID uuid.UUID, items []SourcedProject) ([]string, error) {
	in, err := db.Q.InitiativeGetForUpdate(ctx, tx, dbsqlc.InitiativeGetForUpdateParams{TenantID: actor.TenantID, ID: initiativeID})
	if db.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := CheckWritable(Status(in.Status)); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, nil
	}
	p := dbsqlc.ProjectsUpsertBySourceParams{TenantID: actor.TenantID, Source: &actor.Source, InitiativeID: in.ID}
	for _, it := range items {
		p.ExternalIds, p.Names = append(p.ExternalIds, it.ExternalID), append(p.Names, it.Name)
		p.Descriptions, p.Statuses = append(p.Descriptions, it.Description), append(p.Statuses, ProjectActive)
	}
	rows, err := db.Q.ProjectsUpsertBySource(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Outcome
	}
	return out, nil
}
