// Package demo seeds a small, realistic portfolio into a tenant through the
// public REST API, so a new user of `make run` sees real figures at once and
// the seed obeys exactly the rules every client obeys.
package demo

import (
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/money"
)

// Portfolio is what the seed creates, relative to a month "now".
type Portfolio struct {
	Initiatives []Initiative
	// FX rates to the base currency (USD) for every month of the seed's range.
	FX map[string]float64
}

// Initiative is one initiative with its value model.
type Initiative struct {
	Name, Description, Industry, Segment string
	// Path of statuses after draft, each reached by POST /status.
	Path         []string
	Benefits     []Benefit
	Costs        []Cost
	Stakeholders []Stakeholder
	// BusinessCases are created after the value model, in order.
	BusinessCases []BusinessCase
}

// BusinessCase is a business case of the initiative. Approve (a level) approves it, which freezes
// its figures and its documents; NextVersion then copies it into a new draft (version 2).
type BusinessCase struct {
	Name, Template string
	Sections       []CaseSection
	Approve        string // approval level; empty: stays a draft
	Notes          string // the approval's notes
	NextVersion    bool
	Decision       *Decision // the case's decision request; nil: none
}

// Decision is a case's decision request as the seed writes it: the amount
// as exact decimal text, the date due some days after the seeding.
type Decision struct {
	Ask, Amount, Currency, Recommendation string
	DecideInDays                          int
}

// Request is d as the case stores it, due DecideInDays after now.
func (d Decision) Request(now time.Time) businesscase.DecisionRequest {
	r := businesscase.DecisionRequest{Ask: d.Ask, Currency: d.Currency, Recommendation: d.Recommendation}
	if d.Amount != "" {
		r.Amount = new(decimal.RequireFromString(d.Amount))
	}
	if d.DecideInDays > 0 {
		y, m, day := now.UTC().AddDate(0, 0, d.DecideInDays).Date()
		r.DecideBy = new(time.Date(y, m, day, 0, 0, 0, 0, time.UTC))
	}
	return r
}

// CaseSection is one section of a business case, in order.
type CaseSection struct {
	ID, Title, Body string
}

// Benefit is a benefit with the realisation curve its actuals follow.
type Benefit struct {
	Name, Category, Unit, Currency, Frequency string
	ExpectedValue                             float64 // per year
	StartOffset                               int     // months from the seed's first month
	// Actuals for this many periods from the start; each is the period's expected value times
	// a ramp from RampFrom to RampTo (with a small deterministic wobble).
	ActualPeriods    int
	RampFrom, RampTo float64
}

// Cost is an initiative cost.
type Cost struct {
	Name, Category, Currency, Recurrence string
	Amount                               float64
	StartOffset                          int
	Months                               int // recurring: how many months it runs (0: open-ended)
}

// Stakeholder with engagements, newest last.
type Stakeholder struct {
	Name, Email, Role, Department, Influence, Interest string
	Engagements                                        []Engagement
}

// Engagement happened DaysAgo days before the seed runs.
type Engagement struct {
	Type, Sentiment, Notes string
	DaysAgo                int
}

// HistoryMonths is how many months of actuals the seed records (ending last month).
const HistoryMonths = 18

// Default is the demo portfolio: six initiatives in different states, benefits with 18 months
// of actuals in three currencies, costs, and stakeholders of whom two are at risk.
func Default() Portfolio {
	return Portfolio{
		FX: map[string]float64{"EUR": 1.08, "CHF": 1.12},
		Initiatives: []Initiative{
			{
				Name: "Cloud migration", Industry: "Financial services", Segment: "Enterprise",
				Description: "Move the core banking workloads from two data centres to the cloud.",
				Path:        []string{"in_review", "approved", "active"},
				Benefits: []Benefit{
					{Name: "Data-centre cost savings", Category: "cost_savings", Unit: "currency", Currency: "USD", Frequency: "monthly",
						ExpectedValue: 1_200_000, ActualPeriods: HistoryMonths, RampFrom: 0.55, RampTo: 1.05},
					{Name: "Engineering hours freed", Category: "productivity", Unit: "hours", Frequency: "monthly",
						ExpectedValue: 9_600, ActualPeriods: HistoryMonths, RampFrom: 0.4, RampTo: 0.95},
				},
				Costs: []Cost{
					{Name: "Migration programme", Category: "capex", Currency: "USD", Recurrence: "once", Amount: 1_500_000},
					{Name: "Cloud run cost", Category: "opex", Currency: "USD", Recurrence: "monthly", Amount: 25_000, Months: 36},
				},
				Stakeholders: []Stakeholder{
					{Name: "Anna Kowalski", Email: "anna.kowalski@example.com", Role: "CFO", Department: "Finance", Influence: "critical", Interest: "high",
						Engagements: []Engagement{{"meeting", "neutral", "Kick-off budget review", 120}, {"presentation", "positive", "Quarterly value review", 30}}},
					{Name: "Jonas Meyer", Email: "jonas.meyer@example.com", Role: "Head of Infrastructure", Department: "IT", Influence: "high", Interest: "high",
						Engagements: []Engagement{{"meeting", "positive", "Cut-over plan", 60}, {"call", "cautious", "Latency concerns", 20}, {"meeting", "negative", "Outage post-mortem", 5}}},
					{Name: "Priya Nair", Email: "priya.nair@example.com", Role: "Security lead", Department: "Risk", Influence: "medium", Interest: "high",
						Engagements: []Engagement{{"email", "neutral", "Controls checklist", 40}}},
					{Name: "Tom Becker", Email: "tom.becker@example.com", Role: "Operations manager", Department: "Operations", Influence: "low", Interest: "medium"},
				},
				BusinessCases: []BusinessCase{{
					Name: "Cloud migration: the case for the board", Template: "cfo_view",
					Approve: "board", Notes: "Approved by the board; report realised savings quarterly.", NextVersion: true,
					Decision: &Decision{Ask: "Approve the cloud migration programme and its three-year run budget", Amount: "2400000", Currency: "USD",
						Recommendation: "Approve: the programme pays for itself within two years and retires both data-centre leases.", DecideInDays: 30},
					Sections: []CaseSection{
						{"executive_summary", "Why we move now", "Two ageing data centres cost more every year and both leases end within three years.\n\nMoving the core banking workloads to the cloud saves USD 1.2m a year once the migration is done, and frees engineering time for product work."},
						{"financial_analysis", "Financial analysis", "The migration programme is a one-off USD 1.5m; cloud run costs are USD 25,000 a month for three years.\n\n- The plan counts the full run rate of savings from the first month; measured savings started lower and are reported beside it.\n- Figures are expected values over the case's horizon; actuals are reported beside them."},
						{"risk_assessment", "Risks", "- Latency of the payment systems after cut-over: mitigated by a staged migration and a fallback path.\n- Cost overrun of the programme: fixed-price contract for the first two waves."},
						{"implementation_roadmap", "Roadmap", "Wave 1 (non-critical workloads), wave 2 (core banking), then decommissioning of both data centres."},
						{"stakeholder_map", "Stakeholders", "The CFO sponsors the case; infrastructure's concerns about latency are tracked in the risk log."},
					},
				}},
			},
			{
				Name: "Customer self-service portal", Industry: "Retail", Segment: "Consumer",
				Description: "Let customers manage orders and returns online instead of calling.",
				Path:        []string{"in_review", "approved", "active"},
				Benefits: []Benefit{
					{Name: "Call-centre deflection", Category: "cost_avoidance", Unit: "currency", Currency: "USD", Frequency: "monthly",
						ExpectedValue: 480_000, ActualPeriods: HistoryMonths, RampFrom: 0.3, RampTo: 1.1},
					{Name: "Upsell through the portal", Category: "revenue_growth", Unit: "currency", Currency: "EUR", Frequency: "quarterly",
						ExpectedValue: 300_000, ActualPeriods: HistoryMonths / 3, RampFrom: 0.5, RampTo: 0.9},
				},
				Costs: []Cost{
					{Name: "Portal build", Category: "capex", Currency: "USD", Recurrence: "once", Amount: 600_000},
					{Name: "Hosting and support", Category: "opex", Currency: "EUR", Recurrence: "monthly", Amount: 8_000, Months: 36},
				},
				Stakeholders: []Stakeholder{
					{Name: "Léa Dubois", Email: "lea.dubois@example.com", Role: "Head of Customer Service", Department: "Service", Influence: "high", Interest: "high",
						Engagements: []Engagement{{"meeting", "positive", "Deflection targets", 90}, {"survey", "positive", "Agent survey", 14}}},
					{Name: "Marco Rossi", Email: "marco.rossi@example.com", Role: "Chief Digital Officer", Department: "Digital", Influence: "critical", Interest: "medium",
						Engagements: []Engagement{{"presentation", "positive", "Board update", 200}}},
					{Name: "Sara Lindqvist", Email: "sara.lindqvist@example.com", Role: "Product owner", Department: "Digital", Influence: "medium", Interest: "high",
						Engagements: []Engagement{{"call", "neutral", "Backlog", 10}}},
				},
			},
			{
				Name: "Zürich office consolidation", Industry: "Financial services", Segment: "Enterprise",
				Description: "Merge three Zürich offices into one building.",
				Path:        []string{"in_review", "approved", "active", "completed"},
				Benefits: []Benefit{
					{Name: "Rent savings", Category: "cost_savings", Unit: "currency", Currency: "CHF", Frequency: "monthly",
						ExpectedValue: 360_000, ActualPeriods: HistoryMonths, RampFrom: 0.9, RampTo: 1.0},
				},
				Costs: []Cost{
					{Name: "Fit-out", Category: "capex", Currency: "CHF", Recurrence: "once", Amount: 420_000},
				},
				Stakeholders: []Stakeholder{
					{Name: "Urs Keller", Email: "urs.keller@example.com", Role: "Facilities director", Department: "Facilities", Influence: "high", Interest: "medium",
						Engagements: []Engagement{{"meeting", "positive", "Handover", 35}}},
				},
			},
			{
				Name: "Warehouse automation Łódź", Industry: "Logistics", Segment: "Mid-market",
				Description: "Automated picking in the Łódź distribution centre.",
				Path:        []string{"in_review", "approved"},
				Benefits: []Benefit{
					{Name: "Picking labour savings", Category: "cost_savings", Unit: "currency", Currency: "EUR", Frequency: "monthly",
						ExpectedValue: 900_000, StartOffset: HistoryMonths + 3},
					{Name: "Order accuracy", Category: "customer_experience", Unit: "percent", Frequency: "quarterly",
						ExpectedValue: 4, StartOffset: HistoryMonths + 3},
				},
				Costs: []Cost{
					{Name: "Robots and conveyors", Category: "capex", Currency: "EUR", Recurrence: "once", Amount: 2_400_000, StartOffset: HistoryMonths + 1},
					{Name: "Maintenance contract", Category: "opex", Currency: "EUR", Recurrence: "quarterly", Amount: 45_000, StartOffset: HistoryMonths + 3, Months: 36},
				},
				Stakeholders: []Stakeholder{
					{Name: "Piotr Zieliński", Email: "piotr.zielinski@example.com", Role: "Site manager", Department: "Operations", Influence: "high", Interest: "high"},
				},
			},
			{
				Name: "Procurement analytics", Industry: "Manufacturing", Segment: "Enterprise",
				Description: "Spend analytics across all suppliers.",
				Path:        []string{"in_review"},
				Benefits: []Benefit{
					{Name: "Negotiated supplier savings", Category: "cost_savings", Unit: "currency", Currency: "USD", Frequency: "quarterly",
						ExpectedValue: 750_000, StartOffset: HistoryMonths + 2},
				},
				Costs: []Cost{
					{Name: "Analytics platform", Category: "opex", Currency: "USD", Recurrence: "annual", Amount: 120_000, StartOffset: HistoryMonths + 1, Months: 36},
				},
			},
			{
				Name: "Legacy CRM sunset", Industry: "Retail", Segment: "Consumer",
				Description: "Retire the on-premise CRM after the portal launch.",
				Benefits: []Benefit{
					{Name: "Licence savings", Category: "cost_savings", Unit: "currency", Currency: "USD", Frequency: "monthly",
						ExpectedValue: 200_000, StartOffset: HistoryMonths + 6},
				},
			},
		},
	}
}

// PeriodValue is the expected value of one period of a benefit (the even spread).
func (b Benefit) PeriodValue() float64 {
	if b.Frequency == "quarterly" {
		return b.ExpectedValue / 4
	}
	return b.ExpectedValue / 12
}

// Actual is the seeded actual of the i-th period (0-based) of ActualPeriods, rounded to cents.
func (b Benefit) Actual(i int) float64 {
	ramp := b.RampFrom
	if b.ActualPeriods > 1 {
		ramp += (b.RampTo - b.RampFrom) * float64(i) / float64(b.ActualPeriods-1)
	}
	wobble := 0.03 * math.Sin(float64(i)*1.7)
	return money.RoundFloat(b.PeriodValue()*(ramp+wobble), 2)
}

// month returns YYYY-MM of the month offset months after first.
func month(first time.Time, offset int) string {
	return first.AddDate(0, offset, 0).Format("2006-01")
}

// date returns the first day of that month as YYYY-MM-DD.
func date(first time.Time, offset int) string {
	return fmt.Sprintf("%s-01", month(first, offset))
}
