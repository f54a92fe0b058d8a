package valuation_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/valuation"
)

// benchVarianceRows are the rows of the bench's variance run as ReadVariance keeps them: a
// monthly benefit of 120,000 a year, with an actual for each month of this calendar year
// before now's.
func benchVarianceRows(now time.Time) benefit.VarianceRows {
	currency := "USD"
	first := time.Date(now.Year(), now.Month()-60, 1, 0, 0, 0, 0, time.UTC)
	r := benefit.VarianceRows{
		Benefit: dbsqlc.Benefit{ID: uuid.New(), Unit: "currency", Currency: &currency, MeasurementFrequency: "monthly",
			ExpectedValue: decimal.NewFromInt(120000), ExpectedStartDate: first},
		Query: benefit.VarianceQuery{FYStartMonth: 1},
	}
	for i := range 60 {
		p := first.AddDate(0, i, 0)
		if p.Year() == now.Year() {
			r.Actuals = append(r.Actuals, dbsqlc.ActualValuesInRangeRow{Period: p, Value: decimal.NewFromInt(int64(9000 + 50*i))})
		}
	}
	return r
}

// BenchmarkVarianceReport is the variance report's own work, without SQL or JSON: what
// the API computes that the bench's pgbench baseline does not (make bench prints the same
// figure beside the variance's ratio).
//
//	go test ./internal/valuation/ -run '^$' -bench VarianceReport -benchmem
func BenchmarkVarianceReport(b *testing.B) {
	now := time.Now().UTC()
	rows := benchVarianceRows(now)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := valuation.VarianceReport(rows, now); err != nil {
			b.Fatal(err)
		}
	}
}
