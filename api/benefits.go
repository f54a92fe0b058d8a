package api

// Benefits (issue 9): the value an initiative is expected to deliver, the
// actuals recorded against it and their variance. Rules live in
// internal/benefit; what a period expects is finance.Benefit.ExpectedFor.

import (
	"errors"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/valuation"
	"github.com/valuecase/valuecase/internal/wire"
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
		CreatedAt: wire.Timestamp(b.CreatedAt), UpdatedAt: wire.Timestamp(b.UpdatedAt),
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
		CreatedAt: wire.Timestamp(a.CreatedAt), UpdatedAt: wire.Timestamp(a.UpdatedAt), Revisions: []revisionJSON{},
	}
	for _, r := range revisions {
		out.Revisions = append(out.Revisions, revisionJSON{OldValue: money.Stored(r.OldValue), NewValue: money.Stored(r.NewValue), OldNotes: r.OldNotes,
			OldEvidenceURL: r.OldEvidenceUrl, ChangedBy: r.ChangedBy, ChangedAt: wire.Timestamp(r.ChangedAt)})
	}
	return out
}

// --- loading ---

// benefitError maps the typed errors of internal/benefit's operations;
// validation errors (422) and anything else pass through.
func benefitError(err error) error {
	switch {
	case errors.Is(err, benefit.ErrNotFound):
		return NotFound("benefit")
	case errors.Is(err, benefit.ErrInitiativeNotFound):
		return NotFound("initiative")
	case errors.Is(err, benefit.ErrNameTaken), errors.Is(err, benefit.ErrExternalKeyTaken):
		return AlreadyExists("%s", err.Error())
	case errors.Is(err, benefit.ErrLimitReached), errors.Is(err, benefit.ErrInitiativeArchived),
		errors.Is(err, benefit.ErrBasisLocked), errors.Is(err, benefit.ErrTooManyRevisions):
		return Conflict("%s", err.Error())
	}
	return err
}

// benefitActor is who writes through internal/benefit: the caller.
func benefitActor(c *fiber.Ctx) benefit.Actor {
	p := principal(c)
	return benefit.Actor{TenantID: p.TenantID, Subject: p.Subject}
}

// ifMatch is the request's If-Match as the precondition of an operation on a
// record it locks (benefit.Precondition, cost.Precondition).
func ifMatch(c *fiber.Ctx) func(version time.Time) error {
	return func(version time.Time) error { return checkIfMatch(c, version) }
}

// loadBenefit finds a benefit of the tenant for reading.
func loadBenefit(c *fiber.Ctx) (dbsqlc.Benefit, error) {
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return dbsqlc.Benefit{}, err
	}
	b, err := db.Q.BenefitGet(c.UserContext(), requestTx(c), dbsqlc.BenefitGetParams{TenantID: principal(c).TenantID, ID: id})
	return b, found("benefit", err)
}

func loadPlans(c *fiber.Ctx, ids ...uuid.UUID) (map[uuid.UUID][]dbsqlc.BenefitPlanEntry, error) {
	rows, err := db.Q.BenefitPlanList(c.UserContext(), requestTx(c), dbsqlc.BenefitPlanListParams{TenantID: principal(c).TenantID, BenefitIds: ids})
	out := map[uuid.UUID][]dbsqlc.BenefitPlanEntry{}
	for _, r := range rows {
		out[r.BenefitID] = append(out[r.BenefitID], r)
	}
	return out, err
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
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.BenefitList(ctx, db.WithSettings(tx, db.PlanPerCall), p)
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
			return db.Q.BenefitCount(ctx, tx, dbsqlc.BenefitCountParams{TenantID: p.TenantID, InitiativeID: p.InitiativeID,
				Category: p.Category, OwnerID: p.OwnerID, Currency: p.Currency, Status: p.Status})
		})
}

func (s *Server) getBenefit(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return err
	}
	b, plan, err := benefit.Read(c.UserContext(), requestTx(c), principal(c).TenantID, id)
	if err != nil {
		return found("benefit", err)
	}
	return sendRecord(c, b.UpdatedAt, toBenefitJSON(b, plan))
}

func (s *Server) createBenefit(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readBenefitBody(c, true, true)
	if err != nil {
		return err
	}
	initiativeID, err := uuid.Parse(*f.InitiativeID)
	if err != nil {
		return NotFound("initiative")
	}
	saved, err := saveBenefit(c, benefit.Change{InitiativeID: initiativeID, Fields: f, Replace: true})
	if err != nil {
		return err
	}
	body := toBenefitJSON(saved.Benefit, saved.Plan)
	c.Location("/v1/benefits/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// saveBenefit saves one change through benefit.SaveBenefits, the path a benefits import takes too.
func saveBenefit(c *fiber.Ctx, change benefit.Change) (benefit.Saved, error) {
	outcomes, err := benefit.SaveBenefits(c.UserContext(), requestTx(c), benefitActor(c), []benefit.Change{change}, benefit.SaveOptions{Touch: true})
	if err != nil {
		return benefit.Saved{}, benefitError(err)
	}
	return outcomes[0].Saved, benefitError(outcomes[0].Err)
}

// readBenefitBody reads a benefit body (benefit.ReadFields): the 422 of every field that failed.
func readBenefitBody(c *fiber.Ctx, full, create bool) (benefit.Fields, error) {
	b, err := parseBody(c)
	if err != nil {
		return benefit.Fields{}, err
	}
	f := benefit.ReadFields(b, full, create)
	return f, b.Done()
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
	f, err := readBenefitBody(c, replace, false)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return err
	}
	saved, err := saveBenefit(c, benefit.Change{ID: &id, Fields: f, Replace: replace, Check: ifMatch(c)})
	if err != nil {
		return err
	}
	return sendRecord(c, saved.Benefit.UpdatedAt, toBenefitJSON(saved.Benefit, saved.Plan))
}

func (s *Server) deleteBenefit(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return err
	}
	if err := benefit.DeleteBenefit(c.UserContext(), requestTx(c), benefitActor(c), id, ifMatch(c)); err != nil {
		return benefitError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// --- actuals ---

// recordActual files a value for a period through benefit.FileActuals (a
// batch of one): 201 with the new actual, or 200 when the period already had
// one (a correction, kept in `revisions`, or the very same filing again,
// which changes nothing).
func (s *Server) recordActual(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	fields := benefit.ReadActual(b)
	if err := b.Done(); err != nil {
		return err
	}
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
	if err := benefitIfMatch(c, id); err != nil {
		return err
	}
	outcomes, err := benefit.FileActuals(ctx, tx, benefitActor(c), []benefit.ActualInput{fields.Input(id)}, benefit.FileOptions{Now: time.Now()})
	if err != nil {
		return err
	}
	filed := outcomes[0]
	if filed.Err != nil {
		return benefitError(filed.Err)
	}
	revisions, err := db.Q.ActualRevisionList(ctx, tx, dbsqlc.ActualRevisionListParams{TenantID: filed.Actual.TenantID, ActualIds: []uuid.UUID{filed.Actual.ID}})
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if filed.Filing == benefit.FirstValue {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(toActualJSON(filed.Actual, revisions))
}

// benefitIfMatch checks an If-Match against the benefit, locked for the
// filing that follows; without the header it reads nothing.
func benefitIfMatch(c *fiber.Ctx, id uuid.UUID) error {
	if c.Get(fiber.HeaderIfMatch) == "" {
		return nil
	}
	row, err := db.Q.BenefitGetLocked(c.UserContext(), requestTx(c), dbsqlc.BenefitGetLockedParams{TenantID: principal(c).TenantID, ID: id})
	if err := found("benefit", err); err != nil {
		return err
	}
	return checkIfMatch(c, row.Benefit.UpdatedAt)
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
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.ActualList(ctx, tx, dbsqlc.ActualListParams{TenantID: b.TenantID, BenefitID: b.ID, SortDesc: order == "desc",
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
		list, err := db.Q.ActualRevisionList(ctx, tx, dbsqlc.ActualRevisionListParams{TenantID: b.TenantID, ActualIds: ids})
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
			return db.Q.ActualCount(ctx, tx, dbsqlc.ActualCountParams{TenantID: b.TenantID, BenefitID: b.ID})
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
	id, err := pathID(c, "id", "benefit")
	if err != nil {
		return err
	}
	now := time.Now()
	rows, err := benefit.ReadVariance(c.UserContext(), requestTx(c), principal(c).TenantID, id, vq, now)
	if pe, ok := errors.AsType[*benefit.ParamError](err); ok {
		return InvalidParameter("query parameter %s", pe.Error())
	} else if err != nil {
		return found("benefit", err)
	}
	w, v, err := valuation.VarianceReport(rows, now)
	if err != nil {
		return err
	}
	b := rows.Benefit

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
