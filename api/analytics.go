package api

// Analytics (issue 10): ROI analysis of an initiative or the portfolio. The
// rules live in internal/analytics; the rows come through internal/valuation
// as for the initiative detail. Every analytics response has one envelope:
// {"data": ..., "meta": {"base_currency", "as_of", "missing_fx_rates"}}.

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/valuation"
)

// analyticsRoutes mounts /v1/analytics on the authenticated /v1 group.
func (s *Server) analyticsRoutes(v1 fiber.Router) {
	v1.Get("/analytics/roi", s.require(rbac.AnalyticsRead), s.analyticsDeadline, s.analyticsROI)
	v1.Get("/analytics/realization", s.require(rbac.AnalyticsRead), s.analyticsDeadline, s.analyticsRealization)
	v1.Get("/analytics/trends", s.require(rbac.AnalyticsRead), s.analyticsDeadline, s.analyticsTrends)
	v1.Get("/analytics/forecasts", s.require(rbac.AnalyticsRead), s.analyticsDeadline, s.analyticsForecasts)   // analytics_insights.go
	v1.Get("/analytics/benchmarks", s.require(rbac.AnalyticsRead), s.analyticsDeadline, s.analyticsBenchmarks) // analytics_insights.go
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

// analyticsRun is what an analytics computation reads: the request's
// tenant transaction and clock. Handlers parse their query into params and
// call the compute function; dashboards call the same functions per widget.
type analyticsRun struct {
	ctx    context.Context
	tx     pgx.Tx
	tenant uuid.UUID
	now    time.Time
}

func newAnalyticsRun(c *fiber.Ctx) analyticsRun {
	return analyticsRun{ctx: c.UserContext(), tx: tx(c), tenant: principal(c).TenantID, now: time.Now()}
}

// initiativeParam reads the optional initiative_id of an analytics query.
func initiativeParam(q *query) (*uuid.UUID, error) {
	idText, hasID := q.str("initiative_id")
	if !hasID {
		return nil, nil
	}
	id, err := uuid.Parse(idText)
	if err != nil {
		return nil, InvalidParameter("query parameter initiative_id must be a UUID")
	}
	return &id, nil
}

// roiParams are the parameters of GET /v1/analytics/roi (and of a roi widget).
type roiParams struct {
	InitiativeID *uuid.UUID
	Period       string
	Basis        finance.Basis
}

// defaultROIBasis is the basis of an ROI analysis that names none: actuals
// to date, then plan.
const defaultROIBasis = finance.BasisActual

func readROIParams(q *query) (roiParams, error) {
	id, idErr := initiativeParam(q)
	period, _ := q.str("period")
	basisText, hasBasis := q.str("basis")
	if err := q.done(); err != nil {
		return roiParams{}, err
	}
	if idErr != nil {
		return roiParams{}, idErr
	}
	basis := defaultROIBasis
	if hasBasis {
		b, ok := finance.ParseBasis(basisText)
		if !ok {
			return roiParams{}, InvalidParameter("query parameter basis must be plan or forecast")
		}
		basis = b
	}
	// The form of a period does not depend on the fiscal year: checked here
	// so a widget is refused when saved; computeROI reads it at the tenant's.
	if _, err := analytics.ParseWindow(period, finance.MonthOfTime(time.Now()), 1); err != nil {
		return roiParams{}, InvalidParameter("%s", err.Error())
	}
	return roiParams{InitiativeID: id, Period: period, Basis: basis}, nil
}

func (s *Server) analyticsROI(c *fiber.Ctx) error {
	p, err := readROIParams(parseQuery(c))
	if err != nil {
		return err
	}
	out, err := computeROI(newAnalyticsRun(c), p)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// computeROI is the ROI analysis of the initiative named or the portfolio.
func computeROI(run analyticsRun, p roiParams) (analyticsEnvelope[roiJSON], error) {
	current := finance.MonthOfTime(run.now)
	st, err := settings.Load(run.ctx, run.tx, run.tenant)
	if err != nil {
		return analyticsEnvelope[roiJSON]{}, err
	}
	w, err := analytics.ParseWindow(p.Period, current, st.FiscalYearStartMonth)
	if err != nil {
		return analyticsEnvelope[roiJSON]{}, InvalidParameter("%s", err.Error())
	}
	ids, ins, err := loadAnalyticsInitiatives(run, p.InitiativeID)
	if err != nil {
		return analyticsEnvelope[roiJSON]{}, err
	}
	fx, err := loadFX(run, st.BaseCurrency)
	if err != nil {
		return analyticsEnvelope[roiJSON]{}, err
	}
	r := analytics.ComputeROI(ins, w, current, st.DiscountRate, p.Basis, fx)
	wape, err := roiForecastWAPE(run, st.BaseCurrency, w, current, p.InitiativeID)
	if err != nil {
		return analyticsEnvelope[roiJSON]{}, err
	}
	r.ApplyAccuracy(wape)

	out := roiJSON{Period: w.Label, Basis: r.Basis.String(), InitiativesCount: len(ids), Confidence: string(r.Confidence), NullReasons: map[string]string{}}
	if p.InitiativeID != nil {
		out.InitiativeID = new(p.InitiativeID.String())
	}
	if r.Horizon != nil {
		out.From, out.To = new(r.Horizon.Start.String()), new(r.Horizon.End.String())
	}
	base := st.BaseCurrency
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
	return analyticsEnvelope[roiJSON]{Data: out, Meta: analyticsMeta(st.BaseCurrency, current, r.Missing)}, nil
}

func analyticsMeta(base string, current finance.Month, missing []finance.MissingRate) analyticsMetaJSON {
	m := analyticsMetaJSON{BaseCurrency: base, AsOf: current.String(), MissingFXRates: make([]missingFXRateJSON, len(missing))}
	for i, r := range missing {
		m.MissingFXRates[i] = missingFXRateJSON{Currency: r.Currency, Period: r.Period.String()}
	}
	return m
}

// loadFX reads every FX rate of the tenant into a converter to base.
func loadFX(run analyticsRun, base string) (finance.FX, error) {
	rows, err := db.Q.FxRateList(run.ctx, run.tx, dbsqlc.FxRateListParams{TenantID: run.tenant})
	if err != nil {
		return finance.FX{}, err
	}
	return valuation.FX(base, rows)
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

// realizationParams are the parameters of GET /v1/analytics/realization
// (and of a realization widget).
type realizationParams struct {
	InitiativeID *uuid.UUID
}

func readRealizationParams(q *query) (realizationParams, error) {
	id, idErr := initiativeParam(q)
	if err := q.done(); err != nil {
		return realizationParams{}, err
	}
	return realizationParams{InitiativeID: id}, idErr
}

func (s *Server) analyticsRealization(c *fiber.Ctx) error {
	p, err := readRealizationParams(parseQuery(c))
	if err != nil {
		return err
	}
	out, err := computeRealization(newAnalyticsRun(c), p)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// computeRealization is expected against realised to date of the initiative
// named or the portfolio, like for like (analytics.ComputeRealization: the
// initiative detail's comparison per benefit, summed). The money benefits in
// the base currency are summed per initiative and category in SQL from each
// benefit's measured expectation (AnalyticsRealizationSums: benefit
// rollups kept exact by triggers); the few others (another currency, an
// actual after this month) and the benefits the at-risk rule may hold for are
// read one by one (AnalyticsRealizationBenefits), the first compared from
// their actuals.
func computeRealization(run analyticsRun, p realizationParams) (analyticsEnvelope[realizationJSON], error) {
	var zero analyticsEnvelope[realizationJSON]
	ctx, tx, tenant, only := run.ctx, run.tx, run.tenant, p.InitiativeID
	current := finance.MonthOfTime(run.now)
	st, err := settings.Load(ctx, tx, tenant)
	if err != nil {
		return zero, err
	}
	initiatives, err := db.Q.AnalyticsInitiativeNames(ctx, tx, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return zero, err
	}
	if only != nil && len(initiatives) == 0 {
		return zero, NotFound("initiative")
	}
	through := current.FirstDay()
	sumRows, err := db.Q.AnalyticsRealizationSums(ctx, tx, dbsqlc.AnalyticsRealizationSumsParams{TenantID: tenant, InitiativeID: only, Base: st.BaseCurrency, Through: through})
	if err != nil {
		return zero, err
	}
	rows, err := db.Q.AnalyticsRealizationBenefits(ctx, tx, dbsqlc.AnalyticsRealizationBenefitsParams{TenantID: tenant, InitiativeID: only, Base: st.BaseCurrency, Through: through})
	if err != nil {
		return zero, err
	}
	fx, err := loadFX(run, st.BaseCurrency)
	if err != nil {
		return zero, err
	}
	sums := make([]analytics.GroupSum, len(sumRows))
	for i, g := range sumRows {
		sums[i] = analytics.GroupSum{InitiativeID: g.InitiativeID, Category: g.Category, Comparison: finance.Comparison{
			Expected: g.Expected, Actual: g.Actual, Unmeasured: g.Unmeasured, Measured: int(g.Measured), Periods: int(g.Periods)}}
	}
	var planOf map[uuid.UUID][]finance.PlanEntry
	if len(rows) > 0 {
		ids := make([]uuid.UUID, len(rows))
		for i, b := range rows {
			ids[i] = b.ID
		}
		plans, err := db.Q.AnalyticsPlansOf(ctx, tx, dbsqlc.AnalyticsPlansOfParams{TenantID: tenant, BenefitIds: ids})
		if err != nil {
			return zero, err
		}
		planOf = valuation.PlansByBenefit(plans)
	}

	benefits := make([]analytics.RealizationBenefit, len(rows))
	var laterActuals []uuid.UUID // benefits with an actual after this month: their stats pair is not the at-risk rule's
	var read []uuid.UUID         // money benefits compared here, from their actuals
	index := make(map[uuid.UUID]int, len(rows))
	for i, b := range rows {
		index[b.ID] = i
		fb := valuation.FinanceBenefit(dbsqlc.Benefit{ExpectedValue: b.ExpectedValue, MeasurementFrequency: b.MeasurementFrequency,
			ExpectedStartDate: b.ExpectedStartDate, ExpectedEndDate: b.ExpectedEndDate, Currency: b.Currency}, planOf[b.ID], nil)
		benefits[i] = analytics.RealizationBenefit{ID: b.ID, InitiativeID: b.InitiativeID, Name: b.Name, Category: b.Category, Unit: b.Unit,
			Money: benefit.Unit(b.Unit) == benefit.UnitCurrency && b.Currency != nil, Summed: b.Summed, Benefit: fb}
		if benefits[i].Money && !b.Summed {
			benefits[i].Benefit.Actuals = map[finance.Month]decimal.Decimal{}
			read = append(read, b.ID)
		}
		if b.Actuals == 0 {
			continue // no actual at all
		}
		if b.LatestPeriod.After(through) {
			laterActuals = append(laterActuals, b.ID)
			continue
		}
		latest := make([]analytics.PeriodValue, 0, analytics.AtRiskPeriods)
		if b.Actuals > 1 {
			latest = append(latest, analytics.PeriodValue{Period: finance.MonthOfTime(b.PreviousPeriod), Value: b.PreviousValue})
		}
		benefits[i].Latest = append(latest, analytics.PeriodValue{Period: finance.MonthOfTime(b.LatestPeriod), Value: b.LatestValue})
	}
	if len(laterActuals) > 0 {
		latest, err := db.Q.AnalyticsLatestActualsOf(ctx, tx, dbsqlc.AnalyticsLatestActualsOfParams{TenantID: tenant, BenefitIds: laterActuals, Through: through})
		if err != nil {
			return zero, err
		}
		for _, a := range latest {
			i := index[a.BenefitID]
			benefits[i].Latest = append(benefits[i].Latest, analytics.PeriodValue{Period: finance.MonthOfTime(a.Period), Value: a.Value})
		}
	}
	if len(read) > 0 {
		rows, err := db.Q.AnalyticsActualsOf(ctx, tx, dbsqlc.AnalyticsActualsOfParams{TenantID: tenant, BenefitIds: read})
		if err != nil {
			return zero, err
		}
		for _, a := range rows {
			benefits[index[a.BenefitID]].Benefit.Actuals[finance.MonthOfTime(a.Period)] = a.Value
		}
	}
	initiativeIDs := make([]uuid.UUID, len(initiatives))
	for i, in := range initiatives {
		initiativeIDs[i] = in.ID
	}
	r := analytics.ComputeRealization(initiativeIDs, sums, benefits, current, fx)
	base := st.BaseCurrency

	out := realizationJSON{realizationAmountsJSON: toRealizationAmounts(r.Total, base), Initiatives: make([]realizationInitiativeJSON, len(initiatives)),
		Categories: make([]realizationCategoryJSON, len(r.Categories)), AtRiskBenefits: make([]atRiskBenefitJSON, len(r.AtRisk))}
	if only != nil {
		out.InitiativeID = new(only.String())
	}
	for i, in := range initiatives {
		out.Initiatives[i] = realizationInitiativeJSON{InitiativeID: in.ID.String(), Name: in.Name, realizationAmountsJSON: toRealizationAmounts(r.Initiatives[in.ID], base)}
	}
	for i, cat := range r.Categories {
		out.Categories[i] = realizationCategoryJSON{Category: cat.Category, realizationAmountsJSON: toRealizationAmounts(cat.Amounts, base)}
	}
	for i, risk := range r.AtRisk {
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
	return analyticsEnvelope[realizationJSON]{Data: out, Meta: analyticsMeta(st.BaseCurrency, current, r.Missing)}, nil
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

// trendsParams are the parameters of GET /v1/analytics/trends (and of a
// trends widget).
type trendsParams struct {
	From, To, GroupBy string
}

func readTrendsParams(q *query) (trendsParams, error) {
	from, _ := q.str("from")
	to, _ := q.str("to")
	groupBy := q.oneOf("group_by", "", []string{"category", "initiative"})
	if err := q.done(); err != nil {
		return trendsParams{}, err
	}
	// The range is checked again at the request's month by computeTrends;
	// this refuses a malformed one when a widget is saved.
	if _, err := analytics.ParseTrendRange(from, to, finance.MonthOfTime(time.Now())); err != nil {
		return trendsParams{}, InvalidParameter("%s", err.Error())
	}
	return trendsParams{From: from, To: to, GroupBy: groupBy}, nil
}

func (s *Server) analyticsTrends(c *fiber.Ctx) error {
	p, err := readTrendsParams(parseQuery(c))
	if err != nil {
		return err
	}
	out, err := computeTrends(newAnalyticsRun(c), p)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// computeTrends is the monthly series of expected against actual; actuals
// are summed from the portfolio month rollup (by initiative: the month rows).
func computeTrends(run analyticsRun, p trendsParams) (analyticsEnvelope[trendsJSON], error) {
	var zero analyticsEnvelope[trendsJSON]
	ctx, t, tenant, groupBy := run.ctx, run.tx, run.tenant, p.GroupBy
	current := finance.MonthOfTime(run.now)
	h, err := analytics.ParseTrendRange(p.From, p.To, current)
	if err != nil {
		return zero, InvalidParameter("%s", err.Error())
	}
	st, err := settings.Load(ctx, t, tenant)
	if err != nil {
		return zero, err
	}
	rows, err := db.Q.AnalyticsTrendBenefits(ctx, t, tenant)
	if err != nil {
		return zero, err
	}
	plans, err := db.Q.AnalyticsPlans(ctx, t, dbsqlc.AnalyticsPlansParams{TenantID: tenant})
	if err != nil {
		return zero, err
	}
	through := min(h.End, current).FirstDay()
	sums, err := db.Q.AnalyticsActualsByMonth(ctx, t, dbsqlc.AnalyticsActualsByMonthParams{GroupBy: groupBy, Base: st.BaseCurrency, TenantID: tenant,
		FromPeriod: h.Start.FirstDay(), Through: through})
	if err != nil {
		return zero, err
	}
	missingActual, err := db.Q.AnalyticsMissingActualRatesInRange(ctx, t, dbsqlc.AnalyticsMissingActualRatesInRangeParams{TenantID: tenant,
		FromPeriod: h.Start.FirstDay(), Through: through, Base: st.BaseCurrency})
	if err != nil {
		return zero, err
	}
	fx, err := loadFX(run, st.BaseCurrency)
	if err != nil {
		return zero, err
	}

	planOf := valuation.PlansByBenefit(plans)
	groupOf := func(b dbsqlc.AnalyticsTrendBenefitsRow) string {
		switch groupBy {
		case "category":
			return b.Category
		case "initiative":
			return b.InitiativeID.String()
		}
		return ""
	}
	benefits := make([]analytics.TrendBenefit, len(rows))
	groupSet := map[string]bool{}
	for i, b := range rows { // money benefits only
		fb := valuation.FinanceBenefit(dbsqlc.Benefit{ExpectedValue: b.ExpectedValue, MeasurementFrequency: b.MeasurementFrequency,
			ExpectedStartDate: b.ExpectedStartDate, ExpectedEndDate: b.ExpectedEndDate, Currency: &b.Currency}, planOf[b.ID], nil)
		benefits[i] = analytics.TrendBenefit{Group: groupOf(b), Benefit: fb}
		groupSet[groupOf(b)] = true
	}
	actuals := make([]analytics.ActualSum, len(sums))
	for i, a := range sums {
		actuals[i] = analytics.ActualSum{Group: a.GroupKey, Period: finance.MonthOfTime(a.Period), Value: a.Actual, Missing: a.Missing > 0}
	}
	// The groups: categories by name; initiatives (with a money benefit) by name.
	var keys, names []string
	switch groupBy {
	case "category":
		keys = slices.Sorted(maps.Keys(groupSet))
		names = keys
	case "initiative":
		initiatives, err := db.Q.AnalyticsInitiativeNames(ctx, t, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant})
		if err != nil {
			return zero, err
		}
		for _, in := range initiatives {
			if groupSet[in.ID.String()] {
				keys, names = append(keys, in.ID.String()), append(names, in.Name)
			}
		}
	}
	total, groups, missing := analytics.ComputeTrends(h, current, keys, benefits, actuals, fx)

	out := trendsJSON{From: h.Start.String(), To: h.End.String(), Total: toTrendSeries(total, st.BaseCurrency), Groups: make([]trendGroupJSON, len(groups))}
	if groupBy != "" {
		out.GroupBy = &groupBy
	}
	for i, g := range groups {
		out.Groups[i] = trendGroupJSON{Key: keys[i], Name: names[i], trendSeriesJSON: toTrendSeries(g, st.BaseCurrency)}
	}
	for _, m := range missingActual {
		missing = append(missing, finance.MissingRate{Currency: m.Currency, Period: finance.MonthOfTime(m.Period)})
	}
	return analyticsEnvelope[trendsJSON]{Data: out, Meta: analyticsMeta(st.BaseCurrency, current, sortedMissing(missing))}, nil
}

// sortedMissing sorts rates by currency, then month, without repeats.
func sortedMissing(ms []finance.MissingRate) []finance.MissingRate {
	slices.SortFunc(ms, func(a, b finance.MissingRate) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Period, b.Period))
	})
	return slices.Compact(ms)
}

// loadAnalyticsInitiatives reads the initiatives an analysis covers (the
// portfolio: every one not archived; or the one named, 404 when it is not
// in the tenant) with their benefits, plans, actuals and costs in five
// queries, mapped as the initiative detail maps them (internal/valuation).
func loadAnalyticsInitiatives(run analyticsRun, only *uuid.UUID) ([]uuid.UUID, []analytics.Initiative, error) {
	ctx, t, tenant := run.ctx, run.tx, run.tenant
	initiatives, err := db.Q.AnalyticsInitiativeNames(ctx, t, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	if only != nil && len(initiatives) == 0 {
		return nil, nil, NotFound("initiative")
	}
	benefits, err := db.Q.AnalyticsBenefits(ctx, t, dbsqlc.AnalyticsBenefitsParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	plans, err := db.Q.AnalyticsPlans(ctx, t, dbsqlc.AnalyticsPlansParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	actuals, err := db.Q.AnalyticsActuals(ctx, t, dbsqlc.AnalyticsActualsParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	costs, err := db.Q.AnalyticsCosts(ctx, t, dbsqlc.AnalyticsCostsParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	rows := map[uuid.UUID]*valuation.Rows{}
	ids := make([]uuid.UUID, len(initiatives))
	for i, in := range initiatives {
		ids[i], rows[in.ID] = in.ID, &valuation.Rows{}
	}
	initiativeOf := map[uuid.UUID]uuid.UUID{}
	for _, b := range benefits {
		initiativeOf[b.ID] = b.InitiativeID
		if r := rows[b.InitiativeID]; r != nil {
			r.Benefits = append(r.Benefits, b)
		}
	}
	for _, p := range plans {
		if r := rows[initiativeOf[p.BenefitID]]; r != nil {
			r.Plans = append(r.Plans, p)
		}
	}
	for _, a := range actuals {
		if r := rows[initiativeOf[a.BenefitID]]; r != nil {
			r.Actuals = append(r.Actuals, dbsqlc.BenefitActual{BenefitID: a.BenefitID, Period: a.Period, Value: a.Value})
		}
	}
	for _, cost := range costs {
		if r := rows[cost.InitiativeID]; r != nil {
			r.Costs = append(r.Costs, cost)
		}
	}
	ins := make([]analytics.Initiative, len(ids))
	for i, id := range ids {
		ins[i] = analytics.Initiative{Benefits: valuation.MoneyBenefits(*rows[id]), Costs: valuation.Costs(*rows[id])}
	}
	return ids, ins, nil
}
