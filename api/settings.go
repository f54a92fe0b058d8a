package api

// Tenant settings and FX rates: the base currency, discount rate
// and fiscal year every money figure depends on. Rules, and the clearing of
// FX rates when the base currency changes, live in internal/settings.

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/wire"
)

const maxFxRatePageSize = 500

// settingsRoutes mounts the tenant settings on the authenticated /v1 group.
func (s *Server) settingsRoutes(v1 fiber.Router) {
	v1.Get("/settings", s.require(rbac.AdminConfig), s.getSettings)
	v1.Put("/settings", s.require(rbac.AdminConfig), s.replaceSettings)
	v1.Get("/settings/fx-rates", s.require(rbac.AdminConfig), s.listFxRates)
	v1.Put("/settings/fx-rates", s.require(rbac.AdminConfig), s.putFxRates)
}

type settingsJSON struct {
	BaseCurrency         string  `json:"base_currency"`
	DiscountRate         float64 `json:"discount_rate"`
	FiscalYearStartMonth int     `json:"fiscal_year_start_month"`
	UpdatedAt            *string `json:"updated_at"` // null while the defaults apply
}

func toSettingsJSON(r settings.Record) settingsJSON {
	return settingsJSON{BaseCurrency: r.BaseCurrency, DiscountRate: r.DiscountRate, FiscalYearStartMonth: r.FiscalYearStartMonth, UpdatedAt: optTimestamp(r.UpdatedAt)}
}

// settingsVersion is the version of the tenant's settings: never saved (the defaults) is version 0.
func settingsVersion(r settings.Record) time.Time {
	if r.UpdatedAt == nil {
		return time.Time{}
	}
	return *r.UpdatedAt
}

func (s *Server) getSettings(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	r, err := settings.LoadRecord(c.UserContext(), requestTx(c), principal(c).TenantID)
	if err != nil {
		return err
	}
	return sendRecord(c, settingsVersion(r), toSettingsJSON(r))
}

// replaceSettings is PUT: every field absent or null takes its default.
func (s *Server) replaceSettings(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	next := settings.Defaults
	if v := b.Text("base_currency", false, maxShortTextLen); v != nil {
		next.BaseCurrency = *v
	}
	if v := b.Number("discount_rate", false); v != nil {
		next.DiscountRate = *v
	}
	if v := b.Integer("fiscal_year_start_month", math.MinInt32, math.MaxInt32); v != nil {
		next.FiscalYearStartMonth = *v
	}
	b.Ignore("updated_at", "fx_rates_cleared")
	if err := b.Done(); err != nil {
		return err
	}
	ctx, tenant := c.UserContext(), principal(c).TenantID
	if cur, err := settings.LoadForUpdate(ctx, requestTx(c), tenant); err != nil { // If-Match holds to the write
		return err
	} else if err := checkIfMatch(c, settingsVersion(cur)); err != nil {
		return err
	}
	saved, cleared, err := settings.Save(ctx, requestTx(c), tenant, next)
	if err != nil {
		return err
	}
	return sendRecord(c, settingsVersion(saved), struct {
		settingsJSON
		FxRatesCleared bool `json:"fx_rates_cleared"`
	}{toSettingsJSON(saved), cleared})
}

type fxRateJSON struct {
	Currency  string  `json:"currency"`
	Period    string  `json:"period"`
	Rate      float64 `json:"rate"`
	UpdatedAt string  `json:"updated_at"`
}

func (s *Server) listFxRates(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxFxRatePageSize)
	p := dbsqlc.FxRateListParams{TenantID: principal(c).TenantID}
	if v, ok := q.str("currency"); ok {
		if money.CheckCode("currency", v) != nil {
			return InvalidParameter("query parameter currency must be an active ISO 4217 code in upper case")
		}
		p.Currency = &v
	}
	var from, to *finance.Month
	for _, bound := range []struct {
		name string
		dst  **finance.Month
	}{{"from", &from}, {"to", &to}} {
		if v, ok := q.str(bound.name); ok {
			m, err := finance.CheckInputPeriod(bound.name, v)
			if err != nil {
				return InvalidParameter("query parameter %s must be a period YYYY-MM from %s to %s", bound.name, finance.InputPeriods.Start, finance.InputPeriods.End)
			}
			*bound.dst = &m
		}
	}
	if err := q.done(); err != nil {
		return err
	}
	if from != nil && to != nil && *to < *from {
		return InvalidParameter("query parameter to (%s) is before from (%s)", *to, *from)
	}
	p.FromPeriod, p.ToPeriod = finance.FirstDayOf(from), finance.FirstDayOf(to)
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.FxRatePage(ctx, tx, dbsqlc.FxRatePageParams{
		TenantID: p.TenantID, Currency: p.Currency, FromPeriod: p.FromPeriod, ToPeriod: p.ToPeriod,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.FxRatePageRow) int64 { return r.Total },
		func(r dbsqlc.FxRatePageRow) fxRateJSON {
			return fxRateJSON{Currency: r.FxRate.Currency, Period: finance.MonthOfTime(r.FxRate.Period).String(), Rate: money.Stored(r.FxRate.Rate), UpdatedAt: wire.Timestamp(r.FxRate.UpdatedAt)}
		},
		func() (int64, error) { return db.Q.FxRateCount(ctx, tx, dbsqlc.FxRateCountParams(p)) })
}

// putFxRates upserts the rates sent; rates not sent stay as they are.
func (s *Server) putFxRates(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	in := readRateEntries(b)
	if err := b.Done(); err != nil {
		return err
	}
	base, saved, err := settings.SaveRates(c.UserContext(), requestTx(c), principal(c).TenantID, in)
	if err != nil {
		return err
	}
	return c.JSON(struct {
		BaseCurrency string `json:"base_currency"`
		Upserted     int    `json:"upserted"`
	}{base, len(saved)})
}

// readRateEntries reads `rates`, an array of {currency, period, rate}
// objects, reporting type errors and unknown members as rates[i].<field>.
// Values are internal/settings' to check.
func readRateEntries(b *input.Object) []settings.RateInput {
	if !b.Has("rates") || b.IsNull("rates") {
		b.Fail("rates", "required", "is required")
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.Raw("rates"), &raw); err != nil {
		b.Fail("rates", "invalid_type", "must be an array of {currency, period, rate} objects")
		return nil
	}
	out := make([]settings.RateInput, len(raw))
	for i, r := range raw {
		prefix := fmt.Sprintf("rates[%d]", i)
		e, ok := input.Decode(r)
		if !ok {
			b.Fail(prefix, "invalid_type", "must be an object {currency, period, rate}")
			continue
		}
		currency, period := e.Text("currency", true, maxShortTextLen), e.Text("period", true, maxShortTextLen)
		rate := e.Number("rate", true)
		_ = e.Done() // its failures are copied below under the entry's name
		b.Adopt(prefix+".", e)
		if currency != nil && period != nil && rate != nil {
			out[i] = settings.RateInput{Currency: *currency, Period: *period, Rate: *rate}
		}
	}
	return out
}
