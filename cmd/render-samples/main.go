// Command render-samples writes the sample exports of the fixed demo case
// (render.DemoCase) to a directory: every format × template, with the
// appendix and a watermark. The output is reproducible byte for byte.
//
//	go run ./cmd/render-samples -out samples
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

	"github.com/valuecase/valuecase/internal/render"
)

func main() {
	out := flag.String("out", "samples", "directory to write the documents to (created if missing)")
	casePath := flag.String("case", "", "a render.Case as JSON; default: the built-in demo case")
	watermark := flag.String("watermark", "CONFIDENTIAL – board use only", "watermark on every page and slide")
	appendices := flag.Bool("appendices", true, "include the calculation appendix")
	flag.Parse()
	if err := run(*out, *casePath, *watermark, *appendices); err != nil {
		fmt.Fprintln(os.Stderr, "render-samples:", err)
		os.Exit(1)
	}
}

func run(out, casePath, watermark string, appendices bool) error {
	c := render.DemoCase()
	if casePath != "" {
		b, err := os.ReadFile(casePath)
		if err != nil {
			return err
		}
		c = new(render.Case)
		if err := json.Unmarshal(b, c); err != nil {
			return fmt.Errorf("%s: %w", casePath, err)
		}
	}
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
