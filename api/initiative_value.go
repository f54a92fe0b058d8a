package api

// The value side of the initiative detail: the stakeholder summary and the
// metrics internal/initiativevalue computes, in their JSON form.

import (
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/money"
)

// valueMetricsJSON are the value figures in the detail's metrics: money in
// the base currency, null when an FX rate it needs is missing (listed in
// missing_fx_rates).
type valueMetricsJSON struct {
	BenefitsCount       int      `json:"benefits_count"`
	ExpectedValueToDate *float64 `json:"expected_value_to_date"`
	// Like for like: the expectation of the periods with an actual, of
	// those without one (not a shortfall), and the variance of the actuals.
	ExpectedMeasuredToDate   *float64            `json:"expected_measured_to_date"`
	ExpectedUnmeasuredToDate *float64            `json:"expected_unmeasured_to_date"`
	RealizedValueToDate      *float64            `json:"realized_value_to_date"`
	Variance                 *float64            `json:"variance"`
	VariancePercent          *float64            `json:"variance_percent"`
	RealizationPercent       *float64            `json:"realization_percent"`
	TotalCost                *float64            `json:"total_cost"`
	StakeholdersCount        int                 `json:"stakeholders_count"`
	StakeholdersAtRisk       int                 `json:"stakeholders_at_risk"`
	BaseCurrency             string              `json:"base_currency"`
	MissingFXRates           []missingFXRateJSON `json:"missing_fx_rates"`
}

type missingFXRateJSON struct {
	Currency string `json:"currency"`
	Period   string `json:"period"`
}

// initiativeStakeholderJSON is one stakeholder in the initiative detail.
type initiativeStakeholderJSON struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Role      *string `json:"role"`
	Influence string  `json:"influence"`
	Interest  string  `json:"interest"`
	Quadrant  string  `json:"quadrant"`
	Sentiment *string `json:"sentiment"`
	AtRisk    bool    `json:"at_risk"`
}

// setValue fills the detail's stakeholders and value metrics, rounding money
// (to the base currency's minor units) and percentages at this edge only.
func (out *initiativeDetailJSON) setValue(d initiativevalue.Detail) {
	m, vm := &out.Metrics, d.Metrics
	base := vm.BaseCurrency
	m.BenefitsCount, m.StakeholdersCount, m.StakeholdersAtRisk, m.BaseCurrency = vm.BenefitsCount, vm.StakeholdersCount, vm.StakeholdersAtRisk, vm.BaseCurrency
	m.ExpectedValueToDate, m.RealizedValueToDate = money.AmountPtr(vm.ExpectedToDate, base), money.AmountPtr(vm.RealizedToDate, base)
	m.ExpectedMeasuredToDate, m.ExpectedUnmeasuredToDate = money.AmountPtr(vm.ExpectedMeasured, base), money.AmountPtr(vm.ExpectedUnmeasured, base)
	m.Variance, m.VariancePercent = money.AmountPtr(vm.Variance, base), money.PercentOfPtr(vm.VariancePercent)
	m.RealizationPercent, m.TotalCost = money.PercentOfPtr(vm.RealizationPercent), money.AmountPtr(vm.TotalCost, base)
	m.MissingFXRates = make([]missingFXRateJSON, len(vm.MissingFXRates))
	for i, r := range vm.MissingFXRates {
		m.MissingFXRates[i] = missingFXRateJSON{Currency: r.Currency, Period: r.Period.String()}
	}
	out.Stakeholders = make([]initiativeStakeholderJSON, len(d.Stakeholders))
	for i, s := range d.Stakeholders {
		j := initiativeStakeholderJSON{ID: s.ID.String(), Name: s.Name, Role: s.Role, Influence: string(s.Influence),
			Interest: string(s.Interest), Quadrant: string(s.Quadrant), AtRisk: s.AtRisk}
		if s.Sentiment != nil {
			j.Sentiment = new(string(*s.Sentiment))
		}
		out.Stakeholders[i] = j
	}
}
