// Package initiativevalue is what an initiative is worth so far, for its
// detail (GET /v1/initiatives/{id}): it loads the initiative's rows and
// computes expected and realised value to date, realisation and total cost,
// all in the tenant's base currency, with the stakeholder summaries and the
// at-risk count. The definitions are docs/numbers.md.
package initiativevalue

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/stakeholder"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Load reads the rows of an initiative in the tenant's transaction: its
// benefits with their plans and actuals, costs, stakeholders, the tenant's
// settings and the FX rates of the months the figures at now can need.
func Load(ctx context.Context, tx dbsqlc.DBTX, tenantID, initiativeID uuid.UUID, now time.Time) (valuation.Rows, error) {
	var r valuation.Rows
	var err error
	if r.Settings, err = settings.Load(ctx, tx, tenantID); err != nil {
		return r, err
	}
	if r.Benefits, err = db.Q.BenefitListByInitiative(ctx, tx, dbsqlc.BenefitListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	ids := make([]uuid.UUID, len(r.Benefits))
	for i, b := range r.Benefits {
		ids[i] = b.ID
	}
	if r.Plans, err = db.Q.BenefitPlanList(ctx, tx, dbsqlc.BenefitPlanListParams{TenantID: tenantID, BenefitIds: ids}); err != nil {
		return r, err
	}
	if r.Actuals, err = db.Q.ActualListByInitiative(ctx, tx, dbsqlc.ActualListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	if r.Costs, err = db.Q.CostListByInitiative(ctx, tx, dbsqlc.CostListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	if r.Stakeholders, err = db.Q.StakeholderListByInitiative(ctx, tx, dbsqlc.StakeholderListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	if from, to, ok := ratePeriods(valuation.MoneyBenefits(r), valuation.Costs(r), now); ok {
		r.Rates, err = db.Q.FxRateList(ctx, tx, dbsqlc.FxRateListParams{TenantID: tenantID, FromPeriod: new(from.FirstDay()), ToPeriod: new(to.FirstDay())})
	}
	return r, err
}

// ratePeriods is the range of months whose FX rates the figures at now may use:
// the initiative's default horizon, extended through the current month for
// the to-date figures. ok is false when there are neither money benefits nor
// costs (no rate is needed).
func ratePeriods(benefits []finance.Benefit, costs []finance.Cost, now time.Time) (from, to finance.Month, ok bool) {
	h, ok := finance.DefaultHorizon(benefits, costs)
	if !ok {
		return 0, 0, false
	}
	return h.Start, max(h.End, finance.MonthOfTime(now)), true
}

// Metrics are the money and stakeholder figures of an initiative, exact
// (rounded at the edge). A money figure is nil when an amount it needs has no
// FX rate (MissingFXRates lists each such rate); it is never a partial sum of
// what could be converted. Expected and realised compare like for like
// (finance.Comparison): the expectation of the periods not measured yet is
// reported apart and is not a shortfall.
type Metrics struct {
	BenefitsCount int // every benefit of the initiative, any unit and status
	// ExpectedToDate is the expected value of every period through the
	// current month, measured or not (ExpectedMeasured + ExpectedUnmeasured).
	ExpectedToDate     *decimal.Decimal
	ExpectedMeasured   *decimal.Decimal // of the periods with an actual
	ExpectedUnmeasured *decimal.Decimal // of the periods through the current month without one
	RealizedToDate     *decimal.Decimal // actuals recorded for the periods through the current month
	Variance           *decimal.Decimal // realised − expected measured
	VariancePercent    *decimal.Decimal // variance / expected measured × 100; nil when that is 0
	RealizationPercent *decimal.Decimal // realised / expected measured × 100; nil when that is 0
	TotalCost          *decimal.Decimal // every cost schedule over the default horizon
	StakeholdersCount  int
	StakeholdersAtRisk int
	BaseCurrency       string
	MissingFXRates     []finance.MissingRate // sorted, each once; empty (not nil) when none
}

// Detail is everything the initiative detail derives from its rows.
type Detail struct {
	Metrics      Metrics
	Stakeholders []stakeholder.Entry
}

// Compute derives the detail of an initiative at now (its UTC month is the
// current month).
func Compute(r valuation.Rows, now time.Time) (Detail, error) {
	fx, err := valuation.FX(r.Settings.BaseCurrency, r.Rates)
	if err != nil {
		return Detail{}, err
	}
	current := finance.MonthOfTime(now)
	benefits, costs := valuation.MoneyBenefits(r), valuation.Costs(r)
	missing := map[finance.MissingRate]bool{}
	note := func(ms []finance.MissingRate) bool {
		for _, m := range ms {
			missing[m] = true
		}
		return len(ms) == 0
	}

	d := Detail{Metrics: Metrics{BenefitsCount: len(r.Benefits), BaseCurrency: r.Settings.BaseCurrency}}
	m := &d.Metrics
	c, miss := finance.CompareToDate(benefits, current, fx)
	note(miss)
	m.SetComparison(c)
	if h, ok := finance.DefaultHorizon(benefits, costs); !ok {
		m.TotalCost = new(decimal.Zero) // neither costs nor money benefits
	} else if cf, miss := finance.BuildCashFlows(h, nil, costs, finance.BasisExpected, fx); note(miss) {
		m.TotalCost = new(cf.TotalCosts())
	}
	m.MissingFXRates = slices.SortedFunc(maps.Keys(missing), func(a, b finance.MissingRate) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Period, b.Period))
	})
	if m.MissingFXRates == nil {
		m.MissingFXRates = []finance.MissingRate{}
	}

	d.Stakeholders = make([]stakeholder.Entry, len(r.Stakeholders))
	for i, s := range r.Stakeholders {
		d.Stakeholders[i] = stakeholder.EntryOf(s, now)
		if d.Stakeholders[i].AtRisk {
			m.StakeholdersAtRisk++
		}
	}
	m.StakeholdersCount = len(r.Stakeholders)
	return d, nil
}

// SetComparison fills the expected and realised figures from c; the
// figures of a part whose rates are missing stay nil.
func (m *Metrics) SetComparison(c finance.Comparison) {
	if !c.MeasuredUnknown {
		m.ExpectedMeasured, m.RealizedToDate, m.Variance = new(c.Expected), new(c.Actual), new(c.Variance())
		m.VariancePercent, m.RealizationPercent = c.VariancePercent(), c.RealizationPercent()
	}
	if !c.UnmeasuredUnknown {
		m.ExpectedUnmeasured = new(c.Unmeasured)
	}
	if !c.MeasuredUnknown && !c.UnmeasuredUnknown {
		m.ExpectedToDate = new(c.PlanToDate())
	}
}
