package finance

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

// goldenCase is a net monthly series (index 0 = t = 0) with its NPV and IRR
// as LibreOffice Calc computes them.
//
// How the golden numbers were produced (independently of this package):
// testdata/golden.fods holds one column per case: the annual rate, the
// monthly rate as the formula =(1+rate)^(1/12)-1, the NPV as
// =CF0+NPV(monthly;CF1:CFn), the monthly IRR as =IRR(CF0:CFn;guess), the
// annual IRR as =(1+irr)^12-1, then the flows. The sheet is written from
// the flows of this table (TestGoldenSheet keeps it in step; -update-sheet
// rewrites it) and testdata/golden.sh has LibreOffice 7.4 Calc evaluate it
// headless (soffice --convert-to csv, 15 significant digits) and prints the
// results, which were copied below. Calc solves IRR by Newton's method from
// the guess (shown per case; the guess only picks which root Calc lands
// on) and answers an error where we expect no IRR (Err:523 for all four
// no-IRR cases). Tolerances: NPV 1e-6 relative, annual IRR 1e-7 absolute.
type goldenCase struct {
	name  string
	rate  float64 // annual discount rate
	flows []float64
	guess float64 // Calc IRR guess (monthly)
	alt   float64 // a second Calc guess, to show other roots

	npv       float64
	irr       float64 // annual, when irrReason is ""
	irrReason Reason
	// otherRoot is a second monthly root Calc found from the alt guess,
	// farther from 0 than the IRR reported (0: none).
	otherRoot float64
}

// series builds n flows with flow(t).
func series(n int, flow func(t int) float64) []float64 {
	out := make([]float64, n)
	for t := range out {
		out[t] = flow(t)
	}
	return out
}

var goldenCases = []goldenCase{
	{
		// 36 months: capex 120,000 at t0 and 20,000 at t1, opex 1,500 a
		// month from t1; benefits from t3 ramping 1,000 a month up to
		// 10,000 (reached at t12).
		name: "typical", rate: 0.08, guess: 0.1, alt: -0.5,
		flows: typicalFlows(),
		npv:   62541.6886197776, irr: 0.3377940813244,
	},
	{
		// Benefits only, 1,000 + 50t for 24 months, at a 0 % rate:
		// NPV = Σ = 24·1,000 + 50·(0+..+23) = 24,000 + 13,800 = 37,800.
		name: "no_costs", rate: 0, guess: 0.1, alt: -0.5,
		flows: series(24, func(t int) float64 { return 1000 + 50*float64(t) }),
		npv:   37800, irrReason: NoSignChange,
	},
	{
		name: "all_costs", rate: 1, guess: 0.1, alt: -0.5,
		flows: series(24, func(int) float64 { return -500 }),
		npv:   -6681.43265441466, irrReason: NoSignChange,
	},
	{
		name: "zero_flows", rate: 0.08, guess: 0.1, alt: -0.5,
		flows: make([]float64, 12),
		npv:   0, irrReason: NoSignChange,
	},
	{
		// 60 months: 250,000 up front, then a seasonal 7,000 ± 1,500 a
		// month (rounded to cents).
		name: "horizon_60", rate: 0.12, guess: 0.1, alt: -0.5,
		flows: series(60, func(t int) float64 {
			if t == 0 {
				return -250000
			}
			return math.Round((7000+1500*math.Sin(2*math.Pi*float64(t)/12))*100) / 100
		}),
		npv: 66352.9615697697, irr: 0.250808338734111,
	},
	{
		// 240 months (20 years): 1,000,000 up front, then 9,000 a month
		// growing 0.2 % a month.
		name: "horizon_240", rate: 0.05, guess: 0.01, alt: 0.5,
		flows: series(240, func(t int) float64 {
			if t == 0 {
				return -1e6
			}
			return 9000 * math.Pow(1.002, float64(t-1))
		}),
		npv: 692065.080511543, irr: 0.119851639360714,
	},
	{
		// 1,000,000 up front, 60 × 16,667 = 1,000,020 back: an IRR of a
		// few millionths.
		name: "tiny_irr", rate: 0.08, guess: 0, alt: 0.1,
		flows: series(61, func(t int) float64 {
			if t == 0 {
				return -1e6
			}
			return 16667
		}),
		npv: -172568.395854837, irr: 7.86883010128747e-06,
	},
	{
		// 1,000 up front, 1,500 a month for 24 months: ~150 % a month.
		name: "huge_irr", rate: 0.08, guess: 1, alt: 0.1,
		flows: series(25, func(t int) float64 {
			if t == 0 {
				return -1000
			}
			return 1500
		}),
		npv: 32259.3671289503, irr: 59603.6446545944,
	},
	{
		// Invest 10,000, earn 1,200 a month for 23 months, pay 18,000 to
		// wind down at t24: two roots; the one closest to 0 is reported
		// (Calc from guess 0), the other is Calc's answer from guess 0.1.
		name: "two_sign_changes", rate: 0.08, guess: 0, alt: 0.1,
		flows: series(25, func(t int) float64 {
			switch t {
			case 0:
				return -10000
			case 24:
				return -18000
			}
			return 1200
		}),
		npv: 146.588353365963, irr: 0.0549276234503986,
		otherRoot: 0.0693853396890928,
	},
	{
		// −300, +100 ×3: paid back exactly at a month boundary, IRR 0.
		name: "payback_at_boundary", rate: 0.08, guess: 0.1, alt: -0.5,
		flows: []float64{-300, 100, 100, 100},
		npv:   -3.81941727625588, irr: 0,
	},
	{
		// −1,000, +100 ×5: never paid back, a negative IRR.
		name: "payback_never", rate: 0.08, guess: -0.1, alt: 0.1,
		flows: []float64{-1000, 100, 100, 100, 100, 100},
		npv:   -509.507999634892, irr: -0.924854885561427,
	},
}

// typicalFlows is the "typical" case; its parts are in TestEvaluateTypical.
func typicalFlows() []float64 { return typicalCashFlows().NetFloat() }

func typicalCashFlows() CashFlows {
	cf := CashFlows{Start: MonthOf(2026, 1), Benefits: make([]decimal.Decimal, 36), Costs: make([]decimal.Decimal, 36)}
	cf.Costs[0] = d(120000)
	cf.Costs[1] = d(20000)
	for t := 1; t < 36; t++ {
		cf.Costs[t] = cf.Costs[t].Add(d(1500))
	}
	for t := 3; t < 36; t++ {
		cf.Benefits[t] = d(min(10000, 1000*float64(t-2)))
	}
	return cf
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NPV(tc.flows, tc.rate); math.Abs(got-tc.npv) > 1e-6*math.Abs(tc.npv) {
				t.Errorf("NPV = %.15g, want %.15g", got, tc.npv)
			}
			got := IRR(tc.flows)
			if tc.irrReason != "" {
				if got.Value != nil || got.Reason != tc.irrReason {
					t.Errorf("IRR = %v, want null (%s)", got, tc.irrReason)
				}
				return
			}
			if v, ok := got.Get(); !ok || math.Abs(v-tc.irr) > 1e-7 {
				t.Errorf("IRR = %v, want %.15g", got, tc.irr)
			}
			if tc.otherRoot != 0 { // a real root too, but farther from 0
				scale := 0.0
				for _, cf := range tc.flows {
					scale += math.Abs(cf)
				}
				if npv := NPV(tc.flows, AnnualRate(tc.otherRoot)); math.Abs(npv) > 1e-9*scale {
					t.Errorf("NPV at the other root %v = %v, want 0", tc.otherRoot, npv)
				}
				if math.Abs(MonthlyRate(*got.Value)) >= math.Abs(tc.otherRoot) {
					t.Errorf("IRR %v is not the root nearer 0 (other root: monthly %v)", got, tc.otherRoot)
				}
			}
		})
	}
}

var updateSheet = flag.Bool("update-sheet", false, "rewrite testdata/golden.fods from goldenCases")

const goldenSheet = "testdata/golden.fods"

// TestGoldenSheet keeps testdata/golden.fods holding exactly the flows of
// goldenCases, so the numbers Calc computes from it are about these flows.
func TestGoldenSheet(t *testing.T) {
	want := renderGoldenSheet(goldenCases)
	if *updateSheet {
		must(t, os.WriteFile(goldenSheet, want, 0o644))
	}
	got, err := os.ReadFile(goldenSheet)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of step with goldenCases: run go test -run TestGoldenSheet -update-sheet, then testdata/golden.sh, and copy the new numbers", goldenSheet)
	}
}

// renderGoldenSheet writes the cases as a flat ODF spreadsheet, one column
// per case, formulas in rows 3..9 and the flows from row 10.
func renderGoldenSheet(cases []goldenCase) []byte {
	const firstFlowRow = 10
	labels := []string{"case", "annual_rate", "monthly_rate", "npv", "irr_monthly", "irr_annual", "guess", "alt_guess", "irr_monthly_alt_guess"}
	rows := len(labels)
	for _, c := range cases {
		rows = max(rows, firstFlowRow-1+len(c.flows))
	}
	cell := make([][]string, rows) // cell[row][col], col 0 = labels
	for r := range cell {
		cell[r] = make([]string, len(cases)+1)
	}
	for r, l := range labels {
		cell[r][0] = stringCell(l)
	}
	for i, c := range cases {
		col := string(rune('B' + i))
		ref := func(row int) string { return fmt.Sprintf("[.%s%d]", col, row) }
		flows := fmt.Sprintf("[.%s%d:.%s%d]", col, firstFlowRow, col, firstFlowRow+len(c.flows)-1)
		later := fmt.Sprintf("[.%s%d:.%s%d]", col, firstFlowRow+1, col, firstFlowRow+len(c.flows)-1)
		cell[0][i+1] = stringCell(c.name)
		cell[1][i+1] = floatCell(c.rate)
		cell[2][i+1] = formulaCell("=(1+" + ref(2) + ")^(1/12)-1")
		cell[3][i+1] = formulaCell("=" + ref(firstFlowRow) + "+NPV(" + ref(3) + ";" + later + ")")
		cell[4][i+1] = formulaCell("=IRR(" + flows + ";" + ref(7) + ")")
		cell[5][i+1] = formulaCell("=(1+" + ref(5) + ")^12-1")
		cell[6][i+1] = floatCell(c.guess)
		cell[7][i+1] = floatCell(c.alt)
		cell[8][i+1] = formulaCell("=IRR(" + flows + ";" + ref(8) + ")")
		for t, v := range c.flows {
			cell[firstFlowRow-1+t][i+1] = floatCell(v)
		}
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<!-- Generated by internal/finance golden_test.go (go test -run TestGoldenSheet -update-sheet); evaluate with testdata/golden.sh. -->
<office:automatic-styles>
<number:number-style style:name="sci"><number:scientific-number number:decimal-places="16" number:min-integer-digits="1" number:min-exponent-digits="2"/></number:number-style>
<style:style style:name="result" style:family="table-cell" style:data-style-name="sci"/>
</office:automatic-styles>
<office:body><office:spreadsheet><table:table table:name="golden">
`)
	for _, row := range cell {
		b.WriteString("<table:table-row>")
		for _, c := range row {
			if c == "" {
				c = "<table:table-cell/>"
			}
			b.WriteString(c)
		}
		b.WriteString("</table:table-row>\n")
	}
	b.WriteString("</table:table></office:spreadsheet></office:body></office:document>\n")
	return b.Bytes()
}

func stringCell(s string) string {
	return `<table:table-cell office:value-type="string"><text:p>` + s + `</text:p></table:table-cell>`
}

func floatCell(v float64) string {
	return `<table:table-cell office:value-type="float" office:value="` + strconv.FormatFloat(v, 'g', -1, 64) + `"/>`
}

func formulaCell(f string) string {
	return `<table:table-cell table:style-name="result" table:formula="of:` + f + `"/>`
}
