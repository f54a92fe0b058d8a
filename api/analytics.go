package api

// Analytics: ROI, realisation and trends of an initiative or the portfolio.
// The operations live in internal/analytics; this file parses, calls and
// maps their reports to JSON. Every analytics response has one envelope:
// {"data": ..., "meta": {"base_currency", "as_of", "missing_fx_rates"}}.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
)

// analyticsRoutes mounts /v1/analytics on the authenticated /v1 group. Each
// handler parses the query into the operation's typed parameters, runs the
// operation (internal/analytics) and writes its JSON.
func (s *Server) analyticsRoutes(v1 fiber.Router) {
	read := s.require(rbac.AnalyticsRead)
	v1.Get("/analytics/roi", read, s.analyticsDeadline, analyse("roi", analytics.ROIParamNames, analytics.ParseROIParams, analytics.AnalyseROI, roiEnvelope))
	v1.Get("/analytics/realization", read, s.analyticsDeadline,
		analyse("realization", analytics.RealizationParamNames, analytics.ParseRealizationParams, analytics.AnalyseRealization, realizationEnvelope))
	v1.Get("/analytics/trends", read, s.analyticsDeadline, analyse("trends", analytics.TrendsParamNames, analytics.ParseTrendsParams, analytics.AnalyseTrends, trendsEnvelope))
	v1.Get("/analytics/forecasts", read, s.analyticsDeadline, // analytics_insights.go
		analyse("forecasts", analytics.ForecastsParamNames, analytics.ParseForecastsParams, analytics.AnalyseForecasts, forecastsEnvelope))
	v1.Get("/analytics/benchmarks", read, s.analyticsDeadline,
		analyse("benchmarks", analytics.BenchmarksParamNames, analytics.ParseBenchmarksParams, analytics.AnalyseBenchmarks, benchmarksEnvelope))
}

// analyticsMetaJSON is the meta of every analytics response.
type analyticsMetaJSON struct {
	BaseCurrency   string              `json:"base_currency"`
	AsOf           string              `json:"as_of"` // the current month (UTC) the figures are computed at
	MissingFXRates []missingFXRateJSON `json:"missing_fx_rates"`
}

// analyticsEnvelope is the body of every analytics response.
type analyticsEnvelope[T any] struct {
	Data T                 `json:"data"`
	Meta analyticsMetaJSON `json:"meta"`
}

type roiScenarioJSON struct {
	ROIPercent *float64 `json:"roi_percent"`
}

type roiJSON struct {
	InitiativeID     *string  `json:"initiative_id"` // null for the portfolio
	Period           string   `json:"period"`
	Basis            string   `json:"basis"` // plan or forecast
	From             *string  `json:"from"`  // the months of the series; null when there is nothing to analyse
	To               *string  `json:"to"`
	InitiativesCount int      `json:"initiatives_count"`
	TotalBenefits    *float64 `json:"total_benefits"`
	TotalCosts       *float64 `json:"total_costs"`
	ROIPercent       *float64 `json:"roi_percent"`
	PaybackMonths    *float64 `json:"payback_months"`
	NPV              *float64 `json:"npv"`
	IRR              *float64 `json:"irr"`
	// IRRRoots are every root of the NPV found in the search range (annual):
	// one when irr has a value, several when irr is null (multiple_roots).
	IRRRoots   []float64 `json:"irr_roots"`
	MIRR       *float64  `json:"mirr"`
	Confidence string    `json:"confidence"`
	Coverage   *float64  `json:"coverage"`
	// ForecastWAPEPercent is the WAPE of expected against actual over the
	// periods with an actual (confidence drops a level above 25 %).
	ForecastWAPEPercent *float64 `json:"forecast_wape_percent"`
	Sensitivity         struct {
		BestCase        roiScenarioJSON `json:"best_case"`
		Expected        roiScenarioJSON `json:"expected"`
		WorstCase       roiScenarioJSON `json:"worst_case"`
		DelayedOneMonth roiScenarioJSON `json:"delayed_one_month"`
	} `json:"sensitivity"`
	MonteCarlo  *monteCarloJSON   `json:"monte_carlo"`
	NullReasons map[string]string `json:"null_reasons"`
}

// monteCarloJSON is the seeded Monte Carlo of ROI % (analytics.SimulateROI).
type monteCarloJSON struct {
	P10  float64 `json:"p10"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	Runs int     `json:"runs"`
	Seed string  `json:"seed"`
}

// analyticsScope is whom and when a request's analysis is for.
func analyticsScope(c *fiber.Ctx) analytics.Scope {
	return analytics.Scope{Tenant: principal(c).TenantID, Now: time.Now()}
}

// analyticsValues reads the query parameters an analysis takes (names) as
// the kit reads any query: repeated, malformed or unknown ones are refused.
func analyticsValues(c *fiber.Ctx, names []string) (analytics.Values, error) {
	q := parseQuery(c)
	v := analytics.Values{}
	for _, name := range names {
		if s, ok := q.str(name); ok {
			v[name] = s
		}
	}
	return v, q.done()
}

// analyticsError maps internal/analytics's typed errors; anything else passes through.
func analyticsError(err error) error {
	if pe, ok := errors.AsType[*analytics.ParamError](err); ok {
		return InvalidParameter("%s", pe.Message)
	}
	if errors.Is(err, analytics.ErrInitiativeNotFound) {
		return NotFound("initiative")
	}
	return err
}

// analyse is an analytics handler: parse the query into typed parameters,
// run the operation in the request's transaction, respond with its JSON,
// the body kept in the report cache (analytics.Rendered) under kind, the
// analysis's name.
func analyse[P, R, J any](kind string, names []string, parse func(analytics.Values) (P, error),
	operation func(context.Context, pgx.Tx, analytics.Scope, P) (R, error), toJSON func(R) J) fiber.Handler {
	return func(c *fiber.Ctx) error {
		v, err := analyticsValues(c, names)
		if err != nil {
			return err
		}
		p, err := parse(v)
		if err != nil {
			return analyticsError(err)
		}
		ctx, tx, scope := c.UserContext(), requestTx(c), analyticsScope(c)
		body, err := analytics.Rendered(ctx, tx, scope, kind, p, func() ([]byte, error) {
			r, err := operation(ctx, tx, scope, p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(toJSON(r))
		})
		if err != nil {
			return analyticsError(err)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	}
}

func analyticsMeta(m analytics.Meta) analyticsMetaJSON {
	out := analyticsMetaJSON{BaseCurrency: m.BaseCurrency, AsOf: m.AsOf.String(), MissingFXRates: make([]missingFXRateJSON, len(m.Missing))}
	for i, r := range m.Missing {
		out.MissingFXRates[i] = missingFXRateJSON{Currency: r.Currency, Period: r.Period.String()}
	}
	return out
}

// roiEnvelope maps an ROI report.
func roiEnvelope(rep analytics.ROIReport) analyticsEnvelope[roiJSON] {
	r := rep.ROI
	out := roiJSON{Period: rep.Window.Label, Basis: r.Basis.String(), InitiativesCount: rep.InitiativesCount, Confidence: string(r.Confidence), NullReasons: map[string]string{}}
	if rep.InitiativeID != nil {
		out.InitiativeID = new(rep.InitiativeID.String())
	}
	if r.Horizon != nil {
		out.From, out.To = new(r.Horizon.Start.String()), new(r.Horizon.End.String())
	}
	base := rep.Meta.BaseCurrency
	figure := func(name string, f finance.Result, decimals int32) *float64 {
		v, ok := f.Get()
		if !ok {
			out.NullReasons[name] = string(f.Reason)
			return nil
		}
		return new(money.RoundFloat(v, decimals))
	}
	amount := func(name string, a analytics.Amount) *float64 {
		if a.Value == nil {
			out.NullReasons[name] = string(a.Reason)
			return nil
		}
		return new(money.Amount(*a.Value, base))
	}
	out.TotalBenefits, out.TotalCosts = amount("total_benefits", r.TotalBenefits), amount("total_costs", r.TotalCosts)
	out.ROIPercent, out.PaybackMonths = figure("roi_percent", r.ROIPercent, 2), figure("payback_months", r.PaybackMonths, 2)
	out.NPV, out.IRR, out.MIRR = figure("npv", r.NPV, money.Places(base)), figure("irr", r.IRR, 6), figure("mirr", r.MIRR, 6)
	out.IRRRoots = make([]float64, len(r.IRRRoots))
	for i, x := range r.IRRRoots {
		out.IRRRoots[i] = money.RoundFloat(x, 6)
	}
	out.Sensitivity.Expected.ROIPercent = out.ROIPercent
	out.Sensitivity.BestCase.ROIPercent = figure("sensitivity.best_case.roi_percent", r.Best, 2)
	out.Sensitivity.WorstCase.ROIPercent = figure("sensitivity.worst_case.roi_percent", r.Worst, 2)
	out.Sensitivity.DelayedOneMonth.ROIPercent = figure("sensitivity.delayed_one_month.roi_percent", r.Delayed, 2)
	if mc := r.MonteCarlo; mc != nil {
		out.MonteCarlo = &monteCarloJSON{P10: money.Percent(mc.P10), P50: money.Percent(mc.P50), P90: money.Percent(mc.P90), Runs: mc.Runs, Seed: analytics.SeedText(mc.Seed)}
	} else {
		out.NullReasons["monte_carlo"] = string(r.MonteCarloReason)
	}
	if r.Coverage != nil {
		out.Coverage = new(money.RoundFloat(*r.Coverage, 4))
	}
	if r.ForecastWAPE != nil {
		out.ForecastWAPEPercent = new(money.Percent(*r.ForecastWAPE * 100))
	}
	return analyticsEnvelope[roiJSON]{Data: out, Meta: analyticsMeta(rep.Meta)}
}

// realizationAmountsJSON are expected against realised to date, like for
// like (base currency; null when a rate is missing): realised and variance
// against the expectation of the periods that have an actual; the
// expectation of the periods without one apart; expected_to_date the sum of
// both (the plan to date).
type realizationAmountsJSON struct {
	ExpectedToDate           *float64 `json:"expected_to_date"`
	ExpectedMeasuredToDate   *float64 `json:"expected_measured_to_date"`
	ExpectedUnmeasuredToDate *float64 `json:"expected_unmeasured_to_date"`
	RealizedToDate           *float64 `json:"realized_to_date"`
	Variance                 *float64 `json:"variance"`
	VariancePercent          *float64 `json:"variance_percent"`
	RealizationPercent       *float64 `json:"realization_percent"`
}

func toRealizationAmounts(a analytics.Amounts, base string) realizationAmountsJSON {
	var out realizationAmountsJSON
	if !a.MeasuredUnknown {
		out.ExpectedMeasuredToDate, out.RealizedToDate = new(money.Amount(a.Expected, base)), new(money.Amount(a.Actual, base))
		out.Variance, out.VariancePercent, out.RealizationPercent = new(money.Amount(a.Variance(), base)), money.PercentOfPtr(a.VariancePercent()), money.PercentOfPtr(a.RealizationPercent())
	}
	if !a.UnmeasuredUnknown {
		out.ExpectedUnmeasuredToDate = new(money.Amount(a.Unmeasured, base))
	}
	if !a.MeasuredUnknown && !a.UnmeasuredUnknown {
		out.ExpectedToDate = new(money.Amount(a.PlanToDate(), base))
	}
	return out
}

type realizationInitiativeJSON struct {
	InitiativeID string `json:"initiative_id"`
	Name         string `json:"name"`
	realizationAmountsJSON
}

type realizationCategoryJSON struct {
	Category string `json:"category"`
	realizationAmountsJSON
}

type atRiskPeriodJSON struct {
	Period             string  `json:"period"`
	Expected           float64 `json:"expected"`
	Actual             float64 `json:"actual"`
	RealizationPercent float64 `json:"realization_percent"`
}

type atRiskBenefitJSON struct {
	BenefitID    string             `json:"benefit_id"`
	InitiativeID string             `json:"initiative_id"`
	Name         string             `json:"name"`
	Category     string             `json:"category"`
	Unit         string             `json:"unit"`
	Currency     *string            `json:"currency"`
	Periods      []atRiskPeriodJSON `json:"periods"`
}

type realizationJSON struct {
	InitiativeID *string `json:"initiative_id"` // null for the portfolio
	realizationAmountsJSON
	Initiatives    []realizationInitiativeJSON `json:"initiatives"`
	Categories     []realizationCategoryJSON   `json:"categories"`
	AtRiskBenefits []atRiskBenefitJSON         `json:"at_risk_benefits"`
}

// realizationEnvelope maps a realisation report.
func realizationEnvelope(rep analytics.RealizationReport) analyticsEnvelope[realizationJSON] {
	base := rep.Meta.BaseCurrency
	out := realizationJSON{realizationAmountsJSON: toRealizationAmounts(rep.Total, base), Initiatives: make([]realizationInitiativeJSON, len(rep.Initiatives)),
		Categories: make([]realizationCategoryJSON, len(rep.Categories)), AtRiskBenefits: make([]atRiskBenefitJSON, len(rep.AtRisk))}
	if rep.InitiativeID != nil {
		out.InitiativeID = new(rep.InitiativeID.String())
	}
	for i, in := range rep.Initiatives {
		out.Initiatives[i] = realizationInitiativeJSON{InitiativeID: in.ID.String(), Name: in.Name, realizationAmountsJSON: toRealizationAmounts(rep.Realization.Initiatives[in.ID], base)}
	}
	for i, cat := range rep.Categories {
		out.Categories[i] = realizationCategoryJSON{Category: cat.Category, realizationAmountsJSON: toRealizationAmounts(cat.Amounts, base)}
	}
	for i, risk := range rep.AtRisk {
		b := risk.Benefit
		j := atRiskBenefitJSON{BenefitID: b.ID.String(), InitiativeID: b.InitiativeID.String(), Name: b.Name, Category: b.Category, Unit: b.Unit,
			Periods: make([]atRiskPeriodJSON, len(risk.Periods))}
		if b.Money {
			j.Currency = new(b.Benefit.Currency)
		}
		for k, p := range risk.Periods {
			// In the benefit's own unit: a currency's minor units, two decimals otherwise.
			unit := ""
			if b.Money {
				unit = b.Benefit.Currency
			}
			j.Periods[k] = atRiskPeriodJSON{Period: p.Period.String(), Expected: money.Amount(p.Expected, unit), Actual: money.Amount(p.Actual, unit),
				RealizationPercent: money.PercentOf(*finance.PercentOf(p.Actual, p.Expected))}
		}
		out.AtRiskBenefits[i] = j
	}
	return analyticsEnvelope[realizationJSON]{Data: out, Meta: analyticsMeta(rep.Meta)}
}

type trendPointJSON struct {
	Period        string   `json:"period"`
	Expected      *float64 `json:"expected"`
	Actual        *float64 `json:"actual"`
	MovingAverage *float64 `json:"moving_average"`
}

type trendSeriesJSON struct {
	Direction *string          `json:"direction"`
	Slope     *float64         `json:"slope"`
	Points    []trendPointJSON `json:"points"`
}

type trendGroupJSON struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	trendSeriesJSON
}

type trendsJSON struct {
	From    string           `json:"from"`
	To      string           `json:"to"`
	GroupBy *string          `json:"group_by"`
	Total   trendSeriesJSON  `json:"total"`
	Groups  []trendGroupJSON `json:"groups"`
}

func toTrendSeries(s analytics.Series, base string) trendSeriesJSON {
	out := trendSeriesJSON{Points: make([]trendPointJSON, len(s.Points))}
	if s.Slope != nil {
		out.Slope = new(money.RoundFloat(*s.Slope, money.Places(base)))
	}
	if s.Direction != nil {
		out.Direction = new(string(*s.Direction))
	}
	for i, p := range s.Points {
		out.Points[i] = trendPointJSON{Period: p.Period.String(), Expected: money.AmountPtr(p.Expected, base), Actual: money.AmountPtr(p.Actual, base),
			MovingAverage: money.AmountPtr(p.MovingAverage, base)}
	}
	return out
}

// trendsEnvelope maps a trends report.
func trendsEnvelope(rep analytics.TrendsReport) analyticsEnvelope[trendsJSON] {
	base := rep.Meta.BaseCurrency
	out := trendsJSON{From: rep.Horizon.Start.String(), To: rep.Horizon.End.String(), Total: toTrendSeries(rep.Total, base), Groups: make([]trendGroupJSON, len(rep.Groups))}
	if rep.GroupBy != "" {
		out.GroupBy = new(rep.GroupBy)
	}
	for i, g := range rep.Groups {
		out.Groups[i] = trendGroupJSON{Key: g.Key, Name: g.Name, trendSeriesJSON: toTrendSeries(g.Series, base)}
	}
	return analyticsEnvelope[trendsJSON]{Data: out, Meta: analyticsMeta(rep.Meta)}
}
