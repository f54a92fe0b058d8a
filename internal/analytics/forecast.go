package analytics

import (
	"math"

	"github.com/valuecase/valuecase/internal/finance"
)

// Accuracy is how well expectations predicted actuals over the (benefit,
// period) pairs that have an actual, from the sums PostgreSQL makes
// (AnalyticsForecastAccuracy). With a_i the actual and e_i the expected
// value of pair i, each at its period's rate:
//
//	MAPE = mean over the pairs with e_i ≠ 0 of |a_i − e_i| / |e_i| (rates cancel)
//	WAPE = Σ |a_i − e_i| / Σ |e_i|
//	bias = Σ (a_i − e_i) / Σ e_i   (positive: actuals above expectations)
//
// All three are fractions here (the API shows percent). A figure is nil when
// its denominator is 0; WAPE and bias also when a rate is missing.
type Accuracy struct {
	Periods          int
	MAPE, WAPE, Bias *float64
	Expected, Actual *float64 // Σ e_i, Σ a_i (base currency); nil when a rate is missing
	MissingRates     bool
}

// AccuracySums are the per-group sums of AnalyticsForecastAccuracy.
type AccuracySums struct {
	Periods, Missing, MAPEPeriods int64
	MAPE                          float64 // mean |a − e| / |e| over the MAPEPeriods
	AbsError, AbsExpected         float64
	Expected, Actual              float64
}

// AccuracyOf turns the sums into the figures of Accuracy.
func AccuracyOf(s AccuracySums) Accuracy {
	a := Accuracy{Periods: int(s.Periods), MissingRates: s.Missing > 0}
	if s.MAPEPeriods > 0 {
		a.MAPE = new(s.MAPE)
	}
	if a.MissingRates {
		return a
	}
	a.Expected, a.Actual = new(s.Expected), new(s.Actual)
	if s.AbsExpected != 0 {
		a.WAPE = new(s.AbsError / s.AbsExpected)
	}
	if s.Expected != 0 {
		a.Bias = new((s.Actual - s.Expected) / s.Expected)
	}
	return a
}

// The damped-trend Holt method of the realisation forecast (Gardner &
// McKenzie 1985), with fixed smoothing parameters so that every figure can
// be redone by hand or in a spreadsheet.
const (
	HoltAlpha = 0.5 // level
	HoltBeta  = 0.3 // trend
	HoltPhi   = 0.9 // damping of the trend
	// Z80 is the standard normal quantile of 90 %: an 80 % two-sided interval.
	Z80 = 1.2815515655446004
	// MinForecastHistory is the fewest months of history a forecast needs.
	MinForecastHistory = 3
)

// Reasons of an absent forecast.
const (
	InsufficientHistory finance.Reason = "insufficient_history"
)

// ForecastPoint is one forecast month with its 80 % interval.
type ForecastPoint struct {
	Period              finance.Month
	Value, Lower, Upper float64
}

// Forecast is the forward forecast of a monthly series.
type Forecast struct {
	ResidualSD float64 // σ of the one-step-ahead errors over the history
	Level      float64 // l_n
	Trend      float64 // b_n
	Points     []ForecastPoint
}

// DampedHolt forecasts the monthly series y (y[0] in month start, every
// month through start + len(y) − 1, 0 for a month without actuals) for
// horizon months after its last month:
//
//	initialise  l_0 = y_0, b_0 = y_1 − y_0
//	for t ≥ 1   ŷ_t = l_{t−1} + φ b_{t−1}           (one-step forecast)
//	            l_t = α y_t + (1 − α) ŷ_t
//	            b_t = β (l_t − l_{t−1}) + (1 − β) φ b_{t−1}
//	forecast    ŷ_{n+h} = l_n + (φ + φ² + … + φ^h) b_n
//	σ           = √(Σ_{t≥1} (y_t − ŷ_t)² / (n − 1))
//	interval    ŷ_{n+h} ± 1.2816 σ √h  (80 %)
//
// with α = 0.5, β = 0.3, φ = 0.9. Fewer than MinForecastHistory months:
// absent (InsufficientHistory).
func DampedHolt(start finance.Month, y []float64, horizon int) (Forecast, finance.Reason) {
	n := len(y)
	if n < MinForecastHistory {
		return Forecast{}, InsufficientHistory
	}
	level, trend := y[0], y[1]-y[0]
	sse := 0.0
	for t := 1; t < n; t++ {
		oneStep := level + HoltPhi*trend
		sse += (y[t] - oneStep) * (y[t] - oneStep)
		prev := level
		level = HoltAlpha*y[t] + (1-HoltAlpha)*oneStep
		trend = HoltBeta*(level-prev) + (1-HoltBeta)*HoltPhi*trend
	}
	f := Forecast{ResidualSD: math.Sqrt(sse / float64(n-1)), Level: level, Trend: trend, Points: make([]ForecastPoint, horizon)}
	damp, phiH := 0.0, 1.0
	last := start.Add(n - 1)
	for h := 1; h <= horizon; h++ {
		phiH *= HoltPhi
		damp += phiH
		v := level + damp*trend
		w := Z80 * f.ResidualSD * math.Sqrt(float64(h))
		f.Points[h-1] = ForecastPoint{Period: last.Add(h), Value: v, Lower: v - w, Upper: v + w}
	}
	return f, ""
}

// MonthlySeries lays month sums out as a series from the first month with a
// sum through the last (months without one are 0); ok false when there is
// no month.
func MonthlySeries(sums map[finance.Month]float64) (start finance.Month, y []float64, ok bool) {
	first, last := finance.Month(0), finance.Month(0)
	for m := range sums {
		if !ok || m < first {
			first = m
		}
		if !ok || m > last {
			last = m
		}
		ok = true
	}
	if !ok {
		return 0, nil, false
	}
	y = make([]float64, int(last-first)+1)
	for m, v := range sums {
		y[m-first] = v
	}
	return first, y, true
}
