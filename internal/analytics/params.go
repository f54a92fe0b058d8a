package analytics

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/finance"
)

// Values are an analysis's parameters by name: a request's query string or
// a dashboard widget's params (strings both). Each Parse*Params reads them
// into the operation's typed parameters, the one reading for both.
type Values map[string]string

// ParamError is a parameter an analysis cannot take (400 on a request, 422
// on a widget's params); Message says which and why.
type ParamError struct{ Message string }

func (e *ParamError) Error() string { return e.Message }

func paramError(format string, args ...any) error {
	return &ParamError{Message: fmt.Sprintf(format, args...)}
}

// ErrInitiativeNotFound: the initiative an analysis names is not the tenant's.
var ErrInitiativeNotFound = errors.New("initiative not found")

// The names each analysis takes.
var (
	ROIParamNames         = []string{"basis", "initiative_id", "period"}
	RealizationParamNames = []string{"initiative_id"}
	TrendsParamNames      = []string{"from", "group_by", "to"}
	ForecastsParamNames   = []string{"group_by", "horizon"}
	BenchmarksParamNames  = []string{"industry", "metric"}
)

// checkNames refuses a name the analysis does not take (the request's query
// reader refuses them the same way before).
func checkNames(v Values, names []string) error {
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if !slices.Contains(names, k) {
			return paramError("unknown query parameter: this endpoint takes %s", strings.Join(names, ", "))
		}
	}
	return nil
}

// initiativeParam reads the optional initiative_id of an analysis.
func initiativeParam(v Values) (*uuid.UUID, error) {
	idText, hasID := v["initiative_id"]
	if !hasID {
		return nil, nil
	}
	id, err := uuid.Parse(idText)
	if err != nil {
		return nil, paramError("query parameter initiative_id must be a UUID")
	}
	return &id, nil
}

// ROIParams are the parameters of the ROI analysis.
type ROIParams struct {
	InitiativeID *uuid.UUID // nil: the portfolio
	Period       string     // a window (ParseWindow), read at the tenant's fiscal year
	Basis        finance.Basis
}

// DefaultROIBasis is the basis of an ROI analysis that names none: actuals
// to date, then plan.
const DefaultROIBasis = finance.BasisActual

// ParseROIParams reads initiative_id, period and basis.
func ParseROIParams(v Values) (ROIParams, error) {
	if err := checkNames(v, ROIParamNames); err != nil {
		return ROIParams{}, err
	}
	id, err := initiativeParam(v)
	if err != nil {
		return ROIParams{}, err
	}
	p := ROIParams{InitiativeID: id, Period: v["period"], Basis: DefaultROIBasis}
	if basisText, ok := v["basis"]; ok {
		b, ok := finance.ParseBasis(basisText)
		if !ok {
			return ROIParams{}, paramError("query parameter basis must be plan or forecast")
		}
		p.Basis = b
	}
	// The form of a period does not depend on the fiscal year: checked here
	// so a widget is refused when saved; ROI reads it at the tenant's.
	if _, err := ParseWindow(p.Period, finance.MonthOfTime(time.Now()), 1); err != nil {
		return ROIParams{}, paramError("%s", err.Error())
	}
	return p, nil
}

// RealizationParams are the parameters of the realisation analysis.
type RealizationParams struct {
	InitiativeID *uuid.UUID // nil: the portfolio
}

// ParseRealizationParams reads initiative_id.
func ParseRealizationParams(v Values) (RealizationParams, error) {
	if err := checkNames(v, RealizationParamNames); err != nil {
		return RealizationParams{}, err
	}
	id, err := initiativeParam(v)
	return RealizationParams{InitiativeID: id}, err
}

// TrendGroupings are the group_by values of trends ("" for none).
var TrendGroupings = []string{"category", "initiative"}

// TrendsParams are the parameters of the trends analysis.
type TrendsParams struct {
	From, To string // months (ParseTrendRange), checked again at the request's month
	GroupBy  string // "", category or initiative
}

// ParseTrendsParams reads from, to and group_by.
func ParseTrendsParams(v Values) (TrendsParams, error) {
	if err := checkNames(v, TrendsParamNames); err != nil {
		return TrendsParams{}, err
	}
	p := TrendsParams{From: v["from"], To: v["to"]}
	if g, ok := v["group_by"]; ok {
		if !slices.Contains(TrendGroupings, g) {
			return TrendsParams{}, paramError("query parameter group_by must be one of %s", strings.Join(TrendGroupings, ", "))
		}
		p.GroupBy = g
	}
	// The range is checked again at the request's month by Trends; this
	// refuses a malformed one when a widget is saved.
	if _, err := ParseTrendRange(p.From, p.To, finance.MonthOfTime(time.Now())); err != nil {
		return TrendsParams{}, paramError("%s", err.Error())
	}
	return p, nil
}

// Forecast parameters.
var ForecastGroupings = []string{"benefit", "initiative", "owner", "category"}

const (
	DefaultForecastHorizon = 6
	MaxForecastHorizon     = 24
	// forecastHistoryMonths is how far back the forecast's history reaches
	// (the spec's 5 years of analytics history).
	forecastHistoryMonths = 60
)

// ForecastsParams are the parameters of the forecasts analysis.
type ForecastsParams struct {
	GroupBy string // benefit, initiative, owner or category
	Horizon int    // 1..MaxForecastHorizon
}

// ParseForecastsParams reads group_by (default initiative) and horizon (default 6).
func ParseForecastsParams(v Values) (ForecastsParams, error) {
	if err := checkNames(v, ForecastsParamNames); err != nil {
		return ForecastsParams{}, err
	}
	p := ForecastsParams{GroupBy: "initiative", Horizon: DefaultForecastHorizon}
	if g, ok := v["group_by"]; ok {
		if !slices.Contains(ForecastGroupings, g) {
			return ForecastsParams{}, paramError("query parameter group_by must be one of %s", strings.Join(ForecastGroupings, ", "))
		}
		p.GroupBy = g
	}
	if h, ok := v["horizon"]; ok {
		n, err := strconv.Atoi(h)
		if err != nil || n < 1 || n > MaxForecastHorizon {
			return ForecastsParams{}, paramError("query parameter horizon must be an integer from %d to %d", 1, MaxForecastHorizon)
		}
		p.Horizon = n
	}
	return p, nil
}

// BenchmarksParams are the parameters of the peer benchmark.
type BenchmarksParams struct {
	Industry string // normalised (NormalizeIndustry); "" for the default
	Metric   string // one of Metrics
}

// ParseBenchmarksParams reads metric (required) and industry (optional, normalised).
func ParseBenchmarksParams(v Values) (BenchmarksParams, error) {
	if err := checkNames(v, BenchmarksParamNames); err != nil {
		return BenchmarksParams{}, err
	}
	metric, hasMetric := v["metric"]
	if !hasMetric || !slices.Contains(Metrics, metric) {
		return BenchmarksParams{}, paramError("query parameter metric is required, one of %s", strings.Join(Metrics, ", "))
	}
	p := BenchmarksParams{Metric: metric}
	if industry, ok := v["industry"]; ok {
		norm, err := NormalizeIndustry(industry)
		if err != nil {
			return BenchmarksParams{}, paramError("query parameter %s", err.Error())
		}
		p.Industry = norm
	}
	return p, nil
}
