package api

import (
	"errors"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/wire"
)

// Limits of section 8 and our own bounds on free text.
const (
	maxNameLen            = 200
	maxDescriptionLen     = 10_000
	maxShortTextLen       = 100
	maxOwnerLen           = 255
	maxInitiativePageSize = 200
)

var (
	initiativeSorts = []string{"created_at", "updated_at", "name", "status", "expected_start_date", "expected_end_date"}
)

// initiativeDetailJSON is the single-record GET: the initiative with its relations.
type initiativeDetailJSON struct {
	initiative.View
	Projects     []initiative.ProjectView    `json:"projects"`
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

func (s *Server) listInitiatives(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxInitiativePageSize)
	sort := q.oneOf("sort", "created_at", initiativeSorts)
	order := q.oneOf("order", "desc", []string{"asc", "desc"})
	var status, industry *string
	if v, ok := q.str("status"); ok {
		v = q.oneOf("status", "", initiative.StatusNames)
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
	rows, err := db.Q.InitiativeList(ctx, db.WithSettings(requestTx(c), db.PlanPerCall), dbsqlc.InitiativeListParams{
		TenantID: p.TenantID, Status: status, Industry: industry, Sort: sort, SortDesc: order == "desc",
		PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.InitiativeListRow) int64 { return r.Total },
		func(r dbsqlc.InitiativeListRow) initiative.View { return initiative.ViewOf(r.Initiative) },
		func() (int64, error) {
			return db.Q.InitiativeCount(ctx, requestTx(c), dbsqlc.InitiativeCountParams{TenantID: p.TenantID, Status: status, Industry: industry})
		})
}

func (s *Server) createInitiative(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	f := initiative.Read(b, true)
	if err := b.Done(); err != nil {
		return err
	}
	out, err := initiative.Create(c.UserContext(), requestTx(c), initiativeActor(c), []initiative.Fields{f})
	if err = firstInitiativeError(out, err); err != nil {
		return err
	}
	body := initiative.ViewOf(out[0].Initiative)
	c.Location("/v1/initiatives/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// initiativeActor is the caller as the initiative rules ask about them.
func initiativeActor(c *fiber.Ctx) initiative.Actor {
	p := principal(c)
	return initiative.Actor{TenantID: p.TenantID, Subject: p.Subject, Roles: p.Roles()}
}

// firstInitiativeError is the error of a batch of one: the operation's, else the item's.
func firstInitiativeError(out []initiative.Outcome, err error) error {
	if err == nil {
		err = out[0].Err
	}
	return initiativeError(err)
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
		in, err = db.Q.InitiativeGetForUpdate(c.UserContext(), requestTx(c), dbsqlc.InitiativeGetForUpdateParams(params))
	} else {
		in, err = db.Q.InitiativeGet(c.UserContext(), requestTx(c), params)
	}
	return in, found("initiative", err)
}

// loadLockedInitiative is loadInitiative for a write: locked, at the version If-Match names.
func loadLockedInitiative(c *fiber.Ctx) (dbsqlc.Initiative, error) {
	in, err := loadInitiative(c, true)
	if err == nil {
		err = checkIfMatch(c, in.UpdatedAt)
	}
	return in, err
}

// initiativeError maps the typed errors of internal/initiative once; anything else passes through.
func initiativeError(err error) error {
	if te, ok := errors.AsType[*initiative.TransitionError](err); ok {
		if te.Forbidden {
			return Forbidden("%s", te.Error())
		}
		return InvalidState("status", "%s", te.Explain())
	}
	if oe, ok := errors.AsType[*initiative.OwnerChangeError](err); ok {
		return Forbidden("%s", oe.Error())
	}
	switch {
	case errors.Is(err, initiative.ErrLiveLimit), errors.Is(err, initiative.ErrProjectLimit), errors.Is(err, initiative.ErrArchived):
		return Conflict("%s", err.Error())
	case errors.Is(err, initiative.ErrNameTaken):
		return AlreadyExists("%s", err.Error())
	case errors.Is(err, initiative.ErrEndBeforeStart):
		return InvalidParameter("%s", err.Error())
	}
	return err
}

func (s *Server) getInitiative(c *fiber.Ctx) error {
	in, err := loadInitiative(c, false)
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
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
	out := initiativeDetailJSON{View: initiative.ViewOf(in), Projects: make([]initiative.ProjectView, 0, len(projects))}
	out.setValue(value)
	statuses := make([]string, len(projects))
	for i, p := range projects {
		out.Projects = append(out.Projects, initiative.ProjectViewOf(p))
		statuses[i] = p.Status
	}
	changes := make([]time.Time, 0, len(history))
	for _, h := range history {
		if h.Kind == initiative.HistoryStatus { // owner entries change no status
			changes = append(changes, h.CreatedAt)
		}
	}
	activity := initiative.Measure(statuses, changes, now)
	out.Metrics.ProjectsTotal, out.Metrics.ProjectsActive = activity.ProjectsTotal, activity.ProjectsActive
	out.Metrics.StatusChanges, out.Metrics.DaysInCurrentState = activity.StatusChanges, activity.DaysInCurrentState
	review, err := db.Q.InitiativeReviewLatest(ctx, tx, dbsqlc.InitiativeReviewLatestParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err == nil {
		out.Review = &reviewJSON{WorkflowID: review.WorkflowID, StartedAt: wire.Timestamp(review.StartedAt), RemindersSent: int(review.RemindersSent),
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
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	f := initiative.Read(b, replace)
	if err := b.Done(); err != nil {
		return err
	}
	in, err := loadLockedInitiative(c)
	if err != nil {
		return err
	}
	out, err := initiative.Replace(c.UserContext(), requestTx(c), initiativeActor(c), []initiative.Replacement{{Current: in, Fields: f, Replace: replace}})
	if err = firstInitiativeError(out, err); err != nil {
		return err
	}
	return sendRecord(c, out[0].Initiative.UpdatedAt, initiative.ViewOf(out[0].Initiative))
}

func (s *Server) changeInitiativeStatus(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	r := initiative.ReadStatusRequest(b)
	if err := b.Done(); err != nil {
		return err
	}
	in, err := loadLockedInitiative(c)
	if err != nil {
		return err
	}
	out, err := initiative.ChangeStatus(c.UserContext(), requestTx(c), initiativeActor(c), []initiative.StatusChange{{Current: in, To: r.To, Reason: r.Reason}})
	if err = firstInitiativeError(out, err); err != nil {
		return err
	}
	return c.JSON(initiative.ViewOf(out[0].Initiative))
}

// archiveInitiative is DELETE: from any state to archived, projects included.
func (s *Server) archiveInitiative(c *fiber.Ctx) error {
	in, err := loadLockedInitiative(c)
	if err != nil {
		return err
	}
	out, err := initiative.ChangeStatus(c.UserContext(), requestTx(c), initiativeActor(c),
		[]initiative.StatusChange{{Current: in, To: initiative.Archived, Reason: "deleted", Deleting: true}})
	if err = firstInitiativeError(out, err); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) initiativeStatusHistory(c *fiber.Ctx) error {
	in, err := loadInitiative(c, false)
	if err != nil {
		return err
	}
	rows, err := db.Q.InitiativeStatusHistoryList(c.UserContext(), requestTx(c), dbsqlc.InitiativeStatusHistoryListParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	out := struct {
		Data []statusChangeJSON `json:"data"`
	}{Data: make([]statusChangeJSON, 0, len(rows))}
	for _, r := range rows {
		e := statusChangeJSON{Kind: r.Kind, FromStatus: r.FromStatus, ToStatus: r.ToStatus, Reason: r.Reason, Actor: r.Actor, CreatedAt: wire.Timestamp(r.CreatedAt)}
		if r.Kind == initiative.HistoryOwner {
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
	rows, err := db.Q.ProjectListByInitiative(c.UserContext(), requestTx(c), dbsqlc.ProjectListByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	out := struct {
		Data []initiative.ProjectView `json:"data"`
	}{Data: make([]initiative.ProjectView, 0, len(rows))}
	for _, r := range rows {
		out.Data = append(out.Data, initiative.ProjectViewOf(r))
	}
	return c.JSON(out)
}

func (s *Server) createProject(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	f := initiative.ReadProject(b)
	if err := b.Done(); err != nil {
		return err
	}
	in, err := loadLockedInitiative(c)
	if err != nil {
		return err
	}
	created, err := initiative.AddProjects(c.UserContext(), requestTx(c), in, []initiative.ProjectFields{f})
	if err != nil {
		return initiativeError(err)
	}
	return c.Status(fiber.StatusCreated).JSON(initiative.ProjectViewOf(created[0]))
}
