package benefit

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// Trend is the direction of a benefit's variance over its recent periods.
type Trend string

const (
	Improving        Trend = "improving"
	Stable           Trend = "stable"
	Declining        Trend = "declining"
	InsufficientData Trend = "insufficient_data"
)

// Trends lists every trend value.
var Trends = []Trend{Improving, Stable, Declining, InsufficientData}

// TrendThreshold is the relative change of variance, against the mean
// |expected| of the periods compared, that counts as a move rather than noise.
const TrendThreshold = 0.05

// Expected is what one period of the report expects (from the benefit's plan
// or its even spread; computed by the caller, see internal/finance).
type Expected struct {
	Period finance.Month // on the benefit's grid
	Value  decimal.Decimal
}

// ExpectedOver is what each of periods expects of b, by the value model's one
// definition (finance.Benefit.ExpectedFor: the plan, else the even spread;
// 0 outside the benefit's dates).
func ExpectedOver(b finance.Benefit, periods []finance.Month) []Expected {
	out := make([]Expected, len(periods))
	for i, p := range periods {
		out[i] = Expected{Period: p, Value: b.ExpectedFor(p)}
	}
	return out
}

// PeriodVariance is one line of the report. Actual, Variance and
// VariancePercent are nil for a period with no actual; VariancePercent is
// also nil when the period expects 0.
type PeriodVariance struct {
	Period          finance.Month
	Expected        decimal.Decimal
	Actual          *decimal.Decimal
	Variance        *decimal.Decimal
	VariancePercent *decimal.Decimal
}

// Variance is the spec's variance result for one benefit over one range,
// like for like (finance.Comparison): ExpectedYTD, ActualYTD, Variance and
// VariancePercent cover the periods that have an actual; the periods
// without one are listed in MissingPeriods and their expectation is
// ExpectedUnmeasured, never counted as a shortfall.
type Variance struct {
	ExpectedYTD        decimal.Decimal  // expected of the periods with an actual
	ActualYTD          decimal.Decimal  // the actuals recorded
	Variance           decimal.Decimal  // ActualYTD − ExpectedYTD
	VariancePercent    *decimal.Decimal // Variance / ExpectedYTD × 100; nil when ExpectedYTD is 0
	ExpectedUnmeasured decimal.Decimal  // expected of the periods without an actual
	Trend              Trend
	Periods            []PeriodVariance
	MissingPeriods     []finance.Month // periods of the range without an actual
}

// ComputeVariance compares the actuals (by period) with what each period of
// the range expects. expected lists every period of the range, oldest first;
// actuals of periods outside it are ignored. Numbers are exact: the API
// rounds at the JSON edge.
func ComputeVariance(expected []Expected, actuals map[finance.Month]decimal.Decimal) Variance {
	v := Variance{Periods: make([]PeriodVariance, 0, len(expected)), MissingPeriods: []finance.Month{}}
	var c finance.Comparison
	for _, e := range expected {
		line := PeriodVariance{Period: e.Period, Expected: e.Value}
		cmp := finance.PeriodComparison{Period: e.Period, Expected: e.Value}
		if a, ok := actuals[e.Period]; ok {
			diff := a.Sub(e.Value)
			line.Actual, line.Variance = new(a), &diff
			line.VariancePercent = finance.PercentOf(diff, e.Value)
			cmp.Actual = new(a)
		} else {
			v.MissingPeriods = append(v.MissingPeriods, e.Period)
		}
		c.Add(cmp)
		v.Periods = append(v.Periods, line)
	}
	v.ExpectedYTD, v.ActualYTD, v.ExpectedUnmeasured = c.Expected, c.Actual, c.Unmeasured
	v.Variance, v.VariancePercent = c.Variance(), c.VariancePercent()
	v.Trend = trendOf(v.Periods)
	return v
}

// trendOf applies the value model's rule to the last three periods that have
// an actual: Δ = (variance of the newest − variance of the oldest) / mean
// |expected| of the three; Δ ≥ +0.05 improving, Δ ≤ −0.05 declining, else
// stable. When the three expect 0 on average, only the sign of the raw
// difference counts. Fewer than three → insufficient_data.
func trendOf(periods []PeriodVariance) Trend {
	var recent []PeriodVariance // newest first
	for i := len(periods) - 1; i >= 0 && len(recent) < 3; i-- {
		if periods[i].Actual != nil {
			recent = append(recent, periods[i])
		}
	}
	if len(recent) < 3 {
		return InsufficientData
	}
	diff := recent[0].Variance.Sub(*recent[2].Variance).InexactFloat64()
	meanAbs := recent[0].Expected.Abs().Add(recent[1].Expected.Abs()).Add(recent[2].Expected.Abs()).InexactFloat64() / 3
	delta := diff
	if meanAbs != 0 {
		delta = diff / meanAbs
	} else if diff != 0 {
		delta = math.Copysign(1, diff) // any change is a move when nothing was expected
	}
	switch {
	case delta >= TrendThreshold:
		return Improving
	case delta <= -TrendThreshold:
		return Declining
	}
	return Stable
}
