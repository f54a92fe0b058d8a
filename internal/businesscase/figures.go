package businesscase

import (
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Snapshot is the figures of a case's initiative frozen at approval, so an
// approved version's numbers never move afterwards. Money is in BaseCurrency,
// rounded to 2 decimals; a figure without a value is null with its reason.
type Snapshot struct {
	AsOf          time.Time `json:"as_of"`
	BaseCurrency  string    `json:"base_currency"`
	DiscountRate  float64   `json:"discount_rate"`
	HorizonStart  *string   `json:"horizon_start"` // YYYY-MM; null without money benefits or costs
	HorizonEnd    *string   `json:"horizon_end"`
	TotalBenefits float64   `json:"total_benefits"` // expected, over the horizon
	TotalCosts    float64   `json:"total_costs"`
	NPV           float64   `json:"npv"`
	IRR           *float64  `json:"irr"` // annual, as a fraction
	IRRReason     *string   `json:"irr_reason"`
	PaybackMonths *float64  `json:"payback_months"`
	PaybackReason *string   `json:"payback_reason"`
	ROIPercent    *float64  `json:"roi_percent"`
	ROIReason     *string   `json:"roi_reason"`
	// The initiative detail's figures at the same moment.
	ExpectedValueToDate *float64 `json:"expected_value_to_date"`
	RealizedValueToDate *float64 `json:"realized_value_to_date"`
	BenefitsCount       int      `json:"benefits_count"`
	CostsCount          int      `json:"costs_count"`
	StakeholdersCount   int      `json:"stakeholders_count"`
	StakeholdersAtRisk  int      `json:"stakeholders_at_risk"`
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
	s := Snapshot{
		AsOf: now.UTC(), BaseCurrency: r.Settings.BaseCurrency, DiscountRate: r.Settings.DiscountRate,
		ExpectedValueToDate: round(m.ExpectedToDate), RealizedValueToDate: round(m.RealizedToDate),
		BenefitsCount: m.BenefitsCount, CostsCount: len(r.Costs), StakeholdersCount: m.StakeholdersCount, StakeholdersAtRisk: m.StakeholdersAtRisk,
	}
	missing := m.MissingFXRates
	if h, ok := finance.DefaultHorizon(benefits, costs); ok {
		cf, miss := finance.BuildCashFlows(h, benefits, costs, finance.BasisExpected, fx)
		missing = mergeMissing(missing, miss)
		ev := finance.Evaluate(cf, r.Settings.DiscountRate)
		s.HorizonStart, s.HorizonEnd = new(h.Start.String()), new(h.End.String())
		s.TotalBenefits, s.TotalCosts, s.NPV = money.Round(ev.TotalBenefits), money.Round(ev.TotalCosts), money.Round(ev.NPV)
		s.IRR, s.IRRReason = result(ev.IRR, false)
		s.PaybackMonths, s.PaybackReason = result(ev.PaybackMonths, false)
		s.ROIPercent, s.ROIReason = result(ev.ROIPercent, true)
	} else {
		s.IRRReason, s.PaybackReason, s.ROIReason = new(string(finance.NoCosts)), new(string(finance.NoCosts)), new(string(finance.NoCosts))
	}
	f := Facts{InitiativeArchived: archived, Benefits: len(benefits), Costs: len(r.Costs), MissingFXRates: missing}
	return s, f, nil
}

func round(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return new(money.Round(*v))
}

// result splits a finance.Result into value and reason; money-like values
// (ROI %) are rounded to 2 decimals, rates keep their precision.
func result(r finance.Result, rounded bool) (*float64, *string) {
	if v, ok := r.Get(); ok {
		if rounded {
			v = money.Round(v)
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
