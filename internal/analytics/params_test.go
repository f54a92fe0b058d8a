package analytics

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/finance"
)

// One reading of an analysis's parameters for a request's query and a
// widget's params: what each Parse*Params takes, its defaults, and the
// message of what it refuses (the API's 400 and a widget's 422 say it).
func TestParseParams(t *testing.T) {
	id := uuid.New()
	roi, err := ParseROIParams(Values{"initiative_id": id.String(), "period": "ytd", "basis": "plan"})
	if err != nil || *roi.InitiativeID != id || roi.Period != "ytd" || roi.Basis != finance.BasisExpected {
		t.Errorf("roi = %+v, %v", roi, err)
	}
	if roi, err := ParseROIParams(Values{}); err != nil || roi.InitiativeID != nil || roi.Basis != DefaultROIBasis {
		t.Errorf("roi defaults = %+v, %v", roi, err)
	}
	if f, err := ParseForecastsParams(Values{}); err != nil || f.GroupBy != "initiative" || f.Horizon != DefaultForecastHorizon {
		t.Errorf("forecasts defaults = %+v, %v", f, err)
	}
	if b, err := ParseBenchmarksParams(Values{"metric": "roi_percent", "industry": "  Retail "}); err != nil || b.Industry != "retail" {
		t.Errorf("benchmarks = %+v, %v", b, err)
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown name", second(ParseROIParams(Values{"colour": "red"})), "unknown query parameter: this endpoint takes basis, initiative_id, period"},
		{"bad id", second(ParseRealizationParams(Values{"initiative_id": "x"})), "query parameter initiative_id must be a UUID"},
		{"bad basis", second(ParseROIParams(Values{"basis": "hope"})), "query parameter basis must be plan or forecast"},
		{"bad grouping", second(ParseTrendsParams(Values{"group_by": "owner"})), "query parameter group_by must be one of category, initiative"},
		{"horizon", second(ParseForecastsParams(Values{"horizon": "25"})), "query parameter horizon must be an integer from 1 to 24"},
		{"no metric", second(ParseBenchmarksParams(Values{})), "query parameter metric is required, one of " + joinMetrics()},
	} {
		pe, ok := errors.AsType[*ParamError](c.err)
		if !ok || pe.Message != c.want {
			t.Errorf("%s: %v, want a ParamError %q", c.name, c.err, c.want)
		}
	}
}

func second[P any](_ P, err error) error { return err }

func joinMetrics() string {
	s := ""
	for i, m := range Metrics {
		if i > 0 {
			s += ", "
		}
		s += m
	}
	return s
}
