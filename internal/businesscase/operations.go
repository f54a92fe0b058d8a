package businesscase

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/validation"
)

// The operations on business cases, in the caller's transaction, on a case
// the caller holds locked (FOR UPDATE, at the version If-Match names). They
// return the rules' typed errors (validation.Errors, *BlockedError, the
// Err* values) for the handler to map once.

// ErrInitiativeNotFound is a version's initiative gone from the tenant.
var ErrInitiativeNotFound = errors.New("no such initiative")

// Actor is who writes: the tenant and the subject recorded on the case.
type Actor struct {
	TenantID uuid.UUID
	Subject  string
}

// Freeze keeps what an approved version's documents show with its figures
// (export.Freeze: the export package builds on this one, so it is passed in).
type Freeze func(ctx context.Context, tx dbsqlc.DBTX, row dbsqlc.BusinessCase, snap Snapshot) error

// Create creates a case (version 1 of its lineage) in an initiative of the
// tenant, which must not be archived and stays within its limit.
func Create(ctx context.Context, tx pgx.Tx, actor Actor, body Body) (dbsqlc.BusinessCase, error) {
	def := body.Over(Definition{}, true)
	noInitiative := func() error {
		var errs validation.Errors
		errs.Add("initiative_id", validation.CodeInvalidValue, "names no initiative of the tenant")
		return errs.Err()
	}
	initiativeID, err := uuid.Parse(*body.InitiativeID)
	if err != nil {
		return dbsqlc.BusinessCase{}, noInitiative()
	}
	if err := CheckDefinition(def); err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	in, err := db.Q.InitiativeGetForUpdate(ctx, tx, dbsqlc.InitiativeGetForUpdateParams{TenantID: actor.TenantID, ID: initiativeID})
	if db.IsNotFound(err) {
		return dbsqlc.BusinessCase{}, noInitiative()
	}
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	id := uuid.New()
	return insert(ctx, tx, actor, in, def, id, id, 1, nil)
}

// NewVersion copies a case (approved or not) into a new draft of its
// lineage with the next version number.
func NewVersion(ctx context.Context, tx pgx.Tx, actor Actor, src dbsqlc.BusinessCase) (dbsqlc.BusinessCase, error) {
	in, err := db.Q.InitiativeGetForUpdate(ctx, tx, dbsqlc.InitiativeGetForUpdateParams{TenantID: actor.TenantID, ID: src.InitiativeID})
	if db.IsNotFound(err) {
		return dbsqlc.BusinessCase{}, ErrInitiativeNotFound
	}
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	latest, err := db.Q.BusinessCaseLatestVersion(ctx, tx, dbsqlc.BusinessCaseLatestVersionParams{TenantID: src.TenantID, LineageID: src.LineageID})
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	return insert(ctx, tx, actor, in, DefinitionOf(src), uuid.New(), src.LineageID, latest+1, &src.ID)
}

// insert adds a case to a locked initiative within its limit.
func insert(ctx context.Context, tx pgx.Tx, actor Actor, in dbsqlc.Initiative, def Definition, id, lineage uuid.UUID, version int32, previous *uuid.UUID) (dbsqlc.BusinessCase, error) {
	if err := CheckInitiativeWritable(initiative.Status(in.Status) == initiative.Archived); err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	n, err := db.Q.BusinessCaseCountByInitiative(ctx, tx, dbsqlc.BusinessCaseCountByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	if err := CheckCanAdd(n); err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	content, ask, err := columns(def)
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	return db.Q.BusinessCaseCreate(ctx, tx, dbsqlc.BusinessCaseCreateParams{
		TenantID: in.TenantID, ID: id, InitiativeID: in.ID, LineageID: lineage, Version: version, PreviousVersionID: previous,
		Name: def.Name, Template: string(def.Template), Sections: validation.Names(def.Sections), Content: content, DecisionRequest: ask, CreatedBy: actor.Subject,
	})
}

// columns are the stored forms of the content and the decision request (nil: SQL NULL).
func columns(d Definition) (content, ask []byte, err error) {
	if content, err = json.Marshal(d.Content); err != nil || d.DecisionRequest == nil {
		return content, nil, err
	}
	ask, err = json.Marshal(d.DecisionRequest)
	return content, ask, err
}

// checkEditable refuses a change of an approved case or of a case of an archived initiative.
func checkEditable(ctx context.Context, tx pgx.Tx, row dbsqlc.BusinessCase) error {
	if err := CheckEditable(Status(row.Status)); err != nil {
		return err
	}
	in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: row.TenantID, ID: row.InitiativeID})
	if err != nil {
		return err
	}
	return CheckInitiativeWritable(initiative.Status(in.Status) == initiative.Archived)
}

// Update is PUT (full: name, template and sections required; content
// replaced, absent = none) and PATCH (only what is sent changes) of an
// editable case; a case never moves to another initiative.
func Update(ctx context.Context, tx pgx.Tx, row dbsqlc.BusinessCase, body Body, full bool) (dbsqlc.BusinessCase, error) {
	if err := checkEditable(ctx, tx, row); err != nil {
		return row, err
	}
	if body.InitiativeID != nil && *body.InitiativeID != row.InitiativeID.String() {
		var errs validation.Errors
		errs.Add("initiative_id", validation.CodeInvalidValue, "a business case belongs to its initiative and cannot move")
		return row, errs.Err()
	}
	def := body.Over(DefinitionOf(row), full)
	if err := CheckDefinition(def); err != nil {
		return row, err
	}
	content, ask, err := columns(def)
	if err != nil {
		return row, err
	}
	return db.Q.BusinessCaseUpdate(ctx, tx, dbsqlc.BusinessCaseUpdateParams{
		TenantID: row.TenantID, ID: row.ID, Name: def.Name, Template: string(def.Template), Sections: validation.Names(def.Sections),
		Content: content, DecisionRequest: ask,
	})
}

// Delete deletes an editable case.
func Delete(ctx context.Context, tx pgx.Tx, row dbsqlc.BusinessCase) error {
	if err := checkEditable(ctx, tx, row); err != nil {
		return err
	}
	return db.Q.BusinessCaseDelete(ctx, tx, dbsqlc.BusinessCaseDeleteParams{TenantID: row.TenantID, ID: row.ID})
}

// Submit asks for approval of an editable draft or rejected case; the
// business_case.submitted event (internal) starts the approval workflow.
func Submit(ctx context.Context, tx pgx.Tx, actor Actor, row dbsqlc.BusinessCase) (dbsqlc.BusinessCase, error) {
	if err := checkEditable(ctx, tx, row); err != nil {
		return row, err
	}
	if err := CheckSubmit(Status(row.Status)); err != nil {
		return row, err
	}
	updated, err := db.Q.BusinessCaseSubmit(ctx, tx, dbsqlc.BusinessCaseSubmitParams{TenantID: row.TenantID, ID: row.ID, SubmittedBy: new(actor.Subject)})
	if err != nil {
		return row, err
	}
	_, err = outbox.Write(ctx, tx, row.TenantID, outbox.BusinessCaseSubmitted, ViewOf(updated))
	return updated, err
}

// FiguresNow computes the figures of the case's initiative now and the
// facts an approval depends on.
func FiguresNow(ctx context.Context, tx pgx.Tx, row dbsqlc.BusinessCase) (Snapshot, Facts, error) {
	in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: row.TenantID, ID: row.InitiativeID})
	if err != nil {
		return Snapshot{}, Facts{}, err
	}
	now := time.Now()
	rows, err := initiativevalue.Load(ctx, tx, row.TenantID, row.InitiativeID, now)
	if err != nil {
		return Snapshot{}, Facts{}, err
	}
	return Figures(rows, now, initiative.Status(in.Status) == initiative.Archived)
}

// Approve approves a case pending approval that nothing blocks (Validate
// over its figures now): the figures are frozen on it as its snapshot,
// with what its documents show (freeze), and business_case.approved is emitted.
func Approve(ctx context.Context, tx pgx.Tx, actor Actor, row dbsqlc.BusinessCase, d Decision, freeze Freeze) (dbsqlc.BusinessCase, error) {
	if err := CheckApprove(Status(row.Status), nil); err != nil {
		return row, err
	}
	snap, facts, err := FiguresNow(ctx, tx, row)
	if err != nil {
		return row, err
	}
	if err := CheckApprove(Status(row.Status), Validate(DefinitionOf(row), facts)); err != nil {
		return row, err
	}
	frozen, err := json.Marshal(snap)
	if err != nil {
		return row, err
	}
	updated, err := db.Q.BusinessCaseApprove(ctx, tx, dbsqlc.BusinessCaseApproveParams{
		TenantID: row.TenantID, ID: row.ID, ApprovalLevel: new(string(*d.Level)), Notes: d.Notes, DecidedBy: new(actor.Subject), Snapshot: frozen,
	})
	if err != nil {
		return row, err
	}
	if err := freeze(ctx, tx, updated, snap); err != nil {
		return row, err
	}
	_, err = outbox.Write(ctx, tx, row.TenantID, outbox.BusinessCaseApproved, ViewOf(updated))
	return updated, err
}

// Reject rejects a case pending approval, with why (notes) and
// business_case.rejected.
func Reject(ctx context.Context, tx pgx.Tx, actor Actor, row dbsqlc.BusinessCase, d Decision) (dbsqlc.BusinessCase, error) {
	if err := CheckReject(Status(row.Status)); err != nil {
		return row, err
	}
	var level *string
	if d.Level != nil {
		level = new(string(*d.Level))
	}
	updated, err := db.Q.BusinessCaseReject(ctx, tx, dbsqlc.BusinessCaseRejectParams{
		TenantID: row.TenantID, ID: row.ID, ApprovalLevel: level, Notes: d.Notes, DecidedBy: new(actor.Subject),
	})
	if err != nil {
		return row, err
	}
	_, err = outbox.Write(ctx, tx, row.TenantID, outbox.BusinessCaseRejected, ViewOf(updated))
	return updated, err
}
