package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
)

// Analysis is a widget's analysis with its params read into the operation's
// typed parameters (internal/analytics): exactly one is set.
type Analysis struct {
	ROI         *analytics.ROIParams
	Realization *analytics.RealizationParams
	Trends      *analytics.TrendsParams
	Forecasts   *analytics.ForecastsParams
	Benchmarks  *analytics.BenchmarksParams
}

// ReadWidget reads a widget's params as its analysis's parameters, the one
// reading the analytics endpoint of that name does: when the dashboard is
// saved (an error is the widget's params refused, an *analytics.ParamError)
// and again when it is evaluated (the current month may refuse a range
// accepted before).
func ReadWidget(w Widget) (Analysis, error) {
	v := analytics.Values(w.Params)
	var a Analysis
	var err error
	switch w.Type {
	case ROI:
		a.ROI, err = parsed(analytics.ParseROIParams(v))
	case Realization:
		a.Realization, err = parsed(analytics.ParseRealizationParams(v))
	case Trends:
		a.Trends, err = parsed(analytics.ParseTrendsParams(v))
	case Forecasts:
		a.Forecasts, err = parsed(analytics.ParseForecastsParams(v))
	case Benchmarks:
		a.Benchmarks, err = parsed(analytics.ParseBenchmarksParams(v))
	default:
		err = &analytics.ParamError{Message: fmt.Sprintf("widget type %s is not available", w.Type)}
	}
	return a, err
}

func parsed[P any](p P, err error) (*P, error) {
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Portfolio is the built-in portfolio dashboard's figures.
type Portfolio struct {
	InitiativesByStatus []dbsqlc.PortfolioInitiativesByStatusRow
	Realization         analytics.RealizationReport // the portfolio's
	// AtRiskStakeholders are the stakeholders at risk today (the longest at
	// risk first, at most MaxAtRiskListed, each row with the full count);
	// nil unless asked for.
	AtRiskStakeholders []dbsqlc.PortfolioAtRiskStakeholdersRow
}

// LoadPortfolio reads the portfolio (every initiative not archived) by
// status, its realisation (analytics.AnalyseRealization) and, when
// stakeholders is set (the caller may read people's names), its
// stakeholders at risk.
func LoadPortfolio(ctx context.Context, tx pgx.Tx, scope analytics.Scope, stakeholders bool) (Portfolio, error) {
	var out Portfolio
	var err error
	if out.InitiativesByStatus, err = db.Q.PortfolioInitiativesByStatus(ctx, tx, scope.Tenant); err != nil {
		return out, err
	}
	if out.Realization, err = analytics.AnalyseRealization(ctx, tx, scope, analytics.RealizationParams{}); err != nil {
		return out, err
	}
	if stakeholders {
		out.AtRiskStakeholders, err = db.Q.PortfolioAtRiskStakeholders(ctx, tx, dbsqlc.PortfolioAtRiskStakeholdersParams{TenantID: scope.Tenant,
			Today: scope.Now.UTC().Truncate(24 * time.Hour), Top: MaxAtRiskListed})
		if out.AtRiskStakeholders == nil && err == nil {
			out.AtRiskStakeholders = []dbsqlc.PortfolioAtRiskStakeholdersRow{}
		}
	}
	return out, err
}
