package api

// Dashboards: saved sets of analytics widgets, their evaluation in one call,
// and the built-in portfolio dashboard. Who may see and write which dashboard
// is internal/dashboard's rule; a widget's params are its analytics
// endpoint's query parameters, read into the operation's typed parameters
// (dashboard.ReadWidget) and evaluated by that operation (internal/analytics).

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/dashboard"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
)

const maxDashboardPageSize = 200

// dashboardsRoutes mounts /v1/dashboards on the authenticated /v1 group.
// Every route needs analytics:read; writing a shared dashboard also needs
// admin:config (checked against the dashboard, internal/dashboard).
func (s *Server) dashboardsRoutes(v1 fiber.Router) {
	read := s.require(rbac.AnalyticsRead)
	v1.Get("/dashboards", read, s.listDashboards)
	v1.Post("/dashboards", read, s.createDashboard)
	v1.Get("/dashboards/portfolio", read, s.portfolioDashboard) // before /:id
	v1.Get("/dashboards/:id", read, s.getDashboard)
	v1.Put("/dashboards/:id", read, s.replaceDashboard)
	v1.Delete("/dashboards/:id", read, s.deleteDashboard)
	v1.Get("/dashboards/:id/data", read, s.dashboardData)
}

type dashboardJSON struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Visibility  string             `json:"visibility"`
	OwnerID     string             `json:"owner_id"`
	Widgets     []dashboard.Widget `json:"widgets"`
	CreatedAt   string             `json:"created_at"`
	UpdatedAt   string             `json:"updated_at"`
}

// toDashboardJSON maps a stored dashboard. Its widgets were written by
// readDashboard (a JSON array of dashboard.Widget), so they always decode.
func toDashboardJSON(d dbsqlc.Dashboard) dashboardJSON {
	out := dashboardJSON{ID: d.ID.String(), Name: d.Name, Description: d.Description, Visibility: d.Visibility, OwnerID: d.OwnerID,
		CreatedAt: wire.Timestamp(d.CreatedAt), UpdatedAt: wire.Timestamp(d.UpdatedAt), Widgets: []dashboard.Widget{}}
	_ = json.Unmarshal(d.Widgets, &out.Widgets)
	for i := range out.Widgets {
		if out.Widgets[i].Params == nil {
			out.Widgets[i].Params = map[string]string{}
		}
	}
	return out
}

func dashboardCaller(c *fiber.Ctx) dashboard.Caller {
	p := principal(c)
	return dashboard.Caller{Subject: p.Subject, AdminConfig: p.Has(rbac.AdminConfig)}
}

// dashboardError maps internal/dashboard's errors; anything else passes through.
func dashboardError(err error) error {
	switch {
	case errors.Is(err, dashboard.ErrNotFound):
		return NotFound("dashboard")
	case errors.Is(err, dashboard.ErrForbidden):
		return Forbidden("%s", err.Error())
	case errors.Is(err, dashboard.ErrLimitReached):
		return Conflict("%s", err.Error())
	}
	return err
}

// readDashboard reads a dashboard body: name and widgets are required,
// description optional, visibility defaults to personal. Each widget is
// {type, title, params}; params are checked by the analytics endpoint's own
// parameter reader, so a widget that would answer 400 is refused here (422).
func readDashboard(c *fiber.Ctx) (dashboard.Fields, error) {
	b, err := parseBody(c)
	if err != nil {
		return dashboard.Fields{}, err
	}
	var f dashboard.Fields
	if v := input.Trimmed(b.Text("name", true, maxNameLen)); v != nil {
		f.Name = *v
	}
	f.Description = deref(b.Text("description", false, dashboard.MaxDescriptionLen))
	f.Visibility = dashboard.Personal
	if v := b.Enum("visibility", false, validation.Names(dashboard.Visibilities)); v != nil {
		f.Visibility = dashboard.Visibility(*v)
	}
	f.Widgets = readWidgets(b)
	b.Ignore("id", "owner_id", "created_at", "updated_at")
	if err := b.Done(); err != nil {
		return dashboard.Fields{}, err
	}
	return f, nil
}

// readWidgets reads the widgets array of a dashboard body.
func readWidgets(b *input.Object) []dashboard.Widget {
	if !b.Has("widgets") || b.IsNull("widgets") {
		b.Fail("widgets", "required", "is required: an array of at most %d widgets (it may be empty)", dashboard.MaxWidgets)
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.Raw("widgets"), &raw); err != nil {
		b.Fail("widgets", "invalid_type", "must be an array of widgets {type, title, params}")
		return nil
	}
	if len(raw) > dashboard.MaxWidgets {
		b.Fail("widgets", "too_long", "must have at most %d widgets (got %d)", dashboard.MaxWidgets, len(raw))
		return nil
	}
	out := make([]dashboard.Widget, 0, len(raw))
	for i, r := range raw {
		at := "widgets[" + strconv.Itoa(i) + "]"
		w, ok := input.Decode(r)
		if !ok {
			b.Fail(at, "invalid_type", "must be an object {type, title, params}")
			continue
		}
		var widget dashboard.Widget
		if v := w.Enum("type", true, validation.Names(dashboard.WidgetTypes)); v != nil {
			widget.Type = dashboard.WidgetType(*v)
		}
		if v := input.Trimmed(w.Text("title", true, dashboard.MaxTitleLength)); v != nil {
			widget.Title = *v
		}
		widget.Params = readWidgetParams(w)
		if w.Done() != nil {
			b.Adopt(at+".", w)
			continue
		}
		if err := checkWidgetParams(widget); err != nil {
			b.Fail(at+".params", "invalid_value", "%s", err.Error())
			continue
		}
		out = append(out, widget)
	}
	return out
}

// readWidgetParams reads params: an object of string values (absent or
// null: none).
func readWidgetParams(w *input.Object) map[string]string {
	params := map[string]string{}
	if !w.Has("params") || w.IsNull("params") {
		return params
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(w.Raw("params"), &raw); err != nil || raw == nil {
		w.Fail("params", "invalid_type", "must be an object of the analytics query parameters, each a string")
		return params
	}
	if len(raw) > dashboard.MaxParams {
		w.Fail("params", "too_long", "must have at most %d parameters", dashboard.MaxParams)
		return params
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range raw {
			if !yield(k) {
				return
			}
		}
	}) {
		var v string
		if err := json.Unmarshal(raw[k], &v); err != nil {
			w.Fail("params", "invalid_type", "every parameter must be a string, as in the query string")
			return params
		}
		if len(k) > dashboard.MaxParamLength || len(v) > dashboard.MaxParamLength {
			w.Fail("params", "too_long", "parameter names and values must be at most %d characters", dashboard.MaxParamLength)
			return params
		}
		params[k] = v
	}
	return params
}

// checkWidgetParams reads the params as the widget's analysis reads them.
func checkWidgetParams(w dashboard.Widget) error {
	_, err := dashboard.ReadWidget(w)
	return err
}

// evaluateWidget runs a widget's analysis (read by dashboard.ReadWidget) in
// the request's transaction: the body GET /v1/analytics/<type> would answer.
func evaluateWidget(ctx context.Context, tx pgx.Tx, scope analytics.Scope, w dashboard.Widget) (any, error) {
	a, err := dashboard.ReadWidget(w)
	if err != nil {
		return nil, analyticsError(err)
	}
	var body any
	switch {
	case a.ROI != nil:
		body, err = evaluate(ctx, tx, scope, *a.ROI, analytics.AnalyseROI, roiEnvelope)
	case a.Realization != nil:
		body, err = evaluate(ctx, tx, scope, *a.Realization, analytics.AnalyseRealization, realizationEnvelope)
	case a.Trends != nil:
		body, err = evaluate(ctx, tx, scope, *a.Trends, analytics.AnalyseTrends, trendsEnvelope)
	case a.Forecasts != nil:
		body, err = evaluate(ctx, tx, scope, *a.Forecasts, analytics.AnalyseForecasts, forecastsEnvelope)
	case a.Benchmarks != nil:
		body, err = evaluate(ctx, tx, scope, *a.Benchmarks, analytics.AnalyseBenchmarks, benchmarksEnvelope)
	}
	return body, analyticsError(err)
}

func evaluate[P, R, J any](ctx context.Context, tx pgx.Tx, scope analytics.Scope, p P,
	operation func(context.Context, pgx.Tx, analytics.Scope, P) (R, error), toJSON func(R) J) (any, error) {
	r, err := operation(ctx, tx, scope, p)
	if err != nil {
		return nil, err
	}
	return toJSON(r), nil
}

func (s *Server) listDashboards(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxDashboardPageSize)
	visibility := q.oneOf("visibility", "", validation.Names(dashboard.Visibilities))
	if err := q.done(); err != nil {
		return err
	}
	ctx, tx, p := c.UserContext(), requestTx(c), principal(c)
	rows, err := db.Q.DashboardList(ctx, tx, dbsqlc.DashboardListParams{TenantID: p.TenantID, Subject: p.Subject, Visibility: visibility,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.DashboardListRow) int64 { return r.Total },
		func(r dbsqlc.DashboardListRow) dashboardJSON { return toDashboardJSON(r.Dashboard) },
		func() (int64, error) {
			return db.Q.DashboardCount(ctx, tx, dbsqlc.DashboardCountParams{TenantID: p.TenantID, Subject: p.Subject, Visibility: visibility})
		})
}

func (s *Server) createDashboard(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readDashboard(c)
	if err != nil {
		return err
	}
	p := principal(c)
	row, err := dashboard.Create(c.UserContext(), requestTx(c), p.TenantID, dashboardCaller(c), f)
	if err != nil {
		return dashboardError(err)
	}
	out := toDashboardJSON(row)
	c.Location("/v1/dashboards/" + out.ID)
	return c.Status(fiber.StatusCreated).JSON(out)
}

// loadDashboard finds a dashboard of the path the caller may see (another
// user's personal dashboard is not found).
func loadDashboard(c *fiber.Ctx) (dbsqlc.Dashboard, error) {
	id, err := pathID(c, "id", "dashboard")
	if err != nil {
		return dbsqlc.Dashboard{}, err
	}
	p := principal(c)
	d, err := db.Q.DashboardGet(c.UserContext(), requestTx(c), dbsqlc.DashboardGetParams{TenantID: p.TenantID, ID: id, Subject: p.Subject})
	return d, found("dashboard", err)
}

func (s *Server) getDashboard(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	d, err := loadDashboard(c)
	if err != nil {
		return err
	}
	return c.JSON(toDashboardJSON(d))
}

// replaceDashboard is PUT: name, widgets and visibility as sent (absent
// description: empty; absent visibility: personal).
func (s *Server) replaceDashboard(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	f, err := readDashboard(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id", "dashboard")
	if err != nil {
		return err
	}
	row, err := dashboard.Replace(c.UserContext(), requestTx(c), principal(c).TenantID, dashboardCaller(c), id, f)
	if err != nil {
		return dashboardError(err)
	}
	return c.JSON(toDashboardJSON(row))
}

func (s *Server) deleteDashboard(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	id, err := pathID(c, "id", "dashboard")
	if err != nil {
		return err
	}
	if err := dashboard.Delete(c.UserContext(), requestTx(c), principal(c).TenantID, dashboardCaller(c), id); err != nil {
		return dashboardError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// widgetResultJSON is one widget evaluated: its HTTP status and the body
// its analytics endpoint would have answered (the analytics envelope, or
// the error envelope).
type widgetResultJSON struct {
	Index  int               `json:"index"`
	Type   string            `json:"type"`
	Title  string            `json:"title"`
	Params map[string]string `json:"params"`
	Status int               `json:"status"`
	Body   any               `json:"body"`
}

type dashboardDataJSON struct {
	DashboardID string             `json:"dashboard_id"`
	Name        string             `json:"name"`
	Widgets     []widgetResultJSON `json:"widgets"`
}

// dashboardData evaluates every widget in the request's transaction. A
// widget whose query fails on its own terms (an initiative since deleted:
// 404; a range now invalid: 400) carries that error; the other widgets are
// still evaluated. Anything else (the database) fails the request.
func (s *Server) dashboardData(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	d, err := loadDashboard(c)
	if err != nil {
		return err
	}
	dj := toDashboardJSON(d)
	ctx, tx, scope := c.UserContext(), requestTx(c), analyticsScope(c)
	out := dashboardDataJSON{DashboardID: dj.ID, Name: dj.Name, Widgets: make([]widgetResultJSON, len(dj.Widgets))}
	for i, w := range dj.Widgets {
		r := widgetResultJSON{Index: i, Type: string(w.Type), Title: w.Title, Params: w.Params, Status: fiber.StatusOK}
		body, err := evaluateWidget(ctx, tx, scope, w)
		if e, ok := errors.AsType[*Error](err); ok {
			var eb errorBody
			eb.Error.Code, eb.Error.Message, eb.Error.RequestID = e.Code, e.Message, requestID(c)
			r.Status, body = e.Status, eb
		} else if err != nil {
			return err
		}
		r.Body = body
		out.Widgets[i] = r
	}
	return c.JSON(fiber.Map{"data": out})
}

// ---- the built-in portfolio dashboard ----

type portfolioStatusJSON struct {
	Status      string `json:"status"`
	Initiatives int64  `json:"initiatives"`
}

type portfolioStakeholderJSON struct {
	StakeholderID  string `json:"stakeholder_id"`
	Name           string `json:"name"`
	InitiativeID   string `json:"initiative_id"`
	InitiativeName string `json:"initiative_name"`
	Influence      string `json:"influence"`
	AtRiskSince    string `json:"at_risk_since"`
}

type portfolioJSON struct {
	InitiativesByStatus []portfolioStatusJSON  `json:"initiatives_by_status"`
	InitiativesCount    int64                  `json:"initiatives_count"`
	Value               realizationAmountsJSON `json:"value"`
	AtRiskBenefits      []atRiskBenefitJSON    `json:"at_risk_benefits"`
	AtRiskBenefitsCount int                    `json:"at_risk_benefits_count"`
	// Null when the caller lacks stakeholders:read (names of people are
	// that permission's); otherwise at most MaxAtRiskListed.
	AtRiskStakeholders      []portfolioStakeholderJSON `json:"at_risk_stakeholders"`
	AtRiskStakeholdersCount *int64                     `json:"at_risk_stakeholders_count"`
}

// portfolioDashboard is GET /v1/dashboards/portfolio: the portfolio (every
// initiative not archived) by status, its value expected against realised
// to date (the portfolio realization), the at-risk benefits (lowest share
// first) and the stakeholders at risk (the longest at risk first), each
// list at most dashboard.MaxAtRiskListed long with its full count.
func (s *Server) portfolioDashboard(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	pf, err := dashboard.LoadPortfolio(c.UserContext(), requestTx(c), analyticsScope(c), principal(c).Has(rbac.StakeholdersRead))
	if err != nil {
		return err
	}
	realization := realizationEnvelope(pf.Realization)
	r := realization.Data
	out := portfolioJSON{InitiativesByStatus: make([]portfolioStatusJSON, len(pf.InitiativesByStatus)), Value: r.realizationAmountsJSON,
		AtRiskBenefits: r.AtRiskBenefits[:min(len(r.AtRiskBenefits), dashboard.MaxAtRiskListed)], AtRiskBenefitsCount: len(r.AtRiskBenefits)}
	for i, s := range pf.InitiativesByStatus {
		out.InitiativesByStatus[i] = portfolioStatusJSON{Status: s.Status, Initiatives: s.Initiatives}
		out.InitiativesCount += s.Initiatives
	}
	if pf.AtRiskStakeholders != nil {
		out.AtRiskStakeholders, out.AtRiskStakeholdersCount = make([]portfolioStakeholderJSON, len(pf.AtRiskStakeholders)), new(int64(0))
		for i, s := range pf.AtRiskStakeholders {
			out.AtRiskStakeholders[i] = portfolioStakeholderJSON{StakeholderID: s.ID.String(), Name: s.Name, InitiativeID: s.InitiativeID.String(),
				InitiativeName: s.InitiativeName, Influence: s.Influence, AtRiskSince: s.AtRiskFrom.Format(time.DateOnly)}
			*out.AtRiskStakeholdersCount = s.Total
		}
	}
	return c.JSON(analyticsEnvelope[portfolioJSON]{Data: out, Meta: realization.Meta})
}
