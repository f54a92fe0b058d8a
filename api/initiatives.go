package api

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/validation"
)

// Limits of section 8 and our own bounds on free text.
const (
	maxNameLen            = 200
	maxDescriptionLen     = 10_000
	maxShortTextLen       = 100
	maxReasonLen          = 1_000
	maxOwnerLen           = 255
	maxInitiativePageSize = 200
)

var (
	statusNames     = validation.Names(initiative.Statuses)
	initiativeSorts = []string{"created_at", "updated_at", "name", "status", "expected_start_date", "expected_end_date"}
)

// initiativeJSON is the initiative resource.
type initiativeJSON struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Description       string  `json:"description"`
	Status            string  `json:"status"`
	Industry          *string `json:"industry"`
	Segment           *string `json:"segment"`
	OwnerID           *string `json:"owner_id"`
	ExpectedStartDate *string `json:"expected_start_date"`
	ExpectedEndDate   *string `json:"expected_end_date"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

// initiativeDetailJSON is the single-record GET: the initiative with its relations.
type initiativeDetailJSON struct {
	initiativeJSON
	Projects     []projectJSON               `json:"projects"`
	Stakeholders []initiativeStakeholderJSON `json:"stakeholders"`
	Metrics      initiativeMetrics           `json:"metrics"`
	Review       *reviewJSON                 `json:"review"`
}

type initiativeMetrics struct {
	ProjectsTotal      int `json:"projects_total"`
	ProjectsActive     int `json:"projects_active"`
	StatusChanges      int `json:"status_changes"`
	DaysInCurrentState int `json:"days_in_current_status"`
	valueMetricsJSON       // benefits, costs and stakeholders (initiative_value.go)
}

type reviewJSON struct {
	WorkflowID     string  `json:"workflow_id"`
	StartedAt      string  `json:"started_at"`
	RemindersSent  int     `json:"reminders_sent"`
	LastReminderAt *string `json:"last_reminder_at"`
	DecidedAt      *string `json:"decided_at"`
	Decision       *string `json:"decision"`
}

type projectJSON struct {
	ID           string `json:"id"`
	InitiativeID string `json:"initiative_id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

type statusChangeJSON struct {
	Kind        string  `json:"kind"` // status, or owner (an owner_id change; the status stays)
	FromStatus  *string `json:"from_status"`
	ToStatus    string  `json:"to_status"`
	FromOwnerID *string `json:"from_owner_id"` // owner entries only
	ToOwnerID   *string `json:"to_owner_id"`
	Reason      string  `json:"reason"`
	Actor       string  `json:"actor"`
	CreatedAt   string  `json:"created_at"`
}

func toInitiativeJSON(in dbsqlc.Initiative) initiativeJSON {
	return initiativeJSON{
		ID: in.ID.String(), Name: in.Name, Description: in.Description, Status: in.Status,
		Industry: in.Industry, Segment: in.Segment, OwnerID: in.OwnerID,
		ExpectedStartDate: optDate(in.ExpectedStartDate), ExpectedEndDate: optDate(in.ExpectedEndDate),
		CreatedAt: timestamp(in.CreatedAt), UpdatedAt: timestamp(in.UpdatedAt),
	}
}

func toProjectJSON(p dbsqlc.Project) projectJSON {
	return projectJSON{ID: p.ID.String(), InitiativeID: p.InitiativeID.String(), Name: p.Name, Description: p.Description,
		Status: p.Status, CreatedAt: timestamp(p.CreatedAt), UpdatedAt: timestamp(p.UpdatedAt)}
}

func (s *Server) listInitiatives(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxInitiativePageSize)
	sort := q.oneOf("sort", "created_at", initiativeSorts)
	order := q.oneOf("order", "desc", []string{"asc", "desc"})
	var status, industry *string
	if v, ok := q.str("status"); ok {
		v = q.oneOf("status", "", statusNames)
		status = &v
	}
	if v, ok := q.str("industry"); ok {
		if n := utf8.RuneCountInString(v); n > maxShortTextLen || n == 0 {
			return InvalidParameter("query parameter industry must be 1 to %d characters", maxShortTextLen)
		}
		industry = &v
	}
	if err := q.done(); err != nil {
		return err
	}
	ctx, p := c.UserContext(), principal(c)
	rows, err := db.Q.InitiativeList(ctx, tx(c), dbsqlc.InitiativeListParams{
		TenantID: p.TenantID, Status: status, Industry: industry, Sort: sort, SortDesc: order == "desc",
		PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.InitiativeListRow) int64 { return r.Total },
		func(r dbsqlc.InitiativeListRow) initiativeJSON { return toInitiativeJSON(r.Initiative) },
		func() (int64, error) {
			return db.Q.InitiativeCount(ctx, tx(c), dbsqlc.InitiativeCountParams{TenantID: p.TenantID, Status: status, Industry: industry})
		})
}

// initiativeFields are the writable fields of create, PUT and PATCH.
type initiativeFields struct {
	name, description, industry, segment, ownerID, status *string
	start, end                                            *time.Time
	// which fields the body carried (PATCH leaves the others alone)
	has map[string]bool
}

var writableInitiativeFields = []string{"name", "description", "industry", "segment", "owner_id", "expected_start_date", "expected_end_date", "status"}

// readOnlyInitiativeFields may be sent back as received from a GET; they are ignored.
var readOnlyInitiativeFields = []string{"id", "created_at", "updated_at", "projects", "stakeholders", "metrics", "review"}

func readInitiativeFields(c *fiber.Ctx, nameRequired bool) (initiativeFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return initiativeFields{}, err
	}
	f := readInitiative(b, nameRequired)
	if err := b.Done(); err != nil {
		return initiativeFields{}, err
	}
	return f, nil
}

// readInitiative reads the writable fields from b (the caller ends with b.done).
func readInitiative(b *input.Object, nameRequired bool) initiativeFields {
	f := initiativeFields{has: map[string]bool{}}
	for _, name := range writableInitiativeFields {
		f.has[name] = b.Has(name)
	}
	f.name = trimmed(b.Text("name", nameRequired || f.has["name"], maxNameLen))
	f.description = b.Text("description", false, maxDescriptionLen)
	f.industry = noneIfBlank(b.Text("industry", false, maxShortTextLen))
	f.segment = noneIfBlank(b.Text("segment", false, maxShortTextLen))
	f.ownerID = noneIfBlank(b.Text("owner_id", false, maxOwnerLen))
	f.start = b.Date("expected_start_date")
	f.end = b.Date("expected_end_date")
	f.status = b.Enum("status", false, statusNames)
	b.Ignore(readOnlyInitiativeFields...)
	return f
}

func checkDates(start, end *time.Time) error {
	if start != nil && end != nil && end.Before(*start) {
		return InvalidParameter("expected_end_date must not be before expected_start_date")
	}
	return nil
}

func (s *Server) createInitiative(c *fiber.Ctx) error {
	f, err := readInitiativeFields(c, true)
	if err != nil {
		return err
	}
	if err := initiative.CheckCreateStatus((*initiative.Status)(f.status)); err != nil {
		return err
	}
	if err := checkDates(f.start, f.end); err != nil {
		return err
	}
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	if err := db.Q.InitiativeLockTenantCreates(ctx, t, p.TenantID); err != nil {
		return err
	}
	live, err := db.Q.InitiativeCountLive(ctx, t, p.TenantID)
	if err != nil {
		return err
	}
	if err := initiative.CheckCanCreate(live); err != nil {
		return initiativeError(err)
	}
	in, err := db.Q.InitiativeCreate(ctx, t, dbsqlc.InitiativeCreateParams{
		TenantID: p.TenantID, Name: *f.name, Description: deref(f.description), Industry: f.industry, Segment: f.segment,
		OwnerID: new(initiative.Owner(f.ownerID, p.Subject)), ExpectedStartDate: f.start, ExpectedEndDate: f.end,
	})
	if db.IsUniqueViolation(err, "initiatives_tenant_name") {
		return AlreadyExists("an initiative with this name already exists in this tenant (names are unique ignoring case)")
	}
	if err != nil {
		return err
	}
	if err := db.Q.InitiativeStatusHistoryAdd(ctx, t, dbsqlc.InitiativeStatusHistoryAddParams{
		TenantID: p.TenantID, InitiativeID: in.ID, ToStatus: in.Status, Reason: "created", Actor: p.Subject,
	}); err != nil {
		return err
	}
	body := toInitiativeJSON(in)
	if _, err := outbox.Write(ctx, t, p.TenantID, outbox.InitiativeCreated, body); err != nil {
		return err
	}
	c.Location("/v1/initiatives/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// loadInitiative finds an initiative of the tenant, locked for update when asked.
func loadInitiative(c *fiber.Ctx, forUpdate bool) (dbsqlc.Initiative, error) {
	if err := parseQuery(c).done(); err != nil { // these routes take no query parameters
		return dbsqlc.Initiative{}, err
	}
	id, err := pathID(c, "id", "initiative")
	if err != nil {
		return dbsqlc.Initiative{}, err
	}
	params := dbsqlc.InitiativeGetParams{TenantID: principal(c).TenantID, ID: id}
	var in dbsqlc.Initiative
	if forUpdate {
		in, err = db.Q.InitiativeGetForUpdate(c.UserContext(), tx(c), dbsqlc.InitiativeGetForUpdateParams(params))
	} else {
		in, err = db.Q.InitiativeGet(c.UserContext(), tx(c), params)
	}
	return in, found("initiative", err)
}

// loadWritableInitiative is loadInitiative for a write: archived is read-only.
func loadWritableInitiative(c *fiber.Ctx) (dbsqlc.Initiative, error) {
	in, err := loadInitiative(c, true)
	if err == nil {
		err = checkIfMatch(c, in.UpdatedAt)
	}
	if err != nil {
		return in, err
	}
	return in, initiativeError(initiative.CheckWritable(initiative.Status(in.Status)))
}

// initiativeError maps the 409s of internal/initiative; anything else passes through.
func initiativeError(err error) error {
	if errors.Is(err, initiative.ErrLiveLimit) || errors.Is(err, initiative.ErrProjectLimit) || errors.Is(err, initiative.ErrArchived) {
		return Conflict("%s", err.Error())
	}
	return err
}

func (s *Server) getInitiative(c *fiber.Ctx) error {
	in, err := loadInitiative(c, false)
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), tx(c)
	projects, err := db.Q.ProjectListByInitiative(ctx, tx, dbsqlc.ProjectListByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	history, err := db.Q.InitiativeStatusHistoryList(ctx, tx, dbsqlc.InitiativeStatusHistoryListParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	now := time.Now()
	rows, err := initiativevalue.Load(ctx, tx, in.TenantID, in.ID, now)
	if err != nil {
		return err
	}
	value, err := initiativevalue.Compute(rows, now)
	if err != nil {
		return err
	}
	out := initiativeDetailJSON{initiativeJSON: toInitiativeJSON(in), Projects: make([]projectJSON, 0, len(projects))}
	out.setValue(value)
	statuses := make([]string, len(projects))
	for i, p := range projects {
		out.Projects = append(out.Projects, toProjectJSON(p))
		statuses[i] = p.Status
	}
	changes := make([]time.Time, 0, len(history))
	for _, h := range history {
		if h.Kind == historyStatus { // owner entries change no status
			changes = append(changes, h.CreatedAt)
		}
	}
	activity := initiative.Measure(statuses, changes, now)
	out.Metrics.ProjectsTotal, out.Metrics.ProjectsActive = activity.ProjectsTotal, activity.ProjectsActive
	out.Metrics.StatusChanges, out.Metrics.DaysInCurrentState = activity.StatusChanges, activity.DaysInCurrentState
	review, err := db.Q.InitiativeReviewLatest(ctx, tx, dbsqlc.InitiativeReviewLatestParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err == nil {
		out.Review = &reviewJSON{WorkflowID: review.WorkflowID, StartedAt: timestamp(review.StartedAt), RemindersSent: int(review.RemindersSent),
			LastReminderAt: optTimestamp(review.LastReminderAt), DecidedAt: optTimestamp(review.DecidedAt), Decision: review.Decision}
	} else if !db.IsNotFound(err) {
		return err
	}
	return sendRecord(c, in.UpdatedAt, out)
}

func (s *Server) replaceInitiative(c *fiber.Ctx) error { return s.updateInitiative(c, true) }
func (s *Server) patchInitiative(c *fiber.Ctx) error   { return s.updateInitiative(c, false) }

// updateInitiative is PUT (replace: absent optional fields are cleared, an
// absent status is kept) and PATCH (only the fields sent change; null clears).
func (s *Server) updateInitiative(c *fiber.Ctx, replace bool) error {
	f, err := readInitiativeFields(c, replace)
	if err != nil {
		return err
	}
	in, err := loadWritableInitiative(c)
	if err != nil {
		return err
	}
	next := in
	pick := func(field string, dst **string, v *string) {
		if replace || f.has[field] {
			*dst = v
		}
	}
	if f.name != nil {
		next.Name = *f.name
	}
	if replace || f.has["description"] {
		next.Description = deref(f.description)
	}
	pick("industry", &next.Industry, f.industry)
	pick("segment", &next.Segment, f.segment)
	pick("owner_id", &next.OwnerID, f.ownerID)
	if err := authorizeOwnerChange(principal(c), in, next.OwnerID); err != nil {
		return err
	}
	if replace || f.has["expected_start_date"] {
		next.ExpectedStartDate = f.start
	}
	if replace || f.has["expected_end_date"] {
		next.ExpectedEndDate = f.end
	}
	if err := checkDates(next.ExpectedStartDate, next.ExpectedEndDate); err != nil {
		return err
	}
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	if f.status != nil && *f.status != in.Status {
		if err := authorizeTransition(principal(c), in, initiative.Status(*f.status)); err != nil {
			return err
		}
		next.Status = *f.status
	}
	updated, err := db.Q.InitiativeUpdate(ctx, t, dbsqlc.InitiativeUpdateParams{
		TenantID: in.TenantID, ID: in.ID, Name: next.Name, Description: next.Description, Status: next.Status,
		Industry: next.Industry, Segment: next.Segment, OwnerID: next.OwnerID,
		ExpectedStartDate: next.ExpectedStartDate, ExpectedEndDate: next.ExpectedEndDate,
	})
	if db.IsUniqueViolation(err, "initiatives_tenant_name") {
		return AlreadyExists("an initiative with this name already exists in this tenant (names are unique ignoring case)")
	}
	if err != nil {
		return err
	}
	if updated.Status != in.Status {
		if err := recordStatusChange(ctx, t, p, in.Status, updated, ""); err != nil {
			return err
		}
	}
	if from, to := deref(in.OwnerID), deref(updated.OwnerID); from != to {
		if err := db.Q.InitiativeOwnerHistoryAdd(ctx, t, dbsqlc.InitiativeOwnerHistoryAddParams{
			TenantID: in.TenantID, InitiativeID: in.ID, Status: updated.Status, FromOwner: in.OwnerID, ToOwner: updated.OwnerID,
			Reason: initiative.OwnerChangeReason(from, to), Actor: p.Subject,
		}); err != nil {
			return err
		}
	}
	return sendRecord(c, updated.UpdatedAt, toInitiativeJSON(updated))
}

// historyStatus and historyOwner are the kinds of status-history entries.
const (
	historyStatus = "status"
	historyOwner  = "owner"
)

// authorizeOwnerChange refuses (403) an owner_id change the caller may not make (internal/initiative).
func authorizeOwnerChange(p *Principal, in dbsqlc.Initiative, next *string) error {
	err := initiative.CheckOwnerChange(deref(in.OwnerID), deref(next), initiative.Actor{Subject: p.Subject, Roles: p.Roles})
	if oe, ok := errors.AsType[*initiative.OwnerChangeError](err); ok {
		return Forbidden("%s", oe.Error())
	}
	return err
}

// authorizeTransition refuses a transition that does not exist (422) or that p may not make (403).
func authorizeTransition(p *Principal, in dbsqlc.Initiative, to initiative.Status) error {
	err := initiative.CheckTransition(initiative.Status(in.Status), to, deref(in.OwnerID), initiative.Actor{Subject: p.Subject, Roles: p.Roles})
	var te *initiative.TransitionError
	if errors.As(err, &te) {
		if te.Forbidden {
			return Forbidden("%s", te.Error())
		}
		allowed := initiative.Next(initiative.Status(in.Status))
		return InvalidState("status", "%s; allowed from %s: %v", te.Error(), in.Status, allowed)
	}
	return err
}

// recordStatusChange keeps the history, archives projects with their
// initiative and emits initiative.status_changed, all in the caller's transaction.
func recordStatusChange(ctx context.Context, t pgx.Tx, p *Principal, from string, in dbsqlc.Initiative, reason string) error {
	if err := db.Q.InitiativeStatusHistoryAdd(ctx, t, dbsqlc.InitiativeStatusHistoryAddParams{
		TenantID: in.TenantID, InitiativeID: in.ID, FromStatus: &from, ToStatus: in.Status, Reason: reason, Actor: p.Subject,
	}); err != nil {
		return err
	}
	if initiative.ArchivesProjects(initiative.Status(in.Status)) {
		if err := db.Q.ProjectArchiveByInitiative(ctx, t, dbsqlc.ProjectArchiveByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID}); err != nil {
			return err
		}
	}
	_, err := outbox.Write(ctx, t, in.TenantID, outbox.InitiativeStatusChanged, initiative.StatusChangedEvent{
		InitiativeID: in.ID.String(), FromStatus: initiative.Status(from), ToStatus: initiative.Status(in.Status), Reason: reason, Actor: p.Subject,
		ChangedAt: timestamp(in.UpdatedAt), Initiative: toInitiativeJSON(in),
	})
	return err
}

func (s *Server) changeInitiativeStatus(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	to := b.Enum("status", true, statusNames)
	reason := b.Text("reason", false, maxReasonLen)
	if err := b.Done(); err != nil {
		return err
	}
	in, err := loadWritableInitiative(c)
	if err != nil {
		return err
	}
	if err := authorizeTransition(principal(c), in, initiative.Status(*to)); err != nil {
		return err
	}
	return s.setStatus(c, in, *to, deref(reason), fiber.StatusOK)
}

func (s *Server) setStatus(c *fiber.Ctx, in dbsqlc.Initiative, to, reason string, status int) error {
	ctx, p, t := c.UserContext(), principal(c), tx(c)
	from := in.Status
	in.Status = to
	updated, err := db.Q.InitiativeUpdate(ctx, t, dbsqlc.InitiativeUpdateParams{
		TenantID: in.TenantID, ID: in.ID, Name: in.Name, Description: in.Description, Status: in.Status,
		Industry: in.Industry, Segment: in.Segment, OwnerID: in.OwnerID,
		ExpectedStartDate: in.ExpectedStartDate, ExpectedEndDate: in.ExpectedEndDate,
	})
	if err != nil {
		return err
	}
	if err := recordStatusChange(ctx, t, p, from, updated, reason); err != nil {
		return err
	}
	if status == fiber.StatusNoContent {
		return c.SendStatus(status)
	}
	return c.Status(status).JSON(toInitiativeJSON(updated))
}

// archiveInitiative is DELETE: from any state to archived, projects included.
func (s *Server) archiveInitiative(c *fiber.Ctx) error {
	in, err := loadWritableInitiative(c)
	if err != nil {
		return err
	}
	return s.setStatus(c, in, string(initiative.Archived), "deleted", fiber.StatusNoContent)
}

func (s *Server) initiativeStatusHistory(c *fiber.Ctx) error {
	in, err := loadInitiative(c, false)
	if err != nil {
		return err
	}
	rows, err := db.Q.InitiativeStatusHistoryList(c.UserContext(), tx(c), dbsqlc.InitiativeStatusHistoryListParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	out := struct {
		Data []statusChangeJSON `json:"data"`
	}{Data: make([]statusChangeJSON, 0, len(rows))}
	for _, r := range rows {
		e := statusChangeJSON{Kind: r.Kind, FromStatus: r.FromStatus, ToStatus: r.ToStatus, Reason: r.Reason, Actor: r.Actor, CreatedAt: timestamp(r.CreatedAt)}
		if r.Kind == historyOwner {
			e.FromOwnerID, e.ToOwnerID = r.FromOwner, r.ToOwner
		}
		out.Data = append(out.Data, e)
	}
	return c.JSON(out)
}

func (s *Server) listProjects(c *fiber.Ctx) error {
	in, err := loadInitiative(c, false)
	if err != nil {
		return err
	}
	rows, err := db.Q.ProjectListByInitiative(c.UserContext(), tx(c), dbsqlc.ProjectListByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	out := struct {
		Data []projectJSON `json:"data"`
	}{Data: make([]projectJSON, 0, len(rows))}
	for _, r := range rows {
		out.Data = append(out.Data, toProjectJSON(r))
	}
	return c.JSON(out)
}

func (s *Server) createProject(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	name := b.Text("name", true, maxNameLen)
	description := b.Text("description", false, maxDescriptionLen)
	if err := b.Done(); err != nil {
		return err
	}
	in, err := loadWritableInitiative(c)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	existing, err := db.Q.ProjectListByInitiative(ctx, t, dbsqlc.ProjectListByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	if err := initiative.CheckCanAddProject(len(existing)); err != nil {
		return initiativeError(err)
	}
	p, err := db.Q.ProjectCreate(ctx, t, dbsqlc.ProjectCreateParams{TenantID: in.TenantID, InitiativeID: in.ID, Name: *name, Description: deref(description)})
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toProjectJSON(p))
}
