package api

// Business cases (issue 11): a packaged value argument built from one
// initiative, its states (draft → pending_approval → approved | rejected),
// versions and the figures frozen at approval. Rules live in
// internal/businesscase; the approval workflow in workflows/businesscase_approval.go.

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/validation"
)

const maxBusinessCasePageSize = 200

// businessCasesRoutes mounts the business cases on the authenticated /v1 group.
func (s *Server) businessCasesRoutes(v1 fiber.Router) {
	v1.Get("/business-cases", s.require(rbac.BusinessCasesRead), s.listBusinessCases)
	v1.Post("/business-cases", s.require(rbac.BusinessCasesWrite), s.createBusinessCase)
	v1.Get("/business-cases/:id", s.require(rbac.BusinessCasesRead), s.getBusinessCase)
	v1.Put("/business-cases/:id", s.require(rbac.BusinessCasesWrite), s.replaceBusinessCase)
	v1.Patch("/business-cases/:id", s.require(rbac.BusinessCasesWrite), s.patchBusinessCase)
	v1.Delete("/business-cases/:id", s.require(rbac.BusinessCasesWrite), s.deleteBusinessCase)
	v1.Post("/business-cases/:id/submit", s.require(rbac.BusinessCasesWrite), s.submitBusinessCase)
	v1.Post("/business-cases/:id/approve", s.require(rbac.BusinessCasesApprove), s.approveBusinessCase)
	v1.Post("/business-cases/:id/reject", s.require(rbac.BusinessCasesApprove), s.rejectBusinessCase)
	v1.Get("/business-cases/:id/validation", s.require(rbac.BusinessCasesRead), s.validateBusinessCase)
	v1.Get("/business-cases/:id/diff", s.require(rbac.BusinessCasesRead), s.businessCaseDiff)
	v1.Get("/business-cases/:id/versions", s.require(rbac.BusinessCasesRead), s.listBusinessCaseVersions)
	v1.Post("/business-cases/:id/versions", s.require(rbac.BusinessCasesWrite), s.createBusinessCaseVersion)
}

// businessCaseJSON is the business case resource.
type businessCaseJSON struct {
	ID                string                 `json:"id"`
	InitiativeID      string                 `json:"initiative_id"`
	Name              string                 `json:"name"`
	Template          string                 `json:"template"`
	Sections          []string               `json:"sections"`
	Content           businesscase.Content   `json:"content"`
	DecisionRequest   *decisionRequestJSON   `json:"decision_request"`
	Status            string                 `json:"status"`
	Version           int32                  `json:"version"`
	PreviousVersionID *string                `json:"previous_version_id"`
	SubmittedAt       *string                `json:"submitted_at"`
	SubmittedBy       *string                `json:"submitted_by"`
	Approval          *businessCaseApproval  `json:"approval"`
	Snapshot          *businesscase.Snapshot `json:"snapshot"`
	ApprovalRound     *businessCaseRoundJSON `json:"approval_round,omitempty"` // single GET only
	CreatedBy         string                 `json:"created_by"`
	CreatedAt         string                 `json:"created_at"`
	UpdatedAt         string                 `json:"updated_at"`
}

// decisionRequestJSON is what the case asks its approvers to decide; the
// amount in the currency's minor units.
type decisionRequestJSON struct {
	Ask            string   `json:"ask"`
	Amount         *float64 `json:"amount"`
	Currency       *string  `json:"currency"`
	DecideBy       *string  `json:"decide_by"`
	Recommendation *string  `json:"recommendation"`
}

func toDecisionRequestJSON(r *businesscase.DecisionRequest) *decisionRequestJSON {
	if r == nil {
		return nil
	}
	out := &decisionRequestJSON{Ask: r.Ask}
	if r.Amount != nil {
		out.Amount, out.Currency = new(money.Amount(*r.Amount, r.Currency)), new(r.Currency)
	}
	if r.DecideBy != nil {
		out.DecideBy = new(r.DecideBy.Format(time.DateOnly))
	}
	if r.Recommendation != "" {
		out.Recommendation = new(r.Recommendation)
	}
	return out
}

// businessCaseApproval is the latest decision on a case.
type businessCaseApproval struct {
	Decision string  `json:"decision"`
	Level    *string `json:"level"`
	Notes    *string `json:"notes"`
	By       string  `json:"by"`
	At       string  `json:"at"`
}

// businessCaseRoundJSON is the latest approval round the workflow keeps.
type businessCaseRoundJSON struct {
	WorkflowID     string  `json:"workflow_id"`
	StartedAt      string  `json:"started_at"`
	RemindersSent  int32   `json:"reminders_sent"`
	LastReminderAt *string `json:"last_reminder_at"`
	EscalatedAt    *string `json:"escalated_at"`
	DecidedAt      *string `json:"decided_at"`
	Decision       *string `json:"decision"`
}

func toBusinessCaseJSON(b dbsqlc.BusinessCase) businessCaseJSON {
	def := storedDefinition(b)
	out := businessCaseJSON{
		ID: b.ID.String(), InitiativeID: b.InitiativeID.String(), Name: b.Name, Template: b.Template,
		Sections: b.Sections, Content: businesscase.Content{}, Status: b.Status, Version: b.Version,
		SubmittedAt: optTimestamp(b.SubmittedAt), SubmittedBy: b.SubmittedBy,
		CreatedBy: b.CreatedBy, CreatedAt: timestamp(b.CreatedAt), UpdatedAt: timestamp(b.UpdatedAt),
	}
	for _, s := range def.Sections { // every listed section, empty until written
		out.Content[s] = def.Content[s]
	}
	out.DecisionRequest = toDecisionRequestJSON(def.DecisionRequest)
	if b.PreviousVersionID != nil {
		out.PreviousVersionID = new(b.PreviousVersionID.String())
	}
	if b.Decision != nil && b.DecidedBy != nil && b.DecidedAt != nil {
		out.Approval = &businessCaseApproval{Decision: *b.Decision, Level: b.ApprovalLevel, Notes: b.DecisionNotes, By: *b.DecidedBy, At: timestamp(*b.DecidedAt)}
	}
	if b.Snapshot != nil {
		if snap, err := businesscase.ReadSnapshot(b.Snapshot); err == nil {
			out.Snapshot = &snap
		}
	}
	return out
}

// storedDefinition is the stored case in the rules' terms.
func storedDefinition(b dbsqlc.BusinessCase) businesscase.Definition {
	d := businesscase.Definition{Name: b.Name, Template: businesscase.Template(b.Template), Content: businesscase.Content{}}
	for _, s := range b.Sections {
		d.Sections = append(d.Sections, businesscase.Section(s))
	}
	_ = json.Unmarshal(b.Content, &d.Content)                                  // written by this file only, always an object
	d.DecisionRequest, _ = businesscase.ReadDecisionRequest(b.DecisionRequest) // likewise
	return d
}

// businessCaseError maps the 409s of internal/businesscase; anything else passes through.
func businessCaseError(err error) error {
	if be, ok := errors.AsType[*businesscase.BlockedError](err); ok {
		return Conflict("%s", be.Error())
	}
	for _, e := range []error{businesscase.ErrLimitReached, businesscase.ErrInitiativeArchived, businesscase.ErrLocked,
		businesscase.ErrAlreadyApproved, businesscase.ErrAlreadyPending, businesscase.ErrNotPending} {
		if errors.Is(err, e) {
			return Conflict("%s", err.Error())
		}
	}
	return err
}

func (s *Server) listBusinessCases(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxBusinessCasePageSize)
	p := dbsqlc.BusinessCaseListParams{TenantID: principal(c).TenantID, PageLimit: int32(size), PageOffset: int32((page - 1) * size)}
	if v, ok := q.str("initiative_id"); ok {
		id, err := uuid.Parse(v)
		if err != nil {
			return InvalidParameter("query parameter initiative_id must be an initiative id")
		}
		p.InitiativeID = &id
	}
	if _, ok := q.str("status"); ok {
		p.Status = new(q.oneOf("status", "", validation.Names(businesscase.Statuses)))
	}
	if err := q.done(); err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	rows, err := db.Q.BusinessCaseList(ctx, t, p)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.BusinessCaseListRow) int64 { return r.Total },
		func(r dbsqlc.BusinessCaseListRow) businessCaseJSON { return toBusinessCaseJSON(r.BusinessCase) },
		func() (int64, error) {
			return db.Q.BusinessCaseCount(ctx, t, dbsqlc.BusinessCaseCountParams{TenantID: p.TenantID, InitiativeID: p.InitiativeID, Status: p.Status})
		})
}

// businessCaseFields are the writable fields of create, PUT and PATCH as sent.
type businessCaseFields struct {
	name, template, initiativeID *string
	sections                     []string
	content                      map[businesscase.Section]*businesscase.Part // nil part: remove (PATCH)
	decisionRequest              *businesscase.DecisionRequest               // with has["decision_request"]: nil removes
	has                          map[string]bool
}

// readBusinessCaseFields reads a case body. full (create, PUT) needs name,
// template and sections; create needs initiative_id too.
func readBusinessCaseFields(c *fiber.Ctx, full, create bool) (businessCaseFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return businessCaseFields{}, err
	}
	f := businessCaseFields{has: map[string]bool{}}
	for _, name := range []string{"name", "template", "sections", "content", "decision_request"} {
		f.has[name] = b.Has(name)
	}
	f.initiativeID = b.Text("initiative_id", create, maxShortTextLen)
	f.name = trimmed(b.Text("name", full || f.has["name"], businesscase.MaxNameLen))
	f.template = b.Enum("template", full || f.has["template"], validation.Names(businesscase.Templates))
	f.sections = b.EnumList("sections", "section", full || f.has["sections"], validation.Names(businesscase.Sections))
	f.content = readContent(b, !full)
	f.decisionRequest = readDecisionRequest(b)
	b.Ignore("id", "status", "version", "previous_version_id", "submitted_at", "submitted_by", "approval", "snapshot",
		"approval_round", "created_by", "created_at", "updated_at")
	if err := b.Done(); err != nil {
		return businessCaseFields{}, err
	}
	return f, nil
}

// readDecisionRequest reads `decision_request`: an object {ask, amount,
// currency, decide_by, recommendation} read with the body's own field
// readers (errors named decision_request.<field>); null or absent: none.
// The rules beyond types and lengths are businesscase.CheckDefinition's.
func readDecisionRequest(b *input.Object) *businesscase.DecisionRequest {
	if !b.Has("decision_request") || b.IsNull("decision_request") {
		return nil
	}
	sub, ok := input.Decode(b.Raw("decision_request"))
	if !ok {
		b.Fail("decision_request", "invalid_type", "must be an object {ask, amount, currency, decide_by, recommendation}")
		return nil
	}
	var r businesscase.DecisionRequest
	if ask := sub.Text("ask", true, businesscase.MaxAskLen); ask != nil {
		r.Ask = *ask
	}
	if sub.Has("amount") && !sub.IsNull("amount") {
		// Read exactly, as a decimal: the amount is money.
		raw := sub.Raw("amount")
		d, err := decimal.NewFromString(string(raw))
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || err != nil {
			sub.Fail("amount", "invalid_type", "must be a number")
		} else {
			r.Amount = &d
		}
	}
	if cur := sub.Text("currency", false, 3); cur != nil {
		r.Currency = *cur
	}
	r.DecideBy = sub.Date("decide_by")
	if rec := sub.Text("recommendation", false, businesscase.MaxRecommendationLen); rec != nil {
		r.Recommendation = *rec
	}
	for _, k := range sub.Unknown() {
		sub.Fail(truncate(k, 100), "unknown_field", "is not a field of a decision request")
	}
	b.Adopt("decision_request.", sub)
	return &r
}

// readContent reads `content`: an object of section → {title, body} (both
// optional strings). In a PATCH a section set to null removes its text.
func readContent(b *input.Object, nullRemoves bool) map[businesscase.Section]*businesscase.Part {
	if !b.Has("content") || b.IsNull("content") {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b.Raw("content"), &raw); err != nil {
		b.Fail("content", validation.CodeInvalidValue, "must be an object of section → {title, body}")
		return nil
	}
	out := map[businesscase.Section]*businesscase.Part{}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		field := "content." + truncate(key, 100)
		if string(raw[key]) == "null" {
			if !nullRemoves {
				b.Fail(field, "invalid_type", "must be an object {title, body}")
				continue
			}
			out[businesscase.Section(key)] = nil
			continue
		}
		var part map[string]json.RawMessage
		if err := json.Unmarshal(raw[key], &part); err != nil {
			b.Fail(field, "invalid_type", "must be an object {title, body}")
			continue
		}
		var p businesscase.Part
		for _, k := range slices.Sorted(maps.Keys(part)) {
			var dst *string
			switch k {
			case "title":
				dst = &p.Title
			case "body":
				dst = &p.Body
			default:
				b.Fail(field+"."+truncate(k, 100), "unknown_field", "a section has title and body only")
				continue
			}
			if string(part[k]) == "null" {
				continue
			}
			if err := json.Unmarshal(part[k], dst); err != nil {
				b.Fail(field+"."+k, "invalid_type", "must be a string")
			}
		}
		out[businesscase.Section(key)] = &p
	}
	return out
}

// definition lays the sent fields over the stored case (create and PUT
// start from nothing). PATCH merges content per section; the text of a
// section no longer listed is dropped.
func (f businessCaseFields) definition(base businesscase.Definition, full bool) businesscase.Definition {
	d := businesscase.Definition{Name: base.Name, Template: base.Template, Sections: base.Sections, Content: businesscase.Content{}}
	if !full {
		maps.Copy(d.Content, base.Content)
	}
	if f.name != nil {
		d.Name = *f.name
	}
	if f.template != nil {
		d.Template = businesscase.Template(*f.template)
	}
	if f.sections != nil {
		d.Sections = nil
		for _, s := range f.sections {
			d.Sections = append(d.Sections, businesscase.Section(s))
		}
	}
	for s := range d.Content { // stored text of sections no longer listed
		if !slices.Contains(d.Sections, s) {
			delete(d.Content, s)
		}
	}
	for s, p := range f.content {
		if p == nil {
			delete(d.Content, s)
		} else {
			d.Content[s] = *p
		}
	}
	d.DecisionRequest = base.DecisionRequest
	if full || f.has["decision_request"] {
		d.DecisionRequest = f.decisionRequest
	}
	return d
}

func sectionNames(d businesscase.Definition) []string { return validation.Names(d.Sections) }

func contentJSON(d businesscase.Definition) ([]byte, error) { return json.Marshal(d.Content) }

// decisionRequestColumn is the stored form (nil: SQL NULL).
func decisionRequestColumn(d businesscase.Definition) ([]byte, error) {
	if d.DecisionRequest == nil {
		return nil, nil
	}
	return json.Marshal(d.DecisionRequest)
}

func (s *Server) createBusinessCase(c *fiber.Ctx) error {
	f, err := readBusinessCaseFields(c, true, true)
	if err != nil {
		return err
	}
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	def := f.definition(businesscase.Definition{}, true)
	initiativeID, err := uuid.Parse(*f.initiativeID)
	if err != nil {
		return Invalid(FieldError{Field: "initiative_id", Code: validation.CodeInvalidValue, Message: "names no initiative of the tenant"})
	}
	if err := businesscase.CheckDefinition(def); err != nil {
		return err
	}
	in, err := db.Q.InitiativeGetForUpdate(c.UserContext(), tx(c), dbsqlc.InitiativeGetForUpdateParams{TenantID: principal(c).TenantID, ID: initiativeID})
	if db.IsNotFound(err) {
		return Invalid(FieldError{Field: "initiative_id", Code: validation.CodeInvalidValue, Message: "names no initiative of the tenant"})
	}
	if err != nil {
		return err
	}
	id := uuid.New()
	row, err := s.insertBusinessCase(c, in, def, id, id, 1, nil)
	if err != nil {
		return err
	}
	body := toBusinessCaseJSON(row)
	c.Location("/v1/business-cases/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// insertBusinessCase adds a case to a locked initiative within its limit.
func (s *Server) insertBusinessCase(c *fiber.Ctx, in dbsqlc.Initiative, def businesscase.Definition, id, lineage uuid.UUID, version int32, previous *uuid.UUID) (dbsqlc.BusinessCase, error) {
	if err := businesscase.CheckInitiativeWritable(initiative.Status(in.Status) == initiative.Archived); err != nil {
		return dbsqlc.BusinessCase{}, businessCaseError(err)
	}
	ctx, t := c.UserContext(), tx(c)
	n, err := db.Q.BusinessCaseCountByInitiative(ctx, t, dbsqlc.BusinessCaseCountByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	if err := businesscase.CheckCanAdd(n); err != nil {
		return dbsqlc.BusinessCase{}, businessCaseError(err)
	}
	content, err := contentJSON(def)
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	ask, err := decisionRequestColumn(def)
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	return db.Q.BusinessCaseCreate(ctx, t, dbsqlc.BusinessCaseCreateParams{
		TenantID: in.TenantID, ID: id, InitiativeID: in.ID, LineageID: lineage, Version: version, PreviousVersionID: previous,
		Name: def.Name, Template: string(def.Template), Sections: sectionNames(def), Content: content, DecisionRequest: ask, CreatedBy: principal(c).Subject,
	})
}

// loadBusinessCase finds the case of the path; forUpdate locks it.
func loadBusinessCase(c *fiber.Ctx, forUpdate bool) (dbsqlc.BusinessCase, error) {
	id, err := pathID(c, "id", "business case")
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	var row dbsqlc.BusinessCase
	if forUpdate {
		row, err = db.Q.BusinessCaseGetForUpdate(c.UserContext(), tx(c), dbsqlc.BusinessCaseGetForUpdateParams{TenantID: principal(c).TenantID, ID: id})
		if err == nil {
			return row, checkIfMatch(c, row.UpdatedAt)
		}
	} else {
		row, err = db.Q.BusinessCaseGet(c.UserContext(), tx(c), dbsqlc.BusinessCaseGetParams{TenantID: principal(c).TenantID, ID: id})
	}
	return row, found("business case", err)
}

func (s *Server) getBusinessCase(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	row, err := loadBusinessCase(c, false)
	if err != nil {
		return err
	}
	body := toBusinessCaseJSON(row)
	round, err := db.Q.BusinessCaseRoundLatest(c.UserContext(), tx(c), dbsqlc.BusinessCaseRoundLatestParams{TenantID: row.TenantID, BusinessCaseID: row.ID})
	switch {
	case err == nil:
		body.ApprovalRound = &businessCaseRoundJSON{WorkflowID: round.WorkflowID, StartedAt: timestamp(round.StartedAt), RemindersSent: round.RemindersSent,
			LastReminderAt: optTimestamp(round.LastReminderAt), EscalatedAt: optTimestamp(round.EscalatedAt), DecidedAt: optTimestamp(round.DecidedAt), Decision: round.Decision}
	case !db.IsNotFound(err):
		return err
	}
	return sendRecord(c, row.UpdatedAt, body)
}

func (s *Server) replaceBusinessCase(c *fiber.Ctx) error { return s.updateBusinessCase(c, true) }
func (s *Server) patchBusinessCase(c *fiber.Ctx) error   { return s.updateBusinessCase(c, false) }

// loadEditableBusinessCase locks the case of the path for a change of its
// own: it must not be approved, and its initiative not archived.
func loadEditableBusinessCase(c *fiber.Ctx) (dbsqlc.BusinessCase, error) {
	if err := parseQuery(c).done(); err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	row, err := loadBusinessCase(c, true)
	if err != nil {
		return row, err
	}
	if err := businesscase.CheckEditable(businesscase.Status(row.Status)); err != nil {
		return row, businessCaseError(err)
	}
	in, err := db.Q.InitiativeGet(c.UserContext(), tx(c), dbsqlc.InitiativeGetParams{TenantID: row.TenantID, ID: row.InitiativeID})
	if err != nil {
		return row, err
	}
	return row, businessCaseError(businesscase.CheckInitiativeWritable(initiative.Status(in.Status) == initiative.Archived))
}

// updateBusinessCase is PUT (name, template and sections required; content
// replaced, absent = none) and PATCH (only what is sent changes).
func (s *Server) updateBusinessCase(c *fiber.Ctx, replace bool) error {
	f, err := readBusinessCaseFields(c, replace, false)
	if err != nil {
		return err
	}
	row, err := loadEditableBusinessCase(c)
	if err != nil {
		return err
	}
	if f.initiativeID != nil && *f.initiativeID != row.InitiativeID.String() {
		return Invalid(FieldError{Field: "initiative_id", Code: validation.CodeInvalidValue, Message: "a business case belongs to its initiative and cannot move"})
	}
	def := f.definition(storedDefinition(row), replace)
	if err := businesscase.CheckDefinition(def); err != nil {
		return err
	}
	content, err := contentJSON(def)
	if err != nil {
		return err
	}
	ask, err := decisionRequestColumn(def)
	if err != nil {
		return err
	}
	updated, err := db.Q.BusinessCaseUpdate(c.UserContext(), tx(c), dbsqlc.BusinessCaseUpdateParams{
		TenantID: row.TenantID, ID: row.ID, Name: def.Name, Template: string(def.Template), Sections: sectionNames(def), Content: content,
		DecisionRequest: ask,
	})
	if err != nil {
		return err
	}
	return sendRecord(c, updated.UpdatedAt, toBusinessCaseJSON(updated))
}

func (s *Server) deleteBusinessCase(c *fiber.Ctx) error {
	row, err := loadEditableBusinessCase(c)
	if err != nil {
		return err
	}
	if err := db.Q.BusinessCaseDelete(c.UserContext(), tx(c), dbsqlc.BusinessCaseDeleteParams{TenantID: row.TenantID, ID: row.ID}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) submitBusinessCase(c *fiber.Ctx) error {
	row, err := loadEditableBusinessCase(c)
	if err != nil {
		return err
	}
	if err := businesscase.CheckSubmit(businesscase.Status(row.Status)); err != nil {
		return businessCaseError(err)
	}
	ctx, t := c.UserContext(), tx(c)
	updated, err := db.Q.BusinessCaseSubmit(ctx, t, dbsqlc.BusinessCaseSubmitParams{TenantID: row.TenantID, ID: row.ID, SubmittedBy: new(principal(c).Subject)})
	if err != nil {
		return err
	}
	body := toBusinessCaseJSON(updated)
	// Internal event (not a webhook type): the relay starts the approval workflow.
	if _, err := outbox.Write(ctx, t, row.TenantID, outbox.BusinessCaseSubmitted, body); err != nil {
		return err
	}
	return c.JSON(body)
}

// businessCaseFigures computes the figures of the case's initiative now and
// the facts an approval depends on.
func businessCaseFigures(c *fiber.Ctx, row dbsqlc.BusinessCase) (businesscase.Snapshot, businesscase.Facts, error) {
	ctx, tx := c.UserContext(), tx(c)
	in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: row.TenantID, ID: row.InitiativeID})
	if err != nil {
		return businesscase.Snapshot{}, businesscase.Facts{}, err
	}
	now := time.Now()
	rows, err := initiativevalue.Load(ctx, tx, row.TenantID, row.InitiativeID, now)
	if err != nil {
		return businesscase.Snapshot{}, businesscase.Facts{}, err
	}
	return businesscase.Figures(rows, now, initiative.Status(in.Status) == initiative.Archived)
}

// readDecision reads an approve or reject body.
func readDecision(c *fiber.Ctx, approving bool) (*businesscase.Level, *string, error) {
	b, err := parseBody(c)
	if err != nil {
		return nil, nil, err
	}
	level := b.Text("approval_level", false, maxShortTextLen)
	notes := b.Text("notes", false, businesscase.MaxNotesLen)
	if err := b.Done(); err != nil {
		return nil, nil, err
	}
	if err := parseQuery(c).done(); err != nil {
		return nil, nil, err
	}
	l, err := businesscase.CheckDecision(level, notes, approving)
	return l, noneIfBlank(notes), err
}

func (s *Server) approveBusinessCase(c *fiber.Ctx) error {
	level, notes, err := readDecision(c, true)
	if err != nil {
		return err
	}
	row, err := loadBusinessCase(c, true)
	if err != nil {
		return err
	}
	if err := businesscase.CheckApprove(businesscase.Status(row.Status), nil); err != nil {
		return businessCaseError(err)
	}
	snap, facts, err := businessCaseFigures(c, row)
	if err != nil {
		return err
	}
	if err := businesscase.CheckApprove(businesscase.Status(row.Status), businesscase.Validate(storedDefinition(row), facts)); err != nil {
		return businessCaseError(err)
	}
	frozen, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	updated, err := db.Q.BusinessCaseApprove(ctx, t, dbsqlc.BusinessCaseApproveParams{
		TenantID: row.TenantID, ID: row.ID, ApprovalLevel: new(string(*level)), Notes: notes, DecidedBy: new(principal(c).Subject), Snapshot: frozen,
	})
	if err != nil {
		return err
	}
	// Everything the version's documents show is frozen with its figures.
	if err := export.Freeze(ctx, t, updated, snap); err != nil {
		return err
	}
	body := toBusinessCaseJSON(updated)
	if _, err := outbox.Write(ctx, t, row.TenantID, outbox.BusinessCaseApproved, body); err != nil {
		return err
	}
	return c.JSON(body)
}

func (s *Server) rejectBusinessCase(c *fiber.Ctx) error {
	level, notes, err := readDecision(c, false)
	if err != nil {
		return err
	}
	row, err := loadBusinessCase(c, true)
	if err != nil {
		return err
	}
	if err := businesscase.CheckReject(businesscase.Status(row.Status)); err != nil {
		return businessCaseError(err)
	}
	var lvl *string
	if level != nil {
		lvl = new(string(*level))
	}
	ctx, t := c.UserContext(), tx(c)
	updated, err := db.Q.BusinessCaseReject(ctx, t, dbsqlc.BusinessCaseRejectParams{
		TenantID: row.TenantID, ID: row.ID, ApprovalLevel: lvl, Notes: notes, DecidedBy: new(principal(c).Subject),
	})
	if err != nil {
		return err
	}
	body := toBusinessCaseJSON(updated)
	if _, err := outbox.Write(ctx, t, row.TenantID, outbox.BusinessCaseRejected, body); err != nil {
		return err
	}
	return c.JSON(body)
}

// businessCaseValidationJSON is what blocks approving a case.
type businessCaseValidationJSON struct {
	BusinessCaseID string                 `json:"business_case_id"`
	Status         string                 `json:"status"`
	CanApprove     bool                   `json:"can_approve"`
	Problems       []businesscase.Problem `json:"problems"`
}

func (s *Server) validateBusinessCase(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	row, err := loadBusinessCase(c, false)
	if err != nil {
		return err
	}
	_, facts, err := businessCaseFigures(c, row)
	if err != nil {
		return err
	}
	problems := businesscase.Validate(storedDefinition(row), facts)
	return c.JSON(businessCaseValidationJSON{
		BusinessCaseID: row.ID.String(), Status: row.Status, Problems: problems,
		CanApprove: businesscase.CheckApprove(businesscase.Status(row.Status), problems) == nil,
	})
}

func (s *Server) listBusinessCaseVersions(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	row, err := loadBusinessCase(c, false)
	if err != nil {
		return err
	}
	rows, err := db.Q.BusinessCaseVersions(c.UserContext(), tx(c), dbsqlc.BusinessCaseVersionsParams{TenantID: row.TenantID, LineageID: row.LineageID})
	if err != nil {
		return err
	}
	out := struct {
		Data []businessCaseJSON `json:"data"`
	}{Data: make([]businessCaseJSON, len(rows))}
	for i, r := range rows {
		out.Data[i] = toBusinessCaseJSON(r)
	}
	return c.JSON(out)
}

// createBusinessCaseVersion copies a case (approved or not) into a new
// draft of its lineage with the next version number.
func (s *Server) createBusinessCaseVersion(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	src, err := loadBusinessCase(c, false)
	if err != nil {
		return err
	}
	in, err := lockInitiative(c, src.InitiativeID)
	if err != nil {
		return err
	}
	latest, err := db.Q.BusinessCaseLatestVersion(c.UserContext(), tx(c), dbsqlc.BusinessCaseLatestVersionParams{TenantID: src.TenantID, LineageID: src.LineageID})
	if err != nil {
		return err
	}
	row, err := s.insertBusinessCase(c, in, storedDefinition(src), uuid.New(), src.LineageID, latest+1, &src.ID)
	if err != nil {
		return err
	}
	body := toBusinessCaseJSON(row)
	c.Location("/v1/business-cases/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}
