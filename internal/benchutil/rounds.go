package benchutil

import (
	"context"
	"fmt"
)

// Side is one side of a comparison (the service or its baseline): it runs
// round r and returns the measured samples and the number of failures.
type Side func(ctx context.Context, round int) (samples []Sample, errors int, err error)

// Compared is the outcome of Alternate.
type Compared struct {
	API, Baseline Summary
	// RoundRatios is each round's throughput ratio API/baseline, and
	// RoundP99Ratios its p99 ratio: their spread shows how noisy the machine
	// was, and whether a ratio of the whole run comes from one round.
	RoundRatios, RoundP99Ratios []float64
	// APICPU and BaselineCPU are how the machine's CPUs were spent while
	// each side ran (its warm-up included).
	APICPU, BaselineCPU CPUUse
}

// Alternate runs the two sides in rounds, alternating which goes first
// (API, baseline; baseline, API; ...), so that a slow spell of a shared
// machine, or a drift over the run, does not land on one side only. It
// reads the machine's CPU counters around each side's turn.
func Alternate(ctx context.Context, rounds int, api, baseline Side) (Compared, error) {
	var (
		res                Compared
		apiRounds, bRounds [][]Sample
		apiErrs, bErrs     int
		apiCPU, bCPU       cpuTimes
	)
	for r := range max(rounds, 1) {
		order := []bool{true, false} // true: the API
		if r%2 == 1 {
			order = []bool{false, true}
		}
		var a, b []Sample
		for _, isAPI := range order {
			side, name := baseline, "baseline"
			if isAPI {
				side, name = api, "API"
			}
			before, known := readCPUTimes()
			samples, errs, err := side(ctx, r)
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", r+1, name, err)
			}
			ticks := &bCPU
			if isAPI {
				a, apiErrs, ticks = samples, apiErrs+errs, &apiCPU
			} else {
				b, bErrs = samples, bErrs+errs
			}
			if after, ok := readCPUTimes(); known && ok {
				ticks.add(before, after)
			}
		}
		apiRounds, bRounds = append(apiRounds, a), append(bRounds, b)
		res.AddRound(a, b)
	}
	res.API = SummarizeRounds(apiRounds, apiErrs)
	res.Baseline = SummarizeRounds(bRounds, bErrs)
	res.APICPU, res.BaselineCPU = apiCPU.use(), bCPU.use()
	return res, nil
}

// AddRound appends one round's throughput and p99 ratios, API over baseline.
func (c *Compared) AddRound(api, baseline []Sample) {
	a, b := Summarize(api, 0), Summarize(baseline, 0)
	c.RoundRatios = append(c.RoundRatios, Ratio(a.PerSecond, b.PerSecond))
	c.RoundP99Ratios = append(c.RoundP99Ratios, Ratio(a.P99MS, b.P99MS))
}
