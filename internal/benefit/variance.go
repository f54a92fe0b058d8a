package benefit

import (
	"math"

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
	Value  float64
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
	Expected        float64
	Actual          *float64
	Variance        *float64
	VariancePercent *float64
}

// Variance is the spec's variance result for one benefit over one range.
type Variance struct {
	ExpectedYTD     float64  // every period's expected, with or without an actual
	ActualYTD       float64  // the actuals recorded; a missing one counts 0
	Variance        float64  // ActualYTD − ExpectedYTD
	VariancePercent *float64 // Variance / ExpectedYTD × 100; nil when ExpectedYTD is 0
	Trend           Trend
	Periods         []PeriodVariance
	MissingPeriods  []finance.Month // periods of the range without an actual
}

// ComputeVariance compares the actuals (by period) with what each period of
// the range expects. expected lists every period of the range, oldest first;
// actuals of periods outside it are ignored. Numbers are not rounded: the
// API rounds at the JSON edge.
func ComputeVariance(expected []Expected, actuals map[finance.Month]float64) Variance {
	v := Variance{Periods: make([]PeriodVariance, 0, len(expected)), MissingPeriods: []finance.Month{}}
	for _, e := range expected {
		line := PeriodVariance{Period: e.Period, Expected: e.Value}
		v.ExpectedYTD += e.Value
		if a, ok := actuals[e.Period]; ok {
			line.Actual, line.Variance = new(a), new(a-e.Value)
			line.VariancePercent = percent(a-e.Value, e.Value)
			v.ActualYTD += a
		} else {
			v.MissingPeriods = append(v.MissingPeriods, e.Period)
		}
		v.Periods = append(v.Periods, line)
	}
	v.Variance = v.ActualYTD - v.ExpectedYTD
	v.VariancePercent = percent(v.Variance, v.ExpectedYTD)
	v.Trend = trendOf(v.Periods)
	return v
}

// percent is variance as a percentage of expected, nil when expected is 0
// (there is nothing to be a percentage of; never a division error).
func percent(variance, expected float64) *float64 {
	if expected == 0 {
		return nil
	}
	return new(variance / expected * 100)
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
	diff := *recent[0].Variance - *recent[2].Variance
	meanAbs := (math.Abs(recent[0].Expected) + math.Abs(recent[1].Expected) + math.Abs(recent[2].Expected)) / 3
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
