package benchutil

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Scaling is how one piece of work's time grows with its size: the same work
// at several scales, each as the median of its samples and that time per
// unit (an initiative, a record), with the per-unit ratio against the
// smallest scale. A ratio at or under 1 is cost that grows no faster than
// the work.
type Scaling struct {
	Name string `json:"name"`
	// Unit names one unit of work ("initiative", "record"); PerUnitIn is
	// the per-unit column's time unit ("ms" or "µs").
	Unit      string       `json:"unit"`
	PerUnitIn string       `json:"per_unit_in"`
	Rows      []ScalingRow `json:"rows"`
	Notes     []string     `json:"notes,omitempty"`
}

// ScalingRow is one scale.
type ScalingRow struct {
	Scale   string  `json:"scale"` // "1x", "10x", ...
	Units   int     `json:"units"`
	Samples int     `json:"samples"`
	TotalMS float64 `json:"total_ms"` // the median sample
	// PerUnit is TotalMS per unit, in the table's PerUnitIn.
	PerUnit float64 `json:"per_unit"`
	// Ratio is PerUnit over the first row's: above 1, each unit costs more
	// at this scale than at the smallest.
	Ratio float64 `json:"per_unit_ratio"`
	// AtLeast: some samples did not finish (they ended at a deadline), so
	// the times are lower bounds.
	AtLeast bool `json:"at_least,omitempty"`
}

// Add appends a scale measured as samples (at least one; their median
// counts, by nearest rank: use an odd number).
func (s *Scaling) Add(scale string, units int, samples []time.Duration) {
	median := Median(samples)
	perUnit := float64(median) / float64(max(units, 1))
	if s.PerUnitIn == "ms" {
		perUnit /= float64(time.Millisecond)
	} else {
		perUnit /= float64(time.Microsecond)
	}
	row := ScalingRow{Scale: scale, Units: units, Samples: len(samples), TotalMS: float64(median.Microseconds()) / 1000, PerUnit: perUnit, Ratio: 1}
	if len(s.Rows) > 0 {
		row.Ratio = Ratio(perUnit, s.Rows[0].PerUnit)
	}
	s.Rows = append(s.Rows, row)
}

// AddAtLeast appends a scale some of whose samples did not finish: with the
// times until they were given up on (a deadline), the median is a lower bound.
func (s *Scaling) AddAtLeast(scale string, units int, failed []time.Duration) {
	s.Add(scale, units, failed)
	s.Rows[len(s.Rows)-1].AtLeast = true
}

// printScaling writes the scaling tables as one table, then their notes.
func printScaling(w io.Writer, tables []Scaling) {
	if len(tables) == 0 {
		return
	}
	fmt.Fprintln(w, "\nScaling (median of the samples; per-unit ratio against the smallest scale: at or under 1.00x the cost per unit stays flat or falls)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "work\tscale\tunits\tsamples\ttotal ms\tper unit\tper-unit ratio\t")
	for _, s := range tables {
		for i, r := range s.Rows {
			name := ""
			if i == 0 {
				name = s.Name
			}
			atLeast := ""
			if r.AtLeast {
				atLeast = "≥ "
			}
			fmt.Fprintf(tw, "%s\t%s\t%s %s\t%d\t%s%.1f\t%s%s %s/%s\t%s%.2fx\t\n", name, r.Scale, thousands(r.Units), s.Unit+plural(r.Units), r.Samples, atLeast, r.TotalMS,
				atLeast, perUnitText(r.PerUnit), s.PerUnitIn, s.Unit, atLeast, r.Ratio)
		}
	}
	_ = tw.Flush()
	for _, s := range tables {
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  - %s: %s\n", s.Name, n)
		}
	}
}

func perUnitText(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// thousands writes n with comma separators (500,000).
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
