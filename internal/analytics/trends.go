package analytics

import (
	"errors"
	"fmt"
	"math"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// MaxTrendMonths is the longest trend (spec section 8: analytics history, 5
// years); DefaultTrendMonths the length when no `from` is given.
const (
	MaxTrendMonths     = 60
	DefaultTrendMonths = 12
	MovingAverageSpan  = 3    // months of the trailing moving average
	FlatSlopeShare     = 0.01 // |slope| under 1 % of the mean |actual| a month is flat
	MinDirectionMonths = 3
)

// ErrInvalidRange is returned (wrapped) for a trend range that is malformed,
// inverted or longer than MaxTrendMonths.
var ErrInvalidRange = errors.New("invalid trend range")

// ParseTrendRange reads `from` and `to` (YYYY-MM, inclusive): to defaults to
// the current month, from to DefaultTrendMonths months ending at to.
func ParseTrendRange(from, to string, current finance.Month) (finance.Horizon, error) {
	h := finance.Horizon{End: current}
	if to != "" {
		m, err := finance.ParseMonth(to)
		if err != nil {
			return h, fmt.Errorf("%w: to must be a month YYYY-MM", ErrInvalidRange)
		}
		h.End = m
	}
	h.Start = h.End.Add(-(DefaultTrendMonths - 1))
	if from != "" {
		m, err := finance.ParseMonth(from)
		if err != nil {
			return h, fmt.Errorf("%w: from must be a month YYYY-MM", ErrInvalidRange)
		}
		h.Start = m
	}
	if h.Start > h.End {
		return h, fmt.Errorf("%w: from %s is after to %s", ErrInvalidRange, h.Start, h.End)
	}
	if h.Len() > MaxTrendMonths {
		return h, fmt.Errorf("%w: %d months from %s to %s, at most %d", ErrInvalidRange, h.Len(), h.Start, h.End, MaxTrendMonths)
	}
	return h, nil
}

// TrendBenefit is a money benefit (not cancelled) with the group it falls in.
type TrendBenefit struct {
	Group   string
	Benefit finance.Benefit
}

// ActualSum is Σ of a group's actuals of one month in the base currency
// (summed in PostgreSQL); Missing when one of them had no FX rate.
type ActualSum struct {
	Group   string
	Period  finance.Month
	Value   decimal.Decimal
	Missing bool
}

// Point is one month of a trend; nil values are unknown (a missing rate) or,
// for actuals, in the future.
type Point struct {
	Period        finance.Month
	Expected      *decimal.Decimal
	Actual        *decimal.Decimal
	MovingAverage *decimal.Decimal // trailing MovingAverageSpan months of Actual
}

// Direction of a trend.
type Direction string

const (
	Up   Direction = "up"
	Down Direction = "down"
	Flat Direction = "flat"
)

// Series is the trend of one group (or the total: Group "").
type Series struct {
	Group     string
	Points    []Point
	Slope     *float64   // least-squares slope of Actual a month over the elapsed months
	Direction *Direction // nil with fewer than MinDirectionMonths elapsed months or an unknown actual
}

// ComputeTrends builds the monthly series over h of the total and of each
// group named in groups (in that order): expected as the detail computes it
// (each benefit's expected value of the month, a quarter in its first month,
// at the month's rate), actual as summed, the trailing moving average and the
// direction. Months after current have no actual. missing lists the rates
// the expected values lacked.
func ComputeTrends(h finance.Horizon, current finance.Month, groups []string, benefits []TrendBenefit, actuals []ActualSum, fx finance.FX) (total Series, byGroup []Series, missing []finance.MissingRate) {
	// Each benefit's expected series is built once, in its group (the last
	// part: benefits of no group listed); the total adds the parts.
	index := make(map[string]int, len(groups))
	for i, g := range groups {
		index[g] = i
	}
	parts := make([][]finance.Benefit, len(groups)+1)
	for _, b := range benefits {
		i, ok := index[b.Group]
		if !ok {
			i = len(groups)
		}
		parts[i] = append(parts[i], b.Benefit)
	}
	cfs, misses := make([]finance.CashFlows, len(parts)), make([][]finance.MissingRate, len(parts))
	all := finance.NewCashFlows(h)
	var allMissing []finance.MissingRate
	for i, bs := range parts {
		cfs[i], misses[i] = finance.BuildCashFlows(h, bs, nil, finance.BasisExpected, fx)
		for j := range all.Benefits {
			all.Benefits[j] = all.Benefits[j].Add(cfs[i].Benefits[j])
		}
		allMissing = append(allMissing, misses[i]...)
	}
	series := func(group string, everyGroup bool, cf finance.CashFlows, miss []finance.MissingRate) Series {
		unknown := map[finance.Month]bool{}
		for _, m := range miss {
			unknown[m.Period] = true
		}
		actual := map[finance.Month]decimal.Decimal{}
		unknownActual := map[finance.Month]bool{}
		for _, a := range actuals {
			if everyGroup || a.Group == group {
				actual[a.Period] = actual[a.Period].Add(a.Value)
				unknownActual[a.Period] = unknownActual[a.Period] || a.Missing
			}
		}
		s := Series{Group: group, Points: make([]Point, h.Len())}
		for i := range s.Points {
			m := h.Start.Add(i)
			p := Point{Period: m}
			if !unknown[m] {
				p.Expected = new(cf.Benefits[i])
			}
			if m <= current && !unknownActual[m] {
				p.Actual = new(actual[m])
			}
			s.Points[i] = p
		}
		movingAverage(s.Points)
		s.Slope, s.Direction = direction(s.Points, current)
		return s
	}
	total = series("", true, all, allMissing)
	for i, g := range groups {
		byGroup = append(byGroup, series(g, false, cfs[i], misses[i]))
	}
	return total, byGroup, sortMissing(allMissing)
}

// movingAverage sets each point's trailing mean of the last
// MovingAverageSpan actuals (itself included), when all of them are known.
func movingAverage(points []Point) {
	for i := MovingAverageSpan - 1; i < len(points); i++ {
		sum, ok := decimal.Zero, true
		for _, p := range points[i-MovingAverageSpan+1 : i+1] {
			if p.Actual == nil {
				ok = false
				break
			}
			sum = sum.Add(*p.Actual)
		}
		if ok {
			points[i].MovingAverage = new(sum.Div(decimal.NewFromInt(MovingAverageSpan)))
		}
	}
}

// direction is the least-squares slope b of actual_t against t (t = 0, 1,
// … over the elapsed months of the series, i.e. through current) and its
// reading: up when b > FlatSlopeShare × mean |actual|, down when b < −that,
// flat otherwise. Absent with fewer than MinDirectionMonths elapsed months
// or an unknown actual among them. (Spreadsheet: SLOPE(actuals; t).)
func direction(points []Point, current finance.Month) (*float64, *Direction) {
	var ys []float64
	for _, p := range points {
		if p.Period > current {
			break
		}
		if p.Actual == nil {
			return nil, nil
		}
		ys = append(ys, p.Actual.InexactFloat64()) // a statistic, not an amount
	}
	n := float64(len(ys))
	if len(ys) < MinDirectionMonths {
		return nil, nil
	}
	meanT, meanY, meanAbs := (n-1)/2, 0.0, 0.0
	for _, y := range ys {
		meanY += y / n
		meanAbs += math.Abs(y) / n
	}
	num, den := 0.0, 0.0
	for t, y := range ys {
		num += (float64(t) - meanT) * (y - meanY)
		den += (float64(t) - meanT) * (float64(t) - meanT)
	}
	slope := num / den
	d := Flat
	switch {
	case slope > FlatSlopeShare*meanAbs:
		d = Up
	case slope < -FlatSlopeShare*meanAbs:
		d = Down
	}
	return &slope, &d
}
