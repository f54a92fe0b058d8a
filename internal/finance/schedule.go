package finance

import (
	"fmt"
	"slices"

	"github.com/shopspring/decimal"
)

// Recurrence is how often a cost is charged.
type Recurrence string

const (
	Once      Recurrence = "once"
	Monthly   Recurrence = "monthly"
	Quarterly Recurrence = "quarterly"
	Annual    Recurrence = "annual"
)

// Recurrences lists every recurrence.
var Recurrences = []Recurrence{Once, Monthly, Quarterly, Annual}

// Valid reports whether r names a recurrence.
func (r Recurrence) Valid() bool { return slices.Contains(Recurrences, r) }

// stepMonths is the number of months between two charges (0 for once).
func (r Recurrence) stepMonths() int {
	switch r {
	case Once:
		return 0
	case Monthly:
		return 1
	case Quarterly:
		return 3
	case Annual:
		return 12
	}
	panic(fmt.Sprintf("finance: unknown recurrence %q", string(r)))
}

// Cost is one cost line of an initiative: Amount (> 0, in Currency) charged
// in Period and then every 1/3/12 months through End inclusive; a recurring
// cost without End runs to the end of whatever horizon it is expanded over.
// End is ignored for Once.
type Cost struct {
	Amount     decimal.Decimal
	Currency   string
	Recurrence Recurrence
	Period     Month
	End        *Month
}

// Schedule expands c over h: the amount charged in each month of h (index 0
// = h.Start), as positive numbers. It panics on an unknown recurrence.
func (c Cost) Schedule(h Horizon) []decimal.Decimal {
	out := make([]decimal.Decimal, h.Len())
	c.eachCharge(h, func(m Month) { out[m-h.Start] = out[m-h.Start].Add(c.Amount) })
	return out
}

// eachCharge calls charge for every month of h in which c is charged.
func (c Cost) eachCharge(h Horizon, charge func(Month)) {
	step := c.Recurrence.stepMonths()
	if step == 0 {
		if h.Contains(c.Period) {
			charge(c.Period)
		}
		return
	}
	last := h.End
	if c.End != nil {
		last = min(last, *c.End)
	}
	m := c.Period
	if m < h.Start { // first charge on or after h.Start on c's grid
		m = m.Add((int(h.Start-m) + step - 1) / step * step)
	}
	for ; m <= last; m = m.Add(step) {
		charge(m)
	}
}

// Frequency is how often a benefit is measured.
type Frequency string

const (
	MeasuredMonthly   Frequency = "monthly"
	MeasuredQuarterly Frequency = "quarterly"
)

// Frequencies lists every measurement frequency.
var Frequencies = []Frequency{MeasuredMonthly, MeasuredQuarterly}

// Valid reports whether f names a measurement frequency.
func (f Frequency) Valid() bool { return slices.Contains(Frequencies, f) }

// PeriodOf is the period a month is filed under: the month itself for
// monthly benefits, the first month of its calendar quarter for quarterly
// ones (2026-05 → 2026-04). A month is on f's grid when PeriodOf(m) == m.
func (f Frequency) PeriodOf(m Month) Month {
	if f == MeasuredQuarterly {
		return m.QuarterStart()
	}
	return m
}

// periodsPerYear is 12 or 4; it panics on an unknown frequency.
func (f Frequency) periodsPerYear() int {
	switch f {
	case MeasuredMonthly:
		return 12
	case MeasuredQuarterly:
		return 4
	}
	panic(fmt.Sprintf("finance: unknown measurement frequency %q", string(f)))
}

// Periods lists the periods of f whose month lies in [from, to], in order.
func (f Frequency) Periods(from, to Month) []Month {
	var out []Month
	for p := f.PeriodOf(from); p <= to; p = p.Add(12 / f.periodsPerYear()) {
		if p >= from {
			out = append(out, p)
		}
	}
	return out
}

// PlanEntry is one period of an explicit benefit plan.
type PlanEntry struct {
	Period   Month
	Expected decimal.Decimal
}

// Benefit is what the finance core needs of a benefit: its expectation, its
// currency and the actuals recorded so far (keyed by period: the month, or
// the quarter's first month for quarterly benefits).
type Benefit struct {
	// ExpectedValue is the expected value PER YEAR.
	ExpectedValue decimal.Decimal
	Frequency     Frequency
	// Start and End are the months of expected_start_date and
	// expected_end_date; End nil means open-ended.
	Start Month
	End   *Month
	// Plan, when non-nil, replaces the even spread (see ExpectedFor). An
	// empty non-nil plan expects 0 in every period.
	Plan     []PlanEntry
	Currency string
	Actuals  map[Month]decimal.Decimal
}

// ExpectedFor is the value expected in the period that month p is filed
// under. This is the one definition of a benefit's expectation:
//
//	"expected_value is the expected value PER YEAR. Spread evenly over the
//	measurement periods: monthly → expected_value/12 a month, quarterly →
//	expected_value/4 a quarter, from the period of expected_start_date
//	through the period of expected_end_date (open-ended when null; figures
//	then run to the horizon asked for). Optional plan: [{period, expected}]:
//	when given it REPLACES the even spread entirely: listed periods expect
//	their value, unlisted periods expect 0."
//
// Periods before the start or after the end expect 0, plan or not.
//
// The even spread is a decimal division (16 decimals, see DivisionPrecision
// of shopspring/decimal): a year of twelve 1000/12 periods sums to 1000 once
// rounded to the currency at the edge.
func (b Benefit) ExpectedFor(p Month) decimal.Decimal { return b.expectation()(p) }

// expectation is ExpectedFor with the even spread divided once (a decimal
// division is costly and a portfolio asks for hundreds of thousands of
// periods) and the plan indexed by period.
func (b Benefit) expectation() func(Month) decimal.Decimal {
	first, last, open := b.periodRange()
	inside := func(p Month) bool { return p >= first && (open || p <= last) }
	if b.Plan != nil {
		plan := make(map[Month]decimal.Decimal, len(b.Plan))
		for _, e := range b.Plan {
			if q := b.Frequency.PeriodOf(e.Period); !hasKey(plan, q) { // a period's first entry counts
				plan[q] = e.Expected
			}
		}
		return func(p Month) decimal.Decimal {
			p = b.Frequency.PeriodOf(p)
			if !inside(p) {
				return decimal.Zero
			}
			return plan[p] // zero when the plan does not list p
		}
	}
	spread := b.spread()
	return func(p Month) decimal.Decimal {
		if !inside(b.Frequency.PeriodOf(p)) {
			return decimal.Zero
		}
		return spread
	}
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// spread is what each period expects under the even spread: the yearly
// value over the periods of a year.
func (b Benefit) spread() decimal.Decimal {
	return divSmall(b.ExpectedValue, int64(b.Frequency.periodsPerYear()))
}

// compact drops the trailing zeros of d's coefficient (1010.0000000000000000
// → 1010), so sums of it stay small.
func compact(d decimal.Decimal) decimal.Decimal {
	if d.NumDigits() > 18 {
		return d
	}
	c, e := d.CoefficientInt64(), d.Exponent()
	if c == 0 {
		return decimal.Zero
	}
	for e < 0 && c%10 == 0 {
		c, e = c/10, e+1
	}
	return decimal.New(c, e)
}

// periodRange is the first and last period of b (last unset when open).
func (b Benefit) periodRange() (first, last Month, open bool) {
	first = b.Frequency.PeriodOf(b.Start)
	if b.End == nil {
		return first, 0, true
	}
	return first, b.Frequency.PeriodOf(*b.End), false
}

// Expected expands b over h: the value expected in each month of h (index 0
// = h.Start). A quarterly benefit's quarter sits in the quarter's first
// month; the other two months are 0.
func (b Benefit) Expected(h Horizon) []decimal.Decimal {
	out := make([]decimal.Decimal, h.Len())
	expect := b.expectation()
	for i := range out {
		m := h.Start.Add(i)
		if b.Frequency.PeriodOf(m) == m {
			out[i] = expect(m)
		}
	}
	return out
}

// LastActual is the latest period with an actual over all benefits.
func LastActual(benefits []Benefit) (Month, bool) {
	var last Month
	found := false
	for _, b := range benefits {
		for p := range b.Actuals {
			if !found || p > last {
				last, found = p, true
			}
		}
	}
	return last, found
}

// Realised expands b over h with its actuals: in each period up to and
// including through, the actual where one is recorded and the expected value
// otherwise; after through, the expected value.
func (b Benefit) Realised(h Horizon, through Month) []decimal.Decimal {
	out := b.Expected(h)
	for p, v := range b.Actuals {
		p = b.Frequency.PeriodOf(p)
		if h.Contains(p) && p <= through {
			out[p-h.Start] = v
		}
	}
	return out
}

// OpenEndedMonths is how long an open-ended cost or benefit runs in a
// default horizon, counted from the horizon's start; MaxHorizonMonths caps a
// default horizon.
const (
	OpenEndedMonths  = 36
	MaxHorizonMonths = 60
)

// DefaultHorizon is the horizon of an initiative when none is asked for:
// from the earliest first period of its costs and benefits through the
// latest last period, where an open-ended item (a recurring cost or a
// benefit without an end) runs through month OpenEndedMonths of the horizon
// (start+35), and the whole is capped at MaxHorizonMonths months. ok is
// false when there are neither costs nor benefits.
func DefaultHorizon(benefits []Benefit, costs []Cost) (h Horizon, ok bool) {
	type span struct {
		first, last Month
		open        bool
	}
	var spans []span
	for _, c := range costs {
		switch {
		case c.Recurrence == Once:
			spans = append(spans, span{c.Period, c.Period, false})
		case c.End == nil:
			spans = append(spans, span{c.Period, 0, true})
		default:
			spans = append(spans, span{c.Period, *c.End, false})
		}
	}
	for _, b := range benefits {
		first, last, open := b.periodRange()
		spans = append(spans, span{first, last, open})
	}
	if len(spans) == 0 {
		return Horizon{}, false
	}
	h.Start = spans[0].first
	for _, s := range spans {
		h.Start = min(h.Start, s.first)
	}
	h.End = h.Start
	for _, s := range spans {
		if s.open {
			h.End = max(h.End, h.Start.Add(OpenEndedMonths-1))
		} else {
			h.End = max(h.End, s.last)
		}
	}
	h.End = min(h.End, h.Start.Add(MaxHorizonMonths-1))
	return h, true
}
