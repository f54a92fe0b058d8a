package render

import (
	"context"
	"io"
	"testing"
)

// largeCase is the export benchmark's case: 100 benefits × 24 periods
// of actuals, 500 stakeholders, every section filled, appendix (one entry
// per benefit), watermark.
func largeCase() *Case { return SyntheticCase(100, 24, 500) }

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkRender measures render-only time and allocation per format:
//
//	go test -run '^$' -bench BenchmarkRender -benchmem ./internal/render
func BenchmarkRender(b *testing.B) {
	c := largeCase()
	for _, f := range Formats {
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			var out countingWriter
			for b.Loop() {
				out = countingWriter{}
				if err := Render(context.Background(), &out, f, c, fixedOptions()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.n), "bytes/doc")
		})
	}
}

func TestLargeCasePackagesAreComplete(t *testing.T) {
	c := largeCase()
	for _, f := range []Format{DOCX, PPTX} {
		checkPackage(t, "large "+string(f), renderBytes(t, f, c, fixedOptions()))
	}
	if err := Render(context.Background(), io.Discard, PDF, c, fixedOptions()); err != nil {
		t.Fatal(err)
	}
}
