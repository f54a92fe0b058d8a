package api

// Business cases: a packaged value argument built from one
// initiative, its states (draft → pending_approval → approved | rejected),
// versions and the figures frozen at approval. Rules live in
// internal/businesscase; the approval workflow in workflows/businesscase_approval.go.

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/export"
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

// businessCaseError maps the typed errors of internal/businesscase once; anything else passes through.
func businessCaseError(err error) error {
	if errors.Is(err, businesscase.ErrInitiativeNotFound) {
		return NotFound("initiative")
	}
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
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.BusinessCaseList(ctx, tx, p)
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.BusinessCaseListRow) int64 { return r.Total },
		func(r dbsqlc.BusinessCaseListRow) businesscase.View { return businesscase.ViewOf(r.BusinessCase) },
		func() (int64, error) {
			return db.Q.BusinessCaseCount(ctx, tx, dbsqlc.BusinessCaseCountParams{TenantID: p.TenantID, InitiativeID: p.InitiativeID, Status: p.Status})
		})
}

// businessCaseActor is the caller as the business case operations record them.
func businessCaseActor(c *fiber.Ctx) businesscase.Actor {
	p := principal(c)
	return businesscase.Actor{TenantID: p.TenantID, Subject: p.Subject}
}

// readBusinessCaseBody reads a case body (businesscase.ReadBody).
func readBusinessCaseBody(c *fiber.Ctx, full, create bool) (businesscase.Body, error) {
	b, err := parseBody(c)
	if err != nil {
		return businesscase.Body{}, err
	}
	f := businesscase.ReadBody(b, full, create)
	return f, b.Done()
}

func (s *Server) createBusinessCase(c *fiber.Ctx) error {
	f, err := readBusinessCaseBody(c, true, true)
	if err != nil {
		return err
	}
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	row, err := businesscase.Create(c.UserContext(), requestTx(c), businessCaseActor(c), f)
	if err != nil {
		return businessCaseError(err)
	}
	body := businesscase.ViewOf(row)
	c.Location("/v1/business-cases/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// loadBusinessCase finds the case of the path; forUpdate locks it.
func loadBusinessCase(c *fiber.Ctx, forUpdate bool) (dbsqlc.BusinessCase, error) {
	id, err := pathID(c, "id", "business case")
	if err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	var row dbsqlc.BusinessCase
	if forUpdate {
		row, err = db.Q.BusinessCaseGetForUpdate(c.UserContext(), requestTx(c), dbsqlc.BusinessCaseGetForUpdateParams{TenantID: principal(c).TenantID, ID: id})
		if err == nil {
			return row, checkIfMatch(c, row.UpdatedAt)
		}
	} else {
		row, err = db.Q.BusinessCaseGet(c.UserContext(), requestTx(c), dbsqlc.BusinessCaseGetParams{TenantID: principal(c).TenantID, ID: id})
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
	body := businesscase.ViewOf(row)
	round, err := db.Q.BusinessCaseRoundLatest(c.UserContext(), requestTx(c), dbsqlc.BusinessCaseRoundLatestParams{TenantID: row.TenantID, BusinessCaseID: row.ID})
	switch {
	case err == nil:
		body.ApprovalRound = new(businesscase.RoundViewOf(round))
	case !db.IsNotFound(err):
		return err
	}
	return sendRecord(c, row.UpdatedAt, body)
}

func (s *Server) replaceBusinessCase(c *fiber.Ctx) error { return s.updateBusinessCase(c, true) }
func (s *Server) patchBusinessCase(c *fiber.Ctx) error   { return s.updateBusinessCase(c, false) }

// loadLockedBusinessCase locks the case of the path for a write; the route takes no query parameters.
func loadLockedBusinessCase(c *fiber.Ctx) (dbsqlc.BusinessCase, error) {
	if err := parseQuery(c).done(); err != nil {
		return dbsqlc.BusinessCase{}, err
	}
	return loadBusinessCase(c, true)
}

// updateBusinessCase is PUT (name, template and sections required; content
// replaced, absent = none) and PATCH (only what is sent changes).
func (s *Server) updateBusinessCase(c *fiber.Ctx, replace bool) error {
	f, err := readBusinessCaseBody(c, replace, false)
	if err != nil {
		return err
	}
	row, err := loadLockedBusinessCase(c)
	if err != nil {
		return err
	}
	updated, err := businesscase.Update(c.UserContext(), requestTx(c), row, f, replace)
	if err != nil {
		return businessCaseError(err)
	}
	return sendRecord(c, updated.UpdatedAt, businesscase.ViewOf(updated))
}

func (s *Server) deleteBusinessCase(c *fiber.Ctx) error {
	row, err := loadLockedBusinessCase(c)
	if err != nil {
		return err
	}
	if err := businesscase.Delete(c.UserContext(), requestTx(c), row); err != nil {
		return businessCaseError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) submitBusinessCase(c *fiber.Ctx) error {
	row, err := loadLockedBusinessCase(c)
	if err != nil {
		return err
	}
	updated, err := businesscase.Submit(c.UserContext(), requestTx(c), businessCaseActor(c), row)
	if err != nil {
		return businessCaseError(err)
	}
	return c.JSON(businesscase.ViewOf(updated))
}

// readDecision reads an approve or reject body.
func readDecision(c *fiber.Ctx, approving bool) (businesscase.Decision, error) {
	b, err := parseBody(c)
	if err != nil {
		return businesscase.Decision{}, err
	}
	d := businesscase.ReadDecision(b)
	if err := b.Done(); err != nil {
		return businesscase.Decision{}, err
	}
	if err := parseQuery(c).done(); err != nil {
		return businesscase.Decision{}, err
	}
	return d.Check(approving)
}

func (s *Server) approveBusinessCase(c *fiber.Ctx) error {
	d, err := readDecision(c, true)
	if err != nil {
		return err
	}
	row, err := loadBusinessCase(c, true)
	if err != nil {
		return err
	}
	updated, err := businesscase.Approve(c.UserContext(), requestTx(c), businessCaseActor(c), row, d, export.Freeze)
	if err != nil {
		return businessCaseError(err)
	}
	return c.JSON(businesscase.ViewOf(updated))
}

func (s *Server) rejectBusinessCase(c *fiber.Ctx) error {
	d, err := readDecision(c, false)
	if err != nil {
		return err
	}
	row, err := loadBusinessCase(c, true)
	if err != nil {
		return err
	}
	updated, err := businesscase.Reject(c.UserContext(), requestTx(c), businessCaseActor(c), row, d)
	if err != nil {
		return businessCaseError(err)
	}
	return c.JSON(businesscase.ViewOf(updated))
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
	_, facts, err := businesscase.FiguresNow(c.UserContext(), requestTx(c), row)
	if err != nil {
		return err
	}
	problems := businesscase.Validate(businesscase.DefinitionOf(row), facts)
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
	rows, err := db.Q.BusinessCaseVersions(c.UserContext(), requestTx(c), dbsqlc.BusinessCaseVersionsParams{TenantID: row.TenantID, LineageID: row.LineageID})
	if err != nil {
		return err
	}
	out := struct {
		Data []businesscase.View `json:"data"`
	}{Data: make([]businesscase.View, len(rows))}
	for i, r := range rows {
		out.Data[i] = businesscase.ViewOf(r)
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
	row, err := businesscase.NewVersion(c.UserContext(), requestTx(c), businessCaseActor(c), src)
	if err != nil {
		return businessCaseError(err)
	}
	body := businesscase.ViewOf(row)
	c.Location("/v1/business-cases/" + body.ID)
	return c.Status(fiber.StatusCreated).JSON(body)
}
