// Command render-samples writes the sample exports of the fixed demo case
// (render.DemoCase) to a directory: every format × template, with the
// appendix and a watermark. The output is reproducible byte for byte.
//
//	go run ./cmd/render-samples -out samples
//	go run ./cmd/render-samples -demo -out samples   # the demo seed's approved case (make samples)
//	go run ./cmd/render-samples -out samples -case case.json   # your own snapshot (render.Case as JSON)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/demo"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/render"
)

func main() {
	out := flag.String("out", "samples", "directory to write the documents to (created if missing)")
	casePath := flag.String("case", "", "a render.Case as JSON; default: the built-in demo case")
	watermark := flag.String("watermark", "CONFIDENTIAL – board use only", "watermark on every page and slide")
	appendices := flag.Bool("appendices", true, "include the calculation appendix")
	demoCase := flag.Bool("demo", false, "the demo seed's approved business case (internal/demo) through the export's snapshot code, as of -as-of")
	asOf := flag.String("as-of", "2026-06-30T12:00:00Z", "with -demo: the moment the demo is seeded and approved (fixed: reproducible files)")
	flag.Parse()
	var c *render.Case
	var err error
	if *demoCase {
		c, err = demoSnapshot(*asOf)
	} else {
		c, err = readCase(*casePath)
	}
	if err == nil {
		err = run(*out, c, *watermark, *appendices)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "render-samples:", err)
		os.Exit(1)
	}
}

// readCase is a render.Case from a JSON file, or the built-in demo case.
func readCase(path string) (*render.Case, error) {
	if path == "" {
		return render.DemoCase(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := new(render.Case)
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// demoSnapshot is the snapshot an export of the demo seed's approved case
// takes: the rows the seed stores (demo.Portfolio.StoredCase), the figures
// the approval freezes (businesscase.Figures) and the document built from
// them (export.Build), all at asOf.
func demoSnapshot(asOf string) (*render.Case, error) {
	now, err := time.Parse(time.RFC3339, asOf)
	if err != nil {
		return nil, fmt.Errorf("-as-of: %w", err)
	}
	s, err := demo.Default().StoredCase("Cloud migration", 0, now)
	if err != nil {
		return nil, err
	}
	snap, _, err := businesscase.Figures(s.Rows, now, false)
	if err != nil {
		return nil, err
	}
	return export.Build(s.Case, s.Initiative, s.Rows, s.Projects, snap)
}

func run(out string, c *render.Case, watermark string, appendices bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	opts := render.Options{
		IncludeAppendices: appendices,
		Watermark:         watermark,
		Author:            "Valuecase demo",
		GeneratedAt:       c.DataAsOf.Add(24 * time.Hour), // fixed: reproducible files
	}
	if c.Approval != nil && c.Approval.At.After(c.DataAsOf) {
		opts.GeneratedAt = c.Approval.At.Add(24 * time.Hour)
	}
	for _, t := range render.Templates {
		c.Template = t
		for _, f := range render.Formats {
			var buf bytes.Buffer
			start := time.Now()
			if err := render.Render(context.Background(), &buf, f, c, opts); err != nil {
				return err
			}
			name := filepath.Join(out, string(t)+f.Extension())
			if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Printf("%-45s %8d bytes  %v\n", name, buf.Len(), time.Since(start).Round(time.Millisecond))
		}
	}
	return nil
}
