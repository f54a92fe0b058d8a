package businesscase

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/valuation"
)

// DefinitionsVersion is the version of the definitions a snapshot's figures
// follow (docs/numbers.md): 2 = exact decimals rounded once to the base
// currency's minor units, variance like for like. A snapshot frozen before
// has none (read as 1: float64, 2 decimals, expected to date over every
// period) and is shown as frozen, never recomputed.
const DefinitionsVersion = 2

// Snapshot is the figures of a case's initiative frozen at approval, so an
// approved version's numbers never move afterwards. Money is in BaseCurrency,
// rounded once to its minor units; a figure without a value is null with its reason.
type Snapshot struct {
	DefinitionsVersion int       `json:"definitions_version,omitempty"`
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

// Figures computes the snapshot of an initiative's rows at now (the
// detail's figures from internal/valuation, the cash-flow metrics from
// finance.Evaluate over the default horizon, expected basis) and the facts
// Validate needs.
func Figures(r valuation.Rows, now time.Time, archived bool) (Snapshot, Facts, error) {
	detail, err := valuation.Compute(r, now)
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
		DefinitionsVersion: DefinitionsVersion, AsOf: now.UTC(), BaseCurrency: base, DiscountRate: r.Settings.DiscountRate,
		ExpectedValueToDate: money.AmountPtr(m.ExpectedToDate, base), RealizedValueToDate: money.AmountPtr(m.RealizedToDate, base),
		ExpectedMeasuredToDate: money.AmountPtr(m.ExpectedMeasured, base), ExpectedUnmeasuredToDate: money.AmountPtr(m.ExpectedUnmeasured, base),
		Variance: money.AmountPtr(m.Variance, base), VariancePercent: percentPtr(m.VariancePercent),
		BenefitsCount: m.BenefitsCount, CostsCount: len(r.Costs), StakeholdersCount: m.StakeholdersCount, StakeholdersAtRisk: m.StakeholdersAtRisk,
	}
	missing := m.MissingFXRates
	if h, ok := finance.DefaultHorizon(benefits, costs); ok {
		cf, miss := finance.BuildCashFlows(h, benefits, costs, finance.BasisExpected, fx)
		missing = mergeMissing(missing, miss)
		ev := finance.Evaluate(cf, r.Settings.DiscountRate)
		s.HorizonStart, s.HorizonEnd = new(h.Start.String()), new(h.End.String())
		s.TotalBenefits, s.TotalCosts = money.Amount(ev.TotalBenefits, base), money.Amount(ev.TotalCosts, base)
		s.NPV = money.Amount(decimal.NewFromFloat(ev.NPV), base)
		s.IRR, s.IRRReason = result(ev.IRR, false)
		s.PaybackMonths, s.PaybackReason = result(ev.PaybackMonths, false)
		s.ROIPercent, s.ROIReason = result(ev.ROIPercent, true)
	} else {
		s.IRRReason, s.PaybackReason, s.ROIReason = new(string(finance.NoCosts)), new(string(finance.NoCosts)), new(string(finance.NoCosts))
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
