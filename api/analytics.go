package api

// Analytics (issue 10): ROI analysis of an initiative or the portfolio. The
// rules live in internal/analytics; the rows come through internal/valuation
// as for the initiative detail. Every analytics response has one envelope:
// {"data": ..., "meta": {"base_currency", "as_of", "missing_fx_rates"}}.

import (
	"errors"
	"math"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/valuation"
)

// analyticsRoutes mounts /v1/analytics on the authenticated /v1 group.
func (s *Server) analyticsRoutes(v1 fiber.Router) {
	v1.Get("/analytics/roi", s.require(rbac.AnalyticsRead), s.analyticsROI)
}

// analyticsMetaJSON is the meta of every analytics response.
type analyticsMetaJSON struct {
	BaseCurrency   string              `json:"base_currency"`
	AsOf           string              `json:"as_of"` // the current month (UTC) the figures are computed at
	MissingFXRates []missingFXRateJSON `json:"missing_fx_rates"`
}

// analyticsEnvelope is the body of every analytics response.
type analyticsEnvelope[T any] struct {
	Data T                 `json:"data"`
	Meta analyticsMetaJSON `json:"meta"`
}

type roiScenarioJSON struct {
	ROIPercent *float64 `json:"roi_percent"`
}

type roiJSON struct {
	InitiativeID     *string  `json:"initiative_id"` // null for the portfolio
	Period           string   `json:"period"`
	From             *string  `json:"from"` // the months of the series; null when there is nothing to analyse
	To               *string  `json:"to"`
	InitiativesCount int      `json:"initiatives_count"`
	TotalBenefits    *float64 `json:"total_benefits"`
	TotalCosts       *float64 `json:"total_costs"`
	ROIPercent       *float64 `json:"roi_percent"`
	PaybackMonths    *float64 `json:"payback_months"`
	NPV              *float64 `json:"npv"`
	IRR              *float64 `json:"irr"`
	Confidence       string   `json:"confidence"`
	Coverage         *float64 `json:"coverage"`
	Sensitivity      struct {
		BestCase  roiScenarioJSON `json:"best_case"`
		Expected  roiScenarioJSON `json:"expected"`
		WorstCase roiScenarioJSON `json:"worst_case"`
	} `json:"sensitivity"`
	NullReasons map[string]string `json:"null_reasons"`
}

// roundTo rounds v to the given decimals (only at this edge).
func roundTo(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}

func (s *Server) analyticsROI(c *fiber.Ctx) error {
	q := parseQuery(c)
	idText, hasID := q.str("initiative_id")
	periodText, _ := q.str("period")
	if err := q.done(); err != nil {
		return err
	}
	ctx, t, tenant, now := c.UserContext(), tx(c), principal(c).TenantID, time.Now()
	current := finance.MonthOfTime(now)
	st, err := settings.Load(ctx, t, tenant)
	if err != nil {
		return err
	}
	w, err := analytics.ParseWindow(periodText, current, st.FiscalYearStartMonth)
	if err != nil {
		return InvalidParameter("%s", err.Error())
	}
	var ids []uuid.UUID
	if hasID {
		id, err := uuid.Parse(idText)
		if err != nil {
			return InvalidParameter("query parameter initiative_id must be a UUID")
		}
		if _, err := db.Q.InitiativeGet(ctx, t, dbsqlc.InitiativeGetParams{TenantID: tenant, ID: id}); db.IsNotFound(err) {
			return NotFound("initiative")
		} else if err != nil {
			return err
		}
		ids = []uuid.UUID{id}
	} else if ids, err = db.Q.AnalyticsInitiativeIDs(ctx, t, tenant); err != nil {
		return err
	}
	ins := make([]analytics.Initiative, len(ids))
	for i, id := range ids {
		rows, err := valuation.Load(ctx, t, tenant, id, now)
		if err != nil {
			return err
		}
		ins[i] = analytics.Initiative{Benefits: valuation.MoneyBenefits(rows), Costs: valuation.Costs(rows)}
	}
	fx, err := loadFX(c, st.BaseCurrency)
	if err != nil {
		return err
	}
	r := analytics.ComputeROI(ins, w, current, st.DiscountRate, fx)

	out := roiJSON{Period: w.Label, InitiativesCount: len(ids), Confidence: string(r.Confidence), NullReasons: map[string]string{}}
	if hasID {
		out.InitiativeID = new(ids[0].String())
	}
	if r.Horizon != nil {
		out.From, out.To = new(r.Horizon.Start.String()), new(r.Horizon.End.String())
	}
	figure := func(name string, f finance.Result, decimals int) *float64 {
		v, ok := f.Get()
		if !ok {
			out.NullReasons[name] = string(f.Reason)
			return nil
		}
		return new(roundTo(v, decimals))
	}
	out.TotalBenefits, out.TotalCosts = figure("total_benefits", r.TotalBenefits, 2), figure("total_costs", r.TotalCosts, 2)
	out.ROIPercent, out.PaybackMonths = figure("roi_percent", r.ROIPercent, 2), figure("payback_months", r.PaybackMonths, 2)
	out.NPV, out.IRR = figure("npv", r.NPV, 2), figure("irr", r.IRR, 6)
	out.Sensitivity.Expected.ROIPercent = out.ROIPercent
	out.Sensitivity.BestCase.ROIPercent = figure("sensitivity.best_case.roi_percent", r.Best, 2)
	out.Sensitivity.WorstCase.ROIPercent = figure("sensitivity.worst_case.roi_percent", r.Worst, 2)
	if r.Coverage != nil {
		out.Coverage = new(roundTo(*r.Coverage, 4))
	}
	return c.JSON(analyticsEnvelope[roiJSON]{Data: out, Meta: analyticsMeta(st.BaseCurrency, current, r.Missing)})
}

func analyticsMeta(base string, current finance.Month, missing []finance.MissingRate) analyticsMetaJSON {
	m := analyticsMetaJSON{BaseCurrency: base, AsOf: current.String(), MissingFXRates: make([]missingFXRateJSON, len(missing))}
	for i, r := range missing {
		m.MissingFXRates[i] = missingFXRateJSON{Currency: r.Currency, Period: r.Period.String()}
	}
	return m
}

// loadFX reads every FX rate of the tenant into a converter to base (a
// stored rate for the base itself is ignored: it is 1 by definition).
func loadFX(c *fiber.Ctx, base string) (finance.FX, error) {
	rows, err := db.Q.FxRateList(c.UserContext(), tx(c), dbsqlc.FxRateListParams{TenantID: principal(c).TenantID})
	if err != nil {
		return finance.FX{}, err
	}
	rates := money.NewRates(base)
	for _, row := range rows {
		err := rates.Set(row.Currency, finance.MonthOfTime(row.Period), row.Rate)
		if ve, ok := errors.AsType[*validation.Error](err); ok && ve.Code == validation.CodeNotAllowed {
			continue
		}
		if err != nil {
			return finance.FX{}, err
		}
	}
	return rates.FX(), nil
}
