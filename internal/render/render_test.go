package render

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixedOptions make the output reproducible.
func fixedOptions() Options {
	return Options{
		IncludeAppendices: true,
		Watermark:         "CONFIDENTIAL – board use only",
		Author:            "Anna Kowalczyk",
		GeneratedAt:       time.Date(2028, 7, 15, 8, 0, 0, 0, time.UTC),
	}
}

func renderBytes(t testing.TB, f Format, c *Case, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(context.Background(), &buf, f, c, o); err != nil {
		t.Fatalf("render %s: %v", f, err)
	}
	return buf.Bytes()
}

func TestFormatting(t *testing.T) {
	// Expected strings written by hand from the rules in format.go.
	cases := []struct {
		got, want string
	}{
		{FormatAmount(1500000, "CHF"), "1,500,000.00"},
		{FormatAmount(-46600, "CHF"), "−46,600.00"},
		{FormatAmount(-0.004, "CHF"), "0.00"},
		{FormatAmount(999.995, "CHF"), "1,000.00"},
		{FormatAmount(292.275, "USD"), "292.28"}, // half away from zero, as the API
		{FormatAmount(1.005, "EUR"), "1.01"},
		{FormatAmount(1234.5, "JPY"), "1,235"}, // no minor unit
		{FormatAmount(-1.0005, "BHD"), "−1.001"},
		{FormatMoney(2117586.90, "CHF"), "CHF 2,117,586.90"},
		{FormatMoney(-60000, "CHF"), "−CHF 60,000.00"},
		{FormatMoney(6263.345, "USD"), "USD 6,263.35"},
		{FormatMoney(-0.001, "USD"), "USD 0.00"},
		{FormatMoneyShort(2117586.90, "CHF"), "CHF 2.12m"},
		{FormatMoneyShort(999999.7, "CHF"), "CHF 1m"},
		{FormatMoneyShort(9999.6, "EUR"), "EUR 10k"},
		{FormatMoneyShort(850000, "CHF"), "CHF 850k"},
		{FormatMoneyShort(-1200000, "CHF"), "−CHF 1.2m"},
		{FormatMoneyShort(3.4e9, "USD"), "USD 3.4bn"},
		{FormatMoneyShort(900, "CHF"), "CHF 900"},
		{FormatPercent(146.07), "146.1%"},
		{FormatPercent(-3.317), "−3.3%"},
		{FormatPercent(-0.04), "0.0%"},
		{FormatPercent(12345.67), "12,345.7%"},
		{FormatMonths(17.43), "17.4 months"},
		{FormatMonths(14), "14 months"},
		{FormatMonths(1), "1 month"},
		{FormatDate(time.Date(2028, 6, 30, 23, 0, 0, 0, time.UTC)), "30 Jun 2028"},
		{FormatTime(time.Date(2028, 6, 30, 18, 0, 0, 0, time.FixedZone("CEST", 7200))), "30 Jun 2028, 16:00 UTC"},
		{shortNumber(-1500), "−1.5k"},
		{shortNumber(0), "0"},
		{FormatChange(20), "+20%"},
		{FormatChange(-9.9999999), "−10%"},
		{FormatChange(2.5), "+2.5%"},
		{FormatChange(0), "0%"},
		{FormatMonth(time.Date(2028, 6, 30, 0, 0, 0, 0, time.UTC)), "Jun 2028"},
		{Label("cost_savings"), "Cost savings"},
		{Label("capex"), "Capital expenditure"},
		{Label("once"), "One-off"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestValidateRefusesWhatWouldBreakTheDocument(t *testing.T) {
	tests := map[string]func(c *Case, o *Options){
		"unknown template":      func(c *Case, o *Options) { c.Template = "slides" },
		"empty name":            func(c *Case, o *Options) { c.Name = "" },
		"no currency":           func(c *Case, o *Options) { c.BaseCurrency = "" },
		"invalid UTF-8":         func(c *Case, o *Options) { c.Sections[0].Body = "Z\xfcrich" },
		"payback outside":       func(c *Case, o *Options) { c.CashFlow.PaybackMonth = new(36) },
		"unknown influence":     func(c *Case, o *Options) { c.Stakeholders[0].Influence = "huge" },
		"unknown quadrant":      func(c *Case, o *Options) { c.Stakeholders[0].Quadrant = "ignore" },
		"unknown sentiment":     func(c *Case, o *Options) { c.Stakeholders[0].Sentiment = "angry" },
		"65-rune watermark":     func(c *Case, o *Options) { o.Watermark = strings.Repeat("Ł", 65) },
		"too much text":         func(c *Case, o *Options) { c.Sections[0].Body = strings.Repeat("x", maxTextRunes+1) },
		"invalid UTF-8 in mark": func(c *Case, o *Options) { o.Watermark = "\xff" },
	}
	for name, spoil := range tests {
		t.Run(name, func(t *testing.T) {
			c, o := DemoCase(), fixedOptions()
			spoil(c, &o)
			err := Render(context.Background(), io.Discard, PDF, c, o)
			if invalid, ok := errors.AsType[*InvalidInputError](err); !ok || invalid.Reason == "" {
				t.Fatalf("got %v, want an InvalidInputError with its reason", err)
			}
		})
	}
	t.Run("64-rune watermark is fine", func(t *testing.T) {
		o := fixedOptions()
		o.Watermark = strings.Repeat("Ł", 64)
		if err := Render(context.Background(), io.Discard, PDF, DemoCase(), o); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unknown format", func(t *testing.T) {
		err := Render(context.Background(), io.Discard, "odt", DemoCase(), fixedOptions())
		if invalid, ok := errors.AsType[*InvalidInputError](err); !ok || invalid.Reason != `unknown format "odt"` {
			t.Fatalf("got %v, want an InvalidInputError for the format", err)
		}
	})
}

// blockTitles lists a plan's headings and exhibit titles in order.
func blockTitles(p *plan) []string {
	var out []string
	for _, b := range p.blocks {
		switch b := b.(type) {
		case heading:
			out = append(out, "# "+b.Text)
		case table:
			out = append(out, b.Title)
		case chart:
			out = append(out, b.Title)
		case gantt:
			out = append(out, b.Title)
		case grid:
			out = append(out, b.Title)
		case calculations:
			out = append(out, b.Title)
		case keyFigures:
			out = append(out, b.Title)
		}
	}
	return out
}

func TestPlanContentPerTemplate(t *testing.T) {
	has := func(titles []string, prefix string) bool {
		return slices.ContainsFunc(titles, func(s string) bool { return strings.HasPrefix(s, prefix) })
	}
	for _, tmpl := range Templates {
		c := DemoCase()
		c.Template = tmpl
		p := newPlan(c, fixedOptions(), PDF)
		titles := blockTitles(p)
		// Every template: each section, the benefits table, both charts, the grid.
		for _, s := range c.Sections {
			if !slices.Contains(titles, "# "+s.Title) {
				t.Errorf("%s: section %q missing", tmpl, s.Title)
			}
		}
		for _, want := range []string{"At a glance", "Benefits: expected vs actual", "Benefits per period", "Cumulative cash flow",
			"Stakeholders: power–interest grid", "# Appendix", "Calculations"} {
			if !has(titles, want) {
				t.Errorf("%s: %q missing in %q", tmpl, want, titles)
			}
		}
		cfo := tmpl == CFOView
		tech := tmpl == TechnicalDeepDive
		for want, expect := range map[string]bool{
			"Monthly cash flow": cfo, "Sensitivity": cfo, "Key figures": cfo,
			"Costs": cfo || tech, "Roadmap": tech, "Projects": tech,
		} {
			if has(titles, want) != expect {
				t.Errorf("%s: %q present = %v, want %v", tmpl, want, !expect, expect)
			}
		}
	}
}

func TestExhibitsFollowTheirSectionOrGoToSupportingAnalysis(t *testing.T) {
	c := DemoCase()
	titles := blockTitles(newPlan(c, fixedOptions(), PDF))
	idx := func(s string) int {
		return slices.IndexFunc(titles, func(t string) bool { return strings.HasPrefix(t, s) })
	}
	if !(idx("# Financial analysis") < idx("Cumulative cash flow") && idx("Cumulative cash flow") < idx("# Benefits plan")) {
		t.Errorf("cash-flow chart not under Financial analysis: %q", titles)
	}
	if !(idx("# Stakeholders") < idx("Stakeholders: power–interest grid")) {
		t.Errorf("grid not under Stakeholders: %q", titles)
	}
	if idx("# Supporting analysis") >= 0 {
		t.Errorf("every exhibit has a home, yet a Supporting analysis part: %q", titles)
	}

	c.Sections = c.Sections[:1] // only the executive summary
	o := fixedOptions()
	o.IncludeAppendices = false
	titles = blockTitles(newPlan(c, o, PDF))
	if idx("# Supporting analysis") < 0 || idx("Cumulative cash flow") < idx("# Supporting analysis") {
		t.Errorf("homeless exhibits not in Supporting analysis: %q", titles)
	}
	if idx("# Appendix") >= 0 || idx("Calculations") >= 0 {
		t.Errorf("appendix without IncludeAppendices: %q", titles)
	}
}

func TestSummarisedBenefitTablesKeepTheTotal(t *testing.T) {
	c := DemoCase()
	c.Template = BoardPresentation
	p := newPlan(c, fixedOptions(), PDF)
	var first table
	for _, b := range p.blocks {
		if tb, ok := b.(table); ok && strings.HasPrefix(tb.Title, "Benefits: expected vs actual") {
			first = tb
			break
		}
	}
	// Five largest by expected (measured or not), then the two smallest summed
	// (95,000 each; one measured at 71,000, one not measured: its 95,000 is
	// shown apart), then the total of all seven.
	if len(first.Rows) != 6 {
		t.Fatalf("rows = %d, want 5 + 1 other: %v", len(first.Rows), first.Rows)
	}
	want := []string{"2 other benefits", "", "95,000.00", "71,000.00", "−24,000.00", "−25.3%", "95,000.00"}
	if !slices.Equal(first.Rows[5], want) {
		t.Errorf("other row = %q, want %q", first.Rows[5], want)
	}
	// Totals by hand, like for like: expected of the six measured
	// 420+380+210+180+120+95 = 1,405k; actual 451.2+334.5+198.3+205+98.4+71 =
	// 1,358.4k; variance -46.6k over 1,405k = -3.32 %; not yet measured 95k.
	wantTotal := []string{"Total", "", "1,405,000.00", "1,358,400.00", "−46,600.00", "−3.3%", "95,000.00"}
	if !slices.Equal(first.Total, wantTotal) {
		t.Errorf("total = %q, want %q", first.Total, wantTotal)
	}
	if !strings.Contains(first.Title, "largest 5 of 7") {
		t.Errorf("title %q does not say the table is summarised", first.Title)
	}
}

func TestGridPlacesEveryStakeholderOnce(t *testing.T) {
	c := SyntheticCase(10, 6, 500)
	g := newPlan(c, fixedOptions(), PDF).grid()
	total := 0
	for _, q := range g.Quadrants {
		total += len(q.People) + q.More
		for _, s := range q.People {
			if s.quadrant() != q.Quadrant {
				t.Errorf("%s listed under %s", s.Name, q.Quadrant)
			}
		}
		// The most influential are listed first.
		for i := 1; i < len(q.People); i++ {
			if byInfluence(q.People[i-1], q.People[i]) > 0 {
				t.Errorf("%s: %s before %s", q.Quadrant, q.People[i-1].Name, q.People[i].Name)
			}
		}
	}
	if total != 500 {
		t.Errorf("grid counts %d people, want 500", total)
	}
	if got := QuadrantOf("critical", "high"); got != ManageClosely {
		t.Errorf("critical/high → %s", got)
	}
	if got := QuadrantOf("medium", "high"); got != KeepInformed {
		t.Errorf("medium/high → %s", got)
	}
	if got := QuadrantOf("high", "medium"); got != KeepSatisfied {
		t.Errorf("high/medium → %s", got)
	}
}

func TestProgressRisesToHundred(t *testing.T) {
	for _, f := range Formats {
		var seen []int
		o := fixedOptions()
		o.Progress = func(p int) { seen = append(seen, p) }
		renderBytes(t, f, DemoCase(), o)
		if len(seen) < 5 || seen[0] != 0 || seen[len(seen)-1] != 100 {
			t.Errorf("%s: progress %v, want 0 … 100 in several steps", f, seen)
		}
		if !slices.IsSorted(seen) || len(slices.Compact(slices.Clone(seen))) != len(seen) {
			t.Errorf("%s: progress %v not strictly increasing", f, seen)
		}
	}
}

func TestCancelledContextStopsRendering(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range Formats {
		err := Render(ctx, io.Discard, f, DemoCase(), fixedOptions())
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", f, err)
		}
	}
}

func TestSameSnapshotSameBytes(t *testing.T) {
	// The export's sha256 and ETag depend on this.
	for _, f := range Formats {
		a := renderBytes(t, f, DemoCase(), fixedOptions())
		b := renderBytes(t, f, DemoCase(), fixedOptions())
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renders of the same snapshot differ", f)
		}
	}
}

// TestOOXMLPackagesAreComplete opens each DOCX and PPTX as Office would:
// every part is well-formed XML, has a content type, and every relationship
// points at a part that exists.
func TestOOXMLPackagesAreComplete(t *testing.T) {
	hostile := DemoCase()
	hostile.Name = `Zürich <rollout> & "Łódź" 🚀` + "\x01"
	hostile.Stakeholders[0].Name = "Jürg <b>Meier</b> & Co"
	for _, f := range []Format{DOCX, PPTX} {
		for _, tmpl := range Templates {
			for _, c := range []*Case{DemoCase(), hostile} {
				c.Template = tmpl
				checkPackage(t, string(f)+"/"+string(tmpl), renderBytes(t, f, c, fixedOptions()))
			}
		}
	}
}

var relIDUse = regexp.MustCompile(`r:id="([^"]+)"`)

func checkPackage(t *testing.T, name string, data []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: not a zip: %v", name, err)
	}
	parts := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		parts[f.Name] = b
		if strings.HasSuffix(f.Name, ".xlsx") { // an embedded workbook: TestChartWorkbooksHoldTheChartsNumbers
			continue
		}
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := dec.Token(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %s is not well-formed: %v", name, f.Name, err)
			}
		}
	}
	var types struct {
		Defaults []struct {
			Extension string `xml:"Extension,attr"`
		} `xml:"Default"`
		Overrides []struct {
			PartName string `xml:"PartName,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(parts["[Content_Types].xml"], &types); err != nil {
		t.Fatalf("%s: content types: %v", name, err)
	}
	typed := map[string]bool{}
	for _, o := range types.Overrides {
		typed[strings.TrimPrefix(o.PartName, "/")] = true
		if _, ok := parts[strings.TrimPrefix(o.PartName, "/")]; !ok {
			t.Errorf("%s: content type for missing part %s", name, o.PartName)
		}
	}
	for _, d := range types.Defaults {
		if d.Extension == "xml" || d.Extension == "rels" {
			continue
		}
		for p := range parts {
			if strings.HasSuffix(p, "."+d.Extension) {
				typed[p] = true
			}
		}
	}
	for p := range parts {
		if !typed[p] && !strings.HasSuffix(p, ".rels") && p != "[Content_Types].xml" {
			t.Errorf("%s: part %s has no content type override", name, p)
		}
	}
	for p, b := range parts {
		if !strings.HasSuffix(p, ".rels") {
			continue
		}
		var rs struct {
			Rels []struct {
				Target string `xml:"Target,attr"`
				ID     string `xml:"Id,attr"`
			} `xml:"Relationship"`
		}
		if err := xml.Unmarshal(b, &rs); err != nil {
			t.Fatalf("%s: %s: %v", name, p, err)
		}
		// _rels/x.xml.rels is relative to the folder holding x.xml.
		base := path.Dir(path.Dir(p))
		owner := path.Join(base, strings.TrimSuffix(path.Base(p), ".rels"))
		ids := map[string]bool{}
		for _, r := range rs.Rels {
			if ids[r.ID] {
				t.Errorf("%s: %s: duplicate id %s", name, p, r.ID)
			}
			ids[r.ID] = true
			target := path.Clean(path.Join(base, r.Target))
			if _, ok := parts[target]; !ok {
				t.Errorf("%s: %s points at missing %s", name, p, target)
			}
		}
		// Every r:id the part uses is one of its relationships.
		for _, m := range relIDUse.FindAllSubmatch(parts[owner], -1) {
			if !ids[string(m[1])] {
				t.Errorf("%s: %s uses r:id %s, not in %s", name, owner, m[1], p)
			}
		}
	}
}

// minimalCase is what a fresh draft may look like: no figures, no data.
func minimalCase() *Case {
	return &Case{Name: "Łódź pilot", Version: 1, Status: "draft", Template: ExecutiveSummary, BaseCurrency: "PLN",
		Figures: KeyFigures{
			ROIPercent:    Figure{Reason: "no costs recorded yet"},
			NPV:           Figure{Reason: "no cash flows recorded yet"},
			IRR:           Figure{Reason: "cash flows never change sign"},
			PaybackMonths: Figure{Reason: "cumulative cash flow never turns positive"},
		}}
}

func TestEmptyDraftRendersInEveryFormat(t *testing.T) {
	for _, tmpl := range Templates {
		c := minimalCase()
		c.Template = tmpl
		for _, f := range Formats {
			b := renderBytes(t, f, c, Options{IncludeAppendices: true})
			if f != PDF {
				checkPackage(t, string(f)+"/"+string(tmpl)+" empty", b)
			}
		}
	}
}

// A document frozen before the like-for-like definitions (no version) keeps
// the table of its time: no "not yet measured" column, the expected column
// summing every row, its own note.
func TestBenefitsTableOfADocumentFrozenBefore(t *testing.T) {
	c := DemoCase()
	c.Figures.DefinitionsVersion = 0
	c.Benefits = []Benefit{
		{Name: "Measured", Expected: 1000, Actual: new(900.0), Variance: new(-100.0), VariancePercent: new(-10.0)},
		{Name: "Not measured", Expected: 500},
	}
	var tb table
	for _, b := range newPlan(c, fixedOptions(), PDF).blocks {
		if x, ok := b.(table); ok && strings.HasPrefix(x.Title, "Benefits: expected vs actual") {
			tb = x
			break
		}
	}
	want := []string{"Total", "", "1,500.00", "900.00", "−100.00", "−10.0%"}
	if len(tb.Cols) != 6 || !slices.Equal(tb.Total, want) || strings.Contains(tb.Note, "Like for like") {
		t.Errorf("old table: %d columns, total %q, note %q; want 6 columns, %q", len(tb.Cols), tb.Total, tb.Note, want)
	}
	c.Figures.DefinitionsVersion = LikeForLikeVersion
	c.Benefits[1] = Benefit{Name: "Not measured", Unmeasured: 500}
	for _, b := range newPlan(c, fixedOptions(), PDF).blocks {
		if x, ok := b.(table); ok && strings.HasPrefix(x.Title, "Benefits: expected vs actual") {
			tb = x
			break
		}
	}
	want = []string{"Total", "", "1,000.00", "900.00", "−100.00", "−10.0%", "500.00"}
	if len(tb.Cols) != 7 || !slices.Equal(tb.Total, want) {
		t.Errorf("like-for-like table: %d columns, total %q; want 7, %q", len(tb.Cols), tb.Total, want)
	}
}
