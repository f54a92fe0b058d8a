package finance

import (
	"slices"

	"github.com/shopspring/decimal"
)

// CashFlows is one amount per month over [Start, Start+len-1], in the base
// currency, exact (decimal): sums and conversions never lose a cent; only
// discounting and root-finding (NPV, IRR) work on NetFloat. Benefits and
// Costs are kept apart (ROI and the sensitivity shocks need both); costs are stored as the positive amounts charged and enter the
// net flow negatively: Net()[t] = Benefits[t] − Costs[t]. Both slices always
// have the same length.
type CashFlows struct {
	Start    Month
	Benefits []decimal.Decimal
	Costs    []decimal.Decimal
}

// NewCashFlows is an all-zero series over h.
func NewCashFlows(h Horizon) CashFlows {
	return CashFlows{Start: h.Start, Benefits: make([]decimal.Decimal, h.Len()), Costs: make([]decimal.Decimal, h.Len())}
}

// Horizon is the months cf covers.
func (cf CashFlows) Horizon() Horizon {
	return Horizon{cf.Start, cf.Start.Add(len(cf.Benefits) - 1)}
}

// Net is the signed monthly flow: benefits positive, costs negative.
func (cf CashFlows) Net() []decimal.Decimal {
	out := make([]decimal.Decimal, len(cf.Benefits))
	for i := range out {
		out[i] = cf.Benefits[i].Sub(cf.Costs[i])
	}
	return out
}

// NetFloat is Net as float64, the input of discounting and root-finding
// (NPV, IRR, payback interpolation): the one place amounts leave decimals.
func (cf CashFlows) NetFloat() []float64 {
	out := make([]float64, len(cf.Benefits))
	for i, v := range cf.Net() {
		out[i] = v.InexactFloat64()
	}
	return out
}

// TotalBenefits is the undiscounted sum of the benefits.
func (cf CashFlows) TotalBenefits() decimal.Decimal { return total(cf.Benefits) }

// TotalCosts is the undiscounted sum of the costs (a positive number).
func (cf CashFlows) TotalCosts() decimal.Decimal { return total(cf.Costs) }

// total is the exact sum of xs.
func total(xs []decimal.Decimal) decimal.Decimal {
	var s exactSum
	for _, x := range xs {
		s.add(x)
	}
	return s.value()
}

// Through is cf cut after month m (the months up to and including m), e.g.
// the realised-to-date part of an actual-basis series. It is empty when m is
// before cf.Start.
func (cf CashFlows) Through(m Month) CashFlows {
	n := min(len(cf.Benefits), max(0, int(m-cf.Start)+1))
	return CashFlows{Start: cf.Start, Benefits: slices.Clone(cf.Benefits[:n]), Costs: slices.Clone(cf.Costs[:n])}
}

// Basis selects which benefit values a series carries.
type Basis int

const (
	// BasisExpected: benefits as planned (Benefit.Expected).
	BasisExpected Basis = iota
	// BasisActual: in every month up to the last actual recorded on any of
	// the benefits, each benefit's actual where recorded and its expected
	// value otherwise; after that month, the expected values (so the series
	// is "actuals to date, plan afterwards"; cut it with Through(LastActual)
	// for realised-to-date). Without any actual it equals BasisExpected.
	BasisActual
)

// BasisNames are the bases as the API and the documents name them:
// "plan" (BasisExpected) and "forecast" (BasisActual: actuals to date, then
// plan).
var BasisNames = map[Basis]string{BasisExpected: "plan", BasisActual: "forecast"}

// String is the basis's name in BasisNames.
func (b Basis) String() string { return BasisNames[b] }

// ParseBasis reads a basis by its name; ok is false for any other text.
func ParseBasis(name string) (b Basis, ok bool) {
	for b, n := range BasisNames {
		if n == name {
			return b, true
		}
	}
	return 0, false
}

// FX converts amounts into the base currency. Rate gives the base-currency
// units per 1 unit of currency in month m. Amounts already in Base need no
// rate. The zero FX converts nothing: every amount is taken as it is (for
// callers that have one currency only).
type FX struct {
	Base string
	Rate func(currency string, m Month) (decimal.Decimal, bool)
}

// MissingRate is a (currency, month) an amount needed and FX had no rate for.
type MissingRate struct {
	Currency string
	Period   Month
}

// Convert returns amount, in currency, as base-currency units at the rate of
// month m, exactly (amount × rate, not rounded: rounding happens once, at
// the edge, after summing). ok is false when that rate is missing: the
// caller must then leave the amount out and say so (MissingRate), never add
// it unconverted.
func (fx FX) Convert(currency string, m Month, amount decimal.Decimal) (value decimal.Decimal, ok bool) {
	if amount.IsZero() || (fx.Base == "" && fx.Rate == nil) || currency == fx.Base {
		return amount, true
	}
	if fx.Rate == nil {
		return decimal.Zero, false
	}
	rate, ok := fx.Rate(currency, m)
	if !ok {
		return decimal.Zero, false
	}
	return amount.Mul(rate), true
}

// BuildCashFlows builds the monthly series of an initiative over h from its
// benefits (on the given basis) and its cost schedules, converting each
// month's amount with that month's rate (a quarterly benefit sits in its
// quarter's first month, so it uses that month's rate). An amount whose rate
// is missing is left out of the series and reported in missing (sorted,
// without repeats); when missing is not empty the figures are partial and
// must be shown as such, never as complete.
func BuildCashFlows(h Horizon, benefits []Benefit, costs []Cost, basis Basis, fx FX) (cf CashFlows, missing []MissingRate) {
	cf = NewCashFlows(h)
	seen := map[MissingRate]bool{}
	benefitSums, costSums := make([]exactSum, h.Len()), make([]exactSum, h.Len())
	add := func(into []exactSum, currency string, amounts []decimal.Decimal) {
		for i, a := range amounts {
			if a.IsZero() {
				continue
			}
			m := h.Start.Add(i)
			v, ok := fx.Convert(currency, m, a)
			if !ok {
				seen[MissingRate{currency, m}] = true
				continue
			}
			into[i].add(v)
		}
	}
	through, anyActual := LastActual(benefits)
	// An even spread that needs no conversion is the same amount in every
	// period of a run of months: it enters a difference series (+ at its
	// first period, − after its last) rather than month by month, which a
	// portfolio of thousands of benefits over 60 months makes worthwhile.
	runs := make([]exactSum, h.Len()+3)
	for _, b := range benefits {
		switch {
		case basis == BasisActual && anyActual && len(b.Actuals) > 0:
			add(benefitSums, b.Currency, b.Realised(h, through))
		case b.Plan == nil && (b.Currency == fx.Base || (fx.Base == "" && fx.Rate == nil)):
			b.addSpread(h, runs)
		default:
			add(benefitSums, b.Currency, b.Expected(h))
		}
	}
	var step [3]exactSum // running sums of the difference series, per month of the quarter
	for i := range cf.Benefits {
		step[i%3].add(runs[i].value())
		if runs[i].started || step[i%3].started {
			benefitSums[i].add(step[i%3].value())
		}
	}
	for _, c := range costs {
		add(costSums, c.Currency, c.Schedule(h))
	}
	for i := range cf.Benefits {
		cf.Benefits[i], cf.Costs[i] = benefitSums[i].value(), costSums[i].value()
	}
	for m := range seen {
		missing = append(missing, m)
	}
	return cf, sortMissingRates(missing)
}

// addSpread adds b's even spread over h to the difference series runs
// (index i: month h.Start+i; a period's amount recurs every 3 indexes, so a
// monthly benefit enters the three series of its months): + at its first
// period in h, − three indexes after its last.
func (b Benefit) addSpread(h Horizon, runs []exactSum) {
	first, last, open := b.periodRange()
	hi := h.End
	if !open {
		hi = min(hi, last)
	}
	lo := max(first, h.Start)
	if b.Frequency.PeriodOf(lo) != lo { // the first quarter starting inside h
		lo = b.Frequency.PeriodOf(lo).Add(3)
	}
	if lo > hi {
		return
	}
	spread := b.spread()
	lastPeriod := b.Frequency.PeriodOf(hi)
	step := 12 / b.Frequency.periodsPerYear()
	for r := 0; r < 3; r += step { // monthly: each month of the quarter; quarterly: its first
		from, to := lo.Add(r), lastPeriod
		for to >= from && int(to-from)%3 != 0 {
			to = to.Add(-1)
		}
		if from > hi || to < from {
			continue
		}
		runs[from-h.Start].add(spread)
		runs[to-h.Start+3].add(spread.Neg())
	}
}

// Shock is a sensitivity scenario: benefits × BenefitFactor, costs ×
// CostFactor, benefits moved BenefitDelayMonths later. Factors are plain
// multipliers, so the zero Shock wipes everything out; start from Baseline.
type Shock struct {
	BenefitFactor      float64
	CostFactor         float64
	BenefitDelayMonths int
}

// Baseline is the shock that changes nothing.
var Baseline = Shock{BenefitFactor: 1, CostFactor: 1}

// Shocked returns cf under s over the SAME horizon: a delayed benefit that
// would land after the last month falls out of the series (a delay costs
// value inside the horizon, as it would in the real plan), and the first
// BenefitDelayMonths months carry no benefit. A negative delay moves
// benefits earlier, dropping those pushed before the start. cf is unchanged.
func (cf CashFlows) Shocked(s Shock) CashFlows {
	out := NewCashFlows(cf.Horizon())
	benefitFactor, costFactor := decimal.NewFromFloat(s.BenefitFactor), decimal.NewFromFloat(s.CostFactor)
	for i, c := range cf.Costs {
		out.Costs[i] = c.Mul(costFactor)
	}
	for i, b := range cf.Benefits {
		if j := i + s.BenefitDelayMonths; j >= 0 && j < len(out.Benefits) {
			out.Benefits[j] = b.Mul(benefitFactor)
		}
	}
	return out
}
