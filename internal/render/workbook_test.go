package render

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// chartRef is one cached series of a chart part: the cells it names and
// the values a viewer draws.
type chartRef struct {
	Ref   string `xml:"numRef>f"`
	Count struct {
		Val int `xml:"val,attr"`
	} `xml:"numRef>numCache>ptCount"`
	Pts []struct {
		Idx int    `xml:"idx,attr"`
		V   string `xml:"v"`
	} `xml:"numRef>numCache>pt"`
}

var cellRange = regexp.MustCompile(`^Sheet1!\$([A-Z])\$(\d+):\$([A-Z])\$(\d+)$`)

// TestChartWorkbooksHoldTheChartsNumbers opens the workbook embedded with
// every chart of every DOCX and PPTX (excelize, as "Edit Data" would) and
// reads the cells each series refers to: they hold the numbers the chart
// shows, empty where the chart has a gap.
func TestChartWorkbooksHoldTheChartsNumbers(t *testing.T) {
	for _, f := range []Format{DOCX, PPTX} {
		for _, tmpl := range Templates {
			c := DemoCase()
			c.Template = tmpl
			data := renderBytes(t, f, c, fixedOptions())
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, zf := range zr.File {
				rc, _ := zf.Open()
				parts[zf.Name], _ = io.ReadAll(rc)
				rc.Close()
			}
			charts := 0
			for name, body := range parts {
				if !strings.Contains(name, "/charts/chart") || !strings.HasSuffix(name, ".xml") {
					continue
				}
				charts++
				checkChartWorkbook(t, string(f)+"/"+string(tmpl)+"/"+name, name, body, parts)
			}
			if charts < 2 {
				t.Errorf("%s/%s: %d charts", f, tmpl, charts)
			}
		}
	}
}

func checkChartWorkbook(t *testing.T, label, name string, chartXML []byte, parts map[string][]byte) {
	t.Helper()
	relsName := path.Join(path.Dir(name), "_rels", path.Base(name)+".rels")
	var rs struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.Unmarshal(parts[relsName], &rs); err != nil || len(rs.Rels) != 1 || rs.Rels[0].Type != relPackage {
		t.Fatalf("%s: no workbook relationship (%v): %s", label, err, parts[relsName])
	}
	if !bytes.Contains(chartXML, []byte(`<c:externalData r:id="`+rs.Rels[0].ID+`">`)) {
		t.Errorf("%s: the chart does not name its workbook", label)
	}
	xlsx := parts[path.Clean(path.Join(path.Dir(name), rs.Rels[0].Target))]
	wb, err := excelize.OpenReader(bytes.NewReader(xlsx))
	if err != nil {
		t.Fatalf("%s: workbook does not open: %v", label, err)
	}
	defer wb.Close()
	var space struct {
		Vals []chartRef `xml:"chart>plotArea>lineChart>ser>val"`
		Bars []chartRef `xml:"chart>plotArea>barChart>ser>val"`
	}
	if err := xml.Unmarshal(chartXML, &space); err != nil {
		t.Fatal(err)
	}
	series := append(space.Vals, space.Bars...)
	if len(series) == 0 {
		t.Fatalf("%s: no series", label)
	}
	for _, s := range series {
		m := cellRange.FindStringSubmatch(s.Ref)
		if m == nil || m[1] != m[3] {
			t.Fatalf("%s: reference %q", label, s.Ref)
		}
		first, _ := strconv.Atoi(m[2])
		last, _ := strconv.Atoi(m[4])
		if last-first+1 != s.Count.Val {
			t.Errorf("%s: %s spans %d cells for %d points", label, s.Ref, last-first+1, s.Count.Val)
		}
		cached := map[int]float64{}
		for _, p := range s.Pts {
			cached[p.Idx], _ = strconv.ParseFloat(p.V, 64)
		}
		for i := range s.Count.Val {
			cell := m[1] + strconv.Itoa(first+i)
			raw, err := wb.GetCellValue("Sheet1", cell, excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatal(err)
			}
			want, drawn := cached[i]
			if !drawn {
				if raw != "" {
					t.Errorf("%s: %s holds %q where the chart has a gap", label, cell, raw)
				}
				continue
			}
			got, err := strconv.ParseFloat(raw, 64)
			if err != nil || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: %s holds %q, the chart shows %v", label, cell, raw, want)
			}
		}
	}
}

// TestDecksAreShortAndWatermarkIsBehind: a board or executive deck without
// appendices is at most 12 slides, and on every slide the diagonal
// watermark is the bottom shape, drawn before any content.
func TestDecksAreShortAndWatermarkIsBehind(t *testing.T) {
	for _, tmpl := range []Template{BoardPresentation, ExecutiveSummary} {
		c := DemoCase()
		c.Template = tmpl
		o := fixedOptions()
		o.IncludeAppendices = false
		data := renderBytes(t, PPTX, c, o)
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		slides := 0
		for _, zf := range zr.File {
			if !regexp.MustCompile(`^ppt/slides/slide\d+\.xml$`).MatchString(zf.Name) {
				continue
			}
			slides++
			rc, _ := zf.Open()
			body, _ := io.ReadAll(rc)
			rc.Close()
			shapes := regexp.MustCompile(`<p:sp>|<p:graphicFrame>`).FindAllIndex(body, -1)
			rot := bytes.Index(body, []byte(`rot="20100000"`))
			if rot < 0 || len(shapes) < 2 || rot > shapes[1][0] {
				t.Errorf("%s %s: the watermark is not the bottom shape", tmpl, zf.Name)
			}
		}
		if slides > 12 {
			t.Errorf("%s: %d slides without appendices, at most 12", tmpl, slides)
		}
	}
}

// TestTablesFoot: in every table of every template with a total row, each
// amount column's printed rows add up to its printed total, unless the
// table's note says why they may not.
func TestTablesFoot(t *testing.T) {
	checked := 0
	for _, tmpl := range Templates {
		c := DemoCase()
		c.Template = tmpl
		for _, b := range newPlan(c, fixedOptions(), PDF).blocks {
			tb, ok := b.(table)
			if !ok || tb.Total == nil || strings.Contains(tb.Note, "may differ") {
				continue
			}
			if !foots(tb) {
				t.Errorf("%s %q: foots says it does not, and the note does not say why", tmpl, tb.Title)
			}
			for col := range tb.Cols {
				if col >= len(tb.Total) || !tb.Cols[col].Right {
					continue
				}
				total, ok := parseAmount(tb.Total[col])
				if !ok {
					continue
				}
				sum, rows := 0.0, 0
				for _, r := range tb.Rows {
					if v, ok := parseAmount(r[col]); ok {
						sum, rows = sum+v, rows+1
					}
				}
				if rows == 0 {
					continue
				}
				checked++
				if math.Abs(sum-total) > 0.004 {
					t.Errorf("%s %q column %q: rows add to %.2f, total %s", tmpl, tb.Title, tb.Cols[col].Header, sum, tb.Total[col])
				}
			}
		}
	}
	if checked < 8 {
		t.Errorf("only %d columns checked", checked)
	}
}

// TestBenefitsTableSaysWhyItDoesNotFoot: three benefits of 0.33 each under
// an exact total of 1.00 (a third each, rounded once) do not add up; the
// table says so instead of leaving a reader to find the cent.
func TestBenefitsTableSaysWhyItDoesNotFoot(t *testing.T) {
	c := DemoCase()
	c.Benefits = []Benefit{{Name: "A", Category: "other", Expected: 0.33}, {Name: "B", Category: "other", Expected: 0.33}, {Name: "C", Category: "other", Expected: 0.33}}
	c.BenefitsTotal = &Benefit{Expected: 1}
	tb := newPlan(c, fixedOptions(), PDF).benefitsTable(0)
	if foots(tb) || !strings.Contains(tb.Note, "may differ") {
		t.Errorf("total %v under rows of 0.33: note %q", tb.Total, tb.Note)
	}
	c.BenefitsTotal = &Benefit{Expected: 0.99}
	if tb := newPlan(c, fixedOptions(), PDF).benefitsTable(0); !foots(tb) || strings.Contains(tb.Note, "may differ") {
		t.Errorf("a table that foots says it may not: %q", tb.Note)
	}
}
