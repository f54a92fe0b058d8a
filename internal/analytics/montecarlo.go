package analytics

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"github.com/valuecase/valuecase/internal/finance"
)

// DelayedOneMonth is the delay scenario of the sensitivity analysis:
// every benefit arrives one month later over the same horizon (the last
// month's benefit falls out of the series), costs unchanged.
var DelayedOneMonth = finance.Shock{BenefitFactor: 1, CostFactor: 1, BenefitDelayMonths: 1}

// MonteCarloRuns is the number of draws of the Monte Carlo ROI.
const MonteCarloRuns = 1000

// The ranges of one Monte Carlo draw: the same shocks as the sensitivity
// scenarios, drawn uniformly instead of taken at their ends.
const (
	mcBenefitLow, mcBenefitWidth = 0.8, 0.4 // benefits × U[0.8, 1.2)
	mcCostLow, mcCostWidth       = 0.9, 0.2 // costs × U[0.9, 1.1)
)

// MonteCarlo is the distribution of ROI % over the seeded draws.
type MonteCarlo struct {
	P10, P50, P90 float64
	Runs          int
	Seed          uint64
}

// SeedOf is the Monte Carlo seed of a series: FNV-1a (64 bit) over the
// little-endian bytes of the first month (finance.Month as int64: year × 12
// + month − 1), then for each month its benefit and its cost as IEEE-754
// float64 bits. The same series always gives the same seed, hence the same
// figures; any change to the data gives another.
func SeedOf(cf finance.CashFlows) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(int64(cf.Start)))
	h.Write(b[:])
	for i := range cf.Benefits {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(cf.Benefits[i].InexactFloat64()))
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(cf.Costs[i].InexactFloat64()))
		h.Write(b[:])
	}
	return h.Sum64()
}

// splitMix64 is the SplitMix64 generator (Steele, Lea, Flood 2014): tiny,
// fully specified, and so reproducible in any language.
type splitMix64 struct{ state uint64 }

func (s *splitMix64) next() uint64 {
	s.state += 0x9E3779B97F4A7C15
	z := s.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// uniform is a draw in [0, 1): the top 53 bits over 2^53.
func (s *splitMix64) uniform() float64 { return float64(s.next()>>11) / (1 << 53) }

// SimulateROI runs the seeded Monte Carlo of ROI % over cf. Draw k (k =
// 1..runs) takes three uniforms u1, u2, u3 in that order from SplitMix64
// seeded with SeedOf(cf): benefits × (0.8 + 0.4 u1), costs × (0.9 + 0.2 u2),
// benefits one month later when u3 ≥ 0.5; its ROI is the ROI of cf shocked
// so. P10, P50 and P90 are percentiles of the runs' ROIs with linear
// interpolation between order statistics (spreadsheet PERCENTILE.INC,
// numpy's default): with the sorted x_0..x_{n−1}, h = (n − 1) p, the value
// x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋). Absent (the reason of ROIPercent)
// when cf has no costs.
func SimulateROI(cf finance.CashFlows, runs int) (MonteCarlo, finance.Result) {
	if r := finance.ROIPercent(cf.TotalBenefits(), cf.TotalCosts()); r.Value == nil {
		return MonteCarlo{}, r
	}
	seed := SeedOf(cf)
	rng := splitMix64{state: seed}
	// A simulation samples, it does not account: the draws run on float64
	// totals (a one-month delay drops the last month's benefit, as
	// finance.CashFlows.Shocked does).
	benefits, costs := cf.TotalBenefits().InexactFloat64(), cf.TotalCosts().InexactFloat64()
	delayedBenefits := benefits
	if n := len(cf.Benefits); n > 0 {
		delayedBenefits = cf.TotalBenefits().Sub(cf.Benefits[n-1]).InexactFloat64()
	}
	rois := make([]float64, runs)
	for k := range rois {
		bf, cfactor := mcBenefitLow+mcBenefitWidth*rng.uniform(), mcCostLow+mcCostWidth*rng.uniform()
		b := benefits
		if rng.uniform() >= 0.5 {
			b = delayedBenefits
		}
		c := costs * cfactor
		rois[k] = (b*bf - c) / c * 100
	}
	slices.Sort(rois)
	mc := MonteCarlo{P10: percentile(rois, 0.10), P50: percentile(rois, 0.50), P90: percentile(rois, 0.90), Runs: runs, Seed: seed}
	return mc, finance.Result{Value: &mc.P50}
}

// percentile of sorted xs (len ≥ 1) with linear interpolation (see SimulateROI).
func percentile(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// SeedText is how a seed is shown: 16 hex digits (a uint64 does not fit a
// JSON number exactly).
func SeedText(seed uint64) string { return fmt.Sprintf("%016x", seed) }
