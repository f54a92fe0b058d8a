package finance

import (
	"cmp"
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

var decOne = decimal.NewFromInt(1)

// PercentOf is part / whole × 100 (16 decimals), nil when whole is 0.
func PercentOf(part, whole decimal.Decimal) *decimal.Decimal {
	if whole.IsZero() {
		return nil
	}
	return new(part.Shift(2).Div(whole)) // × 100 as the exponent: the same quotient, no multiplication
}

// CompareToDate compares the benefits' expectations with their actuals over
// their periods through current (see Benefit.CompareToDate), each period's amounts
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

// CompareToDate is the comparison of b alone, in the base currency of fx,
// over its periods through current: every period of its grid from its first
// through its last (or current, whichever is earlier), and any period
// through current with an actual outside those dates (expecting 0). Each
// period's amounts are converted at that period's rate. Sums are exact, so
// their order does not matter; a portfolio compares hundreds of thousands of
// periods, hence the even spread multiplied once by the periods' rates
// rather than added period by period.
func (b Benefit) CompareToDate(current Month, fx FX) (Comparison, []MissingRate) {
	var c Comparison
	var missing []MissingRate
	var expected, unmeasured, actual, measuredRates, unmeasuredRates exactSum
	spread := b.Plan == nil
	expect := b.expectation()
	var perPeriod decimal.Decimal
	if spread {
		perPeriod = b.spread()
	}
	one := b.Currency == fx.Base || (fx.Base == "" && fx.Rate == nil)
	visit := func(p Month, inRange bool) {
		a, measured := b.Actuals[p]
		rate, ok := decimal.Decimal{}, true
		if !one {
			if fx.Rate == nil {
				ok = false
			} else {
				rate, ok = fx.Rate(b.Currency, p)
			}
		}
		if !ok {
			missing = append(missing, MissingRate{Currency: b.Currency, Period: p})
			if measured {
				c.MeasuredUnknown = true
			} else {
				c.UnmeasuredUnknown = true
			}
			return
		}
		c.Periods++
		if measured {
			c.Measured++
		}
		switch {
		case spread && inRange && one:
			if measured {
				measuredRates.add(decOne)
			} else {
				unmeasuredRates.add(decOne)
			}
		case spread && inRange:
			if measured {
				measuredRates.add(rate)
			} else {
				unmeasuredRates.add(rate)
			}
		default:
			e := expect(p)
			if !one {
				e = e.Mul(rate)
			}
			if measured {
				expected.add(e)
			} else {
				unmeasured.add(e)
			}
		}
		if measured {
			if !one {
				a = a.Mul(rate)
			}
			actual.add(a)
		}
	}
	first, last, open := b.periodRange()
	end := current
	if !open {
		end = min(end, last)
	}
	step := 12 / b.Frequency.periodsPerYear()
	for p := first; p <= end; p = p.Add(step) {
		visit(p, true)
	}
	for p := range b.Actuals {
		if q := b.Frequency.PeriodOf(p); q == p && p <= current && (p < first || p > end) {
			visit(p, false)
		}
	}
	c.Expected, c.Unmeasured, c.Actual = expected.value(), unmeasured.value(), actual.value()
	if spread {
		c.Expected = c.Expected.Add(perPeriod.Mul(measuredRates.value()))
		c.Unmeasured = c.Unmeasured.Add(perPeriod.Mul(unmeasuredRates.value()))
	}
	return c, missing
}

// sortMissingRates sorts by currency then month, without repeats.
func sortMissingRates(ms []MissingRate) []MissingRate {
	slices.SortFunc(ms, func(a, b MissingRate) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Period, b.Period))
	})
	return slices.Compact(ms)
}

// ComparisonSum merges comparisons as Comparison.Merge does, exactly, but
// into sums kept in place: no allocation per term (a portfolio merges each
// of its benefits into its total, its initiative and its category).
type ComparisonSum struct {
	expected, actual, unmeasured exactSum
	counts                       Comparison // Measured, Periods and the unknown flags
}

// Merge adds the periods of o.
func (s *ComparisonSum) Merge(o Comparison) {
	s.expected.add(o.Expected)
	s.actual.add(o.Actual)
	s.unmeasured.add(o.Unmeasured)
	s.counts.Measured += o.Measured
	s.counts.Periods += o.Periods
	s.counts.MeasuredUnknown = s.counts.MeasuredUnknown || o.MeasuredUnknown
	s.counts.UnmeasuredUnknown = s.counts.UnmeasuredUnknown || o.UnmeasuredUnknown
}

// Comparison is what was merged so far: the zero Comparison with every
// merged one merged into it.
func (s *ComparisonSum) Comparison() Comparison {
	c := s.counts
	// Merge adds into the zero Decimal (exponent 0): so does the sum.
	c.Expected = decimal.Zero.Add(s.expected.value())
	c.Actual = decimal.Zero.Add(s.actual.value())
	c.Unmeasured = decimal.Zero.Add(s.unmeasured.value())
	return c
}
