package analytics

// The analyses as operations: each reads its rows in the tenant's
// transaction (tx) at a moment (now), runs the pure computations of this
// package and returns a typed report, unrounded (the API rounds at the edge).
// The HTTP handlers and the dashboards' widgets call these, with the typed
// parameters of params.go.

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Scope is whom and when an analysis is for: the tenant of the transaction
// and the moment whose month is the current one.
type Scope struct {
	Tenant uuid.UUID
	Now    time.Time
}

func (s Scope) current() finance.Month { return finance.MonthOfTime(s.Now) }

// Meta is what every report states besides its figures.
type Meta struct {
	BaseCurrency string
	AsOf         finance.Month         // the current month the figures are computed at
	Missing      []finance.MissingRate // the FX rates the figures lacked, sorted, each once
}

// InitiativeName is an initiative an analysis covers.
type InitiativeName struct {
	ID   uuid.UUID
	Name string
}

// PrepareTransaction readies tx for an analysis: PostgreSQL cancels any later
// statement that runs past d (the analysis's deadline), and plans each for
// its tenant's rows rather than reuse a generic plan (AnalyticsTransactionSettings).
func PrepareTransaction(ctx context.Context, tx pgx.Tx, d time.Duration) error {
	if err := db.Pin(ctx, tx); err != nil {
		return err
	}
	return db.Q.AnalyticsTransactionSettings(ctx, tx, d.Milliseconds())
}

// ---- ROI -------------------------------------------------------------

// ROIReport is the ROI analysis of an initiative or the portfolio.
type ROIReport struct {
	InitiativeID     *uuid.UUID // nil for the portfolio
	Window           Window
	InitiativesCount int
	ROI              ROI // with its forecast accuracy applied
	Meta             Meta
}

// AnalyseROI is analyseROI through the report cache (cache.go).
var AnalyseROI = cached("roi", analyseROI)

// analyseROI is the ROI analysis of the initiative named or the portfolio.
func analyseROI(ctx context.Context, tx pgx.Tx, scope Scope, p ROIParams) (ROIReport, error) {
	current := scope.current()
	st, err := settings.Load(ctx, tx, scope.Tenant)
	if err != nil {
		return ROIReport{}, err
	}
	w, err := ParseWindow(p.Period, current, st.FiscalYearStartMonth)
	if err != nil {
		return ROIReport{}, paramError("%s", err.Error())
	}
	ids, ins, err := loadInitiatives(ctx, tx, scope.Tenant, p.InitiativeID)
	if err != nil {
		return ROIReport{}, err
	}
	fx, err := loadFX(ctx, tx, scope.Tenant, st.BaseCurrency)
	if err != nil {
		return ROIReport{}, err
	}
	r := ComputeROI(ins, w, current, st.DiscountRate, p.Basis, fx)
	wape, err := forecastWAPE(ctx, tx, scope.Tenant, st.BaseCurrency, w, current, p.InitiativeID)
	if err != nil {
		return ROIReport{}, err
	}
	r.ApplyAccuracy(wape)
	return ROIReport{InitiativeID: p.InitiativeID, Window: w, InitiativesCount: len(ids), ROI: r,
		Meta: Meta{BaseCurrency: st.BaseCurrency, AsOf: current, Missing: r.Missing}}, nil
}

// loadFX reads every FX rate of the tenant into a converter to base.
func loadFX(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, base string) (finance.FX, error) {
	rows, err := db.Q.FxRateList(ctx, tx, dbsqlc.FxRateListParams{TenantID: tenant})
	if err != nil {
		return finance.FX{}, err
	}
	return valuation.FX(base, rows)
}

// loadInitiatives reads the initiatives an analysis covers (the portfolio:
// every one not archived; or the one named, ErrInitiativeNotFound when it is
// not the tenant's) with their benefits, plans, actuals and costs in five
// queries, mapped as the initiative detail maps them (internal/valuation).
func loadInitiatives(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, only *uuid.UUID) ([]uuid.UUID, []Initiative, error) {
	initiatives, err := db.Q.AnalyticsInitiativeNames(ctx, tx, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	if only != nil && len(initiatives) == 0 {
		return nil, nil, ErrInitiativeNotFound
	}
	benefits, err := db.Q.AnalyticsBenefits(ctx, tx, dbsqlc.AnalyticsBenefitsParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	plans, err := db.Q.AnalyticsPlans(ctx, tx, dbsqlc.AnalyticsPlansParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	actuals, err := db.Q.AnalyticsActuals(ctx, tx, dbsqlc.AnalyticsActualsParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return nil, nil, err
	}
	costs, err := db.Q.AnalyticsCosts(ctx, tx, dbsqlc.AnalyticsCostsParams{TenantID: tenant, InitiativeID: only})
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
	// Grouped by benefit as read, not copied into each initiative's rows as stored actuals: the
	// portfolio of 1,000 initiatives has 360,000, which took over 100 MB as rows.
	grouped := valuation.Actuals{}
	for _, a := range actuals {
		grouped.Add(a.BenefitID, a.Period, a.Value)
	}
	for _, cost := range costs {
		if r := rows[cost.InitiativeID]; r != nil {
			r.Costs = append(r.Costs, cost)
		}
	}
	ins := make([]Initiative, len(ids))
	for i, id := range ids {
		ins[i] = Initiative{Benefits: valuation.MoneyBenefitsWith(*rows[id], grouped), Costs: valuation.Costs(*rows[id])}
	}
	return ids, ins, nil
}

// ---- realisation -----------------------------------------------------

// RealizationReport is expected against realised to date of an initiative
// or the portfolio.
type RealizationReport struct {
	InitiativeID *uuid.UUID       // nil for the portfolio
	Initiatives  []InitiativeName // every initiative covered, by name
	Realization
	Meta Meta
}

// PortfolioPlan joins a portfolio's benefits, initiatives and measured figures in one
// pass each, whatever the statistics say of the tenant's size. Statistics taken before a
// tenant grew put it at one row, and the planner then joined by nested loops: an index probe
// per benefit, or for a large tenant every benefit compared with every figure (2.6 s for
// 10,000 benefits, 26 ms with hash joins). One initiative's realisation keeps the planner's
// choice: probes are right for its few benefits, where hash joins read the whole tenant.
var PortfolioPlan = db.NewSettings(db.Setting{Name: "enable_nestloop", Value: "off"})

// AnalyseRealization is analyseRealization through the report cache (cache.go).
var AnalyseRealization = cached("realization", analyseRealization)

// analyseRealization is expected against realised to date of the initiative
// named or the portfolio, like for like (ComputeRealization: the initiative
// detail's comparison per benefit, summed). One pass in SQL sums the money
// benefits in the base currency per initiative and category from each
// benefit's measured expectation (AnalyticsRealizationSums: benefit rollups
// kept exact by triggers) and names the few others (another currency, an
// actual after this month) and the benefits the at-risk rule may hold for:
// those are read one by one (AnalyticsRealizationBenefits), the first
// compared from their actuals.
func analyseRealization(ctx context.Context, tx pgx.Tx, scope Scope, p RealizationParams) (RealizationReport, error) {
	tenant, only := scope.Tenant, p.InitiativeID
	current := scope.current()
	st, err := settings.Load(ctx, tx, tenant)
	if err != nil {
		return RealizationReport{}, err
	}
	initiatives, err := db.Q.AnalyticsInitiativeNames(ctx, tx, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant, InitiativeID: only})
	if err != nil {
		return RealizationReport{}, err
	}
	if only != nil && len(initiatives) == 0 {
		return RealizationReport{}, ErrInitiativeNotFound
	}
	through := current.FirstDay()
	sumsTx := dbsqlc.DBTX(tx)
	if only == nil {
		sumsTx = db.WithSettings(tx, PortfolioPlan)
	}
	sumRows, err := db.Q.AnalyticsRealizationSums(ctx, sumsTx, dbsqlc.AnalyticsRealizationSumsParams{TenantID: tenant, InitiativeID: only, Base: st.BaseCurrency,
		CurrentMonth: int32(current)})
	if err != nil {
		return RealizationReport{}, err
	}
	fx, err := loadFX(ctx, tx, tenant, st.BaseCurrency)
	if err != nil {
		return RealizationReport{}, err
	}
	var sums []GroupSum
	var read []uuid.UUID
	for _, g := range sumRows {
		read = append(read, g.ReadIds...)
		if g.Summed == 0 {
			continue // no money benefit summed here: the group is not a category of the figures
		}
		sums = append(sums, GroupSum{InitiativeID: g.InitiativeID, Category: g.Category, Comparison: finance.Comparison{
			Expected: g.Expected, Actual: g.Actual, Unmeasured: g.Unmeasured, Measured: int(g.Measured), Periods: int(g.Periods)}})
	}
	var rows []dbsqlc.AnalyticsRealizationBenefitsRow
	if len(read) > 0 {
		rows, err = db.Q.AnalyticsRealizationBenefits(ctx, tx, dbsqlc.AnalyticsRealizationBenefitsParams{TenantID: tenant, BenefitIds: read,
			Base: st.BaseCurrency, Through: through})
		if err != nil {
			return RealizationReport{}, err
		}
	}
	benefits, err := realizationBenefits(ctx, tx, tenant, through, rows)
	if err != nil {
		return RealizationReport{}, err
	}
	out := RealizationReport{InitiativeID: only, Initiatives: make([]InitiativeName, len(initiatives))}
	ids := make([]uuid.UUID, len(initiatives))
	for i, in := range initiatives {
		ids[i], out.Initiatives[i] = in.ID, InitiativeName{ID: in.ID, Name: in.Name}
	}
	out.Realization = ComputeRealization(ids, sums, benefits, current, fx)
	out.Meta = Meta{BaseCurrency: st.BaseCurrency, AsOf: current, Missing: out.Missing}
	return out, nil
}

// realizationBenefits maps the benefits realisation reads one by one, with
// their plans, their latest actuals through the current month (the at-risk
// rule's), and the actuals of those compared here.
func realizationBenefits(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, through time.Time, rows []dbsqlc.AnalyticsRealizationBenefitsRow) ([]RealizationBenefit, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, b := range rows {
		ids[i] = b.ID
	}
	plans, err := db.Q.AnalyticsPlansOf(ctx, tx, dbsqlc.AnalyticsPlansOfParams{TenantID: tenant, BenefitIds: ids})
	if err != nil {
		return nil, err
	}
	planOf := valuation.PlansByBenefit(plans)
	benefits := make([]RealizationBenefit, len(rows))
	var laterActuals []uuid.UUID // benefits with an actual after this month: their stats pair is not the at-risk rule's
	var read []uuid.UUID         // money benefits compared here, from their actuals
	index := make(map[uuid.UUID]int, len(rows))
	for i, b := range rows {
		index[b.ID] = i
		fb := valuation.FinanceBenefit(dbsqlc.Benefit{ExpectedValue: b.ExpectedValue, MeasurementFrequency: b.MeasurementFrequency,
			ExpectedStartDate: b.ExpectedStartDate, ExpectedEndDate: b.ExpectedEndDate, Currency: b.Currency}, planOf[b.ID], nil)
		benefits[i] = RealizationBenefit{ID: b.ID, InitiativeID: b.InitiativeID, Name: b.Name, Category: b.Category, Unit: b.Unit,
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
		latest := make([]PeriodValue, 0, AtRiskPeriods)
		if b.Actuals > 1 {
			latest = append(latest, PeriodValue{Period: finance.MonthOfTime(b.PreviousPeriod), Value: b.PreviousValue})
		}
		benefits[i].Latest = append(latest, PeriodValue{Period: finance.MonthOfTime(b.LatestPeriod), Value: b.LatestValue})
	}
	if len(laterActuals) > 0 {
		latest, err := db.Q.AnalyticsLatestActualsOf(ctx, tx, dbsqlc.AnalyticsLatestActualsOfParams{TenantID: tenant, BenefitIds: laterActuals, Through: through})
		if err != nil {
			return nil, err
		}
		for _, a := range latest {
			i := index[a.BenefitID]
			benefits[i].Latest = append(benefits[i].Latest, PeriodValue{Period: finance.MonthOfTime(a.Period), Value: a.Value})
		}
	}
	if len(read) > 0 {
		actuals, err := db.Q.AnalyticsActualsOf(ctx, tx, dbsqlc.AnalyticsActualsOfParams{TenantID: tenant, BenefitIds: read})
		if err != nil {
			return nil, err
		}
		for _, a := range actuals {
			benefits[index[a.BenefitID]].Benefit.Actuals[finance.MonthOfTime(a.Period)] = a.Value
		}
	}
	return benefits, nil
}

// ---- trends ----------------------------------------------------------

// TrendGroup is one group's series (a category, or an initiative by name).
type TrendGroup struct {
	Key, Name string
	Series
}

// TrendsReport is the monthly series of expected against actual.
type TrendsReport struct {
	Horizon finance.Horizon
	GroupBy string // "" for none
	Total   Series
	Groups  []TrendGroup
	Meta    Meta
}

// AnalyseTrends is analyseTrends through the report cache (cache.go).
var AnalyseTrends = cached("trends", analyseTrends)

// analyseTrends is the monthly series of expected against actual; actuals
// are summed from the portfolio month rollup (by initiative: the month rows).
func analyseTrends(ctx context.Context, tx pgx.Tx, scope Scope, p TrendsParams) (TrendsReport, error) {
	tenant, groupBy := scope.Tenant, p.GroupBy
	current := scope.current()
	h, err := ParseTrendRange(p.From, p.To, current)
	if err != nil {
		return TrendsReport{}, paramError("%s", err.Error())
	}
	st, err := settings.Load(ctx, tx, tenant)
	if err != nil {
		return TrendsReport{}, err
	}
	rows, err := db.Q.AnalyticsTrendBenefits(ctx, tx, tenant)
	if err != nil {
		return TrendsReport{}, err
	}
	plans, err := db.Q.AnalyticsPlans(ctx, tx, dbsqlc.AnalyticsPlansParams{TenantID: tenant})
	if err != nil {
		return TrendsReport{}, err
	}
	through := min(h.End, current).FirstDay()
	sums, err := db.Q.AnalyticsActualsByMonth(ctx, tx, dbsqlc.AnalyticsActualsByMonthParams{GroupBy: groupBy, Base: st.BaseCurrency, TenantID: tenant,
		FromPeriod: h.Start.FirstDay(), Through: through})
	if err != nil {
		return TrendsReport{}, err
	}
	missingActual, err := db.Q.AnalyticsMissingActualRates(ctx, tx, dbsqlc.AnalyticsMissingActualRatesParams{TenantID: tenant,
		FromPeriod: new(h.Start.FirstDay()), Through: through, Base: st.BaseCurrency})
	if err != nil {
		return TrendsReport{}, err
	}
	fx, err := loadFX(ctx, tx, tenant, st.BaseCurrency)
	if err != nil {
		return TrendsReport{}, err
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
	benefits := make([]TrendBenefit, len(rows))
	groupSet := map[string]bool{}
	for i, b := range rows { // money benefits only
		fb := valuation.FinanceBenefit(dbsqlc.Benefit{ExpectedValue: b.ExpectedValue, MeasurementFrequency: b.MeasurementFrequency,
			ExpectedStartDate: b.ExpectedStartDate, ExpectedEndDate: b.ExpectedEndDate, Currency: &b.Currency}, planOf[b.ID], nil)
		benefits[i] = TrendBenefit{Group: groupOf(b), Benefit: fb}
		groupSet[groupOf(b)] = true
	}
	actuals := make([]ActualSum, len(sums))
	for i, a := range sums {
		actuals[i] = ActualSum{Group: a.GroupKey, Period: finance.MonthOfTime(a.Period), Value: a.Actual, Missing: a.Missing > 0}
	}
	// The groups: categories by name; initiatives (with a money benefit) by name.
	var keys, names []string
	switch groupBy {
	case "category":
		keys = slices.Sorted(maps.Keys(groupSet))
		names = keys
	case "initiative":
		initiatives, err := db.Q.AnalyticsInitiativeNames(ctx, tx, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant})
		if err != nil {
			return TrendsReport{}, err
		}
		for _, in := range initiatives {
			if groupSet[in.ID.String()] {
				keys, names = append(keys, in.ID.String()), append(names, in.Name)
			}
		}
	}
	total, groups, missing := ComputeTrends(h, current, keys, benefits, actuals, fx)
	out := TrendsReport{Horizon: h, GroupBy: groupBy, Total: total, Groups: make([]TrendGroup, len(groups))}
	for i, g := range groups {
		out.Groups[i] = TrendGroup{Key: keys[i], Name: names[i], Series: g}
	}
	for _, m := range missingActual {
		missing = append(missing, finance.MissingRate{Currency: m.Currency, Period: finance.MonthOfTime(m.Period)})
	}
	out.Meta = Meta{BaseCurrency: st.BaseCurrency, AsOf: current, Missing: sortMissing(missing)}
	return out, nil
}

// ---- forecasts -------------------------------------------------------

// AccuracyGroup is the forecast accuracy of one group.
type AccuracyGroup struct {
	Key, Name string
	Accuracy
}

// ForecastsReport is the forecast accuracy of the portfolio per group and
// the forecast of its monthly realised value.
type ForecastsReport struct {
	GroupBy string
	Horizon int
	Total   *Accuracy       // nil when no period has an actual
	Groups  []AccuracyGroup // by name, then key
	// History is the months the forecast was fitted on (ok false: none).
	HistoryStart finance.Month
	HistoryLen   int
	Forecast     *Forecast // nil for NullReason
	NullReason   finance.Reason
	Meta         Meta
}

func accuracyOf(r dbsqlc.AnalyticsForecastAccuracyRow) Accuracy {
	return AccuracyOf(AccuracySums{Periods: r.Periods, Missing: r.Missing, MAPEPeriods: r.MapePeriods, MAPE: r.Mape,
		AbsError: r.AbsError, AbsExpected: r.AbsExpected, Expected: r.Expected, Actual: r.Actual})
}

// AnalyseForecasts is analyseForecasts through the report cache (cache.go).
var AnalyseForecasts = cached("forecasts", analyseForecasts)

// analyseForecasts is the forecast accuracy of the portfolio (initiatives
// not archived; money benefits not cancelled) per group, over every period
// with an actual through the current month, and the damped-trend forecast of
// its monthly realised value for the next p.Horizon months.
func analyseForecasts(ctx context.Context, tx pgx.Tx, scope Scope, p ForecastsParams) (ForecastsReport, error) {
	tenant := scope.Tenant
	current := scope.current()
	out := ForecastsReport{GroupBy: p.GroupBy, Horizon: p.Horizon, Groups: []AccuracyGroup{}}
	st, err := settings.Load(ctx, tx, tenant)
	if err != nil {
		return out, err
	}
	through := current.FirstDay()
	accuracy := func(groupBy string) ([]dbsqlc.AnalyticsForecastAccuracyRow, error) {
		return db.Q.AnalyticsForecastAccuracy(ctx, tx, dbsqlc.AnalyticsForecastAccuracyParams{GroupBy: groupBy, Base: st.BaseCurrency, TenantID: tenant, Through: through})
	}
	total, err := accuracy("")
	if err != nil {
		return out, err
	}
	if len(total) == 1 {
		out.Total = new(accuracyOf(total[0]))
	}
	groups, err := accuracy(p.GroupBy)
	if err != nil {
		return out, err
	}
	names, err := forecastGroupNames(ctx, tx, tenant, p.GroupBy)
	if err != nil {
		return out, err
	}
	for _, g := range groups {
		name, ok := names[g.GroupKey]
		if !ok {
			name = g.GroupKey
		}
		out.Groups = append(out.Groups, AccuracyGroup{Key: g.GroupKey, Name: name, Accuracy: accuracyOf(g)})
	}
	slices.SortFunc(out.Groups, func(a, b AccuracyGroup) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Key, b.Key))
	})

	// The forecast: the monthly realised value (Σ actuals at each month's rate) of the last 60 months.
	sums, err := db.Q.AnalyticsActualsByMonth(ctx, tx, dbsqlc.AnalyticsActualsByMonthParams{GroupBy: "", Base: st.BaseCurrency, TenantID: tenant,
		FromPeriod: current.Add(1 - forecastHistoryMonths).FirstDay(), Through: through})
	if err != nil {
		return out, err
	}
	missingRows, err := db.Q.AnalyticsMissingActualRates(ctx, tx, dbsqlc.AnalyticsMissingActualRatesParams{TenantID: tenant, Through: through, Base: st.BaseCurrency})
	if err != nil {
		return out, err
	}
	byMonth := map[finance.Month]float64{}
	unknown := false
	for _, r := range sums {
		byMonth[finance.MonthOfTime(r.Period)] = r.Actual.InexactFloat64() // a forecast is a statistic: float64 from here
		unknown = unknown || r.Missing > 0
	}
	start, y, ok := MonthlySeries(byMonth)
	if ok {
		out.HistoryStart, out.HistoryLen = start, len(y)
	}
	switch f, reason := DampedHolt(start, y, p.Horizon); {
	case unknown:
		out.NullReason = MissingFXRates
	case reason != "":
		out.NullReason = reason
	default:
		out.Forecast = &f
	}
	missing := make([]finance.MissingRate, len(missingRows))
	for i, m := range missingRows {
		missing[i] = finance.MissingRate{Currency: m.Currency, Period: finance.MonthOfTime(m.Period)}
	}
	out.Meta = Meta{BaseCurrency: st.BaseCurrency, AsOf: current, Missing: sortMissing(missing)}
	return out, nil
}

// forecastGroupNames names the groups' keys: benefits and initiatives by
// name; owners and categories are their own names.
func forecastGroupNames(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, groupBy string) (map[string]string, error) {
	names := map[string]string{}
	switch groupBy {
	case "benefit":
		rows, err := db.Q.AnalyticsBenefits(ctx, tx, dbsqlc.AnalyticsBenefitsParams{TenantID: tenant})
		if err != nil {
			return nil, err
		}
		for _, b := range rows {
			names[b.ID.String()] = b.Name
		}
	case "initiative":
		rows, err := db.Q.AnalyticsInitiativeNames(ctx, tx, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant})
		if err != nil {
			return nil, err
		}
		for _, in := range rows {
			names[in.ID.String()] = in.Name
		}
	}
	return names, nil
}

// forecastWAPE is the WAPE (a fraction) of the money benefits of the
// initiatives an ROI covers (the portfolio, or the one named) over the
// periods with an actual inside the window and through the current month;
// nil when there is none, nothing was expected, or a rate is missing.
func forecastWAPE(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, base string, w Window, current finance.Month, only *uuid.UUID) (*float64, error) {
	params := dbsqlc.AnalyticsForecastAccuracyParams{GroupBy: "", Base: base, TenantID: tenant, Through: current.FirstDay(), InitiativeID: only}
	if !w.Lifetime {
		params.FromPeriod = new(w.Months.Start.FirstDay())
		params.Through = min(w.Months.End, current).FirstDay()
	}
	rows, err := db.Q.AnalyticsForecastAccuracy(ctx, tx, params)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := rows[0]
	return AccuracyOf(AccuracySums{Periods: r.Periods, Missing: r.Missing, AbsError: r.AbsError, AbsExpected: r.AbsExpected,
		Expected: r.Expected, Actual: r.Actual}).WAPE, nil
}

// ---- peer benchmarks -------------------------------------------------

// TenantPeersSource names the peer group of other tenants' figures.
const TenantPeersSource = "valuecase_tenants"

// PeerGroup is one group of peers: other tenants, or a dataset source.
type PeerGroup struct {
	Kind, Source     string // tenants | dataset; TenantPeersSource or the dataset's source
	Year             *int
	SampleSize       *int64
	P25, Median, P75 *float64 // percentages
	PercentileRank   *float64
	Reason           finance.Reason // why the figures are absent
}

// BenchmarksReport compares the tenant's figure of a metric in an industry
// with its peers.
type BenchmarksReport struct {
	Metric           string
	Industry         *string // nil when none could be chosen
	IndustrySource   string  // parameter | initiatives | none
	InitiativesCount int
	TenantValue      finance.Result
	Peers            []PeerGroup
	Meta             Meta
}

// AnalyseBenchmarks compares the tenant's figure of p.Metric in an industry
// (p.Industry, else the one most of its initiatives name) with its peers:
// other tenants' figures through peer_benchmark() (at least 5 other tenants)
// and each operator-loaded dataset source (at least 5 values). Computing it
// refreshes the tenant's own figures of every metric in that industry
// (peer_metric_snapshots), which is how other tenants see it as a peer.
// Not cached (cache.go): it writes, and reads other tenants' figures and
// the operator's datasets, which no tenant's data version counts.
func AnalyseBenchmarks(ctx context.Context, tx pgx.Tx, scope Scope, p BenchmarksParams) (BenchmarksReport, error) {
	tenant := scope.Tenant
	current := scope.current()
	out := BenchmarksReport{Metric: p.Metric, IndustrySource: "parameter", Peers: []PeerGroup{}}
	st, err := settings.Load(ctx, tx, tenant)
	if err != nil {
		return out, err
	}
	out.Meta = Meta{BaseCurrency: st.BaseCurrency, AsOf: current}
	industries, err := db.Q.AnalyticsInitiativeIndustries(ctx, tx, tenant)
	if err != nil {
		return out, err
	}
	industry := p.Industry
	if industry == "" {
		all := make([]string, len(industries))
		for i, r := range industries {
			all[i] = r.Industry
		}
		var ok bool
		if industry, ok = DefaultIndustry(all); !ok {
			out.IndustrySource = "none"
			out.TenantValue = finance.Result{Reason: NoIndustry}
			return out, nil
		}
		out.IndustrySource = "initiatives"
	}
	out.Industry = &industry

	// The tenant's figures over its initiatives (not archived) in the industry
	// (none: nothing to load).
	inIndustry := map[uuid.UUID]bool{}
	for _, r := range industries {
		if r.Industry == industry {
			inIndustry[r.ID] = true
		}
	}
	var ids []uuid.UUID
	var ins []Initiative
	if len(inIndustry) > 0 {
		if ids, ins, err = loadInitiatives(ctx, tx, tenant, nil); err != nil {
			return out, err
		}
	}
	var mine []Initiative
	var benefits []finance.Benefit
	for i, id := range ids {
		if inIndustry[id] {
			mine = append(mine, ins[i])
			benefits = append(benefits, ins[i].Benefits...)
		}
	}
	out.InitiativesCount = len(mine)
	fx, err := loadFX(ctx, tx, tenant, st.BaseCurrency)
	if err != nil {
		return out, err
	}
	roi := ComputeROI(mine, Window{Label: Lifetime, Lifetime: true}, current, st.DiscountRate, finance.BasisActual, fx)
	missing := slices.Clone(roi.Missing)
	toDate, missToDate := finance.CompareToDate(benefits, current, fx)
	missing = append(missing, missToDate...)
	var toDateP *finance.Comparison
	if !toDate.MeasuredUnknown {
		toDateP = &toDate
	}
	figures := BenchmarkFigures(roi, len(mine), toDateP)
	for _, m := range Metrics {
		if v, ok := figures[m].Get(); ok {
			err = db.Q.PeerSnapshotPut(ctx, tx, dbsqlc.PeerSnapshotPutParams{TenantID: tenant, Industry: industry, Metric: m, Value: v})
		} else {
			err = db.Q.PeerSnapshotDelete(ctx, tx, dbsqlc.PeerSnapshotDeleteParams{TenantID: tenant, Industry: industry, Metric: m})
		}
		if err != nil {
			return out, err
		}
	}
	out.TenantValue = figures[p.Metric]
	value, known := out.TenantValue.Get()
	var valueP *float64
	if known {
		valueP = &value
	}

	// (a) Other tenants: only through peer_benchmark(), only from 5 of them.
	peers, err := db.Q.PeerBenchmark(ctx, tx, dbsqlc.PeerBenchmarkParams{Industry: industry, Metric: p.Metric, Value: valueP})
	if err != nil {
		return out, err
	}
	g := PeerGroup{Kind: "tenants", Source: TenantPeersSource}
	if peers.Shown {
		g.SampleSize, g.P25, g.Median, g.P75 = new(peers.Tenants), new(peers.P25), new(peers.Median), new(peers.P75)
		if peers.Ranked {
			g.PercentileRank = new(peers.PercentileRank)
		}
	} else {
		g.Reason = FewerThanMinPeers
	}
	out.Peers = append(out.Peers, g)

	// (b) Operator-loaded datasets, one group per source.
	sets, err := db.Q.PeerDatasetBenchmarks(ctx, tx, dbsqlc.PeerDatasetBenchmarksParams{Value: valueP, Industry: industry, Metric: p.Metric})
	if err != nil {
		return out, err
	}
	for _, d := range sets {
		g := PeerGroup{Kind: "dataset", Source: d.Source, Year: new(int(d.Year)), SampleSize: new(d.SampleSize)}
		if d.SampleSize < MinPeers {
			g.Reason = FewerThanMinPeers
		} else {
			g.P25, g.Median, g.P75 = new(d.P25), new(d.Median), new(d.P75)
			if known {
				g.PercentileRank = new(d.PercentileRank)
			}
		}
		out.Peers = append(out.Peers, g)
	}
	out.Meta.Missing = sortMissing(missing)
	return out, nil
}
