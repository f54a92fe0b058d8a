package finance

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

func TestParseMonth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Month
	}{
		{"2026-01", 2026*12 + 0},
		{"2026-12", 2026*12 + 11},
		{"0001-01", 12},
		{"9999-12", 9999*12 + 11},
	} {
		got, err := ParseMonth(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMonth(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("ParseMonth(%q).String() = %q", tc.in, got.String())
		}
	}
	for _, bad := range []string{
		"2026-13", "2026-00", "2026-1", "26-01", "2026-01-01", "2026/01", "", "0000-05",
		"+026-01", "2026-+1", " 026-01", "2026-1 ", "２０２６-01", "2026_01", "abcd-ef",
	} {
		if m, err := ParseMonth(bad); err == nil {
			t.Errorf("ParseMonth(%q) = %v, want an error", bad, m)
		}
	}
}

func TestMonthArithmetic(t *testing.T) {
	m := MonthOf(2026, time.November)
	for _, tc := range []struct {
		got, want string
	}{
		{m.Add(2).String(), "2027-01"},
		{m.Add(13).String(), "2027-12"},
		{m.Add(-11).String(), "2025-12"},
		{m.Add(-23).String(), "2024-12"},
		{m.QuarterStart().String(), "2026-10"},
		{MonthOf(2026, time.May).QuarterStart().String(), "2026-04"},
		{MonthOf(2026, time.January).QuarterStart().String(), "2026-01"},
		{MonthOf(2026, time.March).QuarterStart().String(), "2026-01"},
		{MonthOfTime(time.Date(2026, 3, 31, 23, 30, 0, 0, time.FixedZone("x", -3600))).String(), "2026-04"},
		{m.FirstDay().Format(time.RFC3339), "2026-11-01T00:00:00Z"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	if y, mo := m.Year(), m.MonthOfYear(); y != 2026 || mo != time.November {
		t.Errorf("Year, MonthOfYear = %d, %v", y, mo)
	}
}

func TestFiscalYear(t *testing.T) {
	mustMonth := func(s string) Month { m, err := ParseMonth(s); must(t, err); return m }
	for _, tc := range []struct {
		month string
		start int
		want  int
	}{
		{"2026-01", 1, 2026},
		{"2026-12", 1, 2026},
		{"2026-04", 4, 2026},
		{"2027-03", 4, 2026},
		{"2026-03", 4, 2025},
		{"2026-12", 12, 2026},
		{"2026-11", 12, 2025},
	} {
		if got := FiscalYear(mustMonth(tc.month), tc.start); got != tc.want {
			t.Errorf("FiscalYear(%s, %d) = %d, want %d", tc.month, tc.start, got, tc.want)
		}
	}
	first, last := FiscalYearRange(2026, 4)
	if first.String() != "2026-04" || last.String() != "2027-03" {
		t.Errorf("FiscalYearRange(2026, 4) = %s..%s, want 2026-04..2027-03", first, last)
	}
	first, last = FiscalYearRange(2026, 1)
	if first.String() != "2026-01" || last.String() != "2026-12" {
		t.Errorf("FiscalYearRange(2026, 1) = %s..%s", first, last)
	}
	defer func() {
		if recover() == nil {
			t.Error("FiscalYear with start month 13 did not panic")
		}
	}()
	FiscalYear(first, 13)
}

func TestMonthJSON(t *testing.T) {
	type doc struct {
		Period Month `json:"period"`
	}
	b, err := json.Marshal(doc{MonthOf(2026, time.April)})
	must(t, err)
	if string(b) != `{"period":"2026-04"}` {
		t.Errorf("marshal = %s", b)
	}
	var d doc
	must(t, json.Unmarshal([]byte(`{"period":"2027-02"}`), &d))
	if d.Period != MonthOf(2027, time.February) {
		t.Errorf("unmarshal = %s", d.Period)
	}
	if err := json.Unmarshal([]byte(`{"period":"2027-2"}`), &d); err == nil {
		t.Error("unmarshal of 2027-2 succeeded")
	}
}

func TestHorizon(t *testing.T) {
	h := Horizon{MonthOf(2026, time.January), MonthOf(2026, time.December)}
	if h.Len() != 12 || !h.Contains(h.End) || h.Contains(h.End.Add(1)) || h.Contains(h.Start.Add(-1)) {
		t.Errorf("horizon %v: Len %d", h, h.Len())
	}
	if (Horizon{h.End, h.Start}).Len() != 0 {
		t.Error("inverted horizon has months")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckInputPeriod(t *testing.T) {
	cases := []struct {
		in   string
		code string // "" = accepted
	}{
		{"2026-04", ""}, {"2000-01", ""}, {"2099-12", ""},
		{"", validation.CodeRequired},
		{"2026-4", validation.CodeInvalidFormat}, {"2026-13", validation.CodeInvalidFormat}, {"April", validation.CodeInvalidFormat},
		{"1999-12", validation.CodeOutOfRange}, {"0026-04", validation.CodeOutOfRange}, {"2100-01", validation.CodeOutOfRange},
	}
	for _, c := range cases {
		m, err := CheckInputPeriod("period", c.in)
		if c.code == "" {
			if err != nil || m.String() != c.in {
				t.Errorf("%q: got %v, %v", c.in, m, err)
			}
			continue
		}
		if ve, ok := errors.AsType[*validation.Error](err); !ok || ve.Code != c.code || ve.Field != "period" {
			t.Errorf("%q: got %v, want %s", c.in, err, c.code)
		}
	}
}
