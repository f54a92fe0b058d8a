package dashboard

import (
	"errors"
	"testing"

	"github.com/valuecase/valuecase/internal/analytics"
)

// A widget's params are read into its analysis's typed parameters, exactly
// one per widget, and refused with the analysis's own message.
func TestReadWidget(t *testing.T) {
	a, err := ReadWidget(Widget{Type: Trends, Params: map[string]string{"from": "2025-01", "to": "2025-12", "group_by": "category"}})
	if err != nil || a.Trends == nil || a.Trends.GroupBy != "category" || a.ROI != nil || a.Realization != nil || a.Forecasts != nil || a.Benchmarks != nil {
		t.Errorf("trends widget = %+v, %v", a, err)
	}
	if a, err := ReadWidget(Widget{Type: Forecasts, Params: map[string]string{}}); err != nil || a.Forecasts == nil || a.Forecasts.Horizon != analytics.DefaultForecastHorizon {
		t.Errorf("forecasts widget = %+v, %v", a, err)
	}
	_, err = ReadWidget(Widget{Type: Benchmarks, Params: map[string]string{"metric": "ebitda"}})
	if pe, ok := errors.AsType[*analytics.ParamError](err); !ok || pe.Message == "" {
		t.Errorf("benchmarks widget without a known metric: %v", err)
	}
}
