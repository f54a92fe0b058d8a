package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Stored is what Seed leaves in the database for one business case of the portfolio, built in
// memory instead (for the sample documents, `make samples`): the case row as the approval wrote
// it, its initiative, the initiative's value-model rows and projects. Amounts, periods, sentiments
// and FX rates are exactly the seed's; ids are derived from the names, and the approval happens at
// now, so the result depends only on p and now.
type Stored struct {
	Case       dbsqlc.BusinessCase
	Initiative dbsqlc.Initiative
	Rows       valuation.Rows
	Projects   []dbsqlc.Project
}

// StoredCase is the index-th business case of the initiative named initiative, as Seed at now
// would store it (approved when the portfolio approves it).
func (p Portfolio) StoredCase(initiative string, index int, now time.Time) (Stored, error) {
	i := slices.IndexFunc(p.Initiatives, func(in Initiative) bool { return in.Name == initiative })
	if i < 0 || index < 0 || index >= len(p.Initiatives[i].BusinessCases) {
		return Stored{}, fmt.Errorf("demo: no business case %d of %q", index, initiative)
	}
	in, bc := p.Initiatives[i], p.Initiatives[i].BusinessCases[index]
	now = now.UTC()
	back := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -HistoryMonths, 0)
	first := time.Date(back.Year(), back.Month()-(back.Month()-1)%3, 1, 0, 0, 0, 0, time.UTC)
	tenant := id("tenant")
	at := func(offset int) time.Time { return first.AddDate(0, offset, 0) }

	var s Stored
	s.Initiative = dbsqlc.Initiative{TenantID: tenant, ID: id(in.Name), Name: in.Name, Status: "draft"}
	if n := len(in.Path); n > 0 {
		s.Initiative.Status = in.Path[n-1]
	}
	s.Rows.Settings = settings.Defaults
	for cur, rate := range p.FX {
		for m := range 72 {
			s.Rows.Rates = append(s.Rows.Rates, dbsqlc.FxRate{TenantID: tenant, Currency: cur, Period: at(m), Rate: decimal.NewFromFloat(rate)})
		}
	}
	slices.SortFunc(s.Rows.Rates, func(a, b dbsqlc.FxRate) int {
		if a.Currency != b.Currency {
			return map[bool]int{true: -1, false: 1}[a.Currency < b.Currency]
		}
		return a.Period.Compare(b.Period)
	})
	for _, b := range in.Benefits {
		row := dbsqlc.Benefit{TenantID: tenant, ID: id(in.Name + "/" + b.Name), InitiativeID: s.Initiative.ID, Name: b.Name, Category: b.Category,
			Unit: b.Unit, ExpectedValue: decimal.NewFromFloat(b.ExpectedValue), MeasurementFrequency: b.Frequency, ExpectedStartDate: at(b.StartOffset), Status: "active"}
		if b.Currency != "" {
			row.Currency = new(b.Currency)
		}
		s.Rows.Benefits = append(s.Rows.Benefits, row)
		step := 1
		if b.Frequency == "quarterly" {
			step = 3
		}
		for k := range b.ActualPeriods {
			s.Rows.Actuals = append(s.Rows.Actuals, dbsqlc.BenefitActual{TenantID: tenant, BenefitID: row.ID, Period: at(b.StartOffset + k*step), Value: decimal.NewFromFloat(b.Actual(k))})
		}
	}
	for _, c := range in.Costs {
		row := dbsqlc.InitiativeCost{TenantID: tenant, ID: id(in.Name + "/" + c.Name), InitiativeID: s.Initiative.ID, Name: c.Name, Category: c.Category,
			Amount: decimal.NewFromFloat(c.Amount), Currency: c.Currency, Recurrence: c.Recurrence, Period: at(c.StartOffset)}
		if c.Months > 0 {
			row.EndPeriod = new(at(c.StartOffset + c.Months - 1))
		}
		s.Rows.Costs = append(s.Rows.Costs, row)
	}
	for _, st := range in.Stakeholders {
		row := dbsqlc.Stakeholder{TenantID: tenant, ID: id(in.Name + "/" + st.Name), InitiativeID: s.Initiative.ID, Name: st.Name,
			Influence: st.Influence, Interest: st.Interest, EngagementCount: int32(len(st.Engagements))}
		if st.Role != "" {
			row.Role = new(st.Role)
		}
		// As stored: the latest engagement's date and the sentiments of the latest three, newest first.
		es := slices.Clone(st.Engagements)
		slices.SortStableFunc(es, func(a, b Engagement) int { return a.DaysAgo - b.DaysAgo })
		for k, e := range es {
			if k == 0 {
				row.LastEngagementOn = new(time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -e.DaysAgo))
			}
			if k < 3 {
				row.RecentSentiments = append(row.RecentSentiments, e.Sentiment)
			}
		}
		s.Rows.Stakeholders = append(s.Rows.Stakeholders, row)
	}

	content := map[string]any{}
	s.Case = dbsqlc.BusinessCase{TenantID: tenant, ID: id(in.Name + "/case/" + bc.Name), InitiativeID: s.Initiative.ID, Name: bc.Name,
		Template: bc.Template, Version: 1, Status: "draft"}
	for _, sec := range bc.Sections {
		s.Case.Sections = append(s.Case.Sections, sec.ID)
		content[sec.ID] = map[string]any{"title": sec.Title, "body": sec.Body}
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return Stored{}, err
	}
	s.Case.Content = raw
	if bc.Decision != nil {
		if s.Case.DecisionRequest, err = json.Marshal(bc.Decision.Request(now)); err != nil {
			return Stored{}, err
		}
	}
	if bc.Approve != "" {
		s.Case.Status, s.Case.Decision, s.Case.ApprovalLevel = "approved", new("approved"), new(bc.Approve)
		s.Case.DecidedBy, s.Case.DecidedAt = new("demo"), new(now)
		if bc.Notes != "" {
			s.Case.DecisionNotes = new(bc.Notes)
		}
	}
	return s, nil
}

// id is a fixed id for a name of the demo portfolio.
func id(name string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://valuecase.example/demo/"+name))
}
