package api

// Analytics, continued (issue 10): forecast accuracy and the forward
// forecast of realisation (GET /v1/analytics/forecasts), peer benchmarks
// (GET /v1/analytics/benchmarks), and the deadline every analytics request
// runs under. Each endpoint's computation is a function of its parsed
// parameters (forecastsData, benchmarksData) so that other analytics (the
// dashboards) can call it; the handlers only parse and write.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/settings"
)

// analyticsRetryAfter is the Retry-After (seconds) of an analysis that ran
// past its deadline.
const analyticsRetryAfter = "5"

// analyticsDeadline runs the rest of an analytics request under the
// configured deadline (ANALYTICS_TIMEOUT): the request context expires then,
// and the tenant transaction's statement_timeout is the same, so a query that
// runs past it is cancelled by PostgreSQL. Past the deadline the answer is
// 503 SERVICE_UNAVAILABLE with Retry-After, never a hung request.
func (s *Server) analyticsDeadline(c *fiber.Ctx) error {
	d := cmp.Or(s.Config.AnalyticsTimeout, config.DefaultAnalyticsTimeout)
	ctx, cancel := context.WithTimeout(c.UserContext(), d)
	defer cancel()
	outer := c.UserContext()
	c.SetUserContext(ctx)
	defer c.SetUserContext(outer) // the commit in tenantTx is not part of the analysis
	err := func() error {
		if _, err := tx(c).Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", strconv.FormatInt(d.Milliseconds(), 10)); err != nil {
			return err
		}
		if s.analyticsSlowStatement != "" {
			if _, err := tx(c).Exec(ctx, s.analyticsSlowStatement); err != nil {
				return err
			}
		}
		return c.Next()
	}()
	if err != nil && pastDeadline(ctx, err) {
		c.Set(fiber.HeaderRetryAfter, analyticsRetryAfter)
		return newError(fiber.StatusServiceUnavailable, CodeUnavailable, "the analysis did not finish within %s; retry shortly", d)
	}
	return err
}

// pastDeadline reports an error caused by the deadline: the context's, or
// PostgreSQL cancelling a statement (statement_timeout, 57014).
func pastDeadline(ctx context.Context, err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || pgconn.Timeout(err) ||
		errors.As(err, &pgErr) && pgErr.Code == "57014"
}

// ---- forecasts --------------------------------------------------------

// Forecast parameters.
var forecastGroups = []string{"benefit", "initiative", "owner", "category"}

const (
	defaultForecastHorizon = 6
	maxForecastHorizon     = 24
	// forecastHistoryMonths is how far back the forecast's history reaches
	// (the spec's 5 years of analytics history).
	forecastHistoryMonths = 60
)

type forecastsParams struct {
	GroupBy string // benefit, initiative, owner or category
	Horizon int    // 1..24
}

type accuracyJSON struct {
	Periods     int      `json:"periods"`
	MAPEPercent *float64 `json:"mape_percent"`
	WAPEPercent *float64 `json:"wape_percent"`
	BiasPercent *float64 `json:"bias_percent"`
	Expected    *float64 `json:"expected"`
	Actual      *float64 `json:"actual"`
}

type accuracyGroupJSON struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	accuracyJSON
}

type forecastPointJSON struct {
	Period string  `json:"period"`
	Value  float64 `json:"value"`
	Lower  float64 `json:"lower"`
	Upper  float64 `json:"upper"`
}

type forecastJSON struct {
	Method      string              `json:"method"`
	Alpha       float64             `json:"alpha"`
	Beta        float64             `json:"beta"`
	Phi         float64             `json:"phi"`
	Interval    float64             `json:"interval"`
	HistoryFrom *string             `json:"history_from"`
	HistoryTo   *string             `json:"history_to"`
	ResidualSD  *float64            `json:"residual_sd"`
	Points      []forecastPointJSON `json:"points"`
	NullReason  *string             `json:"null_reason"`
}

type forecastsJSON struct {
	GroupBy  string              `json:"group_by"`
	Horizon  int                 `json:"horizon"`
	Total    accuracyJSON        `json:"total"`
	Groups   []accuracyGroupJSON `json:"groups"`
	Forecast forecastJSON        `json:"forecast"`
}

func toAccuracy(r dbsqlc.AnalyticsForecastAccuracyRow, base string) accuracyJSON {
	a := analytics.AccuracyOf(analytics.AccuracySums{Periods: r.Periods, Missing: r.Missing, MAPEPeriods: r.MapePeriods, MAPE: r.Mape,
		AbsError: r.AbsError, AbsExpected: r.AbsExpected, Expected: r.Expected, Actual: r.Actual})
	pct := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		return new(money.Percent(*v * 100))
	}
	round := func(v *float64) *float64 { // sums of the base currency's amounts, as statistics
		if v == nil {
			return nil
		}
		return new(money.RoundFloat(*v, money.Places(base)))
	}
	return accuracyJSON{Periods: a.Periods, MAPEPercent: pct(a.MAPE), WAPEPercent: pct(a.WAPE), BiasPercent: pct(a.Bias),
		Expected: round(a.Expected), Actual: round(a.Actual)}
}

func (s *Server) analyticsForecasts(c *fiber.Ctx) error {
	p, err := readForecastsParams(parseQuery(c))
	if err != nil {
		return err
	}
	data, meta, err := forecastsData(newAnalyticsRun(c), p)
	if err != nil {
		return err
	}
	return c.JSON(analyticsEnvelope[forecastsJSON]{Data: data, Meta: meta})
}

// readForecastsParams reads the query of GET /v1/analytics/forecasts (and
// of a forecasts widget).
func readForecastsParams(q *query) (forecastsParams, error) {
	p := forecastsParams{GroupBy: q.oneOf("group_by", "initiative", forecastGroups), Horizon: q.intIn("horizon", defaultForecastHorizon, 1, maxForecastHorizon)}
	return p, q.done()
}

// forecastsData is the forecast accuracy of the portfolio (initiatives not
// archived; money benefits not cancelled) per group, over every period with
// an actual through the current month, and the damped-trend forecast of its
// monthly realised value for the next p.Horizon months.
func forecastsData(run analyticsRun, p forecastsParams) (forecastsJSON, analyticsMetaJSON, error) {
	ctx, t, tenant := run.ctx, run.tx, run.tenant
	current := finance.MonthOfTime(run.now)
	out := forecastsJSON{GroupBy: p.GroupBy, Horizon: p.Horizon, Groups: []accuracyGroupJSON{}}
	st, err := settings.Load(ctx, t, tenant)
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	through := current.FirstDay()
	accuracy := func(groupBy string) ([]dbsqlc.AnalyticsForecastAccuracyRow, error) {
		return db.Q.AnalyticsForecastAccuracy(ctx, t, dbsqlc.AnalyticsForecastAccuracyParams{GroupBy: groupBy, Base: st.BaseCurrency, TenantID: tenant, Through: through})
	}
	total, err := accuracy("")
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	out.Total = accuracyJSON{}
	if len(total) == 1 {
		out.Total = toAccuracy(total[0], st.BaseCurrency)
	}
	groups, err := accuracy(p.GroupBy)
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	names, err := forecastGroupNames(run, p.GroupBy)
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	for _, g := range groups {
		name, ok := names[g.GroupKey]
		if !ok {
			name = g.GroupKey
		}
		out.Groups = append(out.Groups, accuracyGroupJSON{Key: g.GroupKey, Name: name, accuracyJSON: toAccuracy(g, st.BaseCurrency)})
	}
	slices.SortFunc(out.Groups, func(a, b accuracyGroupJSON) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Key, b.Key))
	})

	// The forecast: the monthly realised value (Σ actuals at each month's rate) of the last 60 months.
	sums, err := db.Q.AnalyticsActualsByMonth(ctx, t, dbsqlc.AnalyticsActualsByMonthParams{GroupBy: "", Base: st.BaseCurrency, TenantID: tenant,
		FromPeriod: current.Add(1 - forecastHistoryMonths).FirstDay(), Through: through})
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	missingRows, err := db.Q.AnalyticsMissingActualRates(ctx, t, dbsqlc.AnalyticsMissingActualRatesParams{TenantID: tenant, Through: through, Base: st.BaseCurrency})
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	out.Forecast = forecastJSON{Method: "damped_holt", Alpha: analytics.HoltAlpha, Beta: analytics.HoltBeta, Phi: analytics.HoltPhi, Interval: 0.8,
		Points: []forecastPointJSON{}}
	byMonth := map[finance.Month]float64{}
	unknown := false
	for _, r := range sums {
		byMonth[finance.MonthOfTime(r.Period)] = r.Actual.InexactFloat64() // a forecast is a statistic: float64 from here
		unknown = unknown || r.Missing > 0
	}
	start, y, ok := analytics.MonthlySeries(byMonth)
	if ok {
		out.Forecast.HistoryFrom, out.Forecast.HistoryTo = new(start.String()), new(start.Add(len(y)-1).String())
	}
	switch f, reason := analytics.DampedHolt(start, y, p.Horizon); {
	case unknown:
		out.Forecast.NullReason = new(string(analytics.MissingFXRates))
	case reason != "":
		out.Forecast.NullReason = new(string(reason))
	default:
		places := money.Places(st.BaseCurrency)
		out.Forecast.ResidualSD = new(money.RoundFloat(f.ResidualSD, places))
		for _, pt := range f.Points {
			out.Forecast.Points = append(out.Forecast.Points, forecastPointJSON{Period: pt.Period.String(), Value: money.RoundFloat(pt.Value, places),
				Lower: money.RoundFloat(pt.Lower, places), Upper: money.RoundFloat(pt.Upper, places)})
		}
	}
	missing := make([]finance.MissingRate, len(missingRows))
	for i, m := range missingRows {
		missing[i] = finance.MissingRate{Currency: m.Currency, Period: finance.MonthOfTime(m.Period)}
	}
	return out, analyticsMeta(st.BaseCurrency, current, sortedMissing(missing)), nil
}

// forecastGroupNames names the groups' keys: benefits and initiatives by
// name; owners and categories are their own names.
func forecastGroupNames(run analyticsRun, groupBy string) (map[string]string, error) {
	ctx, t, tenant := run.ctx, run.tx, run.tenant
	names := map[string]string{}
	switch groupBy {
	case "benefit":
		rows, err := db.Q.AnalyticsBenefits(ctx, t, dbsqlc.AnalyticsBenefitsParams{TenantID: tenant})
		if err != nil {
			return nil, err
		}
		for _, b := range rows {
			names[b.ID.String()] = b.Name
		}
	case "initiative":
		rows, err := db.Q.AnalyticsInitiativeNames(ctx, t, dbsqlc.AnalyticsInitiativeNamesParams{TenantID: tenant})
		if err != nil {
			return nil, err
		}
		for _, in := range rows {
			names[in.ID.String()] = in.Name
		}
	}
	return names, nil
}

// roiForecastWAPE is the WAPE (a fraction) of the money benefits of the
// initiatives an ROI covers (the portfolio, or the one named) over the
// periods with an actual inside the window and through the current month;
// nil when there is none, nothing was expected, or a rate is missing.
func roiForecastWAPE(run analyticsRun, base string, w analytics.Window, current finance.Month, only *uuid.UUID) (*float64, error) {
	params := dbsqlc.AnalyticsForecastAccuracyParams{GroupBy: "", Base: base, TenantID: run.tenant, Through: current.FirstDay()}
	if only != nil {
		params.InitiativeID = only
	}
	if !w.Lifetime {
		params.FromPeriod = new(w.Months.Start.FirstDay())
		params.Through = min(w.Months.End, current).FirstDay()
	}
	rows, err := db.Q.AnalyticsForecastAccuracy(run.ctx, run.tx, params)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := rows[0]
	return analytics.AccuracyOf(analytics.AccuracySums{Periods: r.Periods, Missing: r.Missing, AbsError: r.AbsError, AbsExpected: r.AbsExpected,
		Expected: r.Expected, Actual: r.Actual}).WAPE, nil
}

// ---- benchmarks -------------------------------------------------------

type benchmarksParams struct {
	Industry string // normalised (analytics.NormalizeIndustry); "" for the default
	Metric   string // one of analytics.Metrics
}

type peerGroupJSON struct {
	Kind           string   `json:"kind"`   // tenants | dataset
	Source         string   `json:"source"` // "valuecase_tenants" or the dataset's source
	Year           *int     `json:"year"`
	SampleSize     *int64   `json:"sample_size"`
	P25            *float64 `json:"p25"`
	Median         *float64 `json:"median"`
	P75            *float64 `json:"p75"`
	PercentileRank *float64 `json:"percentile_rank"`
	Reason         *string  `json:"reason"`
}

type benchmarksJSON struct {
	Metric                string          `json:"metric"`
	Industry              *string         `json:"industry"`
	IndustrySource        string          `json:"industry_source"` // parameter | initiatives | none
	InitiativesCount      int             `json:"initiatives_count"`
	TenantValue           *float64        `json:"tenant_value"`
	TenantValueNullReason *string         `json:"tenant_value_null_reason"`
	Peers                 []peerGroupJSON `json:"peers"`
}

// tenantPeersSource names the peer group of other tenants' figures.
const tenantPeersSource = "valuecase_tenants"

func (s *Server) analyticsBenchmarks(c *fiber.Ctx) error {
	p, err := readBenchmarksParams(parseQuery(c))
	if err != nil {
		return err
	}
	data, meta, err := benchmarksData(newAnalyticsRun(c), p)
	if err != nil {
		return err
	}
	return c.JSON(analyticsEnvelope[benchmarksJSON]{Data: data, Meta: meta})
}

// readBenchmarksParams reads the query of GET /v1/analytics/benchmarks (and
// of a benchmarks widget): metric required, industry optional (normalised).
func readBenchmarksParams(q *query) (benchmarksParams, error) {
	industry, hasIndustry := q.str("industry")
	metric, hasMetric := q.str("metric")
	if err := q.done(); err != nil {
		return benchmarksParams{}, err
	}
	if !hasMetric || !slices.Contains(analytics.Metrics, metric) {
		return benchmarksParams{}, InvalidParameter("query parameter metric is required, one of %s", strings.Join(analytics.Metrics, ", "))
	}
	p := benchmarksParams{Metric: metric}
	if hasIndustry {
		norm, err := analytics.NormalizeIndustry(industry)
		if err != nil {
			return benchmarksParams{}, InvalidParameter("query parameter %s", err.Error())
		}
		p.Industry = norm
	}
	return p, nil
}

// benchmarksData compares the tenant's figure of p.Metric in an industry
// (p.Industry, else the one most of its initiatives name) with its peers:
// other tenants' figures through peer_benchmark() (at least 5 other tenants)
// and each operator-loaded dataset source (at least 5 values). Computing it
// refreshes the tenant's own figures of every metric in that industry
// (peer_metric_snapshots), which is how other tenants see it as a peer.
func benchmarksData(run analyticsRun, p benchmarksParams) (benchmarksJSON, analyticsMetaJSON, error) {
	ctx, t, tenant := run.ctx, run.tx, run.tenant
	current := finance.MonthOfTime(run.now)
	out := benchmarksJSON{Metric: p.Metric, IndustrySource: "parameter", Peers: []peerGroupJSON{}}
	st, err := settings.Load(ctx, t, tenant)
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	industries, err := db.Q.AnalyticsInitiativeIndustries(ctx, t, tenant)
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	industry := p.Industry
	if industry == "" {
		all := make([]string, len(industries))
		for i, r := range industries {
			all[i] = r.Industry
		}
		var ok bool
		if industry, ok = analytics.DefaultIndustry(all); !ok {
			out.IndustrySource = "none"
			out.TenantValueNullReason = new(string(analytics.NoIndustry))
			return out, analyticsMeta(st.BaseCurrency, current, nil), nil
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
	var ins []analytics.Initiative
	if len(inIndustry) > 0 {
		if ids, ins, err = loadAnalyticsInitiatives(run, nil); err != nil {
			return out, analyticsMetaJSON{}, err
		}
	}
	var mine []analytics.Initiative
	var benefits []finance.Benefit
	for i, id := range ids {
		if inIndustry[id] {
			mine = append(mine, ins[i])
			benefits = append(benefits, ins[i].Benefits...)
		}
	}
	out.InitiativesCount = len(mine)
	fx, err := loadFX(run, st.BaseCurrency)
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	roi := analytics.ComputeROI(mine, analytics.Window{Label: analytics.Lifetime, Lifetime: true}, current, st.DiscountRate, finance.BasisActual, fx)
	missing := slices.Clone(roi.Missing)
	toDate, missToDate := finance.CompareToDate(benefits, current, fx)
	missing = append(missing, missToDate...)
	var toDateP *finance.Comparison
	if !toDate.MeasuredUnknown {
		toDateP = &toDate
	}
	figures := analytics.BenchmarkFigures(roi, len(mine), toDateP)
	for _, m := range analytics.Metrics {
		if v, ok := figures[m].Get(); ok {
			err = db.Q.PeerSnapshotPut(ctx, t, dbsqlc.PeerSnapshotPutParams{TenantID: tenant, Industry: industry, Metric: m, Value: v})
		} else {
			err = db.Q.PeerSnapshotDelete(ctx, t, dbsqlc.PeerSnapshotDeleteParams{TenantID: tenant, Industry: industry, Metric: m})
		}
		if err != nil {
			return out, analyticsMetaJSON{}, err
		}
	}
	value, known := figures[p.Metric].Get()
	var valueP *float64
	if known {
		valueP = &value
		out.TenantValue = new(money.Percent(value))
	} else {
		out.TenantValueNullReason = new(string(figures[p.Metric].Reason))
	}

	// (a) Other tenants: only through peer_benchmark(), only from 5 of them.
	peers, err := db.Q.PeerBenchmark(ctx, t, dbsqlc.PeerBenchmarkParams{Industry: industry, Metric: p.Metric, Value: valueP})
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	g := peerGroupJSON{Kind: "tenants", Source: tenantPeersSource}
	if peers.Shown {
		g.SampleSize, g.P25, g.Median, g.P75 = new(peers.Tenants), new(money.Percent(peers.P25)), new(money.Percent(peers.Median)), new(money.Percent(peers.P75))
		if peers.Ranked {
			g.PercentileRank = new(money.Percent(peers.PercentileRank))
		}
	} else {
		g.Reason = new(string(analytics.FewerThanMinPeers))
	}
	out.Peers = append(out.Peers, g)

	// (b) Operator-loaded datasets, one group per source.
	sets, err := db.Q.PeerDatasetBenchmarks(ctx, t, dbsqlc.PeerDatasetBenchmarksParams{Value: valueP, Industry: industry, Metric: p.Metric})
	if err != nil {
		return out, analyticsMetaJSON{}, err
	}
	for _, d := range sets {
		g := peerGroupJSON{Kind: "dataset", Source: d.Source, Year: new(int(d.Year)), SampleSize: new(d.SampleSize)}
		if d.SampleSize < analytics.MinPeers {
			g.Reason = new(string(analytics.FewerThanMinPeers))
		} else {
			g.P25, g.Median, g.P75 = new(money.Percent(d.P25)), new(money.Percent(d.Median)), new(money.Percent(d.P75))
			if known {
				g.PercentileRank = new(money.Percent(d.PercentileRank))
			}
		}
		out.Peers = append(out.Peers, g)
	}
	return out, analyticsMeta(st.BaseCurrency, current, sortedMissing(missing)), nil
}
