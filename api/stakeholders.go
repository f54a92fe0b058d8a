package api

// Stakeholders of initiatives and their engagements (issue 9). The rules
// (allowed values, limits, quadrant, sentiment trend, at-risk) live in
// internal/stakeholder; what the record keeps of its engagements is
// refreshed in the transaction that logs one, with the stakeholder.engagement
// event.

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/stakeholder"
	"github.com/valuecase/valuecase/internal/validation"
)

const (
	maxStakeholderPageSize = 500
	maxStakeholderSearch   = 100 // characters of the q filter
	maxStakeholderFreeText = 1000
)

var stakeholderSorts = []string{"created_at", "updated_at", "name", "last_engagement_at"}

// stakeholdersRoutes mounts the stakeholder routes on the authenticated /v1 group.
func (s *Server) stakeholdersRoutes(v1 fiber.Router) {
	read, write := s.require(rbac.StakeholdersRead), s.require(rbac.StakeholdersWrite)
	v1.Get("/stakeholders", read, s.listStakeholders)
	v1.Post("/stakeholders", write, s.createStakeholder)
	v1.Get("/stakeholders/:id", read, s.getStakeholder)
	v1.Put("/stakeholders/:id", write, s.replaceStakeholder)
	v1.Patch("/stakeholders/:id", write, s.patchStakeholder)
	v1.Delete("/stakeholders/:id", s.require(rbac.StakeholdersDelete), s.deleteStakeholder)
	v1.Post("/stakeholders/:id/engagement", write, s.logEngagement)
	v1.Get("/stakeholders/:id/engagements", read, s.listEngagements)
}

// stakeholderJSON is the stakeholder resource: the stored fields and what is
// derived from the engagements at the time of the response.
type stakeholderJSON struct {
	ID               string  `json:"id"`
	InitiativeID     string  `json:"initiative_id"`
	Name             string  `json:"name"`
	Email            string  `json:"email"`
	Role             *string `json:"role"`
	Department       *string `json:"department"`
	Influence        string  `json:"influence"`
	Interest         string  `json:"interest"`
	Notes            string  `json:"notes"`
	Quadrant         string  `json:"quadrant"`
	EngagementCount  int     `json:"engagement_count"`
	LastEngagementAt *string `json:"last_engagement_at"`
	Sentiment        *string `json:"sentiment"`
	SentimentTrend   string  `json:"sentiment_trend"`
	AtRisk           bool    `json:"at_risk"`
	AtRiskReason     *string `json:"at_risk_reason"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
}

func toStakeholderJSON(s dbsqlc.Stakeholder, now time.Time) stakeholderJSON {
	sum := stakeholder.SummariseStored(stakeholder.Influence(s.Influence), stakeholder.Interest(s.Interest), stakeholder.StoredEngagements(s), s.CreatedAt, now)
	out := stakeholderJSON{
		ID: s.ID.String(), InitiativeID: s.InitiativeID.String(), Name: s.Name, Email: s.Email, Role: s.Role, Department: s.Department,
		Influence: s.Influence, Interest: s.Interest, Notes: s.Notes, Quadrant: string(sum.Quadrant), EngagementCount: sum.EngagementCount,
		LastEngagementAt: optDate(sum.LastEngagementAt), SentimentTrend: string(sum.SentimentTrend), AtRisk: sum.AtRisk,
		CreatedAt: timestamp(s.CreatedAt), UpdatedAt: timestamp(s.UpdatedAt),
	}
	if sum.Sentiment != nil {
		out.Sentiment = new(string(*sum.Sentiment))
	}
	if sum.AtRiskReason != nil {
		out.AtRiskReason = new(string(*sum.AtRiskReason))
	}
	return out
}

// engagementJSON is one logged engagement.
type engagementJSON struct {
	ID            string `json:"id"`
	StakeholderID string `json:"stakeholder_id"`
	Type          string `json:"type"`
	Date          string `json:"date"`
	Sentiment     string `json:"sentiment"`
	Notes         string `json:"notes"`
	RecordedBy    string `json:"recorded_by"`
	CreatedAt     string `json:"created_at"`
}

func toEngagementJSON(e dbsqlc.StakeholderEngagement) engagementJSON {
	return engagementJSON{ID: e.ID.String(), StakeholderID: e.StakeholderID.String(), Type: e.Type, Date: e.Date.Format(time.DateOnly),
		Sentiment: e.Sentiment, Notes: e.Notes, RecordedBy: e.RecordedBy, CreatedAt: timestamp(e.CreatedAt)}
}

// engagementLoggedJSON answers POST /engagement and is the data of the
// stakeholder.engagement event: the engagement and the stakeholder after it.
type engagementLoggedJSON struct {
	engagementJSON
	Stakeholder stakeholderJSON `json:"stakeholder"`
}

// stakeholderError maps the 409s of internal/stakeholder; anything else passes through.
func stakeholderError(err error) error {
	if errors.Is(err, stakeholder.ErrLimitReached) || errors.Is(err, stakeholder.ErrInitiativeArchived) || errors.Is(err, stakeholder.ErrEngagementLimit) {
		return Conflict("%s", err.Error())
	}
	return err
}

func (s *Server) listStakeholders(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxStakeholderPageSize)
	sort := q.oneOf("sort", "created_at", stakeholderSorts)
	order := q.oneOf("order", "desc", []string{"asc", "desc"})
	p := dbsqlc.StakeholderListParams{TenantID: principal(c).TenantID, Sort: sort, SortDesc: order == "desc",
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)}
	if v, ok := q.str("initiative_id"); ok {
		id, err := uuid.Parse(v)
		if err != nil {
			id = uuid.Nil // ids are opaque: one that cannot name an initiative filters out everything
		}
		p.InitiativeID = &id
	}
	if _, ok := q.str("influence"); ok {
		p.Influences = []string{q.oneOf("influence", "", validation.Names(stakeholder.Influences))}
	}
	if _, ok := q.str("interest"); ok {
		p.Interests = []string{q.oneOf("interest", "", validation.Names(stakeholder.Interests))}
	}
	if _, ok := q.str("quadrant"); ok {
		influences, interests := stakeholder.QuadrantMembers(stakeholder.Quadrant(q.oneOf("quadrant", "", validation.Names(stakeholder.Quadrants))))
		p.Influences, p.Interests = intersect(p.Influences, validation.Names(influences)), intersect(p.Interests, validation.Names(interests))
	}
	if _, ok := q.str("at_risk"); ok {
		p.AtRisk = new(q.oneOf("at_risk", "", []string{"true", "false"}) == "true")
	}
	if v, ok := q.str("q"); ok {
		if n := utf8.RuneCountInString(v); n == 0 || n > maxStakeholderSearch {
			return InvalidParameter("query parameter q must be 1 to %d characters", maxStakeholderSearch)
		}
		p.Q = new(likeEscaper.Replace(v))
	}
	if err := q.done(); err != nil {
		return err
	}
	now := time.Now()
	p.Today = now.UTC().Truncate(24 * time.Hour)
	ctx, t := c.UserContext(), tx(c)
	rows, err := db.Q.StakeholderList(ctx, t, p)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.StakeholderListRow) int64 { return r.Total },
		func(r dbsqlc.StakeholderListRow) stakeholderJSON { return toStakeholderJSON(r.Stakeholder, now) },
		func() (int64, error) {
			return db.Q.StakeholderCount(ctx, t, dbsqlc.StakeholderCountParams{TenantID: p.TenantID, InitiativeID: p.InitiativeID,
				Influences: p.Influences, Interests: p.Interests, AtRisk: p.AtRisk, Today: p.Today, Q: p.Q})
		})
}

// likeEscaper makes a search text match itself in ILIKE (backslash is PostgreSQL's default escape).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// intersect narrows a filter list by another; nil means no filter. An empty
// (non-nil) result filters out everything.
func intersect(have, with []string) []string {
	if have == nil {
		return with
	}
	out := []string{}
	for _, v := range have {
		if slices.Contains(with, v) {
			out = append(out, v)
		}
	}
	return out
}

// stakeholderFields are the writable fields of create, PUT and PATCH as sent.
type stakeholderFields struct {
	initiativeID, name, email, role, department, influence, interest, notes *string
	has                                                                     map[string]bool // which fields the body carried
}

var writableStakeholderFields = []string{"initiative_id", "name", "email", "role", "department", "influence", "interest", "notes"}

// readOnlyStakeholderFields may be sent back as received from a GET; they are ignored.
var readOnlyStakeholderFields = []string{"id", "quadrant", "engagement_count", "last_engagement_at", "sentiment", "sentiment_trend",
	"at_risk", "at_risk_reason", "created_at", "updated_at"}

// readStakeholderFields reads a stakeholder body: its JSON types and lengths.
// full (PUT) needs name, email, influence and interest; create needs
// initiative_id too; PATCH needs nothing, but a required field it sends must
// not be null. The rules of the values are internal/stakeholder's.
func readStakeholderFields(c *fiber.Ctx, full, create bool) (stakeholderFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return stakeholderFields{}, err
	}
	f := readStakeholder(b, full, create)
	if err := b.Done(); err != nil {
		return stakeholderFields{}, err
	}
	return f, nil
}

// readStakeholder reads the fields of a stakeholder body (the route's or a
// bulk import row's); failures stay in b.errs until b.done.
func readStakeholder(b *input.Object, full, create bool) stakeholderFields {
	f := stakeholderFields{has: map[string]bool{}}
	for _, name := range writableStakeholderFields {
		f.has[name] = b.Has(name)
	}
	need := func(field string) bool { return full || f.has[field] }
	f.initiativeID = b.Text("initiative_id", create || f.has["initiative_id"], maxShortTextLen)
	f.name = trimmed(b.Text("name", need("name"), maxNameLen))
	f.email = b.Text("email", need("email"), stakeholder.MaxEmailLength)
	f.role = b.Text("role", false, maxStakeholderFreeText) // trimmed and bounded by the domain
	f.department = b.Text("department", false, maxStakeholderFreeText)
	f.influence = b.Text("influence", need("influence"), maxShortTextLen)
	f.interest = b.Text("interest", need("interest"), maxShortTextLen)
	f.notes = b.Text("notes", false, maxDescriptionLen)
	b.Ignore(readOnlyStakeholderFields...)
	return f
}

// check lays the sent fields over the stored record (merge) and checks the
// result with internal/stakeholder: what create, PUT, PATCH and a bulk row store.
func (f stakeholderFields) check(base dbsqlc.Stakeholder, full bool) (dbsqlc.Stakeholder, stakeholder.Fields, stakeholder.Checked, error) {
	next, fields := f.merge(base, full)
	checked, err := stakeholder.CheckFields(fields)
	return next, fields, checked, err
}

// merge lays the sent fields over the stored record (PUT and create start
// from nothing: no role, department or notes).
func (f stakeholderFields) merge(base dbsqlc.Stakeholder, full bool) (dbsqlc.Stakeholder, stakeholder.Fields) {
	next := base
	if full {
		next.Role, next.Department, next.Notes = nil, nil, ""
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&next.Name, f.name)
	set(&next.Email, f.email)
	set(&next.Influence, f.influence)
	set(&next.Interest, f.interest)
	if full || f.has["role"] {
		next.Role = f.role
	}
	if full || f.has["department"] {
		next.Department = f.department
	}
	if full || f.has["notes"] {
		next.Notes = deref(f.notes)
	}
	return next, stakeholder.Fields{Email: next.Email, Role: next.Role, Department: next.Department,
		Influence: stakeholder.Influence(next.Influence), Interest: stakeholder.Interest(next.Interest)}
}

// loadStakeholder finds the stakeholder of the path.
func loadStakeholder(c *fiber.Ctx) (dbsqlc.Stakeholder, error) {
	id, err := pathID(c, "id", "stakeholder")
	if err != nil {
		return dbsqlc.Stakeholder{}, err
	}
	s, err := db.Q.StakeholderGet(c.UserContext(), tx(c), dbsqlc.StakeholderGetParams{TenantID: principal(c).TenantID, ID: id})
	return s, found("stakeholder", err)
}

// loadWritableStakeholder finds the stakeholder of the path for a write:
// locked, with its initiative locked for share, which must not be archived.
func loadWritableStakeholder(c *fiber.Ctx) (dbsqlc.Stakeholder, error) {
	id, err := pathID(c, "id", "stakeholder")
	if err != nil {
		return dbsqlc.Stakeholder{}, err
	}
	row, err := db.Q.StakeholderGetLocked(c.UserContext(), tx(c), dbsqlc.StakeholderGetLockedParams{TenantID: principal(c).TenantID, ID: id})
	if err := found("stakeholder", err); err != nil {
		return row.Stakeholder, err
	}
	if err := checkIfMatch(c, row.Stakeholder.UpdatedAt); err != nil {
		return row.Stakeholder, err
	}
	return row.Stakeholder, stakeholderError(stakeholder.CheckWritable(initiative.Status(row.InitiativeStatus)))
}

// duplicateEmail is the 409 of an address already used in the initiative.
func duplicateEmail(err error, email string) error {
	if db.IsUniqueViolation(err, "stakeholders_initiative_email") {
		return AlreadyExists("a stakeholder with this e-mail address already exists in this initiative (addresses compare case-insensitively)")
	}
	return err
}

func (s *Server) createStakeholder(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readStakeholderFields(c, true, true)
	if err != nil {
		return err
	}
	initiativeID, err := uuid.Parse(*f.initiativeID)
	if err != nil {
		return NotFound("initiative")
	}
	in, err := lockInitiative(c, initiativeID)
	if err == nil {
		err = stakeholderError(stakeholder.CheckWritable(initiative.Status(in.Status)))
	}
	if err != nil {
		return err
	}
	next, _, checked, err := f.check(dbsqlc.Stakeholder{}, true)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	n, err := db.Q.StakeholderCountByInitiative(ctx, t, dbsqlc.StakeholderCountByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	if err := stakeholder.CheckCanAdd(int(n)); err != nil {
		return stakeholderError(err)
	}
	row, err := db.Q.StakeholderCreate(ctx, t, dbsqlc.StakeholderCreateParams{
		TenantID: in.TenantID, InitiativeID: in.ID, Name: next.Name, Email: next.Email, Role: checked.Role, Department: checked.Department,
		Influence: next.Influence, Interest: next.Interest, Notes: next.Notes,
	})
	if err != nil {
		return duplicateEmail(err, next.Email)
	}
	if row, err = db.Q.StakeholderSetAtRiskFrom(ctx, t, dbsqlc.StakeholderSetAtRiskFromParams{TenantID: row.TenantID, ID: row.ID,
		AtRiskFrom: stakeholder.AtRiskFrom(stakeholder.Influence(row.Influence), nil, row.CreatedAt)}); err != nil {
		return err
	}
	body := toStakeholderJSON(row, time.Now())
	c.Location("/v1/stakeholders/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

func (s *Server) getStakeholder(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	row, err := loadStakeholder(c)
	if err != nil {
		return err
	}
	return sendRecord(c, row.UpdatedAt, toStakeholderJSON(row, time.Now()))
}

func (s *Server) replaceStakeholder(c *fiber.Ctx) error { return s.updateStakeholder(c, true) }
func (s *Server) patchStakeholder(c *fiber.Ctx) error   { return s.updateStakeholder(c, false) }

// updateStakeholder is PUT (replace: absent role, department and notes are
// cleared) and PATCH (only the fields sent change; null clears the optional
// ones). A stakeholder never moves to another initiative.
func (s *Server) updateStakeholder(c *fiber.Ctx, replace bool) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readStakeholderFields(c, replace, false)
	if err != nil {
		return err
	}
	cur, err := loadWritableStakeholder(c)
	if err != nil {
		return err
	}
	if f.initiativeID != nil && *f.initiativeID != cur.InitiativeID.String() {
		return Invalid(FieldError{Field: "initiative_id", Code: "invalid_value", Message: "a stakeholder belongs to its initiative and cannot move; create it in the other initiative"})
	}
	next, fields, checked, err := f.check(cur, replace)
	if err != nil {
		return err
	}
	row, err := db.Q.StakeholderUpdate(c.UserContext(), tx(c), dbsqlc.StakeholderUpdateParams{
		TenantID: cur.TenantID, ID: cur.ID, Name: next.Name, Email: next.Email, Role: checked.Role, Department: checked.Department,
		Influence: next.Influence, Interest: next.Interest, Notes: next.Notes,
		AtRiskFrom: stakeholder.AtRiskFrom(fields.Influence, stakeholder.StoredEngagements(cur).Engagements(), cur.CreatedAt),
	})
	if err != nil {
		return duplicateEmail(err, next.Email)
	}
	return sendRecord(c, row.UpdatedAt, toStakeholderJSON(row, time.Now()))
}

func (s *Server) deleteStakeholder(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	cur, err := loadWritableStakeholder(c)
	if err != nil {
		return err
	}
	if err := db.Q.StakeholderDelete(c.UserContext(), tx(c), dbsqlc.StakeholderDeleteParams{TenantID: cur.TenantID, ID: cur.ID}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// readEngagement reads an engagement body: type, sentiment and date are
// required, notes optional.
func readEngagement(c *fiber.Ctx) (stakeholder.EngagementInput, string, error) {
	b, err := parseBody(c)
	if err != nil {
		return stakeholder.EngagementInput{}, "", err
	}
	in, notes := readEngagementBody(b)
	if err := b.Done(); err != nil {
		return in, "", err
	}
	return in, notes, nil
}

// readEngagementBody reads an engagement's fields (the body's errors are left
// in b): the single route's reader and bulk import's.
func readEngagementBody(b *input.Object) (stakeholder.EngagementInput, string) {
	var in stakeholder.EngagementInput
	if v := b.Text("type", true, maxShortTextLen); v != nil {
		in.Type = stakeholder.EngagementType(*v)
	}
	if v := b.Text("sentiment", true, maxShortTextLen); v != nil {
		in.Sentiment = stakeholder.Sentiment(*v)
	}
	if !b.Has("date") || b.IsNull("date") {
		b.Fail("date", "required", "is required: the calendar date of the engagement, YYYY-MM-DD")
	} else if d := b.Date("date"); d != nil {
		in.Date = *d
	}
	notes := b.Text("notes", false, maxDescriptionLen)
	b.Ignore("id", "stakeholder_id", "recorded_by", "created_at")
	return in, deref(notes)
}

// engagedAtRiskFrom is at_risk_from of a stakeholder whose engagement summary
// was just refreshed (logging one engagement, or importing many).
func engagedAtRiskFrom(row dbsqlc.Stakeholder) *time.Time {
	return stakeholder.AtRiskFrom(stakeholder.Influence(row.Influence), stakeholder.StoredEngagements(row).Engagements(), row.CreatedAt)
}

func (s *Server) logEngagement(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	in, notes, err := readEngagement(c)
	if err != nil {
		return err
	}
	cur, err := loadWritableStakeholder(c)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := stakeholder.CheckEngagement(in, now); err != nil {
		return err
	}
	if err := stakeholder.CheckCanEngage(int(cur.EngagementCount)); err != nil {
		return stakeholderError(err)
	}
	ctx, t, p := c.UserContext(), tx(c), principal(c)
	e, err := db.Q.EngagementCreate(ctx, t, dbsqlc.EngagementCreateParams{TenantID: cur.TenantID, StakeholderID: cur.ID, Type: string(in.Type),
		Date: in.Date, Sentiment: string(in.Sentiment), Notes: notes, RecordedBy: p.Subject})
	if err != nil {
		return err
	}
	refreshed, err := db.Q.StakeholdersRefreshEngagementSummary(ctx, t, dbsqlc.StakeholdersRefreshEngagementSummaryParams{TenantID: cur.TenantID, Ids: []uuid.UUID{cur.ID}})
	if err != nil {
		return err
	}
	row := refreshed[0]
	if row, err = db.Q.StakeholderSetAtRiskFrom(ctx, t, dbsqlc.StakeholderSetAtRiskFromParams{TenantID: row.TenantID, ID: row.ID,
		AtRiskFrom: engagedAtRiskFrom(row)}); err != nil {
		return err
	}
	body := engagementLoggedJSON{engagementJSON: toEngagementJSON(e), Stakeholder: toStakeholderJSON(row, now)}
	if _, err := outbox.Write(ctx, t, p.TenantID, outbox.StakeholderEngagement, body); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(body)
}

func (s *Server) listEngagements(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxStakeholderPageSize)
	if err := q.done(); err != nil {
		return err
	}
	cur, err := loadStakeholder(c)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	rows, err := db.Q.EngagementList(ctx, t, dbsqlc.EngagementListParams{TenantID: cur.TenantID, StakeholderID: cur.ID,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.EngagementListRow) int64 { return r.Total },
		func(r dbsqlc.EngagementListRow) engagementJSON { return toEngagementJSON(r.StakeholderEngagement) },
		func() (int64, error) {
			return db.Q.EngagementCount(ctx, t, dbsqlc.EngagementCountParams{TenantID: cur.TenantID, StakeholderID: cur.ID})
		})
}
