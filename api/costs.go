package api

// Costs of an initiative (issue 9): the investment side of every ROI figure.
// Rules live in internal/cost (limits, archived, the definition) and the
// schedule a cost expands to in internal/finance.

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/cost"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
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
		Recurrence: c.Recurrence, CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
	if c.EndPeriod != nil {
		out.EndPeriod = new(finance.MonthOfTime(*c.EndPeriod).String())
	}
	return out
}

// costError maps the 409s of internal/cost; anything else passes through.
func costError(err error) error {
	if errors.Is(err, cost.ErrLimitReached) || errors.Is(err, cost.ErrInitiativeArchived) {
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
	ctx, t, tenant := c.UserContext(), tx(c), principal(c).TenantID
	if _, err := db.Q.InitiativeGet(ctx, t, dbsqlc.InitiativeGetParams{TenantID: tenant, ID: id}); err != nil {
		return found("initiative", err)
	}
	rows, err := db.Q.CostList(ctx, t, dbsqlc.CostListParams{TenantID: tenant, InitiativeID: id, PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.CostListRow) int64 { return r.Total },
		func(r dbsqlc.CostListRow) costJSON { return toCostJSON(r.InitiativeCost) },
		func() (int64, error) {
			return db.Q.CostCountByInitiative(ctx, t, dbsqlc.CostCountByInitiativeParams{TenantID: tenant, InitiativeID: id})
		})
}

// costFields are the writable fields of create, PUT and PATCH as sent.
type costFields struct {
	name, category, currency, period, recurrence, endPeriod *string
	amount                                                  *float64
	initiativeID                                            *string
	has                                                     map[string]bool // which fields the body carried
}

var writableCostFields = []string{"name", "category", "amount", "currency", "period", "recurrence", "end_period"}

// readCostFields reads a cost body. full (create, PUT) needs every field but
// recurrence (default once) and end_period (default none).
func readCostFields(c *fiber.Ctx, full bool) (costFields, error) {
	b, err := parseBody(c)
	if err != nil {
		return costFields{}, err
	}
	f := readCost(b, full)
	if err := b.Done(); err != nil {
		return costFields{}, err
	}
	return f, nil
}

// readCost reads a cost body's fields (the body's errors are left in b): the
// single routes' reader and bulk import's.
func readCost(b *input.Object, full bool) costFields {
	f := costFields{has: map[string]bool{}}
	for _, name := range writableCostFields {
		f.has[name] = b.Has(name)
	}
	f.name = trimmed(b.Text("name", full || f.has["name"], maxNameLen))
	f.category = b.Text("category", full || f.has["category"], maxShortTextLen)
	f.amount = b.Number("amount", full || f.has["amount"])
	f.currency = b.Text("currency", full || f.has["currency"], maxShortTextLen)
	f.period = b.Text("period", full || f.has["period"], maxShortTextLen)
	f.recurrence = b.Text("recurrence", !full && f.has["recurrence"], maxShortTextLen) // null in a full body: the default
	f.endPeriod = b.Text("end_period", false, maxShortTextLen)
	f.initiativeID = b.Text("initiative_id", false, maxShortTextLen)
	b.Ignore("id", "created_at", "updated_at")
	return f
}

// definition is the stored cost with the sent fields laid over it (PUT
// and create start from nothing: recurrence once, no end).
func (f costFields) definition(base dbsqlc.InitiativeCost, full bool) (name string, d cost.Definition) {
	d = cost.Definition{Category: cost.Category(base.Category), Amount: money.Stored(base.Amount), Currency: base.Currency, Recurrence: finance.Recurrence(base.Recurrence)}
	if !base.Period.IsZero() {
		d.Period = finance.MonthOfTime(base.Period).String()
	}
	if base.EndPeriod != nil {
		d.EndPeriod = new(finance.MonthOfTime(*base.EndPeriod).String())
	}
	name = base.Name
	if full {
		d.Recurrence, d.EndPeriod = finance.Once, nil
	}
	if f.name != nil {
		name = *f.name
	}
	if f.category != nil {
		d.Category = cost.Category(*f.category)
	}
	if f.amount != nil {
		d.Amount = *f.amount
	}
	if f.currency != nil {
		d.Currency = *f.currency
	}
	if f.period != nil {
		d.Period = *f.period
	}
	if f.recurrence != nil {
		d.Recurrence = finance.Recurrence(*f.recurrence)
	}
	if full || f.has["end_period"] {
		d.EndPeriod = f.endPeriod
	}
	return name, d
}

// loadCostInitiative finds the initiative of the path for a cost write:
// locked (the cost limit counts under the lock), writable, and named by the
// body's initiative_id if it sends one (a cost never moves between initiatives).
func loadCostInitiative(c *fiber.Ctx, f costFields) (dbsqlc.Initiative, error) {
	if err := parseQuery(c).done(); err != nil { // cost writes take no query parameters
		return dbsqlc.Initiative{}, err
	}
	id, err := pathID(c, "id", "initiative")
	if err != nil {
		return dbsqlc.Initiative{}, err
	}
	in, err := lockInitiative(c, id)
	if err != nil {
		return in, err
	}
	if f.initiativeID != nil && *f.initiativeID != in.ID.String() {
		return in, Invalid(FieldError{Field: "initiative_id", Code: "invalid_value", Message: "a cost belongs to the initiative of its path and cannot move"})
	}
	return in, costError(cost.CheckWritable(initiative.Status(in.Status)))
}

func (s *Server) createCost(c *fiber.Ctx) error {
	f, err := readCostFields(c, true)
	if err != nil {
		return err
	}
	in, err := loadCostInitiative(c, f)
	if err != nil {
		return err
	}
	name, def := f.definition(dbsqlc.InitiativeCost{}, true)
	checked, err := cost.CheckDefinition(def)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	n, err := db.Q.CostCountByInitiative(ctx, t, dbsqlc.CostCountByInitiativeParams{TenantID: in.TenantID, InitiativeID: in.ID})
	if err != nil {
		return err
	}
	if err := cost.CheckCanAdd(int(n)); err != nil {
		return costError(err)
	}
	row, err := db.Q.CostCreate(ctx, t, dbsqlc.CostCreateParams{
		TenantID: in.TenantID, InitiativeID: in.ID, Name: name, Category: string(def.Category), Amount: money.FromInput(def.Amount),
		Currency: def.Currency, Period: checked.Period.FirstDay(), Recurrence: string(def.Recurrence), EndPeriod: firstDay(checked.End),
	})
	if err != nil {
		return err
	}
	body := toCostJSON(row)
	c.Location("/v1/initiatives/" + body.InitiativeID + "/costs/" + body.ID)
	return sendRecord(c, row.UpdatedAt, body, fiber.StatusCreated) // no GET of one cost: its first ETag comes here
}

func (s *Server) replaceCost(c *fiber.Ctx) error { return s.updateCost(c, true) }
func (s *Server) patchCost(c *fiber.Ctx) error   { return s.updateCost(c, false) }

// updateCost is PUT (replace: recurrence back to once and end_period cleared
// unless sent) and PATCH (only the fields sent change; null clears end_period).
func (s *Server) updateCost(c *fiber.Ctx, replace bool) error {
	f, err := readCostFields(c, replace)
	if err != nil {
		return err
	}
	in, err := loadCostInitiative(c, f)
	if err != nil {
		return err
	}
	stored, err := loadCost(c, in)
	if err != nil {
		return err
	}
	name, def := f.definition(stored, replace)
	checked, err := cost.CheckDefinition(def)
	if err != nil {
		return err
	}
	row, err := db.Q.CostUpdate(c.UserContext(), tx(c), dbsqlc.CostUpdateParams{
		TenantID: in.TenantID, ID: stored.ID, Name: name, Category: string(def.Category), Amount: money.FromInput(def.Amount),
		Currency: def.Currency, Period: checked.Period.FirstDay(), Recurrence: string(def.Recurrence), EndPeriod: firstDay(checked.End),
	})
	if err != nil {
		return err
	}
	return sendRecord(c, row.UpdatedAt, toCostJSON(row))
}

// loadCost finds a cost of the initiative, locked for update: a cost of
// another initiative (or tenant) is not found.
func loadCost(c *fiber.Ctx, in dbsqlc.Initiative) (dbsqlc.InitiativeCost, error) {
	id, err := pathID(c, "cost_id", "cost")
	if err != nil {
		return dbsqlc.InitiativeCost{}, err
	}
	row, err := db.Q.CostGetForUpdate(c.UserContext(), tx(c), dbsqlc.CostGetForUpdateParams{TenantID: in.TenantID, InitiativeID: in.ID, ID: id})
	if err := found("cost", err); err != nil {
		return row, err
	}
	return row, checkIfMatch(c, row.UpdatedAt)
}

func (s *Server) deleteCost(c *fiber.Ctx) error {
	in, err := loadCostInitiative(c, costFields{})
	if err != nil {
		return err
	}
	stored, err := loadCost(c, in)
	if err != nil {
		return err
	}
	if err := db.Q.CostDelete(c.UserContext(), tx(c), dbsqlc.CostDeleteParams{TenantID: in.TenantID, ID: stored.ID}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
