package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/analytics"
)

// TestAnalysesRunWithoutJIT: the ROI and forecast analyses turn JIT off for
// the rest of their transaction (a large tenant's accuracy scan would compile
// for seconds), and only for it.
func TestAnalysesRunWithoutJIT(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	scope := analytics.Scope{Tenant: tenant, Now: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}
	analyses := map[string]func(tx pgx.Tx) error{
		"roi": func(tx pgx.Tx) error {
			_, err := analytics.AnalyseROI(ctx, tx, scope, analytics.ROIParams{Basis: analytics.DefaultROIBasis})
			return err
		},
		"forecasts": func(tx pgx.Tx) error {
			_, err := analytics.AnalyseForecasts(ctx, tx, scope, analytics.ForecastsParams{GroupBy: "category", Horizon: 3})
			return err
		},
	}
	jit := func(tx pgx.Tx) (string, error) {
		var s string
		return s, tx.QueryRow(ctx, "SELECT current_setting('jit')").Scan(&s)
	}
	for name, analyse := range analyses {
		var during, after string
		err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			if err := analyse(tx); err != nil {
				return err
			}
			var err error
			during, err = jit(tx)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			var err error
			after, err = jit(tx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if during != "off" {
			t.Errorf("%s: jit = %q in the analysis's transaction, want off", name, during)
		}
		if after == "off" {
			t.Errorf("%s: jit stays off after the analysis's transaction (it must be transaction-local)", name)
		}
	}
}
