package finance

import (
	"math"
	"strconv"

	"github.com/shopspring/decimal"
)

// Reason says why a figure has no value.
type Reason string

const (
	// IRR: every net flow is ≥ 0 or every one is ≤ 0 (nothing to solve).
	NoSignChange Reason = "no_sign_change"
	// IRR and ROI: the series has no costs at all.
	NoCosts Reason = "no_costs"
	// IRR: no root found in the monthly range (−0.9999, 10), or the solver
	// ran out of iterations.
	DidNotConverge Reason = "did_not_converge"
	// IRR: the NPV has more than one root in the monthly range, so no one
	// rate is "the" IRR; the roots are listed beside it and MIRR is unique.
	MultipleRoots Reason = "multiple_roots"
	// Payback: the cumulative flow ends the series negative.
	NeverPaidBack Reason = "never_paid_back"
)

// DefinitionsVersion numbers the definitions this package implements; a
// business-case snapshot records the version it was computed under, so a
// figure frozen under older definitions is shown as such, never recomputed.
//
//   - 1: payback at the first month the cumulative flow is ≥ 0 (0 when the
//     first month already is); IRR the root closest to 0; no MIRR; headline
//     figures on the plan basis only.
//   - 2: payback when the cumulative flow turns non-negative for the last
//     time (never_paid_back when it ends negative); IRR null with
//     multiple_roots when the NPV has several roots; MIRR; plan and
//     forecast bases side by side.
const DefinitionsVersion = 2

// Result is a figure that may have no value. Exactly one of Value and
// Reason is set, so "no value" cannot be mistaken for 0; Value marshals to
// JSON null when absent.
type Result struct {
	Value  *float64
	Reason Reason
}

func value(v float64) Result { return Result{Value: &v} }
func absent(r Reason) Result { return Result{Reason: r} }

// Get returns the value and whether there is one.
func (r Result) Get() (float64, bool) {
	if r.Value == nil {
		return 0, false
	}
	return *r.Value, true
}

// String shows the value, or "null (reason)".
func (r Result) String() string {
	if v, ok := r.Get(); ok {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "null (" + string(r.Reason) + ")"
}

// MonthlyRate converts an annual rate to the equivalent monthly one:
// (1+r)^(1/12) − 1.
func MonthlyRate(annual float64) float64 { return math.Expm1(math.Log1p(annual) / 12) }

// AnnualRate converts a monthly rate to the equivalent annual one:
// (1+x)^12 − 1 (computed so that tiny rates keep their precision).
func AnnualRate(monthly float64) float64 { return math.Expm1(12 * math.Log1p(monthly)) }

// NPV is Σ net[t] / (1+r_m)^t with r_m = MonthlyRate(annualRate) and t = 0
// for the first month (undiscounted), i.e. spreadsheet CF0 + NPV(r_m; CF1..).
// An empty series is worth 0.
func NPV(net []float64, annualRate float64) float64 {
	discount := 1 / (1 + MonthlyRate(annualRate))
	v := 0.0
	for t := len(net) - 1; t >= 0; t-- { // Horner: CF0 + d(CF1 + d(CF2 + ...))
		v = v*discount + net[t]
	}
	return v
}

// PaybackMonths is the number of months until the investment is paid back
// for good. With CF_k the net flow of month k and C_k the cumulative net
// flow after it (k = 1..n, C_0 = 0): absent (NeverPaidBack) when C_n < 0; otherwise, with j the last
// month whose C_j < 0, payback is reached inside month j+1, interpolated
// linearly: j + (−C_j / CF_{j+1}). So a series that dips below 0 again after
// turning positive is paid back only when it turns positive the last time.
// When no C_k is negative, payback is 0 if something was invested (cf has
// costs) and absent (NoCosts) otherwise: nothing was at stake.
//
// The cumulative flow is summed exactly (decimals), so its sign is that of
// the exact sum of the flows, as the golden oracle computes it; only the
// interpolation inside the payback month is in float64.
func PaybackMonths(cf CashFlows) Result {
	net := cf.Net()
	last := -1 // the last month index whose cumulative flow is < 0
	var cum, lastCum decimal.Decimal
	for i, x := range net {
		cum = cum.Add(x)
		if cum.IsNegative() {
			last, lastCum = i, cum
		}
	}
	switch {
	case last >= 0 && last == len(net)-1:
		return absent(NeverPaidBack)
	case last >= 0:
		frac, _ := lastCum.Neg().Div(net[last+1]).Float64()
		return value(float64(last+1) + frac)
	case cf.TotalCosts().IsPositive():
		return value(0)
	}
	return absent(NoCosts)
}

// ROIPercent is (total benefits − total costs) / total costs × 100, absent
// (NoCosts) when total costs are 0. The ratio is taken on the exact totals.
func ROIPercent(totalBenefits, totalCosts decimal.Decimal) Result {
	if totalCosts.IsZero() {
		return absent(NoCosts)
	}
	return value(totalBenefits.Sub(totalCosts).Div(totalCosts).Shift(2).InexactFloat64())
}

// Metrics are the figures of one cash-flow series.
type Metrics struct {
	TotalBenefits decimal.Decimal
	TotalCosts    decimal.Decimal
	NPV           float64
	// IRR is annual, as a fraction (0.12 = 12 %); absent with MultipleRoots
	// when IRRRoots has more than one root.
	IRR Result
	// IRRRoots are every root of the NPV in the search range, annual,
	// ascending (IRR's); empty when there is none.
	IRRRoots []float64
	// MIRR is annual, as a fraction, at the discount rate for both the
	// finance and the reinvestment rate (MIRR).
	MIRR          Result
	PaybackMonths Result
	ROIPercent    Result
}

// Evaluate computes every figure of cf at an annual discount rate. IRR and
// MIRR are absent with NoCosts when cf has no costs at all (checked before
// the sign test, so an all-zero series says no_costs too).
func Evaluate(cf CashFlows, annualDiscountRate float64) Metrics {
	net := cf.NetFloat()
	m := Metrics{
		TotalBenefits: cf.TotalBenefits(),
		TotalCosts:    cf.TotalCosts(),
		NPV:           NPV(net, annualDiscountRate),
		PaybackMonths: PaybackMonths(cf),
	}
	m.ROIPercent = ROIPercent(m.TotalBenefits, m.TotalCosts)
	if m.TotalCosts.IsZero() {
		m.IRR, m.MIRR = absent(NoCosts), absent(NoCosts)
	} else {
		m.IRR, m.IRRRoots = IRR(net)
		m.MIRR = MIRR(net, annualDiscountRate, annualDiscountRate)
	}
	return m
}
