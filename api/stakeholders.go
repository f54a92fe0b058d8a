package api

// Stakeholders of initiatives and their engagements. The rules
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

// stakeholderError maps the typed errors of internal/stakeholder once; anything else passes through.
func stakeholderError(err error) error {
	switch {
	case errors.Is(err, stakeholder.ErrLimitReached), errors.Is(err, stakeholder.ErrInitiativeArchived), errors.Is(err, stakeholder.ErrEngagementLimit):
		return Conflict("%s", err.Error())
	case errors.Is(err, stakeholder.ErrEmailTaken):
		return AlreadyExists("%s", err.Error())
	case errors.Is(err, stakeholder.ErrInitiativeNotFound):
		return NotFound("initiative")
	case errors.Is(err, stakeholder.ErrStakeholderNotFound):
		return NotFound("stakeholder")
	}
	return err
}

// stakeholderActor is the caller as the stakeholder operations record them.
func stakeholderActor(c *fiber.Ctx) stakeholder.Actor {
	p := principal(c)
	return stakeholder.Actor{TenantID: p.TenantID, Subject: p.Subject}
}

// firstStakeholderError is the error of a batch of one: the operation's, else the item's.
func firstStakeholderError(out []stakeholder.Outcome, err error) error {
	if err == nil {
		err = out[0].Err
	}
	return stakeholderError(err)
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
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.StakeholderList(ctx, db.WithSettings(tx, db.PlanPerCall), p)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.StakeholderListRow) int64 { return r.Total },
		func(r dbsqlc.StakeholderListRow) stakeholder.View { return stakeholder.ViewOf(r.Stakeholder, now) },
		func() (int64, error) {
			return db.Q.StakeholderCount(ctx, tx, dbsqlc.StakeholderCountParams{TenantID: p.TenantID, InitiativeID: p.InitiativeID,
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

// readStakeholderBody reads a stakeholder body (stakeholder.ReadBody).
func readStakeholderBody(c *fiber.Ctx, full, create bool) (stakeholder.Body, error) {
	b, err := parseBody(c)
	if err != nil {
		return stakeholder.Body{}, err
	}
	f := stakeholder.ReadBody(b, full, create)
	return f, b.Done()
}

// loadStakeholder finds the stakeholder of the path.
func loadStakeholder(c *fiber.Ctx) (dbsqlc.Stakeholder, error) {
	id, err := pathID(c, "id", "stakeholder")
	if err != nil {
		return dbsqlc.Stakeholder{}, err
	}
	s, err := db.Q.StakeholderGet(c.UserContext(), requestTx(c), dbsqlc.StakeholderGetParams{TenantID: principal(c).TenantID, ID: id})
	return s, found("stakeholder", err)
}

// loadLockedStakeholder finds the stakeholder of the path for a write:
// locked, with its initiative's status (locked for share), at the version If-Match names.
func loadLockedStakeholder(c *fiber.Ctx) (dbsqlc.StakeholderGetLockedRow, error) {
	id, err := pathID(c, "id", "stakeholder")
	if err != nil {
		return dbsqlc.StakeholderGetLockedRow{}, err
	}
	row, err := db.Q.StakeholderGetLocked(c.UserContext(), requestTx(c), dbsqlc.StakeholderGetLockedParams{TenantID: principal(c).TenantID, ID: id})
	if err := found("stakeholder", err); err != nil {
		return row, err
	}
	return row, checkIfMatch(c, row.Stakeholder.UpdatedAt)
}

func (s *Server) createStakeholder(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readStakeholderBody(c, true, true)
	if err != nil {
		return err
	}
	initiativeID, err := uuid.Parse(*f.InitiativeID)
	if err != nil {
		return NotFound("initiative")
	}
	out, err := stakeholder.Create(c.UserContext(), requestTx(c), stakeholderActor(c), []stakeholder.New{{InitiativeID: initiativeID, Body: f}})
	if err = firstStakeholderError(out, err); err != nil {
		return err
	}
	body := stakeholder.ViewOf(out[0].Stakeholder, time.Now())
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
	return sendRecord(c, row.UpdatedAt, stakeholder.ViewOf(row, time.Now()))
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
	f, err := readStakeholderBody(c, replace, false)
	if err != nil {
		return err
	}
	cur, err := loadLockedStakeholder(c)
	if err != nil {
		return err
	}
	out, err := stakeholder.Replace(c.UserContext(), requestTx(c), stakeholderActor(c), []stakeholder.Replacement{
		{Current: cur.Stakeholder, InitiativeStatus: initiative.Status(cur.InitiativeStatus), Body: f, Full: replace}})
	if err = firstStakeholderError(out, err); err != nil {
		return err
	}
	return sendRecord(c, out[0].Stakeholder.UpdatedAt, stakeholder.ViewOf(out[0].Stakeholder, time.Now()))
}

func (s *Server) deleteStakeholder(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	cur, err := loadLockedStakeholder(c)
	if err != nil {
		return err
	}
	if err := stakeholder.Delete(c.UserContext(), requestTx(c), cur.Stakeholder, initiative.Status(cur.InitiativeStatus)); err != nil {
		return stakeholderError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) logEngagement(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	e := stakeholder.ReadEngagement(b)
	if err := b.Done(); err != nil {
		return err
	}
	cur, err := loadLockedStakeholder(c)
	if err != nil {
		return err
	}
	out, err := stakeholder.LogEngagements(c.UserContext(), requestTx(c), stakeholderActor(c), time.Now(),
		[]stakeholder.EngagementEntry{{StakeholderID: cur.Stakeholder.ID, Engagement: e}})
	if err == nil {
		err = out[0].Err
	}
	if err != nil {
		return stakeholderError(err)
	}
	return c.Status(fiber.StatusCreated).JSON(out[0].Logged)
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
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.EngagementList(ctx, tx, dbsqlc.EngagementListParams{TenantID: cur.TenantID, StakeholderID: cur.ID,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.EngagementListRow) int64 { return r.Total },
		func(r dbsqlc.EngagementListRow) stakeholder.EngagementView {
			return stakeholder.EngagementViewOf(r.StakeholderEngagement)
		},
		func() (int64, error) {
			return db.Q.EngagementCount(ctx, tx, dbsqlc.EngagementCountParams{TenantID: cur.TenantID, StakeholderID: cur.ID})
		})
}
