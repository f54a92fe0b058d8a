package analytics

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/valuecase/valuecase/internal/finance"
)

// The benchmark metrics: each a figure of the tenant's portfolio in one
// industry (its initiatives that are not archived and name that industry).
const (
	MetricROIPercent       = "roi_percent"        // lifetime ROI % of those initiatives together
	MetricPaybackMonths    = "payback_months"     // their lifetime payback, months
	MetricRealizationRate  = "realization_rate"   // realised / expected to date × 100
	MetricNPVPerInitiative = "npv_per_initiative" // lifetime NPV / number of initiatives
)

// Metrics are the metrics a benchmark compares, in order.
var Metrics = []string{MetricROIPercent, MetricPaybackMonths, MetricRealizationRate, MetricNPVPerInitiative}

// MinPeers is the fewest peers (distinct other tenants, or values of a
// dataset source) a benchmark shows figures for: k-anonymity with k = 5.
const MinPeers = 5

// Reasons of absent peer figures and of an absent tenant value.
const (
	FewerThanMinPeers finance.Reason = "fewer_than_5_peers"
	NoIndustry        finance.Reason = "no_industry"
)

// MaxIndustryLen bounds an industry name.
const MaxIndustryLen = 100

// NormalizeIndustry is how industries are compared: trimmed, lower case,
// 1..100 characters, no control characters.
func NormalizeIndustry(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len([]rune(s)) > MaxIndustryLen || strings.ContainsFunc(s, unicode.IsControl) {
		return "", fmt.Errorf("industry must be 1 to %d characters without control characters", MaxIndustryLen)
	}
	return s, nil
}

// DefaultIndustry is the industry named by most of the initiatives (already
// normalised), ties broken alphabetically; false when none names one.
func DefaultIndustry(industries []string) (string, bool) {
	count := map[string]int{}
	for _, in := range industries {
		count[in]++
	}
	best, n := "", 0
	for in, c := range count {
		if c > n || c == n && in < best {
			best, n = in, c
		}
	}
	return best, n > 0
}

// BenchmarkFigures are the tenant's figure of every metric, from the
// lifetime ROI analysis of its initiatives in the industry, their number,
// and their expected against realised value to date, like for like (nil: a
// rate is missing); the realisation rate is the comparison's.
func BenchmarkFigures(roi ROI, initiatives int, toDate *finance.Comparison) map[string]finance.Result {
	out := map[string]finance.Result{MetricROIPercent: roi.ROIPercent, MetricPaybackMonths: roi.PaybackMonths}
	switch {
	case initiatives == 0:
		out[MetricNPVPerInitiative] = finance.Result{Reason: NoData}
	case roi.NPV.Value == nil:
		out[MetricNPVPerInitiative] = roi.NPV
	default:
		out[MetricNPVPerInitiative] = value(*roi.NPV.Value / float64(initiatives))
	}
	switch {
	case toDate == nil:
		out[MetricRealizationRate] = finance.Result{Reason: MissingFXRates}
	case toDate.RealizationPercent() == nil:
		out[MetricRealizationRate] = finance.Result{Reason: NoData}
	default:
		out[MetricRealizationRate] = value(toDate.RealizationPercent().InexactFloat64())
	}
	return out
}

// DatasetRow is one peer value of an operator-loaded dataset.
type DatasetRow struct {
	Industry, Metric, Source string
	Value                    float64
	Year                     int
}

// Limits of a dataset file.
const (
	MaxDatasetRows  = 100_000
	MaxDatasetBytes = 10 << 20
	MaxSourceLen    = 200
	maxErrorsShown  = 20
)

// DatasetHeader is the first line a dataset file must have, exactly.
var DatasetHeader = []string{"industry", "metric", "value", "source", "year"}

// ParseDataset reads a dataset CSV (RFC 4180, UTF-8, comma-separated, the
// header DatasetHeader, then one peer value a line): industry (normalised as
// NormalizeIndustry), metric (one of Metrics), value (a finite decimal
// number), source (1..200 characters: the publication or survey), year
// (2000..2100). At most MaxDatasetRows rows and MaxDatasetBytes bytes. Any
// bad line fails the whole file, naming up to 20 lines.
func ParseDataset(r io.Reader) ([]DatasetRow, error) {
	cr := csv.NewReader(io.LimitReader(r, MaxDatasetBytes+1))
	cr.FieldsPerRecord = len(DatasetHeader)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	if !slices.Equal(head, DatasetHeader) {
		return nil, fmt.Errorf("line 1: the header must be %s", strings.Join(DatasetHeader, ","))
	}
	var rows []DatasetRow
	var errs []error
	bad := func(line int, format string, args ...any) {
		if len(errs) < maxErrorsShown {
			errs = append(errs, fmt.Errorf("line %d: "+format, append([]any{line}, args...)...))
		}
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, csv.ErrFieldCount) || errors.Is(err, csv.ErrQuote) || errors.Is(err, csv.ErrBareQuote) {
				bad(line, "%v", err)
				continue
			}
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(rows) == MaxDatasetRows {
			return nil, fmt.Errorf("more than %d rows", MaxDatasetRows)
		}
		row := DatasetRow{Source: strings.TrimSpace(rec[3])}
		ok := true
		if row.Industry, err = NormalizeIndustry(rec[0]); err != nil {
			bad(line, "%v", err)
			ok = false
		}
		if row.Metric = strings.TrimSpace(rec[1]); !slices.Contains(Metrics, row.Metric) {
			bad(line, "metric must be one of %s", strings.Join(Metrics, ", "))
			ok = false
		}
		if row.Value, err = strconv.ParseFloat(strings.TrimSpace(rec[2]), 64); err != nil || math.IsNaN(row.Value) || math.IsInf(row.Value, 0) || math.Abs(row.Value) > 1e15 {
			bad(line, "value must be a finite number")
			ok = false
		}
		if n := len([]rune(row.Source)); n == 0 || n > MaxSourceLen || strings.ContainsFunc(row.Source, unicode.IsControl) {
			bad(line, "source must be 1 to %d characters without control characters", MaxSourceLen)
			ok = false
		}
		if row.Year, err = strconv.Atoi(strings.TrimSpace(rec[4])); err != nil || row.Year < 2000 || row.Year > 2100 {
			bad(line, "year must be 2000 to 2100")
			ok = false
		}
		if ok {
			rows = append(rows, row)
		}
	}
	if cr.InputOffset() > MaxDatasetBytes {
		return nil, fmt.Errorf("the file is larger than %d bytes", MaxDatasetBytes)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(rows) == 0 {
		return nil, errors.New("no rows after the header")
	}
	return rows, nil
}
