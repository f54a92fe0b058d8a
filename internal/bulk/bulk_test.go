package bulk

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	cols := Columns{"value": Number}
	recs, err := ParseCSV([]byte("\ufeffbenefit_id, period ,value,notes\nb1,2026-01,1e3,\"a, \"\"b\"\"\nc\"\nb2,2026-02,abc,\n"), cols)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0]["value"]) != "1000" || string(recs[0]["notes"]) != `"a, \"b\"\nc"` ||
		string(recs[0]["period"]) != `"2026-01"` || string(recs[1]["value"]) != `"abc"` {
		t.Errorf("records: %q", recs)
	}
	if _, ok := recs[1]["notes"]; ok {
		t.Error("an empty cell must be an absent field")
	}
	for _, bad := range []string{"", "a,b\n1\n", "a,a\n1,2\n", "a,\n1,2\n", "a\n\"x\n"} {
		var pe *ParseError
		if _, err := ParseCSV([]byte(bad), cols); !errors.As(err, &pe) {
			t.Errorf("%q: %v, want a ParseError", bad, err)
		}
	}
	if _, err := ParseCSV([]byte("0x10"), Columns{"0x10": Number}); err != nil {
		t.Error(err)
	}
	if got := string(cellJSON("0x10", Number)); got != `"0x10"` {
		t.Errorf("hex is text: %s", got)
	}
	// Nested cells (a benefit's plan): JSON arrays and objects as they are, anything else text.
	for cell, want := range map[string]string{
		` [{"period":"2026-01","expected":5}] `: `[{"period":"2026-01","expected":5}]`,
		`{"a":1}`:                               `{"a":1}`,
		`[oops`:                                 `"[oops"`,
		`12`:                                    `"12"`,
		`"quoted"`:                              `"\"quoted\""`,
	} {
		if got := string(cellJSON(cell, Nested)); got != want {
			t.Errorf("nested %q: %s, want %s", cell, got, want)
		}
	}
	var sb strings.Builder
	w, _ := NewCSVWriter(&sb, []string{"plan", "name"})
	_ = w.Write(map[string]any{"plan": json.RawMessage(`[{"period":"2026-01"}]`), "name": "x"})
	_ = w.Flush()
	if sb.String() != "plan,name\n\"[{\"\"period\"\":\"\"2026-01\"\"}]\",x\n" {
		t.Errorf("csv of a nested value: %q", sb.String())
	}
}

func TestParseNDJSON(t *testing.T) {
	recs, err := ParseNDJSON([]byte("{\"a\":1}\n\n  {\"a\":2}  \r\n{\"a\":3}"))
	if err != nil || len(recs) != 3 || string(recs[2]["a"]) != "3" {
		t.Fatalf("%v %v", recs, err)
	}
	_, err = ParseNDJSON([]byte("{\"a\":1}\n[1]\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("got %v, want a ParseError on line 2", err)
	}
	if _, err := ParseNDJSON([]byte(strings.Repeat("{}\n", MaxRows+1))); !errors.Is(err, ErrTooManyRows) {
		t.Errorf("got %v, want ErrTooManyRows", err)
	}
}

func TestCommitAndSummary(t *testing.T) {
	s := Summarise([]Result{{Status: Created}, {Status: Failed}, {Status: Unchanged}, {Status: Updated}})
	if s != (Summary{Total: 4, Created: 1, Updated: 1, Unchanged: 1, Failed: 1}) {
		t.Errorf("summary %+v", s)
	}
	cases := []struct {
		o    Options
		want bool
	}{
		{Options{}, true}, {Options{DryRun: true}, false}, {Options{Atomic: true}, false},
	}
	for _, c := range cases {
		if got := c.o.Commit(s); got != c.want {
			t.Errorf("%+v: commit %v", c.o, got)
		}
	}
	if !(Options{Atomic: true}).Commit(Summary{Total: 1, Created: 1}) {
		t.Error("an atomic import without errors commits")
	}
}

// Text a spreadsheet would evaluate is written with a leading apostrophe
// (OWASP's CSV injection rule), numbers are left alone, and ParseCSV reads
// every value back as it was.
func TestCSVFormulaNeutralisedAndRoundTrips(t *testing.T) {
	values := map[string]string{ // value → cell
		"=cmd|' /C calc'!A0":         "'=cmd|' /C calc'!A0",
		"+1+1":                       "'+1+1",
		"-2+3":                       "'-2+3",
		"@SUM(A1:A2)":                "'@SUM(A1:A2)",
		"\t=1":                       "'\t=1",
		"\r=1":                       "'\r=1",
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`,
		"'=already quoted":           "''=already quoted",
		"''+twice":                   "'''+twice",
		"-5":                         "-5",
		"+1.5e3":                     "+1.5e3",
		"'-5":                        "''-5",
		"'plain":                     "'plain",
		"Cloud migration":            "Cloud migration",
		"a=b":                        "a=b",
		"":                           "",
		"-":                          "'-",
		"-Infinity":                  "'-Infinity",
	}
	var buf strings.Builder
	w, err := NewCSVWriter(&buf, []string{"name", "value"})
	if err != nil {
		t.Fatal(err)
	}
	order := slices.Sorted(maps.Keys(values))
	for _, v := range order {
		if err := w.Write(map[string]any{"name": v, "value": -5.0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range order {
		if got := rows[i+1][0]; got != values[v] {
			t.Errorf("%q written as %q, want %q", v, got, values[v])
		}
		if rows[i+1][1] != "-5" {
			t.Errorf("the number -5 written as %q", rows[i+1][1])
		}
	}
	recs, err := ParseCSV([]byte(buf.String()), Columns{"value": Number})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range order {
		var got string
		if v != "" {
			if err := json.Unmarshal(recs[i]["name"], &got); err != nil {
				t.Fatal(err)
			}
		}
		if got != v {
			t.Errorf("%q read back as %q", v, got)
		}
		if string(recs[i]["value"]) != "-5" {
			t.Errorf("-5 read back as %s", recs[i]["value"])
		}
	}
}

// A job reads its records chunk by chunk: every reader keeps answering io.EOF
// once the body has ended.
func TestRecordsEndForGood(t *testing.T) {
	j, err := NewJSONRecords(json.RawMessage(`[{"a":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCSVRecords([]byte("a\n1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Records{"json": j, "csv": c, "ndjson": NewNDJSONRecords([]byte("{\"a\":1}\n"))} {
		first, err := ReadRecords(r, 5)
		if err != nil || len(first) != 1 {
			t.Fatalf("%s: %v %v", name, first, err)
		}
		for range 2 {
			if rec, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("%s: after the end got %v %v, want io.EOF", name, rec, err)
			}
		}
	}
	r := Concat([]Record{{"a": json.RawMessage("0")}}, NewNDJSONRecords([]byte("{\"a\":1}")))
	if all, err := ReadRecords(r, 5); err != nil || len(all) != 2 || string(all[0]["a"]) != "0" || string(all[1]["a"]) != "1" {
		t.Errorf("Concat: %v %v", all, err)
	}
}
