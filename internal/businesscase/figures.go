package businesscase

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Snapshot is the figures of a case's initiative frozen at approval, so an
// approved version's numbers never move afterwards. Money is in BaseCurrency,
// rounded once to its minor units; a figure without a value is null with its reason.
// The headline figures at the top level are on the plan basis; Forecast
// holds the same figures on the forecast basis (actuals to date, then plan).
//
// DefinitionsVersion is the finance.DefinitionsVersion the figures were
// computed under. A snapshot frozen before versions were recorded has none
// stored and reads as 1 (ReadSnapshot); its figures are shown as frozen,
// never recomputed under later definitions.
type Snapshot struct {
	DefinitionsVersion int       `json:"definitions_version"`
	Basis              string    `json:"basis"` // of the top-level figures: always "plan"
	AsOf               time.Time `json:"as_of"`
	BaseCurrency       string    `json:"base_currency"`
	DiscountRate       float64   `json:"discount_rate"`
	HorizonStart       *string   `json:"horizon_start"` // YYYY-MM; null without money benefits or costs
	HorizonEnd         *string   `json:"horizon_end"`
	TotalBenefits      float64   `json:"total_benefits"` // expected, over the horizon
	TotalCosts         float64   `json:"total_costs"`
	NPV                float64   `json:"npv"`
	IRR                *float64  `json:"irr"` // annual, as a fraction
	IRRReason          *string   `json:"irr_reason"`
	PaybackMonths      *float64  `json:"payback_months"`
	PaybackReason      *string   `json:"payback_reason"`
	ROIPercent         *float64  `json:"roi_percent"`
	ROIReason          *string   `json:"roi_reason"`
	IRRRoots           []float64 `json:"irr_roots"` // every IRR root, annual; several when irr_reason is multiple_roots
	MIRR               *float64  `json:"mirr"`      // annual, as a fraction, at the discount rate
	MIRRReason         *string   `json:"mirr_reason"`
	// Forecast is the headline figures on the forecast basis over the same
	// horizon; nil in a snapshot of definitions version 1, and without
	// money benefits or costs.
	Forecast *BasisFigures `json:"forecast"`
	// The initiative detail's figures at the same moment.
	ExpectedValueToDate *float64 `json:"expected_value_to_date"`
	RealizedValueToDate *float64 `json:"realized_value_to_date"`
	// Like for like (from definitions version 2): the expectation of the
	// periods with an actual, of those without, and the variance.
	ExpectedMeasuredToDate   *float64 `json:"expected_measured_to_date,omitempty"`
	ExpectedUnmeasuredToDate *float64 `json:"expected_unmeasured_to_date,omitempty"`
	Variance                 *float64 `json:"variance,omitempty"`
	VariancePercent          *float64 `json:"variance_percent,omitempty"`
	BenefitsCount            int      `json:"benefits_count"`
	CostsCount               int      `json:"costs_count"`
	StakeholdersCount        int      `json:"stakeholders_count"`
	StakeholdersAtRisk       int      `json:"stakeholders_at_risk"`
}

// BasisFigures are a snapshot's headline figures on one basis (as the ROI
// analysis computes them: finance.Evaluate over the default horizon).
type BasisFigures struct {
	Basis         string    `json:"basis"` // plan or forecast
	TotalBenefits float64   `json:"total_benefits"`
	TotalCosts    float64   `json:"total_costs"`
	NPV           float64   `json:"npv"`
	IRR           *float64  `json:"irr"`
	IRRReason     *string   `json:"irr_reason"`
	IRRRoots      []float64 `json:"irr_roots"`
	MIRR          *float64  `json:"mirr"`
	MIRRReason    *string   `json:"mirr_reason"`
	PaybackMonths *float64  `json:"payback_months"`
	PaybackReason *string   `json:"payback_reason"`
	ROIPercent    *float64  `json:"roi_percent"`
	ROIReason     *string   `json:"roi_reason"`
}

// ReadSnapshot decodes a stored snapshot; one stored before definition
// versions were recorded reads as version 1.
func ReadSnapshot(raw []byte) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, err
	}
	if s.DefinitionsVersion == 0 {
		s.DefinitionsVersion, s.Basis = 1, finance.BasisExpected.String()
	}
	if s.IRRRoots == nil { // none recorded under version 1
		s.IRRRoots = []float64{}
	}
	return s, nil
}

// Plan is the snapshot's top-level figures as BasisFigures.
func (s Snapshot) Plan() BasisFigures {
	return BasisFigures{Basis: s.Basis, TotalBenefits: s.TotalBenefits, TotalCosts: s.TotalCosts, NPV: s.NPV,
		IRR: s.IRR, IRRReason: s.IRRReason, IRRRoots: s.IRRRoots, MIRR: s.MIRR, MIRRReason: s.MIRRReason,
		PaybackMonths: s.PaybackMonths, PaybackReason: s.PaybackReason, ROIPercent: s.ROIPercent, ROIReason: s.ROIReason}
}

// basisFigures is the headline figures of cf on basis at an annual rate, money rounded to currency.
func basisFigures(cf finance.CashFlows, basis finance.Basis, rate float64, currency string) BasisFigures {
	ev := finance.Evaluate(cf, rate)
	f := BasisFigures{Basis: basis.String(), TotalBenefits: money.Amount(ev.TotalBenefits, currency), TotalCosts: money.Amount(ev.TotalCosts, currency),
		NPV: money.Amount(decimal.NewFromFloat(ev.NPV), currency), IRRRoots: append([]float64{}, ev.IRRRoots...)}
	f.IRR, f.IRRReason = result(ev.IRR, false)
	f.MIRR, f.MIRRReason = result(ev.MIRR, false)
	f.PaybackMonths, f.PaybackReason = result(ev.PaybackMonths, false)
	f.ROIPercent, f.ROIReason = result(ev.ROIPercent, true)
	return f
}

// Figures computes the snapshot of an initiative's rows at now (the
// detail's figures from internal/valuation, the cash-flow metrics from
// finance.Evaluate over the default horizon on the plan and the forecast
// bases) and the facts Validate needs.
func Figures(r valuation.Rows, now time.Time, archived bool) (Snapshot, Facts, error) {
	detail, err := initiativevalue.Compute(r, now)
	if err != nil {
		return Snapshot{}, Facts{}, err
	}
	fx, err := valuation.FX(r.Settings.BaseCurrency, r.Rates)
	if err != nil {
		return Snapshot{}, Facts{}, err
	}
	benefits, costs := valuation.MoneyBenefits(r), valuation.Costs(r)
	m := detail.Metrics
	base := r.Settings.BaseCurrency
	s := Snapshot{
		DefinitionsVersion: finance.DefinitionsVersion, Basis: finance.BasisExpected.String(), IRRRoots: []float64{},
		AsOf: now.UTC(), BaseCurrency: base, DiscountRate: r.Settings.DiscountRate,
		ExpectedValueToDate: money.AmountPtr(m.ExpectedToDate, base), RealizedValueToDate: money.AmountPtr(m.RealizedToDate, base),
		ExpectedMeasuredToDate: money.AmountPtr(m.ExpectedMeasured, base), ExpectedUnmeasuredToDate: money.AmountPtr(m.ExpectedUnmeasured, base),
		Variance: money.AmountPtr(m.Variance, base), VariancePercent: percentPtr(m.VariancePercent),
		BenefitsCount: m.BenefitsCount, CostsCount: len(r.Costs), StakeholdersCount: m.StakeholdersCount, StakeholdersAtRisk: m.StakeholdersAtRisk,
	}
	missing := m.MissingFXRates
	if h, ok := finance.DefaultHorizon(benefits, costs); ok {
		cf, miss := finance.BuildCashFlows(h, benefits, costs, finance.BasisExpected, fx)
		missing = mergeMissing(missing, miss)
		forecast, miss := finance.BuildCashFlows(h, benefits, costs, finance.BasisActual, fx)
		missing = mergeMissing(missing, miss)
		s.HorizonStart, s.HorizonEnd = new(h.Start.String()), new(h.End.String())
		plan := basisFigures(cf, finance.BasisExpected, r.Settings.DiscountRate, base)
		s.TotalBenefits, s.TotalCosts, s.NPV = plan.TotalBenefits, plan.TotalCosts, plan.NPV
		s.IRR, s.IRRReason, s.IRRRoots, s.MIRR, s.MIRRReason = plan.IRR, plan.IRRReason, plan.IRRRoots, plan.MIRR, plan.MIRRReason
		s.PaybackMonths, s.PaybackReason, s.ROIPercent, s.ROIReason = plan.PaybackMonths, plan.PaybackReason, plan.ROIPercent, plan.ROIReason
		s.Forecast = new(basisFigures(forecast, finance.BasisActual, r.Settings.DiscountRate, base))
	} else {
		noCosts := func() *string { return new(string(finance.NoCosts)) }
		s.IRRReason, s.MIRRReason, s.PaybackReason, s.ROIReason = noCosts(), noCosts(), noCosts(), noCosts()
	}
	f := Facts{InitiativeArchived: archived, Benefits: len(benefits), Costs: len(r.Costs), MissingFXRates: missing}
	return s, f, nil
}

func percentPtr(v *decimal.Decimal) *float64 {
	if v == nil {
		return nil
	}
	return new(money.PercentOf(*v))
}

// result splits a finance.Result into value and reason; money-like values
// (ROI %) are rounded to 2 decimals, rates keep their precision.
func result(r finance.Result, rounded bool) (*float64, *string) {
	if v, ok := r.Get(); ok {
		if rounded {
			v = money.Percent(v)
		}
		return &v, nil
	}
	return nil, new(string(r.Reason))
}

func mergeMissing(a, b []finance.MissingRate) []finance.MissingRate {
	out := append([]finance.MissingRate{}, a...)
	for _, m := range b {
		found := false
		for _, x := range out {
			if x == m {
				found = true
				break
			}
		}
		if !found {
			out = append(out, m)
		}
	}
	return out
}
