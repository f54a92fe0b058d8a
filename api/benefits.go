package api

// Benefits (issue 9): the value an initiative is expected to deliver, the
// actuals recorded against it and their variance. Rules live in
// internal/benefit; what a period expects is finance.Benefit.ExpectedFor.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/valuation"
)

const maxBenefitPageSize = 500

var (
	benefitSorts      = []string{"created_at", "updated_at", "name", "expected_value", "expected_start_date"}
	currencyFilterRE  = regexp.MustCompile(`^[A-Z]{3}$`)
	benefitCategories = validation.Names(benefit.Categories)
	benefitStatuses   = validation.Names(benefit.Statuses)
)

// benefitsRoutes mounts the benefits group on the authenticated /v1 group.
func (s *Server) benefitsRoutes(v1 fiber.Router) {
	v1.Get("/benefits", s.require(rbac.BenefitsRead), s.listBenefits)
	v1.Post("/benefits", s.require(rbac.BenefitsWrite), s.createBenefit)
	v1.Get("/benefits/:id", s.require(rbac.BenefitsRead), s.getBenefit)
	v1.Put("/benefits/:id", s.require(rbac.BenefitsWrite), s.replaceBenefit)
	v1.Patch("/benefits/:id", s.require(rbac.BenefitsWrite), s.patchBenefit)
	v1.Delete("/benefits/:id", s.require(rbac.BenefitsWrite), s.deleteBenefit)
	v1.Post("/benefits/:id/actuals", s.require(rbac.BenefitsWrite), s.recordActual)
	v1.Get("/benefits/:id/actuals", s.require(rbac.BenefitsRead), s.listActuals)
	v1.Get("/benefits/:id/variance", s.require(rbac.BenefitsRead), s.benefitVariance)
}

// --- resources ---

// benefitJSON is the benefit resource.
type benefitJSON struct {
	ID                   string          `json:"id"`
	InitiativeID         string          `json:"initiative_id"`
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Category             string          `json:"category"`
	ExpectedValue        float64         `json:"expected_value"`
	Currency             *string         `json:"currency"`
	Unit                 string          `json:"unit"`
	MeasurementFrequency string          `json:"measurement_frequency"`
	ExpectedStartDate    string          `json:"expected_start_date"`
	ExpectedEndDate      *string         `json:"expected_end_date"`
	Status               string          `json:"status"`
	OwnerID              string          `json:"owner_id"`
	ExternalKey          *string         `json:"external_key"` // the tenant's own key of the benefit (issue 12: feeds name benefits by it)
	Plan                 []planEntryJSON `json:"plan"`         // null: the even spread
	CreatedAt            string          `json:"created_at"`
	UpdatedAt            string          `json:"updated_at"`
}

type planEntryJSON struct {
	Period   string  `json:"period"`
	Expected float64 `json:"expected"`
}

func toBenefitJSON(b dbsqlc.Benefit, plan []dbsqlc.BenefitPlanEntry) benefitJSON {
	out := benefitJSON{
		ID: b.ID.String(), InitiativeID: b.InitiativeID.String(), Name: b.Name, Description: b.Description,
		Category: b.Category, ExpectedValue: money.Stored(b.ExpectedValue), Currency: b.Currency, Unit: b.Unit,
		MeasurementFrequency: b.MeasurementFrequency, ExpectedStartDate: b.ExpectedStartDate.Format(time.DateOnly),
		ExpectedEndDate: optDate(b.ExpectedEndDate), Status: b.Status, OwnerID: b.OwnerID, ExternalKey: b.ExternalKey,
		CreatedAt: timestamp(b.CreatedAt), UpdatedAt: timestamp(b.UpdatedAt),
	}
	for _, e := range plan {
		out.Plan = append(out.Plan, planEntryJSON{Period: finance.MonthOfTime(e.Period).String(), Expected: money.Stored(e.Expected)})
	}
	return out
}

// actualJSON is an actual with its revision history (oldest first).
type actualJSON struct {
	ID          string         `json:"id"`
	BenefitID   string         `json:"benefit_id"`
	Period      string         `json:"period"`
	Value       float64        `json:"value"`
	Notes       string         `json:"notes"`
	EvidenceURL *string        `json:"evidence_url"`
	RecordedBy  string         `json:"recorded_by"`
	Source      *string        `json:"source"` // integration/<id> when an integration's sync wrote the current value
	CreatedAt   string         `json:"created_at"`
	UpdatedAt   string         `json:"updated_at"`
	Revisions   []revisionJSON `json:"revisions"`
}

// revisionJSON is one correction: what the actual held before, who changed it and when.
type revisionJSON struct {
	OldValue       float64 `json:"old_value"`
	NewValue       float64 `json:"new_value"`
	OldNotes       string  `json:"old_notes"`
	OldEvidenceURL *string `json:"old_evidence_url"`
	ChangedBy      string  `json:"changed_by"`
	ChangedAt      string  `json:"changed_at"`
}

func toActualJSON(a dbsqlc.BenefitActual, revisions []dbsqlc.BenefitActualRevision) actualJSON {
	out := actualJSON{
		ID: a.ID.String(), BenefitID: a.BenefitID.String(), Period: finance.MonthOfTime(a.Period).String(), Value: money.Stored(a.Value),
		Notes: a.Notes, EvidenceURL: a.EvidenceUrl, RecordedBy: a.RecordedBy, Source: a.Source,
		CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt), Revisions: []revisionJSON{},
	}
	for _, r := range revisions {
		out.Revisions = append(out.Revisions, revisionJSON{OldValue: money.Stored(r.OldValue), NewValue: money.Stored(r.NewValue), OldNotes: r.OldNotes,
			OldEvidenceURL: r.OldEvidenceUrl, ChangedBy: r.ChangedBy, ChangedAt: timestamp(r.ChangedAt)})
	}
	return out
}

// ActualRecordedEvent is the data of a benefit.actual_recorded event.
type ActualRecordedEvent struct {
	Benefit struct {
		ID                   string  `json:"id"`
		Name                 string  `json:"name"`
		Unit                 string  `json:"unit"`
		Currency             *string `json:"currency"`
		MeasurementFrequency string  `json:"measurement_frequency"`
	} `json:"benefit"`
	Initiative struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"initiative"`
	ActualID      string   `json:"actual_id"`
	Period        string   `json:"period"`
	Value         float64  `json:"value"`
	PreviousValue *float64 `json:"previous_value"` // null unless this corrects an earlier value
	Corrected     bool     `json:"corrected"`
	Notes         string   `json:"notes"`
	EvidenceURL   *string  `json:"evidence_url"`
	RecordedBy    string   `json:"recorded_by"`
	RecordedAt    string   `json:"recorded_at"`
}

// --- reading bodies ---

// benefitFields are the writable fields of create, PUT and PATCH as sent.
type benefitFields struct {
	initiativeID, name, description, category, currency, unit, frequency, status, ownerID *string
	externalKey                                                                           *string
	expectedValue                                                                         *float64
	start, end                                                                            *time.Time
	plan                                                                                  []benefit.PlanEntry
	has                                                                                   map[string]bool
}

var writableBenefitFields = []string{"name", "description", "category", "expected_value", "currency", "unit",
	"measurement_frequency", "expected_start_date", "expected_end_date", "status", "owner_id", "plan", "external_key"}

// readBenefitFields reads a benefit body. full (create, PUT) needs name,
// category, expected_value, unit, measurement_frequency and
// expected_start_date; create also needs initiative_id.
func readBenefitFields(c *fiber.Ctx, full, create bool) (benefitFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return benefitFields{}, err
	}
	f := readBenefit(b, full, create)
	if err := b.Done(); err != nil {
		return benefitFields{}, err
	}
	return f, nil
}

// readBenefit reads the fields of a benefit body (the route's or a bulk
// import row's); failures stay in b.errs until b.done.
func readBenefit(b *input.Object, full, create bool) benefitFields {
	f := benefitFields{has: map[string]bool{}}
	for _, name := range writableBenefitFields {
		f.has[name] = b.Has(name)
	}
	need := func(field string) bool { return full || f.has[field] }
	f.initiativeID = b.Text("initiative_id", create, maxShortTextLen)
	f.name = trimmed(b.Text("name", need("name"), maxNameLen))
	f.description = b.Text("description", false, maxDescriptionLen)
	f.category = b.Text("category", need("category"), maxShortTextLen)
	f.expectedValue = b.Number("expected_value", need("expected_value"))
	f.currency = b.Text("currency", false, maxShortTextLen)
	f.unit = b.Text("unit", need("unit"), maxShortTextLen)
	f.frequency = b.Text("measurement_frequency", need("measurement_frequency"), maxShortTextLen)
	f.start = b.Date("expected_start_date")
	if need("expected_start_date") && f.start == nil && (!b.Has("expected_start_date") || b.IsNull("expected_start_date")) {
		b.Fail("expected_start_date", "required", "is required")
	}
	f.end = b.Date("expected_end_date")
	f.status = b.Text("status", !full && f.has["status"], maxShortTextLen) // null in a full body: kept (PUT) or active (create)
	f.ownerID = noneIfBlank(b.Text("owner_id", false, maxOwnerLen))
	f.plan = readPlan(b)
	f.externalKey = trimmed(b.Text("external_key", false, maxExternalKeyLen))
	if f.externalKey != nil && *f.externalKey == "" {
		f.externalKey = nil
	}
	b.Ignore("id", "created_at", "updated_at")
	return f
}

// readPlan reads `plan`: null or absent is no plan, else an array of
// {period, expected} objects.
func readPlan(b *input.Object) []benefit.PlanEntry {
	if !b.Has("plan") || b.IsNull("plan") {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.Raw("plan"), &raw); err != nil {
		b.Fail("plan", "invalid_type", "must be an array of {period, expected} objects")
		return nil
	}
	out := make([]benefit.PlanEntry, 0, len(raw))
	for i, r := range raw {
		entry, ok := input.Decode(r)
		if !ok {
			b.Fail(fmt.Sprintf("plan[%d]", i), "invalid_type", "must be an object {period, expected}")
			continue
		}
		period := entry.Text("period", true, maxShortTextLen)
		expected := entry.Number("expected", true)
		_ = entry.Done()
		b.Adopt(fmt.Sprintf("plan[%d].", i), entry)
		if period != nil && expected != nil {
			out = append(out, benefit.PlanEntry{Period: *period, Expected: *expected})
		}
	}
	return out
}

// definition lays the sent fields over a base: the stored benefit for PATCH,
// nothing for create and PUT (which keep only the stored status and owner).
func (f benefitFields) definition(base dbsqlc.Benefit, basePlan []dbsqlc.BenefitPlanEntry, full bool) benefit.Definition {
	d := benefit.Definition{
		Category: benefit.Category(base.Category), Frequency: benefit.Frequency(base.MeasurementFrequency),
		Unit: benefit.Unit(base.Unit), Status: benefit.Status(base.Status), Currency: deref(base.Currency),
		ExpectedValue: money.Stored(base.ExpectedValue), Start: base.ExpectedStartDate, End: base.ExpectedEndDate,
	}
	for _, e := range basePlan {
		d.Plan = append(d.Plan, benefit.PlanEntry{Period: finance.MonthOfTime(e.Period).String(), Expected: money.Stored(e.Expected)})
	}
	if full {
		d.Currency, d.End, d.Plan = "", nil, nil
	}
	if d.Status == "" {
		d.Status = benefit.Active
	}
	set := func(p *string, dst *string) {
		if p != nil {
			*dst = *p
		}
	}
	set(f.category, (*string)(&d.Category))
	set(f.frequency, (*string)(&d.Frequency))
	set(f.unit, (*string)(&d.Unit))
	set(f.status, (*string)(&d.Status))
	if f.has["currency"] {
		d.Currency = deref(f.currency)
	}
	if f.expectedValue != nil {
		d.ExpectedValue = *f.expectedValue
	}
	if f.start != nil {
		d.Start = *f.start
	}
	if full || f.has["expected_end_date"] {
		d.End = f.end
	}
	if full || f.has["plan"] {
		d.Plan = f.plan
	}
	return d
}

// --- loading ---

// benefitError maps the 409s of internal/benefit; anything else passes through.
func benefitError(err error) error {
	if errors.Is(err, benefit.ErrLimitReached) || errors.Is(err, benefit.ErrInitiativeArchived) ||
		errors.Is(err, benefit.ErrBasisLocked) || errors.Is(err, benefit.ErrTooManyRevisions) {
		return Conflict("%s", err.Error())
	}
	return err
}

// loadBenefit finds a benefit of the tenant for reading.
func loadBenefit(c *fiber.Ctx) (dbsqlc.Benefit, error) {
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return dbsqlc.Benefit{}, err
	}
	b, err := db.Q.BenefitGet(c.UserContext(), tx(c), dbsqlc.BenefitGetParams{TenantID: principal(c).TenantID, ID: id})
	return b, found("benefit", err)
}

// loadWritableBenefit finds a benefit for a write: locked with its
// initiative, which must not be archived.
func loadWritableBenefit(c *fiber.Ctx) (dbsqlc.BenefitGetLockedRow, error) {
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return dbsqlc.BenefitGetLockedRow{}, err
	}
	row, err := db.Q.BenefitGetLocked(c.UserContext(), tx(c), dbsqlc.BenefitGetLockedParams{TenantID: principal(c).TenantID, ID: id})
	if err := found("benefit", err); err != nil {
		return row, err
	}
	if err := checkIfMatch(c, row.Benefit.UpdatedAt); err != nil {
		return row, err
	}
	return row, benefitError(benefit.CheckWritable(initiative.Status(row.InitiativeStatus)))
}

func loadPlans(c *fiber.Ctx, ids ...uuid.UUID) (map[uuid.UUID][]dbsqlc.BenefitPlanEntry, error) {
	rows, err := db.Q.BenefitPlanList(c.UserContext(), tx(c), dbsqlc.BenefitPlanListParams{TenantID: principal(c).TenantID, BenefitIds: ids})
	out := map[uuid.UUID][]dbsqlc.BenefitPlanEntry{}
	for _, r := range rows {
		out[r.BenefitID] = append(out[r.BenefitID], r)
	}
	return out, err
}

// savePlan replaces the stored plan with the checked one (none: the spread).
func savePlan(c *fiber.Ctx, b dbsqlc.Benefit, plan []benefit.PlannedPeriod) ([]dbsqlc.BenefitPlanEntry, error) {
	p := dbsqlc.BenefitPlanReplaceParams{TenantID: b.TenantID, BenefitID: b.ID, Periods: []time.Time{}, Expected: []decimal.Decimal{}}
	out := []dbsqlc.BenefitPlanEntry{}
	for _, e := range plan {
		p.Periods = append(p.Periods, e.Period.FirstDay())
		p.Expected = append(p.Expected, money.FromInput(e.Expected))
		out = append(out, dbsqlc.BenefitPlanEntry{TenantID: b.TenantID, BenefitID: b.ID, Period: e.Period.FirstDay(), Expected: money.FromInput(e.Expected)})
	}
	return out, db.Q.BenefitPlanReplace(c.UserContext(), tx(c), p)
}

// --- benefits ---

func (s *Server) listBenefits(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxBenefitPageSize)
	sort := q.oneOf("sort", "created_at", benefitSorts)
	order := q.oneOf("order", "desc", []string{"asc", "desc"})
	p := dbsqlc.BenefitListParams{TenantID: principal(c).TenantID, Sort: sort, SortDesc: order == "desc",
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)}
	if v, ok := q.str("initiative_id"); ok {
		id, err := uuid.Parse(v)
		if err != nil {
			return InvalidParameter("query parameter initiative_id must be an initiative id")
		}
		p.InitiativeID = &id
	}
	if _, ok := q.str("category"); ok {
		p.Category = new(q.oneOf("category", "", benefitCategories))
	}
	if _, ok := q.str("status"); ok {
		p.Status = new(q.oneOf("status", "", benefitStatuses))
	}
	if v, ok := q.str("owner_id"); ok {
		if n := utf8.RuneCountInString(v); n == 0 || n > maxOwnerLen {
			return InvalidParameter("query parameter owner_id must be 1 to %d characters", maxOwnerLen)
		}
		p.OwnerID = &v
	}
	if v, ok := q.str("currency"); ok {
		if !currencyFilterRE.MatchString(v) {
			return InvalidParameter("query parameter currency must be a currency code such as EUR")
		}
		p.Currency = &v
	}
	if err := q.done(); err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	rows, err := db.Q.BenefitList(ctx, t, p)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.Benefit.ID
	}
	plans, err := loadPlans(c, ids...)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.BenefitListRow) int64 { return r.Total },
		func(r dbsqlc.BenefitListRow) benefitJSON { return toBenefitJSON(r.Benefit, plans[r.Benefit.ID]) },
		func() (int64, error) {
			return db.Q.BenefitCount(ctx, t, dbsqlc.BenefitCountParams{TenantID: p.TenantID, InitiativeID: p.InitiativeID,
				Category: p.Category, OwnerID: p.OwnerID, Currency: p.Currency, Status: p.Status})
		})
}

func (s *Server) getBenefit(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	b, err := loadBenefit(c)
	if err != nil {
		return err
	}
	plans, err := loadPlans(c, b.ID)
	if err != nil {
		return err
	}
	return sendRecord(c, b.UpdatedAt, toBenefitJSON(b, plans[b.ID]))
}

func (s *Server) createBenefit(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readBenefitFields(c, true, true)
	if err != nil {
		return err
	}
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	initiativeID, err := uuid.Parse(*f.initiativeID)
	if err != nil {
		return NotFound("initiative")
	}
	in, err := lockInitiative(c, initiativeID)
	if err != nil {
		return err
	}
	if err := benefitError(benefit.CheckWritable(initiative.Status(in.Status))); err != nil {
		return err
	}
	def := f.definition(dbsqlc.Benefit{}, nil, true)
	plan, err := benefit.CheckDefinition(def)
	if err != nil {
		return err
	}
	n, err := db.Q.BenefitCountByInitiative(ctx, t, dbsqlc.BenefitCountByInitiativeParams{TenantID: p.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	if err := benefitError(benefit.CheckCanAdd(int(n))); err != nil {
		return err
	}
	owner := p.Subject // the creator owns what they create unless told otherwise
	if f.ownerID != nil {
		owner = *f.ownerID
	}
	row, err := db.Q.BenefitCreate(ctx, t, dbsqlc.BenefitCreateParams{
		TenantID: p.TenantID, InitiativeID: in.ID, Name: *f.name, Description: deref(f.description),
		Category: string(def.Category), ExpectedValue: money.FromInput(def.ExpectedValue), Currency: noneIfBlank(&def.Currency),
		Unit: string(def.Unit), MeasurementFrequency: string(def.Frequency), ExpectedStartDate: def.Start,
		ExpectedEndDate: def.End, Status: string(def.Status), OwnerID: owner, ExternalKey: f.externalKey,
	})
	if db.IsUniqueViolation(err, "benefits_initiative_name") {
		return AlreadyExists("the initiative already has a benefit of this name")
	}
	if db.IsUniqueViolation(err, "benefits_tenant_external_key") {
		return AlreadyExists("another benefit has this external_key")
	}
	if err != nil {
		return err
	}
	stored, err := savePlan(c, row, plan)
	if err != nil {
		return err
	}
	body := toBenefitJSON(row, stored)
	c.Location("/v1/benefits/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

func (s *Server) replaceBenefit(c *fiber.Ctx) error { return s.updateBenefit(c, true) }
func (s *Server) patchBenefit(c *fiber.Ctx) error   { return s.updateBenefit(c, false) }

// updateBenefit is PUT (replace: description, currency, end date and plan
// cleared unless sent; status and owner kept unless sent) and PATCH (only the
// fields sent change; null clears the optional ones).
func (s *Server) updateBenefit(c *fiber.Ctx, replace bool) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readBenefitFields(c, replace, false)
	if err != nil {
		return err
	}
	locked, err := loadWritableBenefit(c)
	if err != nil {
		return err
	}
	stored := locked.Benefit
	if f.initiativeID != nil && *f.initiativeID != stored.InitiativeID.String() {
		return Invalid(FieldError{Field: "initiative_id", Code: "invalid_value", Message: "a benefit belongs to its initiative and cannot move"})
	}
	ctx, t := c.UserContext(), tx(c)
	plans, err := loadPlans(c, stored.ID)
	if err != nil {
		return err
	}
	def := f.definition(stored, plans[stored.ID], replace)
	plan, err := benefit.CheckDefinition(def)
	if err != nil {
		return err
	}
	var firstActual *finance.Month
	if first, err := db.Q.ActualFirstPeriod(ctx, t, dbsqlc.ActualFirstPeriodParams{TenantID: stored.TenantID, BenefitID: stored.ID}); err == nil {
		firstActual = new(finance.MonthOfTime(first))
	} else if !db.IsNotFound(err) {
		return err
	}
	was := benefit.Basis{Unit: benefit.Unit(stored.Unit), Currency: deref(stored.Currency), Frequency: benefit.Frequency(stored.MeasurementFrequency), Start: stored.ExpectedStartDate}
	next := benefit.Basis{Unit: def.Unit, Currency: def.Currency, Frequency: def.Frequency, Start: def.Start}
	if err := benefitError(benefit.CheckRedefinition(was, next, firstActual)); err != nil {
		return err
	}
	name, description, owner := stored.Name, stored.Description, stored.OwnerID
	if f.name != nil {
		name = *f.name
	}
	if replace || f.has["description"] {
		description = deref(f.description)
	}
	if f.ownerID != nil {
		owner = *f.ownerID
	}
	externalKey := stored.ExternalKey
	if replace || f.has["external_key"] {
		externalKey = f.externalKey
	}
	row, err := db.Q.BenefitUpdate(ctx, t, dbsqlc.BenefitUpdateParams{
		TenantID: stored.TenantID, ID: stored.ID, Name: name, Description: description,
		Category: string(def.Category), ExpectedValue: money.FromInput(def.ExpectedValue), Currency: noneIfBlank(&def.Currency),
		Unit: string(def.Unit), MeasurementFrequency: string(def.Frequency), ExpectedStartDate: def.Start,
		ExpectedEndDate: def.End, Status: string(def.Status), OwnerID: owner, ExternalKey: externalKey,
	})
	if db.IsUniqueViolation(err, "benefits_initiative_name") {
		return AlreadyExists("the initiative already has a benefit of this name")
	}
	if db.IsUniqueViolation(err, "benefits_tenant_external_key") {
		return AlreadyExists("another benefit has this external_key")
	}
	if err != nil {
		return err
	}
	current := plans[stored.ID]
	if replace || f.has["plan"] {
		if current, err = savePlan(c, row, plan); err != nil {
			return err
		}
	}
	return sendRecord(c, row.UpdatedAt, toBenefitJSON(row, current))
}

func (s *Server) deleteBenefit(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	locked, err := loadWritableBenefit(c)
	if err != nil {
		return err
	}
	if err := db.Q.BenefitDelete(c.UserContext(), tx(c), dbsqlc.BenefitDeleteParams{TenantID: locked.Benefit.TenantID, ID: locked.Benefit.ID}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// --- actuals ---

// recordActual files a value for a period: 201 with the new actual, or 200
// when the period already had one (a correction, kept in `revisions`, or the
// very same filing again, which changes nothing).
func (s *Server) recordActual(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	in := readActual(b)
	if err := b.Done(); err != nil {
		return err
	}
	locked, err := loadWritableBenefit(c)
	if err != nil {
		return err
	}
	bf := locked.Benefit
	filed, next, err := in.check(bf, time.Now())
	if err != nil {
		return err
	}

	ctx, p, t := c.UserContext(), principal(c), tx(c)
	var previous *benefit.Filed
	existing, err := db.Q.ActualGetForUpdate(ctx, t, dbsqlc.ActualGetForUpdateParams{TenantID: bf.TenantID, BenefitID: bf.ID, Period: filed.FirstDay()})
	switch {
	case err == nil:
		previous = &benefit.Filed{Value: money.Stored(existing.Value), Notes: existing.Notes, EvidenceURL: existing.EvidenceUrl}
	case !db.IsNotFound(err):
		return err
	}
	var actual dbsqlc.BenefitActual
	status := fiber.StatusOK
	filing := benefit.ClassifyFiling(previous, next)
	switch filing {
	case benefit.SameValue:
		actual = existing
	case benefit.FirstValue:
		actual, err = db.Q.ActualCreate(ctx, t, dbsqlc.ActualCreateParams{TenantID: bf.TenantID, BenefitID: bf.ID,
			Period: filed.FirstDay(), Value: money.FromInput(next.Value), Notes: next.Notes, EvidenceUrl: next.EvidenceURL, RecordedBy: p.Subject})
		if err != nil {
			return err
		}
		status = fiber.StatusCreated
	case benefit.Correction:
		n, err := db.Q.ActualRevisionCount(ctx, t, dbsqlc.ActualRevisionCountParams{TenantID: bf.TenantID, ActualID: existing.ID})
		if err != nil {
			return err
		}
		if err := benefitError(benefit.CheckCanCorrect(int(n))); err != nil {
			return err
		}
		if err := db.Q.ActualRevisionAdd(ctx, t, dbsqlc.ActualRevisionAddParams{TenantID: bf.TenantID, ActualID: existing.ID,
			OldValue: existing.Value, NewValue: money.FromInput(next.Value), OldNotes: existing.Notes, OldEvidenceUrl: existing.EvidenceUrl, ChangedBy: p.Subject}); err != nil {
			return err
		}
		if actual, err = db.Q.ActualCorrect(ctx, t, dbsqlc.ActualCorrectParams{TenantID: bf.TenantID, ID: existing.ID,
			Value: money.FromInput(next.Value), Notes: next.Notes, EvidenceUrl: next.EvidenceURL, RecordedBy: p.Subject}); err != nil {
			return err
		}
	}
	if filing != benefit.SameValue {
		if _, err := outbox.Write(ctx, t, bf.TenantID, outbox.BenefitActualRecorded, actualRecorded(locked, actual, previous)); err != nil {
			return err
		}
	}
	revisions, err := db.Q.ActualRevisionList(ctx, t, dbsqlc.ActualRevisionListParams{TenantID: bf.TenantID, ActualIds: []uuid.UUID{actual.ID}})
	if err != nil {
		return err
	}
	return c.Status(status).JSON(toActualJSON(actual, revisions))
}

// actualInput is an actual as sent: the body of POST /v1/benefits/{id}/actuals
// and a row of an actuals import (which adds benefit_id).
type actualInput struct {
	value           *float64
	period          *string
	notes, evidence *string
}

// readActual reads the fields of an actual; b.done() reports what failed.
func readActual(b *input.Object) actualInput {
	return actualInput{
		value:    b.Number("value", true),
		period:   b.Text("period", true, maxShortTextLen),
		notes:    b.Text("notes", false, maxDescriptionLen),
		evidence: b.Text("evidence_url", false, benefit.MaxEvidenceURLLen+1), // the domain reports too_long
	}
}

// check applies the rules of an actual of benefit bf (read without errors):
// the period it is filed under and what it files, or the 422's field errors.
func (in actualInput) check(bf dbsqlc.Benefit, now time.Time) (finance.Month, benefit.Filed, error) {
	var errs validation.Errors
	errs.Append(benefit.CheckValue("value", *in.value))
	filed, perr := benefit.CheckActualPeriod(benefit.Frequency(bf.MeasurementFrequency), *in.period, bf.ExpectedStartDate, now)
	errs.Append(perr)
	if in.evidence != nil {
		errs.Append(benefit.CheckEvidenceURL(*in.evidence))
	}
	return filed, benefit.Filed{Value: *in.value, Notes: deref(in.notes), EvidenceURL: in.evidence}, errs.Err()
}

func actualRecorded(locked dbsqlc.BenefitGetLockedRow, a dbsqlc.BenefitActual, previous *benefit.Filed) ActualRecordedEvent {
	b := locked.Benefit
	var e ActualRecordedEvent
	e.Benefit.ID, e.Benefit.Name, e.Benefit.Unit, e.Benefit.Currency, e.Benefit.MeasurementFrequency = b.ID.String(), b.Name, b.Unit, b.Currency, b.MeasurementFrequency
	e.Initiative.ID, e.Initiative.Name = b.InitiativeID.String(), locked.InitiativeName
	e.ActualID, e.Period, e.Value = a.ID.String(), finance.MonthOfTime(a.Period).String(), money.Stored(a.Value)
	if previous != nil {
		e.PreviousValue, e.Corrected = new(previous.Value), true
	}
	e.Notes, e.EvidenceURL, e.RecordedBy, e.RecordedAt = a.Notes, a.EvidenceUrl, a.RecordedBy, timestamp(a.UpdatedAt)
	return e
}

func (s *Server) listActuals(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxBenefitPageSize)
	order := q.oneOf("order", "asc", []string{"asc", "desc"})
	if err := q.done(); err != nil {
		return err
	}
	b, err := loadBenefit(c)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	rows, err := db.Q.ActualList(ctx, t, dbsqlc.ActualListParams{TenantID: b.TenantID, BenefitID: b.ID, SortDesc: order == "desc",
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.BenefitActual.ID
	}
	revisions := map[uuid.UUID][]dbsqlc.BenefitActualRevision{}
	if len(ids) > 0 {
		list, err := db.Q.ActualRevisionList(ctx, t, dbsqlc.ActualRevisionListParams{TenantID: b.TenantID, ActualIds: ids})
		if err != nil {
			return err
		}
		for _, r := range list {
			revisions[r.ActualID] = append(revisions[r.ActualID], r)
		}
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.ActualListRow) int64 { return r.Total },
		func(r dbsqlc.ActualListRow) actualJSON {
			return toActualJSON(r.BenefitActual, revisions[r.BenefitActual.ID])
		},
		func() (int64, error) {
			return db.Q.ActualCount(ctx, t, dbsqlc.ActualCountParams{TenantID: b.TenantID, BenefitID: b.ID})
		})
}

// --- variance ---

// varianceJSON is the spec's variance result plus the year, range, unit and currency.
type varianceJSON struct {
	BenefitID            string               `json:"benefit_id"`
	Year                 int                  `json:"year"`
	From                 *string              `json:"from"`
	Through              *string              `json:"through"`
	Unit                 string               `json:"unit"`
	Currency             *string              `json:"currency"`
	MeasurementFrequency string               `json:"measurement_frequency"`
	ExpectedYTD          float64              `json:"expected_ytd"` // of the periods with an actual (like for like)
	ActualYTD            float64              `json:"actual_ytd"`
	Variance             float64              `json:"variance"`
	VariancePercent      *float64             `json:"variance_percent"`
	ExpectedUnmeasured   float64              `json:"expected_unmeasured"` // of missing_periods: not a shortfall
	Trend                string               `json:"trend"`
	Periods              []periodVarianceJSON `json:"periods"`
	MissingPeriods       []string             `json:"missing_periods"`
}

type periodVarianceJSON struct {
	Period          string   `json:"period"`
	Expected        float64  `json:"expected"`
	Actual          *float64 `json:"actual"`
	Variance        *float64 `json:"variance"`
	VariancePercent *float64 `json:"variance_percent"`
}

func (s *Server) benefitVariance(c *fiber.Ctx) error {
	q := parseQuery(c)
	vq := benefit.VarianceQuery{}
	if v, ok := q.str("year"); ok {
		y, err := strconv.Atoi(v)
		if err != nil || y < 1 || y > 9999 {
			return InvalidParameter("query parameter year must be a fiscal year such as 2026")
		}
		vq.FiscalYear = y
	}
	if v, ok := q.str("through"); ok {
		if v == "" {
			return InvalidParameter("query parameter through must be a month YYYY-MM")
		}
		vq.Through = v
	}
	if err := q.done(); err != nil {
		return err
	}
	b, err := loadBenefit(c)
	if err != nil {
		return err
	}
	ctx, t, now := c.UserContext(), tx(c), time.Now()
	set, err := settings.Load(ctx, t, b.TenantID)
	if err != nil {
		return err
	}
	vq.FYStartMonth = set.FiscalYearStartMonth
	f := benefit.Frequency(b.MeasurementFrequency)
	year, err := benefit.VarianceWindow(f, vq, nil, now) // the parameters and the year's months, before reading actuals
	if pe, ok := errors.AsType[*benefit.ParamError](err); ok {
		return InvalidParameter("query parameter %s", pe.Error())
	} else if err != nil {
		return err
	}
	plans, err := loadPlans(c, b.ID)
	if err != nil {
		return err
	}
	rows, err := db.Q.ActualListInRange(ctx, t, dbsqlc.ActualListInRangeParams{TenantID: b.TenantID, BenefitID: b.ID,
		FromPeriod: benefit.Normalise(f, year.FirstMonth).FirstDay(), ToPeriod: year.LastMonth.FirstDay()})
	if err != nil {
		return err
	}
	fb := valuation.FinanceBenefit(b, valuation.PlansByBenefit(plans[b.ID])[b.ID], map[finance.Month]decimal.Decimal{})
	periods := make([]finance.Month, len(rows))
	for i, r := range rows {
		periods[i] = finance.MonthOfTime(r.Period)
		fb.Actuals[periods[i]] = r.Value
	}
	w, err := benefit.VarianceWindow(f, vq, periods, now)
	if err != nil {
		return err
	}
	w = w.From(benefit.Normalise(f, fb.Start))
	v := benefit.ComputeVariance(benefit.ExpectedOver(fb, w.Periods), fb.Actuals)

	// In the benefit's own unit: its currency's minor units, two decimals for other units.
	unit := ""
	if b.Currency != nil {
		unit = *b.Currency
	}
	out := varianceJSON{
		BenefitID: b.ID.String(), Year: w.FiscalYear, Unit: b.Unit, Currency: b.Currency, MeasurementFrequency: b.MeasurementFrequency,
		ExpectedYTD: money.Amount(v.ExpectedYTD, unit), ActualYTD: money.Amount(v.ActualYTD, unit), Variance: money.Amount(v.Variance, unit),
		VariancePercent: money.PercentOfPtr(v.VariancePercent), ExpectedUnmeasured: money.Amount(v.ExpectedUnmeasured, unit), Trend: string(v.Trend),
		Periods: make([]periodVarianceJSON, len(v.Periods)), MissingPeriods: make([]string, len(v.MissingPeriods)),
	}
	if n := len(w.Periods); n > 0 {
		out.From, out.Through = new(w.Periods[0].String()), new(w.Periods[n-1].String())
	}
	for i, p := range v.Periods {
		out.Periods[i] = periodVarianceJSON{Period: p.Period.String(), Expected: money.Amount(p.Expected, unit), Actual: money.AmountPtr(p.Actual, unit),
			Variance: money.AmountPtr(p.Variance, unit), VariancePercent: money.PercentOfPtr(p.VariancePercent)}
	}
	for i, p := range v.MissingPeriods {
		out.MissingPeriods[i] = p.String()
	}
	return c.JSON(out)
}
