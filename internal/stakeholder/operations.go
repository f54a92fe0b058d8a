package stakeholder

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/validation"
)

// The operations on stakeholders and their engagements: batch-first, in the
// caller's transaction, for the single routes (a batch of one) and the bulk
// import (a page). An item that breaks a rule comes back with its typed
// error and writes nothing.

// Errors of an item the handlers map once.
var (
	ErrInitiativeNotFound  = errors.New("no such initiative")
	ErrStakeholderNotFound = errors.New("no such stakeholder")
	ErrEngagementNotFound  = errors.New("no such engagement of this stakeholder")
	ErrEngagementChanged   = errors.New("an engagement is a log entry and is never changed; import it without id to log a new one")
	// ErrEmailTaken: the initiative has a stakeholder with this address (case-insensitively).
	ErrEmailTaken = errors.New("a stakeholder with this e-mail address already exists in this initiative (addresses compare case-insensitively)")
)

// Actor is who writes: the tenant and the subject recorded on engagements.
type Actor struct {
	TenantID uuid.UUID
	Subject  string
}

// Outcome is what an operation did with one stakeholder.
type Outcome struct {
	Stakeholder dbsqlc.Stakeholder // as written
	Err         error              // the item's refusal: nothing of it was written
}

// New is a stakeholder to create in an initiative.
type New struct {
	InitiativeID uuid.UUID
	Body         Body
}

// Create creates stakeholders: each initiative, locked as a child's create
// locks it, must exist and be writable, the fields pass CheckFields, and the
// initiative stays within its limit.
func Create(ctx context.Context, tx pgx.Tx, actor Actor, items []New) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	if len(items) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, 0, len(items))
	for _, it := range items {
		if !slices.Contains(ids, it.InitiativeID) {
			ids = append(ids, it.InitiativeID)
		}
	}
	locked, err := db.Q.BulkInitiativesLocked(ctx, tx, dbsqlc.BulkInitiativesLockedParams{TenantID: actor.TenantID, Ids: ids})
	if err != nil {
		return nil, err
	}
	initiatives := map[uuid.UUID]dbsqlc.BulkInitiativesLockedRow{}
	for _, l := range locked {
		initiatives[l.ID] = l
	}
	ins := dbsqlc.StakeholdersInsertParams{TenantID: actor.TenantID}
	added := map[uuid.UUID]int{}
	var at []int
	for i, it := range items {
		in, ok := initiatives[it.InitiativeID]
		if !ok {
			out[i].Err = ErrInitiativeNotFound
			continue
		}
		if out[i].Err = CheckWritable(initiative.Status(in.Status)); out[i].Err != nil {
			continue
		}
		next, _, err := Merge(dbsqlc.Stakeholder{}, it.Body, true)
		if out[i].Err = err; err != nil {
			continue
		}
		if out[i].Err = CheckCanAdd(int(in.Stakeholders) + added[in.ID]); out[i].Err != nil {
			continue
		}
		added[in.ID]++
		at = append(at, i)
		// Every locked row carries the transaction's time: the new record's created_at.
		atRisk := AtRiskFrom(Influence(next.Influence), nil, in.StampedAt)
		ins.Ids, ins.InitiativeIds = append(ins.Ids, uuid.New()), append(ins.InitiativeIds, in.ID)
		ins.AtRiskFroms = append(ins.AtRiskFroms, db.DateText(atRisk))
		ins.Names, ins.Emails = append(ins.Names, next.Name), append(ins.Emails, next.Email)
		ins.Roles, ins.Departments = append(ins.Roles, text(next.Role)), append(ins.Departments, text(next.Department))
		ins.Influences, ins.Interests = append(ins.Influences, next.Influence), append(ins.Interests, next.Interest)
		ins.Notes = append(ins.Notes, next.Notes)
	}
	if len(at) == 0 {
		return out, nil
	}
	rows, err := db.Q.StakeholdersInsert(ctx, tx, ins)
	if db.IsUniqueViolation(err, "stakeholders_initiative_email") {
		return nil, ErrEmailTaken
	}
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]dbsqlc.Stakeholder{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	for k, i := range at {
		out[i].Stakeholder = byID[ins.Ids[k]]
	}
	return out, nil
}

// Replacement is a replace (PUT, an import row) or a PATCH of a stakeholder
// the caller holds locked with its initiative's status.
type Replacement struct {
	Current          dbsqlc.Stakeholder
	InitiativeStatus initiative.Status
	Body             Body
	Full             bool // PUT: absent role, department and notes are cleared; else PATCH
}

// Replace writes replacements: the initiative must be writable, the
// stakeholder stays in its initiative, and the fields pass CheckFields.
func Replace(ctx context.Context, tx pgx.Tx, actor Actor, items []Replacement) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	upd := dbsqlc.StakeholdersUpdateParams{TenantID: actor.TenantID}
	var at []int
	for i, r := range items {
		cur := r.Current
		out[i].Stakeholder = cur
		if out[i].Err = CheckWritable(r.InitiativeStatus); out[i].Err != nil {
			continue
		}
		if id := r.Body.InitiativeID; id != nil && *id != cur.InitiativeID.String() {
			var errs validation.Errors
			errs.Add("initiative_id", validation.CodeInvalidValue, "a stakeholder belongs to its initiative and cannot move; create it in the other initiative")
			out[i].Err = errs.Err()
			continue
		}
		next, _, err := Merge(cur, r.Body, r.Full)
		if out[i].Err = err; err != nil {
			continue
		}
		at = append(at, i)
		upd.Ids = append(upd.Ids, cur.ID)
		upd.AtRiskFroms = append(upd.AtRiskFroms, db.DateText(AtRiskFrom(Influence(next.Influence), StoredEngagements(cur).Engagements(), cur.CreatedAt)))
		upd.Names, upd.Emails = append(upd.Names, next.Name), append(upd.Emails, next.Email)
		upd.Roles, upd.Departments = append(upd.Roles, text(next.Role)), append(upd.Departments, text(next.Department))
		upd.Influences, upd.Interests = append(upd.Influences, next.Influence), append(upd.Interests, next.Interest)
		upd.Notes = append(upd.Notes, next.Notes)
	}
	if len(at) == 0 {
		return out, nil
	}
	rows, err := db.Q.StakeholdersUpdate(ctx, tx, upd)
	if db.IsUniqueViolation(err, "stakeholders_initiative_email") {
		return nil, ErrEmailTaken
	}
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]dbsqlc.Stakeholder{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	for _, i := range at {
		out[i].Stakeholder = byID[items[i].Current.ID]
	}
	return out, nil
}

// Delete deletes a stakeholder the caller holds locked with its initiative's status.
func Delete(ctx context.Context, tx pgx.Tx, current dbsqlc.Stakeholder, initiativeStatus initiative.Status) error {
	if err := CheckWritable(initiativeStatus); err != nil {
		return err
	}
	return db.Q.StakeholderDelete(ctx, tx, dbsqlc.StakeholderDeleteParams{TenantID: current.TenantID, ID: current.ID})
}

// EngagementEntry is an engagement to log for a stakeholder.
type EngagementEntry struct {
	StakeholderID uuid.UUID
	Engagement    EngagementBody
	// Logged names an engagement already logged (an import's upsert key):
	// unchanged when it says the same, ErrEngagementChanged when not.
	Logged *uuid.UUID
}

// EngagementOutcome is what LogEngagements did with one entry.
type EngagementOutcome struct {
	Logged    EngagementLogged // the engagement and its stakeholder after the batch
	ID        uuid.UUID        // the engagement's
	Unchanged bool             // an engagement already logged, as it was
	Err       error            // the entry's refusal: nothing of it was written
}

// LogEngagements logs engagements: each stakeholder, locked with its
// initiative, must exist in a writable initiative, the engagement pass
// CheckEngagement at now and the stakeholder stay within its limit. Each
// stakeholder's summary and at_risk_from are refreshed and one
// stakeholder.engagement event per engagement carries it and its
// stakeholder after the batch.
func LogEngagements(ctx context.Context, tx pgx.Tx, actor Actor, now time.Time, items []EngagementEntry) ([]EngagementOutcome, error) {
	out := make([]EngagementOutcome, len(items))
	if len(items) == 0 {
		return out, nil
	}
	var stakeholderIDs, loggedIDs []uuid.UUID
	for _, it := range items {
		if !slices.Contains(stakeholderIDs, it.StakeholderID) {
			stakeholderIDs = append(stakeholderIDs, it.StakeholderID)
		}
		if it.Logged != nil {
			loggedIDs = append(loggedIDs, *it.Logged)
		}
	}
	stakeholders, err := lockStakeholders(ctx, tx, actor.TenantID, stakeholderIDs)
	if err != nil {
		return nil, err
	}
	existing := map[uuid.UUID]dbsqlc.StakeholderEngagement{}
	if len(loggedIDs) > 0 {
		list, err := db.Q.BulkEngagementsExisting(ctx, tx, dbsqlc.BulkEngagementsExistingParams{TenantID: actor.TenantID, Ids: loggedIDs})
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			existing[e.ID] = e
		}
	}
	ins := dbsqlc.BulkEngagementsInsertParams{TenantID: actor.TenantID, RecordedBy: actor.Subject}
	added := map[uuid.UUID]int{}
	var at []int
	for i, it := range items {
		s, ok := stakeholders[it.StakeholderID]
		if !ok {
			out[i].Err = ErrStakeholderNotFound
			continue
		}
		if out[i].Err = CheckWritable(initiative.Status(s.InitiativeStatus)); out[i].Err != nil {
			continue
		}
		e := it.Engagement
		if out[i].Err = CheckEngagement(e.EngagementInput, now); out[i].Err != nil {
			continue
		}
		if it.Logged != nil {
			was, ok := existing[*it.Logged]
			switch {
			case !ok || was.StakeholderID != it.StakeholderID:
				out[i].Err = ErrEngagementNotFound
			case was.Type != string(e.Type) || !was.Date.Equal(e.Date) || was.Sentiment != string(e.Sentiment) || was.Notes != e.Notes:
				out[i].Err = ErrEngagementChanged
			default:
				out[i].ID, out[i].Unchanged = was.ID, true
			}
			continue
		}
		if out[i].Err = CheckCanEngage(int(s.Stakeholder.EngagementCount) + added[it.StakeholderID]); out[i].Err != nil {
			continue
		}
		added[it.StakeholderID]++
		out[i].ID = uuid.New()
		at = append(at, i)
		ins.Ids, ins.StakeholderIds = append(ins.Ids, out[i].ID), append(ins.StakeholderIds, it.StakeholderID)
		ins.Types, ins.Dates = append(ins.Types, string(e.Type)), append(ins.Dates, e.Date)
		ins.Sentiments, ins.Notes = append(ins.Sentiments, string(e.Sentiment)), append(ins.Notes, e.Notes)
	}
	if len(at) == 0 {
		return out, nil
	}
	logged, err := db.Q.BulkEngagementsInsert(ctx, tx, ins)
	if err != nil {
		return nil, err
	}
	refreshed, err := db.Q.StakeholdersRefreshEngagementSummary(ctx, tx, dbsqlc.StakeholdersRefreshEngagementSummaryParams{
		TenantID: actor.TenantID, Ids: slices.Collect(maps.Keys(added))})
	if err != nil {
		return nil, err
	}
	risk := dbsqlc.BulkStakeholdersSetAtRiskFromParams{TenantID: actor.TenantID}
	for _, row := range refreshed {
		risk.Ids = append(risk.Ids, row.ID)
		risk.AtRiskFroms = append(risk.AtRiskFroms, db.DateText(AtRiskFrom(Influence(row.Influence), StoredEngagements(row).Engagements(), row.CreatedAt)))
	}
	final, err := db.Q.BulkStakeholdersSetAtRiskFrom(ctx, tx, risk)
	if err != nil {
		return nil, err
	}
	after := map[uuid.UUID]View{}
	for _, row := range final {
		after[row.ID] = ViewOf(row, now)
	}
	byID := map[uuid.UUID]dbsqlc.StakeholderEngagement{}
	for _, e := range logged {
		byID[e.ID] = e
	}
	events := make([][]byte, len(at))
	for k, i := range at { // in item order
		e := byID[out[i].ID]
		out[i].Logged = EngagementLogged{EngagementView: EngagementViewOf(e), Stakeholder: after[e.StakeholderID]}
		if events[k], err = json.Marshal(out[i].Logged); err != nil {
			return nil, err
		}
	}
	return out, outbox.WriteMany(ctx, tx, actor.TenantID, outbox.StakeholderEngagement, events)
}

// lockedStakeholder is a stakeholder locked for logging its engagements, with
// its initiative's status (the initiative locked for share).
type lockedStakeholder struct {
	Stakeholder      dbsqlc.Stakeholder
	InitiativeStatus string
}

// lockStakeholders locks the stakeholders of ids that the tenant has
// (BulkEngagementStakeholdersLocked), by id, and returns them by id. The query
// reads each stakeholder in a LATERAL subquery, whose row sqlc cannot embed,
// so the columns are gathered into a Stakeholder here.
func lockStakeholders(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]lockedStakeholder, error) {
	locked := map[uuid.UUID]lockedStakeholder{}
	list, err := db.Q.BulkEngagementStakeholdersLocked(ctx, tx, dbsqlc.BulkEngagementStakeholdersLockedParams{TenantID: tenantID, Ids: ids})
	if err != nil {
		return nil, err
	}
	for _, l := range list {
		locked[l.ID] = lockedStakeholder{
			Stakeholder: dbsqlc.Stakeholder{
				TenantID: l.TenantID, ID: l.ID, InitiativeID: l.InitiativeID, Name: l.Name, Email: l.Email, Role: l.Role,
				Department: l.Department, Influence: l.Influence, Interest: l.Interest, Notes: l.Notes,
				EngagementCount: l.EngagementCount, LastEngagementOn: l.LastEngagementOn, RecentSentiments: l.RecentSentiments,
				AtRiskFrom: l.AtRiskFrom, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
			},
			InitiativeStatus: l.InitiativeStatus,
		}
	}
	return locked, nil
}
