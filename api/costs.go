package api

// Costs of an initiative (issue 9): the investment side of every ROI figure.
// Rules live in internal/cost (limits, archived, the definition) and the
// schedule a cost expands to in internal/finance.

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/cost"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/wire"
)

const maxCostPageSize = 500

// costsRoutes mounts the costs of an initiative on the authenticated /v1 group.
func (s *Server) costsRoutes(v1 fiber.Router) {
	v1.Get("/initiatives/:id/costs", s.require(rbac.InitiativesRead), s.listCosts)
	v1.Post("/initiatives/:id/costs", s.require(rbac.InitiativesWrite), s.createCost)
	v1.Put("/initiatives/:id/costs/:cost_id", s.require(rbac.InitiativesWrite), s.replaceCost)
	v1.Patch("/initiatives/:id/costs/:cost_id", s.require(rbac.InitiativesWrite), s.patchCost)
	v1.Delete("/initiatives/:id/costs/:cost_id", s.require(rbac.InitiativesWrite), s.deleteCost)
}

// costJSON is the cost resource.
type costJSON struct {
	ID           string  `json:"id"`
	InitiativeID string  `json:"initiative_id"`
	Name         string  `json:"name"`
	Category     string  `json:"category"`
	Amount       float64 `json:"amount"`
	Currency     string  `json:"currency"`
	Period       string  `json:"period"`
	Recurrence   string  `json:"recurrence"`
	EndPeriod    *string `json:"end_period"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
}

func toCostJSON(c dbsqlc.InitiativeCost) costJSON {
	out := costJSON{
		ID: c.ID.String(), InitiativeID: c.InitiativeID.String(), Name: c.Name, Category: c.Category,
		Amount: money.Amount(c.Amount, c.Currency), Currency: c.Currency, Period: finance.MonthOfTime(c.Period).String(),
		Recurrence: c.Recurrence, CreatedAt: wire.Timestamp(c.CreatedAt), UpdatedAt: wire.Timestamp(c.UpdatedAt),
	}
	if c.EndPeriod != nil {
		out.EndPeriod = new(finance.MonthOfTime(*c.EndPeriod).String())
	}
	return out
}

// costError maps the typed errors of internal/cost's operations;
// validation errors (422) and anything else pass through.
func costError(err error) error {
	switch {
	case errors.Is(err, cost.ErrInitiativeNotFound):
		return NotFound("initiative")
	case errors.Is(err, cost.ErrNotFound):
		return NotFound("cost")
	case errors.Is(err, cost.ErrLimitReached), errors.Is(err, cost.ErrInitiativeArchived):
		return Conflict("%s", err.Error())
	}
	return err
}

func (s *Server) listCosts(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxCostPageSize)
	if err := q.done(); err != nil {
		return err
	}
	id, err := pathID(c, "id", "initiative")
	if err != nil {
		return err
	}
	ctx, tx, tenant := c.UserContext(), requestTx(c), principal(c).TenantID
	if _, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: tenant, ID: id}); err != nil {
		return found("initiative", err)
	}
	rows, err := db.Q.CostList(ctx, tx, dbsqlc.CostListParams{TenantID: tenant, InitiativeID: id, PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.CostListRow) int64 { return r.Total },
		func(r dbsqlc.CostListRow) costJSON { return toCostJSON(r.InitiativeCost) },
		func() (int64, error) {
			return db.Q.CostCountByInitiative(ctx, tx, dbsqlc.CostCountByInitiativeParams{TenantID: tenant, InitiativeID: id})
		})
}

// readCostBody reads a cost body (cost.ReadFields) and the path: the cost
// writes take no query parameters, and the initiative comes from the path.
func readCostBody(c *fiber.Ctx, full bool) (cost.Fields, uuid.UUID, error) {
	b, err := parseBody(c)
	if err != nil {
		return cost.Fields{}, uuid.Nil, err
	}
	f := cost.ReadFields(b, full)
	if err := b.Done(); err != nil {
		return f, uuid.Nil, err
	}
	if err := parseQuery(c).done(); err != nil {
		return f, uuid.Nil, err
	}
	id, err := pathID(c, "id", "initiative")
	return f, id, err
}

func costActor(c *fiber.Ctx) cost.Actor { return cost.Actor{TenantID: principal(c).TenantID} }

func (s *Server) createCost(c *fiber.Ctx) error {
	f, initiativeID, err := readCostBody(c, true)
	if err != nil {
		return err
	}
	row, err := saveCost(c, cost.Change{InitiativeID: initiativeID, Fields: f, Replace: true})
	if err != nil {
		return err
	}
	body := toCostJSON(row)
	c.Location("/v1/initiatives/" + body.InitiativeID + "/costs/" + body.ID)
	return sendRecord(c, row.UpdatedAt, body, fiber.StatusCreated) // no GET of one cost: its first ETag comes here
}

// saveCost saves one change through cost.SaveCosts, the path a costs import takes too.
func saveCost(c *fiber.Ctx, change cost.Change) (dbsqlc.InitiativeCost, error) {
	outcomes, err := cost.SaveCosts(c.UserContext(), requestTx(c), costActor(c), []cost.Change{change}, cost.SaveOptions{Touch: true})
	if err != nil {
		return dbsqlc.InitiativeCost{}, err
	}
	return outcomes[0].Cost, costError(outcomes[0].Err)
}

func (s *Server) replaceCost(c *fiber.Ctx) error { return s.updateCost(c, true) }
func (s *Server) patchCost(c *fiber.Ctx) error   { return s.updateCost(c, false) }

// updateCost is PUT (replace: recurrence back to once and end_period cleared
// unless sent) and PATCH (only the fields sent change; null clears end_period).
func (s *Server) updateCost(c *fiber.Ctx, replace bool) error {
	f, initiativeID, err := readCostBody(c, replace)
	if err != nil {
		return err
	}
	id, err := pathID(c, "cost_id", "cost")
	if err != nil {
		return err
	}
	row, err := saveCost(c, cost.Change{InitiativeID: initiativeID, ID: &id, Fields: f, Replace: replace, Check: ifMatch(c)})
	if err != nil {
		return err
	}
	return sendRecord(c, row.UpdatedAt, toCostJSON(row))
}

func (s *Server) deleteCost(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	initiativeID, err := pathID(c, "id", "initiative")
	if err != nil {
		return err
	}
	id, err := pathID(c, "cost_id", "cost")
	if err != nil {
		return err
	}
	if err := cost.DeleteCost(c.UserContext(), requestTx(c), costActor(c), initiativeID, id, ifMatch(c)); err != nil {
		return costError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
