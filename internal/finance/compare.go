package finance

import (
	"maps"
	"slices"

	"github.com/shopspring/decimal"
)

// PeriodComparison is one period of a benefit: what it expects and, when
// one is recorded, its actual.
type PeriodComparison struct {
	Period   Month
	Expected decimal.Decimal
	Actual   *decimal.Decimal // nil: not measured yet
}

// Comparison is expected against actual, like for like: the one definition
// of variance used by the variance report, the initiative detail, the
// realisation analytics and every document.
//
//   - Expected is the expectation of the periods that have an actual (the
//     variance report's expected_ytd), Actual the sum of those actuals;
//     Variance = Actual − Expected, VariancePercent = Variance / Expected × 100.
//   - Unmeasured is the expectation of the periods without an actual yet: it
//     is reported apart and never counted as a shortfall.
//
// Amounts are exact; rounding is the edge's (money.Amount). A part whose
// periods lack an FX rate is unknown (MeasuredUnknown: Expected, Actual and
// the variance; UnmeasuredUnknown: Unmeasured and the plan to date), never a
// partial sum; the other part stays known, since it needs other rates.
type Comparison struct {
	Expected          decimal.Decimal
	Actual            decimal.Decimal
	Unmeasured        decimal.Decimal
	Measured          int // periods with an actual
	Periods           int // periods compared, with or without an actual
	MeasuredUnknown   bool
	UnmeasuredUnknown bool
}

// Add compares one more period.
func (c *Comparison) Add(p PeriodComparison) {
	c.Periods++
	if p.Actual == nil {
		c.Unmeasured = c.Unmeasured.Add(p.Expected)
		return
	}
	c.Measured++
	c.Expected = c.Expected.Add(p.Expected)
	c.Actual = c.Actual.Add(*p.Actual)
}

// Merge adds the periods of o.
func (c *Comparison) Merge(o Comparison) {
	c.Expected, c.Actual, c.Unmeasured = c.Expected.Add(o.Expected), c.Actual.Add(o.Actual), c.Unmeasured.Add(o.Unmeasured)
	c.Measured += o.Measured
	c.Periods += o.Periods
	c.MeasuredUnknown = c.MeasuredUnknown || o.MeasuredUnknown
	c.UnmeasuredUnknown = c.UnmeasuredUnknown || o.UnmeasuredUnknown
}

// Variance is Actual − Expected over the measured periods.
func (c Comparison) Variance() decimal.Decimal { return c.Actual.Sub(c.Expected) }

// VariancePercent is Variance / Expected × 100; nil when Expected is 0
// (nothing to be a percentage of, including when nothing is measured).
func (c Comparison) VariancePercent() *decimal.Decimal { return PercentOf(c.Variance(), c.Expected) }

// RealizationPercent is Actual / Expected × 100 over the measured periods;
// nil when Expected is 0.
func (c Comparison) RealizationPercent() *decimal.Decimal { return PercentOf(c.Actual, c.Expected) }

// PlanToDate is the expectation of every period compared, measured or not.
func (c Comparison) PlanToDate() decimal.Decimal { return c.Expected.Add(c.Unmeasured) }

var hundred = decimal.NewFromInt(100)

// PercentOf is part / whole × 100 (16 decimals), nil when whole is 0.
func PercentOf(part, whole decimal.Decimal) *decimal.Decimal {
	if whole.IsZero() {
		return nil
	}
	return new(part.Mul(hundred).Div(whole))
}

// ComparePeriods lists b's periods through current: every period of its
// grid from its first through its last (or current, whichever is earlier),
// and any period through current that has an actual outside those dates
// (expecting 0), oldest first, in b's own currency.
func (b Benefit) ComparePeriods(current Month) []PeriodComparison {
	first, last, open := b.periodRange()
	if open || last > current {
		last = current
	}
	var out []PeriodComparison
	seen := map[Month]bool{}
	for _, p := range b.Frequency.Periods(first, last) {
		seen[p] = true
		out = append(out, PeriodComparison{Period: p, Expected: b.ExpectedFor(p), Actual: b.actual(p)})
	}
	for _, p := range slices.Sorted(maps.Keys(b.Actuals)) {
		q := b.Frequency.PeriodOf(p)
		if q <= current && !seen[q] {
			seen[q] = true
			out = append(out, PeriodComparison{Period: q, Expected: b.ExpectedFor(q), Actual: b.actual(q)})
		}
	}
	slices.SortFunc(out, func(x, y PeriodComparison) int { return int(x.Period - y.Period) })
	return out
}

// actual is b's actual of period p (on its grid), nil when none.
func (b Benefit) actual(p Month) *decimal.Decimal {
	if v, ok := b.Actuals[p]; ok {
		return &v
	}
	return nil
}

// CompareToDate compares the benefits' expectations with their actuals over
// their periods through current (ComparePeriods), each period's amounts
// converted at that period's rate. A period whose rate is missing makes its
// part of the comparison unknown (see Comparison) and is listed in missing
// (sorted, each once).
func CompareToDate(benefits []Benefit, current Month, fx FX) (Comparison, []MissingRate) {
	var total Comparison
	var missing []MissingRate
	for _, b := range benefits {
		c, miss := b.CompareToDate(current, fx)
		missing = append(missing, miss...)
		total.Merge(c)
	}
	return total, sortMissingRates(missing)
}

// CompareToDate is the comparison of b alone, in the base currency of fx.
func (b Benefit) CompareToDate(current Month, fx FX) (Comparison, []MissingRate) {
	var c Comparison
	var missing []MissingRate
	for _, p := range b.ComparePeriods(current) {
		e, okE := fx.Convert(b.Currency, p.Period, p.Expected)
		line := PeriodComparison{Period: p.Period, Expected: e}
		okA := true
		if p.Actual != nil {
			var a decimal.Decimal
			a, okA = fx.Convert(b.Currency, p.Period, *p.Actual)
			line.Actual = &a
		}
		if !okE || !okA {
			missing = append(missing, MissingRate{Currency: b.Currency, Period: p.Period})
			if p.Actual != nil {
				c.MeasuredUnknown = true
			} else {
				c.UnmeasuredUnknown = true
			}
			continue
		}
		c.Add(line)
	}
	return c, missing
}

// sortMissingRates sorts by currency then month, without repeats.
func sortMissingRates(ms []MissingRate) []MissingRate {
	slices.SortFunc(ms, func(a, b MissingRate) int {
		if a.Currency != b.Currency {
			if a.Currency < b.Currency {
				return -1
			}
			return 1
		}
		return int(a.Period - b.Period)
	})
	return slices.Compact(ms)
}
