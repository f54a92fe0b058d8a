package analytics

import (
	"strings"
	"testing"

	"github.com/valuecase/valuecase/internal/finance"
)

func TestNormalizeAndDefaultIndustry(t *testing.T) {
	if got, err := NormalizeIndustry("  Retail "); err != nil || got != "retail" {
		t.Errorf("%q %v", got, err)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("x", 101), "re\ttail"} {
		if _, err := NormalizeIndustry(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got, ok := DefaultIndustry([]string{"retail", "banking", "banking", "retail", "energy"}); !ok || got != "banking" { // tie: alphabetical
		t.Errorf("%q %v", got, ok)
	}
	if got, ok := DefaultIndustry([]string{"retail", "banking", "retail"}); !ok || got != "retail" {
		t.Errorf("%q %v", got, ok)
	}
	if _, ok := DefaultIndustry(nil); ok {
		t.Error("no industry")
	}
}

// The figures of the golden P+Q (roi_test.go): NPV 13,056.93 over 2 initiatives;
// realisation like for like 8,980 / 10,200 (the measured periods' expectation).
func TestBenchmarkFigures(t *testing.T) {
	p, q, fx := goldenPortfolio()
	roi := ComputeROI([]Initiative{p, q}, Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0.10, finance.BasisActual, fx)
	f := BenchmarkFigures(roi, 2, &finance.Comparison{Expected: dec(10_200), Actual: dec(8_980), Unmeasured: dec(29_300)})
	near(t, "roi", f[MetricROIPercent], 59.5, 1e-12)
	near(t, "payback", f[MetricPaybackMonths], 6+1_620.0/4_900, 1e-12)
	near(t, "npv per initiative", f[MetricNPVPerInitiative], 13056.9312385905/2, 1e-9)
	near(t, "realisation", f[MetricRealizationRate], 8_980.0/10_200*100, 1e-12)
	f = BenchmarkFigures(ComputeROI(nil, Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0.1, finance.BasisActual, finance.FX{}), 0, &finance.Comparison{})
	for _, m := range Metrics {
		if f[m].Value != nil {
			t.Errorf("%s of nothing: %v", m, f[m])
		}
	}
	if f := BenchmarkFigures(roi, 2, nil); f[MetricRealizationRate].Reason != MissingFXRates {
		t.Errorf("missing rate: %v", f[MetricRealizationRate])
	}
}

func TestParseDataset(t *testing.T) {
	rows, err := ParseDataset(strings.NewReader("industry,metric,value,source,year\n Retail ,roi_percent,-12.5,\"Survey, A\",2025\nretail,npv_per_initiative,1e6,B,2000\n"))
	if err != nil || len(rows) != 2 || rows[0] != (DatasetRow{Industry: "retail", Metric: "roi_percent", Source: "Survey, A", Value: -12.5, Year: 2025}) || rows[1].Value != 1e6 {
		t.Fatalf("%+v %v", rows, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "line 1"},
		{"industry,metric,value,source\n", "line 1"},
		{"industry,metric,value,source,year\n", "no rows"},
		{"industry,metric,value,source,year\nretail,roi_percent,1,A\n", "line 2"},
		{"industry,metric,value,source,year\nretail,roi_percent,Inf,A,2025\n", "line 2: value"},
		{"industry,metric,value,source,year\nretail,roi_percent,1,,2025\n", "line 2: source"},
		{"industry,metric,value,source,year\nretail,roi_percent,1,A,2101\n", "line 2: year"},
	} {
		if _, err := ParseDataset(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	// Bounded: more than 100,000 rows, or more than 10 MiB.
	var b strings.Builder
	b.WriteString("industry,metric,value,source,year\n")
	for range MaxDatasetRows + 1 {
		b.WriteString("r,roi_percent,1,A,2025\n")
	}
	if _, err := ParseDataset(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "more than 100000 rows") {
		t.Errorf("too many rows: %v", err)
	}
	big := "industry,metric,value,source,year\nr,roi_percent,1," + strings.Repeat("a", MaxDatasetBytes) + ",2025\n"
	if _, err := ParseDataset(strings.NewReader(big)); err == nil {
		t.Error("a file over 10 MiB was read")
	}
}
