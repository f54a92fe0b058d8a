package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Freeze builds the document of a case just approved (row, as the approval
// wrote it) from the rows of its initiative at the frozen figures' moment
// and stores it in tx, the approval's transaction: every later export of
// the version renders exactly this (see Store.Snapshot).
//
// Beside the document it freezes the inputs of the figures
// (businesscase.Inputs, key "diff_inputs"), which GET
// /v1/business-cases/{id}/diff compares; a document frozen before they
// were has none (FrozenInputs says so).
func Freeze(ctx context.Context, tx dbsqlc.DBTX, row dbsqlc.BusinessCase, snap businesscase.Snapshot) error {
	c, rows, err := document(ctx, tx, row, snap)
	if err != nil {
		return err
	}
	// An approval with a missing rate is refused (Validate), so these are whole.
	inputs, _, err := businesscase.InputsOf(rows)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(frozen{Case: c, DiffInputs: &inputs})
	if err != nil {
		return err
	}
	return db.Q.BusinessCaseDocumentFreeze(ctx, tx, dbsqlc.BusinessCaseDocumentFreezeParams{TenantID: row.TenantID, BusinessCaseID: row.ID, Document: raw})
}

// frozen is the stored form of a frozen document: the document's own
// fields and the figures' inputs.
type frozen struct {
	*render.Case
	DiffInputs *businesscase.Inputs `json:"diff_inputs,omitempty"`
}

// FrozenInputs are the inputs frozen with the approval of caseID: found is
// false when the case has no frozen document (approved before migration
// 00016, or not approved) or its document was frozen without inputs.
func FrozenInputs(ctx context.Context, tx dbsqlc.DBTX, tenantID, caseID uuid.UUID) (in businesscase.Inputs, found bool, err error) {
	raw, err := db.Q.BusinessCaseDocumentGet(ctx, tx, dbsqlc.BusinessCaseDocumentGetParams{TenantID: tenantID, BusinessCaseID: caseID})
	if db.IsNotFound(err) {
		return in, false, nil
	}
	if err != nil {
		return in, false, err
	}
	var f struct {
		DiffInputs *businesscase.Inputs `json:"diff_inputs"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return in, false, fmt.Errorf("decode frozen document: %w", err)
	}
	if f.DiffInputs == nil {
		return in, false, nil
	}
	return *f.DiffInputs, true, nil
}

// Document builds what an export of row shows with the figures snap,
// reading the initiative's rows at snap.AsOf in tx.
func Document(ctx context.Context, tx dbsqlc.DBTX, row dbsqlc.BusinessCase, snap businesscase.Snapshot) (*render.Case, error) {
	c, _, err := document(ctx, tx, row, snap)
	return c, err
}

// document is Document and the rows it was built from.
func document(ctx context.Context, tx dbsqlc.DBTX, row dbsqlc.BusinessCase, snap businesscase.Snapshot) (*render.Case, valuation.Rows, error) {
	in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: row.TenantID, ID: row.InitiativeID})
	if err != nil {
		return nil, valuation.Rows{}, err
	}
	rows, err := initiativevalue.Load(ctx, tx, row.TenantID, row.InitiativeID, snap.AsOf)
	if err != nil {
		return nil, rows, err
	}
	projects, err := db.Q.ProjectListByInitiative(ctx, tx, dbsqlc.ProjectListByInitiativeParams{TenantID: row.TenantID, InitiativeID: row.InitiativeID})
	if err != nil {
		return nil, rows, err
	}
	c, err := Build(row, in, rows, projects, snap)
	return c, rows, err
}

// frozenDocument is the document frozen at the approval of caseID, if any.
func frozenDocument(ctx context.Context, tx dbsqlc.DBTX, tenantID, caseID uuid.UUID) (*render.Case, bool, error) {
	raw, err := db.Q.BusinessCaseDocumentGet(ctx, tx, dbsqlc.BusinessCaseDocumentGetParams{TenantID: tenantID, BusinessCaseID: caseID})
	if db.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var c render.Case
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, false, fmt.Errorf("decode frozen document: %w", err)
	}
	return &c, true, nil
}

func fig(v *float64, reason *string) render.Figure {
	f := render.Figure{Value: v}
	if reason != nil {
		f.Reason = *reason
	}
	return f
}

// SensitivityAssumptions says how the scenarios differ (analytics' shocks).
var SensitivityAssumptions = "Best case: benefits " + render.FormatChange((analytics.BestCase.BenefitFactor-1)*100) +
	", costs " + render.FormatChange((analytics.BestCase.CostFactor-1)*100) + ". Worst case: benefits " +
	render.FormatChange((analytics.WorstCase.BenefitFactor-1)*100) + ", costs " + render.FormatChange((analytics.WorstCase.CostFactor-1)*100) +
	". Both on the case's expected monthly cash flow over the same horizon."

// Build is the document of row from the stored rows of its initiative and
// the figures snap computed from them, with the content hash of the rest.
// It reads nothing: Document and Snapshot read the rows in the tenant's
// transaction; the sample documents (cmd/render-samples -demo) pass the
// demo seed's rows.
func Build(row dbsqlc.BusinessCase, in dbsqlc.Initiative, rows valuation.Rows, projects []dbsqlc.Project, snap businesscase.Snapshot) (*render.Case, error) {
	var content businesscase.Content
	if err := json.Unmarshal(row.Content, &content); err != nil {
		return nil, fmt.Errorf("decode content: %w", err)
	}
	ask, err := businesscase.ReadDecisionRequest(row.DecisionRequest)
	if err != nil {
		return nil, fmt.Errorf("decode decision request: %w", err)
	}
	current := finance.MonthOfTime(snap.AsOf)
	c := &render.Case{
		Name: row.Name, InitiativeName: in.Name, Version: int(row.Version), Status: row.Status,
		Template: render.Template(row.Template), BaseCurrency: snap.BaseCurrency, DataAsOf: snap.AsOf,
		Figures: render.KeyFigures{
			ROIPercent: fig(snap.ROIPercent, snap.ROIReason), NPV: render.Figure{Value: new(snap.NPV)},
			IRR: fig(snap.IRR, snap.IRRReason), PaybackMonths: fig(snap.PaybackMonths, snap.PaybackReason),
			MIRR: fig(snap.MIRR, snap.MIRRReason), Forecast: basisFigures(snap.Forecast),
			DiscountRate: new(snap.DiscountRate), DefinitionsVersion: snap.DefinitionsVersion,
		},
		Sensitivity: render.Sensitivity{
			ExpectedROIPercent: fig(snap.ROIPercent, snap.ROIReason),
			Assumptions:        SensitivityAssumptions,
		},
		BenefitsPeriod: "to " + render.FormatDate(current.Add(1).FirstDay().AddDate(0, 0, -1)),
	}
	if row.Decision != nil && *row.Decision == string(businesscase.Approved) && row.ApprovalLevel != nil {
		a := &render.Approval{Level: *row.ApprovalLevel}
		if row.DecidedBy != nil {
			a.By = *row.DecidedBy
		}
		if row.DecidedAt != nil {
			a.At = *row.DecidedAt
		}
		if row.DecisionNotes != nil {
			a.Notes = *row.DecisionNotes
		}
		c.Approval = a
	}
	for _, id := range row.Sections {
		p := content[businesscase.Section(id)]
		c.Sections = append(c.Sections, render.Section{ID: id, Title: p.Title, Body: p.Body})
	}
	fx, err := valuation.FX(rows.Settings.BaseCurrency, rows.Rates)
	if err != nil {
		return nil, err
	}
	c.Benefits, c.BenefitsTotal = benefitRows(rows, fx, current)
	c.Costs = costRows(rows, fx, snap)
	cf, ok := caseCashFlow(rows, fx, snap)
	if ok {
		c.Figures.HorizonMonths = len(cf.Benefits)
		c.CashFlow = cashFlowMonths(cf, snap.PaybackMonths, snap.BaseCurrency)
		c.Periods = quarters(cf, valuation.MoneyBenefits(rows), fx, current, snap.BaseCurrency)
		best, worst := cf.Shocked(analytics.BestCase), cf.Shocked(analytics.WorstCase)
		c.Sensitivity.BestROIPercent = scenario(best)
		c.Sensitivity.WorstROIPercent = scenario(worst)
	} else {
		c.Sensitivity.BestROIPercent, c.Sensitivity.WorstROIPercent = fig(nil, snap.ROIReason), fig(nil, snap.ROIReason)
	}
	// Quadrant and sentiment as the stakeholder resource reports them.
	detail, err := initiativevalue.Compute(rows, snap.AsOf)
	if err != nil {
		return nil, err
	}
	for _, st := range detail.Stakeholders {
		s := render.Stakeholder{Name: st.Name, Influence: string(st.Influence), Interest: string(st.Interest), Quadrant: st.Quadrant}
		if st.Role != nil {
			s.Role = *st.Role
		}
		if st.Sentiment != nil {
			s.Sentiment = string(*st.Sentiment)
		}
		c.Stakeholders = append(c.Stakeholders, s)
	}
	for _, p := range projects {
		c.Projects = append(c.Projects, render.Project{Name: p.Name, Status: p.Status})
	}
	if ask != nil {
		c.Decision = &render.DecisionRequest{Ask: ask.Ask, Currency: ask.Currency, Recommendation: ask.Recommendation}
		if ask.Amount != nil {
			c.Decision.Amount = new(money.Amount(*ask.Amount, ask.Currency))
		}
		if ask.DecideBy != nil {
			c.Decision.DecideBy = *ask.DecideBy
		}
	}
	c.Calculations = calculations(c, rows, snap, cf, ok)
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	c.ContentHash = "sha256:" + hex.EncodeToString(sum[:])
	return c, nil
}

// caseCashFlow is the expected monthly cash flow the figures were computed
// from (businesscase.Figures: the default horizon, expected basis).
func caseCashFlow(rows valuation.Rows, fx finance.FX, snap businesscase.Snapshot) (finance.CashFlows, bool) {
	if snap.HorizonStart == nil || snap.HorizonEnd == nil {
		return finance.CashFlows{}, false
	}
	start, errS := finance.ParseMonth(*snap.HorizonStart)
	end, errE := finance.ParseMonth(*snap.HorizonEnd)
	if errS != nil || errE != nil {
		return finance.CashFlows{}, false
	}
	cf, _ := finance.BuildCashFlows(finance.Horizon{Start: start, End: end}, valuation.MoneyBenefits(rows), valuation.Costs(rows), finance.BasisExpected, fx)
	return cf, true
}

// scenario is the ROI of a shocked series, rounded as the figures are.
func scenario(cf finance.CashFlows) render.Figure {
	r := finance.ROIPercent(cf.TotalBenefits(), cf.TotalCosts())
	if v, ok := r.Get(); ok {
		return render.Figure{Value: new(money.Percent(v))}
	}
	return render.Figure{Reason: string(r.Reason)}
}

// basisFigures are a snapshot's figures on one basis for the document; nil
// for a snapshot without them (definitions version 1).
func basisFigures(b *businesscase.BasisFigures) *render.BasisFigures {
	if b == nil {
		return nil
	}
	return &render.BasisFigures{
		ROIPercent: fig(b.ROIPercent, b.ROIReason), NPV: render.Figure{Value: new(b.NPV)},
		IRR: fig(b.IRR, b.IRRReason), MIRR: fig(b.MIRR, b.MIRRReason), PaybackMonths: fig(b.PaybackMonths, b.PaybackReason),
	}
}

// cashFlowMonths is the monthly table and the cumulative chart's series;
// the payback month is the month the payback falls in (the break-even
// month: month ⌈payback⌉, the first when payback is 0), only when payback
// exists.
//
// The table foots: each month shows the change of the rounded running
// totals (benefits and costs to date, rounded once to the currency's minor
// units), so the shown months add to the shown total, the net is the shown
// benefits less the shown costs and the cumulative the running sum of the
// shown net; a rounding remainder lands in the month it accrues.
func cashFlowMonths(cf finance.CashFlows, payback *float64, base string) render.CashFlow {
	var out render.CashFlow
	places := money.Places(base)
	var sumB, sumC, shownB, shownC decimal.Decimal
	for i := range cf.Benefits {
		sumB, sumC = sumB.Add(cf.Benefits[i]), sumC.Add(cf.Costs[i])
		b, c := money.Round(sumB, places).Sub(shownB), money.Round(sumC, places).Sub(shownC)
		shownB, shownC = shownB.Add(b), shownC.Add(c)
		out.Months = append(out.Months, render.CashFlowMonth{
			Label: render.FormatMonth(cf.Start.Add(i).FirstDay()), Benefits: money.Stored(b), Costs: money.Stored(c),
			Net: money.Stored(b.Sub(c)), Cumulative: money.Stored(shownB.Sub(shownC)),
		})
	}
	if payback != nil && len(out.Months) > 0 {
		out.PaybackMonth = new(min(max(int(math.Ceil(*payback))-1, 0), len(out.Months)-1))
	}
	return out
}

// quarters is expected vs actual benefit per calendar quarter of the
// horizon: expected from the case's expected series; actual the sum of the
// actuals recorded in the quarter (converted at each period's rate), nil
// when none is recorded there yet or the quarter starts after the current
// month (a gap in the chart, never a zero).
func quarters(cf finance.CashFlows, benefits []finance.Benefit, fx finance.FX, current finance.Month, base string) []render.PeriodValue {
	actual := map[finance.Month]decimal.Decimal{}
	for _, b := range benefits {
		for _, p := range slices.Sorted(maps.Keys(b.Actuals)) {
			if p > current {
				continue
			}
			if v, ok := fx.Convert(b.Currency, p, b.Actuals[p]); ok {
				actual[p.QuarterStart()] = actual[p.QuarterStart()].Add(v)
			}
		}
	}
	var out []render.PeriodValue
	var expected []decimal.Decimal
	for i := range cf.Benefits {
		m := cf.Start.Add(i)
		if i == 0 || m.QuarterStart() == m {
			q := m.QuarterStart()
			out = append(out, render.PeriodValue{Label: fmt.Sprintf("Q%d %d", (int(q.MonthOfYear())-1)/3+1, q.Year())})
			expected = append(expected, decimal.Zero)
			if v, ok := actual[q]; ok {
				out[len(out)-1].Actual = new(money.Amount(v, base))
			}
		}
		expected[len(expected)-1] = expected[len(expected)-1].Add(cf.Benefits[i])
	}
	for i, e := range expected {
		out[i].Expected = money.Amount(e, base)
	}
	return out
}

// calculations is the appendix: each figure's formula with its inputs and
// result, then every input row (benefits, costs, rates) behind them.
func calculations(c *render.Case, rows valuation.Rows, snap businesscase.Snapshot, cf finance.CashFlows, ok bool) []render.Calculation {
	cur := snap.BaseCurrency
	amount := func(v float64) string { return render.FormatMoney(v, cur) }
	exact := func(v decimal.Decimal) string { return render.FormatMoney(money.Amount(v, cur), cur) }
	opt := func(f render.Figure, format func(float64) string) string {
		if f.Value == nil {
			return "not defined: " + strings.ReplaceAll(f.Reason, "_", " ")
		}
		return format(*f.Value)
	}
	pct := func(v float64) string { return render.FormatPercent(v) }
	horizon := "none (no money benefits or costs)"
	if ok {
		horizon = fmt.Sprintf("%s to %s (%d months)", *snap.HorizonStart, *snap.HorizonEnd, len(cf.Benefits))
	}
	var out []render.Calculation
	out = append(out,
		render.Calculation{
			Name: "Monthly cash flow", Formula: "CFₜ = Σ expected benefits in month t − Σ cost charges in month t, in " + cur + " at month t's rate",
			Inputs: []render.CalcInput{
				{Name: "Horizon", Value: horizon},
				{Name: "Basis", Value: "plan (expected values); the forecast basis is below"},
				{Name: "Money benefits", Value: fmt.Sprint(len(valuation.MoneyBenefits(rows)))},
				{Name: "Cost lines", Value: fmt.Sprint(len(rows.Costs))},
			},
			Result: "total benefits " + amount(snap.TotalBenefits) + ", total costs " + amount(snap.TotalCosts),
		},
		render.Calculation{
			Name: "Return on investment", Formula: "ROI = (B − C) ÷ C × 100",
			Inputs: []render.CalcInput{{Name: "B, total benefits", Value: amount(snap.TotalBenefits)}, {Name: "C, total costs", Value: amount(snap.TotalCosts)}},
			Result: opt(c.Figures.ROIPercent, pct),
		},
		render.Calculation{
			Name: "Net present value", Formula: "NPV = Σₜ CFₜ ÷ (1 + rₘ)^t, t = 0 for the first month; rₘ = (1 + r)^(1/12) − 1",
			Inputs: []render.CalcInput{{Name: "r, annual discount rate", Value: pct(snap.DiscountRate * 100)},
				{Name: "rₘ, monthly rate", Value: fmt.Sprintf("%.6f", finance.MonthlyRate(snap.DiscountRate))}, {Name: "Horizon", Value: horizon}},
			Result: amount(snap.NPV),
		},
		render.Calculation{
			Name: "Internal rate of return", Formula: "IRR = (1 + x)^12 − 1, where x solves Σₜ CFₜ ÷ (1 + x)^t = 0; not defined when several x do",
			Inputs: []render.CalcInput{{Name: "Monthly cash flows", Value: horizon}, {Name: "Roots found (annual)", Value: roots(snap.IRRRoots)}},
			Result: opt(c.Figures.IRR, func(v float64) string { return pct(v * 100) }),
		},
		render.Calculation{
			Name: "Modified internal rate of return", Formula: "MIRR = (FV of gains at r ÷ −PV of costs at r)^(12 ÷ n) − 1, n = months − 1 (spreadsheet MIRR, annualised)",
			Inputs: []render.CalcInput{{Name: "r, finance and reinvestment rate", Value: pct(snap.DiscountRate * 100)}, {Name: "Monthly cash flows", Value: horizon}},
			Result: opt(c.Figures.MIRR, func(v float64) string { return pct(v * 100) }),
		},
	)
	payback := render.Calculation{
		Name: "Payback", Formula: "j = last month with cumulative Cⱼ < 0; payback = j + (−Cⱼ ÷ CFⱼ₊₁); not reached when the series ends below 0",
		Result: opt(c.Figures.PaybackMonths, render.FormatMonths),
	}
	if pm := c.CashFlow.PaybackMonth; pm != nil && *pm > 0 {
		m := c.CashFlow.Months[*pm]
		payback.Inputs = []render.CalcInput{{Name: "j", Value: fmt.Sprintf("%d (%s)", *pm, c.CashFlow.Months[*pm-1].Label)},
			{Name: "Cⱼ", Value: amount(c.CashFlow.Months[*pm-1].Cumulative)}, {Name: "CFⱼ₊₁", Value: amount(m.Net)}}
	}
	out = append(out, payback)
	if f := c.Figures.Forecast; f != nil {
		out = append(out, render.Calculation{
			Name:    "Forecast basis",
			Formula: "the same figures on the monthly cash flow with each benefit's actual where recorded through the latest actual, its expected value elsewhere",
			Inputs: []render.CalcInput{{Name: "ROI", Value: opt(f.ROIPercent, pct)}, {Name: "NPV", Value: opt(f.NPV, amount)},
				{Name: "IRR", Value: opt(f.IRR, func(v float64) string { return pct(v * 100) })},
				{Name: "MIRR", Value: opt(f.MIRR, func(v float64) string { return pct(v * 100) })}},
			Result: "payback " + opt(f.PaybackMonths, render.FormatMonths),
		})
	}
	shock := func(name string, s finance.Shock, f render.Figure) render.Calculation {
		k := render.Calculation{
			Name: name, Formula: "ROI = (B × fb − C × fc) ÷ (C × fc) × 100",
			Inputs: []render.CalcInput{{Name: "fb, benefit factor", Value: fmt.Sprintf("%.2f", s.BenefitFactor)},
				{Name: "fc, cost factor", Value: fmt.Sprintf("%.2f", s.CostFactor)}},
			Result: opt(f, pct),
		}
		if ok {
			sh := cf.Shocked(s)
			k.Inputs = append(k.Inputs, render.CalcInput{Name: "B × fb", Value: exact(sh.TotalBenefits())}, render.CalcInput{Name: "C × fc", Value: exact(sh.TotalCosts())})
		}
		return k
	}
	out = append(out, shock("Sensitivity, best case", analytics.BestCase, c.Sensitivity.BestROIPercent),
		shock("Sensitivity, worst case", analytics.WorstCase, c.Sensitivity.WorstROIPercent))
	toDate := func(v *float64) string {
		if v == nil {
			return "not defined: missing exchange rates"
		}
		return amount(*v)
	}
	out = append(out, render.Calculation{
		Name: "Value to date", Formula: "expected: Σ expected values of the periods through the current month; realised: Σ actuals recorded for those periods",
		Inputs: []render.CalcInput{{Name: "Current month", Value: finance.MonthOfTime(snap.AsOf).String()}},
		Result: "expected " + toDate(snap.ExpectedValueToDate) + ", realised " + toDate(snap.RealizedValueToDate),
	})
	if snap.DefinitionsVersion >= render.LikeForLikeVersion {
		out = append(out, render.Calculation{
			Name: "Variance to date", Formula: "like for like: variance = Σ actuals − Σ expected of the periods that have an actual; variance % = variance ÷ that expected × 100; " +
				"the periods without an actual are shown apart (not yet measured), never as a shortfall",
			Inputs: []render.CalcInput{{Name: "Expected, measured periods", Value: toDate(snap.ExpectedMeasuredToDate)},
				{Name: "Expected, not yet measured", Value: toDate(snap.ExpectedUnmeasuredToDate)}, {Name: "Actual", Value: toDate(snap.RealizedValueToDate)}},
			Result: toDate(snap.Variance) + " (" + opt(render.Figure{Value: snap.VariancePercent, Reason: "nothing_measured_yet"}, pct) + ")",
		})
	}

	// The inputs: every benefit, cost line and rate the figures read.
	plans := valuation.PlansByBenefit(rows.Plans)
	actuals := map[uuid.UUID]int{}
	for _, a := range rows.Actuals {
		actuals[a.BenefitID]++
	}
	for _, b := range rows.Benefits {
		in := []render.CalcInput{
			{Name: "Expected value per year", Value: benefitAmount(b)},
			{Name: "Measured", Value: render.Label(b.MeasurementFrequency)},
			{Name: "Period", Value: render.FormatMonth(b.ExpectedStartDate) + " to " + endText(b.ExpectedEndDate)},
			{Name: "Status", Value: render.Label(b.Status)},
			{Name: "Plan entries", Value: fmt.Sprint(len(plans[b.ID]))},
			{Name: "Actuals recorded", Value: fmt.Sprint(actuals[b.ID])},
		}
		out = append(out, render.Calculation{Name: "Input: benefit " + b.Name, Formula: "expected per period = value per year ÷ periods per year, or the plan entry", Inputs: in, Result: render.Label(b.Category)})
	}
	for _, x := range rows.Costs {
		in := []render.CalcInput{
			{Name: "Amount per charge", Value: render.FormatMoney(money.Amount(x.Amount, x.Currency), x.Currency)},
			{Name: "Recurrence", Value: render.Label(x.Recurrence)},
		}
		if finance.Recurrence(x.Recurrence) == finance.Once {
			in = append(in, render.CalcInput{Name: "Charged in", Value: render.FormatMonth(x.Period)})
		} else {
			in = append(in, render.CalcInput{Name: "From", Value: render.FormatMonth(x.Period)}, render.CalcInput{Name: "To", Value: endText(x.EndPeriod)})
		}
		out = append(out, render.Calculation{Name: "Input: cost " + x.Name, Formula: "a charge of the amount in each month of the recurrence", Inputs: in, Result: render.Label(x.Category)})
	}
	if used := usedRates(rows, snap); len(used) > 0 {
		k := render.Calculation{Name: "Input: exchange rates", Formula: "1 unit of currency = rate × " + cur + " in the month"}
		for _, r := range used {
			k.Inputs = append(k.Inputs, render.CalcInput{Name: r.Currency + " " + render.FormatMonth(r.Period), Value: r.Rate.String()})
		}
		k.Result = fmt.Sprintf("%d rates", len(k.Inputs))
		out = append(out, k)
	}
	return out
}

// usedRates are the rates the figures read: of the currencies a benefit or
// cost of the case is in, for the months of the horizon and those with an
// actual. The tenant's table holds every rate of every currency; an
// appendix lists the inputs, not the table.
func usedRates(rows valuation.Rows, snap businesscase.Snapshot) []dbsqlc.FxRate {
	base := rows.Settings.BaseCurrency
	currencies := map[string]bool{}
	benefitCurrency := map[uuid.UUID]string{}
	for _, b := range rows.Benefits {
		if b.Currency != nil && *b.Currency != base {
			currencies[*b.Currency] = true
			benefitCurrency[b.ID] = *b.Currency
		}
	}
	for _, x := range rows.Costs {
		if x.Currency != base {
			currencies[x.Currency] = true
		}
	}
	months := map[string]bool{} // "currency YYYY-MM" outside the horizon read by an actual
	for _, a := range rows.Actuals {
		if c, ok := benefitCurrency[a.BenefitID]; ok {
			months[c+" "+a.Period.Format("2006-01")] = true
		}
	}
	var out []dbsqlc.FxRate
	for _, r := range rows.Rates {
		if !currencies[r.Currency] {
			continue
		}
		m := r.Period.Format("2006-01")
		inHorizon := snap.HorizonStart != nil && snap.HorizonEnd != nil && m >= *snap.HorizonStart && m <= *snap.HorizonEnd
		if inHorizon || months[r.Currency+" "+m] {
			out = append(out, r)
		}
	}
	return out
}

// roots lists IRR roots (annual fractions) as percentages.
func roots(rs []float64) string {
	if len(rs) == 0 {
		return "none in −99.99 % … +1,000 % a month"
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = render.FormatPercent(r * 100)
	}
	return strings.Join(out, ", ")
}

func benefitAmount(b dbsqlc.Benefit) string {
	if b.Currency != nil {
		return render.FormatMoney(money.Amount(b.ExpectedValue, *b.Currency), *b.Currency)
	}
	return fmt.Sprintf("%s %s", b.ExpectedValue.String(), b.Unit)
}

func endText(t *time.Time) string {
	if t == nil {
		return "no end date (the horizon's end)"
	}
	return render.FormatMonth(*t)
}
