package api

// Analytics, continued: the JSON of forecast accuracy and the forward
// forecast of realisation (GET /v1/analytics/forecasts) and of peer
// benchmarks (GET /v1/analytics/benchmarks), and the deadline every analytics
// request runs under. The operations are internal/analytics's.

import (
	"cmp"
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/money"
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
		if err := analytics.PrepareTransaction(ctx, requestTx(c), d); err != nil {
			return err
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

func toAccuracy(a analytics.Accuracy, base string) accuracyJSON {
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

// forecastsEnvelope maps a forecasts report.
func forecastsEnvelope(rep analytics.ForecastsReport) analyticsEnvelope[forecastsJSON] {
	base := rep.Meta.BaseCurrency
	out := forecastsJSON{GroupBy: rep.GroupBy, Horizon: rep.Horizon, Groups: make([]accuracyGroupJSON, len(rep.Groups))}
	if rep.Total != nil {
		out.Total = toAccuracy(*rep.Total, base)
	}
	for i, g := range rep.Groups {
		out.Groups[i] = accuracyGroupJSON{Key: g.Key, Name: g.Name, accuracyJSON: toAccuracy(g.Accuracy, base)}
	}
	out.Forecast = forecastJSON{Method: "damped_holt", Alpha: analytics.HoltAlpha, Beta: analytics.HoltBeta, Phi: analytics.HoltPhi, Interval: 0.8,
		Points: []forecastPointJSON{}}
	if rep.HistoryLen > 0 {
		out.Forecast.HistoryFrom, out.Forecast.HistoryTo = new(rep.HistoryStart.String()), new(rep.HistoryStart.Add(rep.HistoryLen-1).String())
	}
	if f := rep.Forecast; f != nil {
		places := money.Places(base)
		out.Forecast.ResidualSD = new(money.RoundFloat(f.ResidualSD, places))
		for _, pt := range f.Points {
			out.Forecast.Points = append(out.Forecast.Points, forecastPointJSON{Period: pt.Period.String(), Value: money.RoundFloat(pt.Value, places),
				Lower: money.RoundFloat(pt.Lower, places), Upper: money.RoundFloat(pt.Upper, places)})
		}
	} else {
		out.Forecast.NullReason = new(string(rep.NullReason))
	}
	return analyticsEnvelope[forecastsJSON]{Data: out, Meta: analyticsMeta(rep.Meta)}
}

// ---- benchmarks -------------------------------------------------------

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

// benchmarksEnvelope maps a benchmarks report (figures are percentages).
func benchmarksEnvelope(rep analytics.BenchmarksReport) analyticsEnvelope[benchmarksJSON] {
	out := benchmarksJSON{Metric: rep.Metric, Industry: rep.Industry, IndustrySource: rep.IndustrySource, InitiativesCount: rep.InitiativesCount,
		Peers: make([]peerGroupJSON, len(rep.Peers))}
	if v, ok := rep.TenantValue.Get(); ok {
		out.TenantValue = new(money.Percent(v))
	} else {
		out.TenantValueNullReason = new(string(rep.TenantValue.Reason))
	}
	percent := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		return new(money.Percent(*v))
	}
	for i, g := range rep.Peers {
		out.Peers[i] = peerGroupJSON{Kind: g.Kind, Source: g.Source, Year: g.Year, SampleSize: g.SampleSize,
			P25: percent(g.P25), Median: percent(g.Median), P75: percent(g.P75), PercentileRank: percent(g.PercentileRank)}
		if g.Reason != "" {
			out.Peers[i].Reason = new(string(g.Reason))
		}
	}
	return analyticsEnvelope[benchmarksJSON]{Data: out, Meta: analyticsMeta(rep.Meta)}
}
