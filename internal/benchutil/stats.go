// Package benchutil is the shared plumbing of cmd/benchmark: an HTTP load
// loop, pgbench runs built from the sqlc queries, percentile math, tenant and
// token setup, and the result table. Every number is computed the same way
// for the service and for its baseline, so their ratio means something.
package benchutil

import (
	"math"
	"slices"
	"time"
)

// Sample is one measured request or transaction.
type Sample struct {
	Start, End time.Time
}

// Latency is the time the request or transaction took.
func (s Sample) Latency() time.Duration { return s.End.Sub(s.Start) }

// Summary describes the measured samples of one side of a run.
type Summary struct {
	// Count is the number of measured (successful, non-warm-up) samples.
	Count int `json:"count"`
	// Errors counts failed requests or transactions, warm-up included.
	Errors int `json:"errors"`
	// ElapsedSeconds runs from the first measured start to the last measured end.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// PerSecond is Count / ElapsedSeconds.
	PerSecond float64 `json:"per_second"`
	P50MS     float64 `json:"p50_ms"`
	P90MS     float64 `json:"p90_ms"`
	P95MS     float64 `json:"p95_ms"`
	P99MS     float64 `json:"p99_ms"`
	MaxMS     float64 `json:"max_ms"`
	MeanMS    float64 `json:"mean_ms"`
}

// Summarize computes throughput and latency percentiles of samples.
func Summarize(samples []Sample, errors int) Summary {
	return SummarizeRounds([][]Sample{samples}, errors)
}

// SummarizeRounds summarizes samples measured in separate rounds: the
// elapsed time is the sum of the rounds' spans (not the gaps between them),
// the percentiles are those of all samples together.
func SummarizeRounds(rounds [][]Sample, errors int) Summary {
	s := Summary{Errors: errors}
	var lat []time.Duration
	var sum time.Duration
	for _, samples := range rounds {
		s.ElapsedSeconds += Span(samples).Seconds()
		for _, x := range samples {
			lat = append(lat, x.Latency())
			sum += x.Latency()
		}
	}
	s.Count = len(lat)
	if s.Count == 0 {
		return s
	}
	slices.Sort(lat)
	if s.ElapsedSeconds > 0 {
		s.PerSecond = float64(s.Count) / s.ElapsedSeconds
	}
	s.P50MS = ms(Percentile(lat, 50))
	s.P90MS = ms(Percentile(lat, 90))
	s.P95MS = ms(Percentile(lat, 95))
	s.P99MS = ms(Percentile(lat, 99))
	s.MaxMS = ms(lat[len(lat)-1])
	s.MeanMS = ms(sum / time.Duration(len(lat)))
	return s
}

// Span is the time from the first start to the last end of samples.
func Span(samples []Sample) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	first, last := samples[0].Start, samples[0].End
	for _, x := range samples {
		if x.Start.Before(first) {
			first = x.Start
		}
		if x.End.After(last) {
			last = x.End
		}
	}
	return last.Sub(first)
}

// Percentile is the nearest-rank percentile p (0 < p <= 100) of sorted
// latencies: the smallest value that at least p percent of them do not exceed.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Median is the samples' median by nearest rank (they need not be sorted).
func Median(samples []time.Duration) time.Duration {
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return Percentile(sorted, 50)
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

// Ratio is a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
