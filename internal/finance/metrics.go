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
	// Payback: the cumulative flow never reaches 0 inside the horizon.
	NeverPaidBack Reason = "never_paid_back"
)

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

// PaybackMonths is the number of months until the cumulative net flow is
// paid back. With C_k the cumulative flow after month k (k = 1..n, C_0 = 0),
// payback is the first k with C_k ≥ 0, interpolated linearly inside that
// month: (k−1) + (−C_{k−1} / CF_k). It is 0 when C_1 ≥ 0 (nothing to pay
// back, including an all-zero or empty series) and absent (NeverPaidBack)
// when no such k exists. A series that turns negative again after paying
// back keeps its first payback.
func PaybackMonths(net []float64) Result {
	cum := 0.0
	for k, cf := range net {
		prev := cum
		cum += cf
		if cum >= 0 {
			if prev >= 0 {
				return value(float64(k))
			}
			return value(float64(k) + (-prev / cf))
		}
	}
	if len(net) == 0 {
		return value(0)
	}
	return absent(NeverPaidBack)
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
	// IRR is annual, as a fraction (0.12 = 12 %).
	IRR           Result
	PaybackMonths Result
	ROIPercent    Result
}

// Evaluate computes every figure of cf at an annual discount rate. IRR is
// absent with NoCosts when cf has no costs at all (checked before the sign
// test, so an all-zero series says no_costs too).
func Evaluate(cf CashFlows, annualDiscountRate float64) Metrics {
	net := cf.NetFloat()
	m := Metrics{
		TotalBenefits: cf.TotalBenefits(),
		TotalCosts:    cf.TotalCosts(),
		NPV:           NPV(net, annualDiscountRate),
		PaybackMonths: PaybackMonths(net),
	}
	m.ROIPercent = ROIPercent(m.TotalBenefits, m.TotalCosts)
	if m.TotalCosts.IsZero() {
		m.IRR = absent(NoCosts)
	} else {
		m.IRR = IRR(net)
	}
	return m
}
