package render

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// Format is an output format.
type Format string

const (
	PDF  Format = "pdf"
	DOCX Format = "docx"
	PPTX Format = "pptx"
)

// Formats lists the valid formats.
var Formats = []Format{PDF, DOCX, PPTX}

// ContentType is the MIME type to serve the format with.
func (f Format) ContentType() string {
	switch f {
	case PDF:
		return "application/pdf"
	case DOCX:
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case PPTX:
		return "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	}
	return "application/octet-stream"
}

// Extension is the file name extension with its dot: ".pdf".
func (f Format) Extension() string { return "." + string(f) }

// Render writes c as a document in format f to w. It validates c and o
// first (an *InvalidInputError), stops early with ctx's error when ctx
// ends, and reports progress through o.Progress. The output depends only on
// its inputs when o.GeneratedAt is set.
func Render(ctx context.Context, w io.Writer, f Format, c *Case, o Options) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if o.GeneratedAt.IsZero() {
		o.GeneratedAt = time.Now()
	}
	o.GeneratedAt = o.GeneratedAt.UTC().Truncate(time.Second)
	pr := &progress{fn: o.Progress, last: -1}
	pr.report(0)
	p := newPlan(c, o, f)
	var err error
	switch f {
	case PDF:
		err = writePDF(ctx, w, p, pr)
	case DOCX:
		err = writeDOCX(ctx, w, p, pr)
	case PPTX:
		err = writePPTX(ctx, w, p, pr)
	default:
		return invalid("unknown format %q", f)
	}
	if err != nil {
		return fmt.Errorf("render %s: %w", f, err)
	}
	pr.report(100)
	return nil
}

// progress turns "block i of n laid out" into 0..100, reporting each
// percentage once. Laying out blocks is 5..90; writing the file the rest.
type progress struct {
	fn   func(int)
	last int
}

func (p *progress) report(pct int) {
	if p.fn == nil || pct <= p.last {
		return
	}
	p.last = min(pct, 100)
	p.fn(p.last)
}

func (p *progress) block(i, n int) {
	if n > 0 {
		p.report(5 + 85*i/n)
	}
}

// PrintedTable is one table as a document prints it: its title and the
// text of each row (the total row last), cell by cell.
type PrintedTable struct {
	Title string
	Rows  [][]string
}

// Tables lists the tables the document of c in format f prints, in order;
// the layout checks find their rows on the pages with it.
func Tables(c *Case, o Options, f Format) []PrintedTable {
	var out []PrintedTable
	for _, b := range newPlan(c, o, f).blocks {
		t, ok := b.(table)
		if !ok {
			continue
		}
		rows := slices.Clone(t.Rows)
		if t.Total != nil {
			rows = append(rows, t.Total)
		}
		out = append(out, PrintedTable{Title: t.Title, Rows: rows})
	}
	return out
}
