package analytics

import (
	"cmp"
	"maps"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// Initiative is what an analysis needs of one initiative: its money benefits
// (with plans and actuals) and its costs, in the finance core's terms
// (valuation.MoneyBenefits and valuation.Costs).
type Initiative struct {
	Benefits []finance.Benefit
	Costs    []finance.Cost
}

// Confidence of an ROI figure, from data coverage and forecast accuracy
// (ConfidenceOf, then Downgrade).
type Confidence string

const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// Coverage thresholds: high from 80 % of elapsed periods with an actual,
// medium from 50 %, low below (and when no period has elapsed).
const (
	HighCoverage   = 0.8
	MediumCoverage = 0.5
)

// ConfidenceOf maps a coverage (nil: no elapsed period) to a confidence.
func ConfidenceOf(coverage *float64) Confidence {
	switch {
	case coverage == nil:
		return Low
	case *coverage >= HighCoverage:
		return High
	case *coverage >= MediumCoverage:
		return Medium
	}
	return Low
}

// The sensitivity scenarios: benefits ±20 %, costs ∓10 %, on the same
// series (actuals included) and the same horizon.
var (
	BestCase  = finance.Shock{BenefitFactor: 1.2, CostFactor: 0.9}
	WorstCase = finance.Shock{BenefitFactor: 0.8, CostFactor: 1.1}
)

// MissingFXRates is the reason of a money figure left out because a rate it
// needs is missing.
const MissingFXRates finance.Reason = "missing_fx_rates"

// NoData is the reason of every figure of an analysis with neither costs
// nor money benefits in its window.
const NoData finance.Reason = "no_data"

// ROI is the ROI analysis of one initiative or a portfolio.
type ROI struct {
	Basis         finance.Basis    // which benefit values the series carries
	Horizon       *finance.Horizon // the months the series covers; nil when there is nothing to analyse
	TotalBenefits Amount
	TotalCosts    Amount
	ROIPercent    finance.Result
	PaybackMonths finance.Result
	NPV           finance.Result
	IRR           finance.Result // annual, as a fraction
	IRRRoots      []float64      // every root found, annual, ascending (finance.IRR)
	MIRR          finance.Result // annual, as a fraction, at the discount rate
	Best, Worst   finance.Result // ROI % under BestCase and WorstCase
	Delayed       finance.Result // ROI % under DelayedOneMonth
	// MonteCarlo is the seeded Monte Carlo of ROI % (SimulateROI); nil when
	// ROI itself is absent, for the reason in MonteCarloReason.
	MonteCarlo       *MonteCarlo
	MonteCarloReason finance.Reason
	// ForecastWAPE is the WAPE (a fraction) of expected against actual over
	// the periods with an actual, set by ApplyAccuracy; nil when unknown.
	ForecastWAPE *float64
	Coverage     *float64 // share of elapsed benefit periods with an actual; nil when none elapsed
	Confidence   Confidence
	Missing      []finance.MissingRate // sorted, each once; never nil
}

// ComputeROI analyses the initiatives together over w at the current month
// with an annual discount rate, converting with fx.
//
// The series is each initiative's monthly cash flow on the basis asked for
// (finance.BasisActual, "forecast": actuals where recorded through the
// latest actual, expected values elsewhere; finance.BasisExpected, "plan":
// expected values only) over the window, or over its own default
// horizon for Lifetime; a portfolio adds them month by month over the union
// of the horizons, so NPV discounts from the portfolio's first month. ROI,
// payback, NPV, IRR and MIRR are finance.Evaluate's on that series; the scenarios
// are the ROI of the shocked series. When any amount lacks an FX rate every
// money figure is absent (MissingFXRates) and Missing lists the rates.
func ComputeROI(ins []Initiative, w Window, current finance.Month, annualRate float64, basis finance.Basis, fx finance.FX) ROI {
	out := ROI{Basis: basis}
	var all []finance.CashFlows
	missing := map[finance.MissingRate]bool{}
	for _, in := range ins {
		h, ok := w.Months, true
		if w.Lifetime {
			h, ok = finance.DefaultHorizon(in.Benefits, in.Costs)
		}
		if !ok || h.Len() == 0 {
			continue
		}
		cf, miss := finance.BuildCashFlows(h, in.Benefits, in.Costs, basis, fx)
		for _, m := range miss {
			missing[m] = true
		}
		all = append(all, cf)
	}
	out.Missing = sortMissing(slices.Collect(maps.Keys(missing)))
	out.Coverage = coverage(ins, w, current)
	out.Confidence = ConfidenceOf(out.Coverage)

	if len(all) == 0 {
		r := finance.Result{Reason: NoData}
		out.TotalBenefits, out.TotalCosts = Amount{Value: new(decimal.Zero)}, Amount{Value: new(decimal.Zero)}
		out.ROIPercent, out.PaybackMonths, out.NPV, out.IRR, out.MIRR, out.Best, out.Worst, out.Delayed = r, r, r, r, r, r, r, r
		out.MonteCarloReason = r.Reason
		return out
	}
	cf := merge(all)
	h := cf.Horizon()
	out.Horizon = &h
	if len(out.Missing) > 0 {
		r := finance.Result{Reason: MissingFXRates}
		out.TotalBenefits, out.TotalCosts = Amount{Reason: r.Reason}, Amount{Reason: r.Reason}
		out.ROIPercent, out.PaybackMonths, out.NPV, out.IRR, out.MIRR, out.Best, out.Worst, out.Delayed = r, r, r, r, r, r, r, r
		out.MonteCarloReason = r.Reason
		return out
	}
	m := finance.Evaluate(cf, annualRate)
	out.TotalBenefits, out.TotalCosts = Amount{Value: new(m.TotalBenefits)}, Amount{Value: new(m.TotalCosts)}
	out.ROIPercent, out.PaybackMonths, out.NPV = m.ROIPercent, m.PaybackMonths, value(m.NPV)
	out.IRR, out.IRRRoots, out.MIRR = m.IRR, m.IRRRoots, m.MIRR
	best, worst := cf.Shocked(BestCase), cf.Shocked(WorstCase)
	out.Best = finance.ROIPercent(best.TotalBenefits(), best.TotalCosts())
	out.Worst = finance.ROIPercent(worst.TotalBenefits(), worst.TotalCosts())
	delayed := cf.Shocked(DelayedOneMonth)
	out.Delayed = finance.ROIPercent(delayed.TotalBenefits(), delayed.TotalCosts())
	if mc, r := SimulateROI(cf, MonteCarloRuns); r.Value != nil {
		out.MonteCarlo = &mc
	} else {
		out.MonteCarloReason = r.Reason
	}
	return out
}

// PoorAccuracyWAPE is the forecast WAPE (a fraction) above which an ROI's
// confidence is one level lower: its benefits have missed their
// expectations by more than a quarter of what was expected.
const PoorAccuracyWAPE = 0.25

// ApplyAccuracy records the forecast WAPE of the analysis (nil: no period
// with an actual, or a rate missing) and lowers the confidence from data
// coverage one level (high → medium, medium → low) when it is above
// PoorAccuracyWAPE.
func (r *ROI) ApplyAccuracy(wape *float64) {
	r.ForecastWAPE = wape
	r.Confidence = Downgrade(r.Confidence, wape)
}

// Downgrade is c one level lower when wape is known and above PoorAccuracyWAPE.
func Downgrade(c Confidence, wape *float64) Confidence {
	if wape == nil || *wape <= PoorAccuracyWAPE {
		return c
	}
	switch c {
	case High:
		return Medium
	case Medium:
		return Low
	}
	return Low
}

// Amount is an exact money figure that may have no value (Reason says why),
// as finance.Result is for the computed ones.
type Amount struct {
	Value  *decimal.Decimal
	Reason finance.Reason
}

// merge adds series month by month over the union of their horizons.
func merge(all []finance.CashFlows) finance.CashFlows {
	h := all[0].Horizon()
	for _, cf := range all[1:] {
		ch := cf.Horizon()
		h.Start, h.End = min(h.Start, ch.Start), max(h.End, ch.End)
	}
	out := finance.NewCashFlows(h)
	for _, cf := range all {
		off := int(cf.Start - h.Start)
		for i := range cf.Benefits {
			out.Benefits[off+i] = out.Benefits[off+i].Add(cf.Benefits[i])
			out.Costs[off+i] = out.Costs[off+i].Add(cf.Costs[i])
		}
	}
	return out
}

// coverage is the share of elapsed benefit periods that have an actual:
// over every money benefit, the periods from its first through its last (or
// the current one, whichever is earlier) whose month is in the window (for
// Lifetime: every such period), counting those with an actual recorded. Nil
// when no period has elapsed.
func coverage(ins []Initiative, w Window, current finance.Month) *float64 {
	elapsed, measured := 0, 0
	for _, in := range ins {
		for _, b := range in.Benefits {
			last := current
			if b.End != nil {
				last = min(last, *b.End)
			}
			for _, p := range b.Frequency.Periods(b.Frequency.PeriodOf(b.Start), last) {
				if !w.Contains(p) {
					continue
				}
				elapsed++
				if _, ok := b.Actuals[p]; ok {
					measured++
				}
			}
		}
	}
	if elapsed == 0 {
		return nil
	}
	return new(float64(measured) / float64(elapsed))
}

// sortMissing sorts rates by currency, then month, without repeats; never nil.
func sortMissing(ms []finance.MissingRate) []finance.MissingRate {
	slices.SortFunc(ms, func(a, b finance.MissingRate) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Period, b.Period))
	})
	ms = slices.Compact(ms)
	if ms == nil {
		ms = []finance.MissingRate{}
	}
	return ms
}

func value(v float64) finance.Result { return finance.Result{Value: &v} }
