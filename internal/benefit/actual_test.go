package benefit

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/validation"
)

func TestCheckActualPeriod(t *testing.T) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	monthlyStart := date(2025, 3, 15)
	quarterlyStart := date(2025, 5, 10) // its period is the quarter 2025-04
	cases := []struct {
		name   string
		f      Frequency
		start  time.Time
		period string
		want   finance.Month // the period filed under
		code   string        // "" = accepted
	}{
		{"current month", Monthly, monthlyStart, "2026-11", mi(2026, 11), ""},
		{"next month", Monthly, monthlyStart, "2026-12", 0, validation.CodeInFuture},
		{"far future", Monthly, monthlyStart, "2031-01", 0, validation.CodeInFuture},
		{"the start month (start mid-month)", Monthly, monthlyStart, "2025-03", mi(2025, 3), ""},
		{"before the start month", Monthly, monthlyStart, "2025-02", 0, validation.CodeTooEarly},
		{"malformed month 13", Monthly, monthlyStart, "2026-13", 0, validation.CodeInvalidFormat},
		{"malformed day given", Monthly, monthlyStart, "2026-01-01", 0, validation.CodeInvalidFormat},
		{"empty", Monthly, monthlyStart, "", 0, validation.CodeInvalidFormat},
		{"quarterly, first month of start's quarter (before the start date)", Quarterly, quarterlyStart, "2025-04", mi(2025, 4), ""},
		{"quarterly, any month files under its quarter", Quarterly, quarterlyStart, "2025-06", mi(2025, 4), ""},
		{"quarterly, the quarter before start's", Quarterly, quarterlyStart, "2025-03", 0, validation.CodeTooEarly},
		{"quarterly, current month of a quarter in progress", Quarterly, quarterlyStart, "2026-11", mi(2026, 10), ""},
		{"quarterly, next month of the current quarter is still future", Quarterly, quarterlyStart, "2026-12", 0, validation.CodeInFuture},
	}
	for _, c := range cases {
		got, err := CheckActualPeriod(c.f, c.period, c.start, now)
		if c.code == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: got %s, %v; want %s", c.name, got, err, c.want)
			}
			continue
		}
		if codes := fieldCodes(t, err); codes["period"] != c.code || len(codes) != 1 {
			t.Errorf("%s: got %v, want period=%s", c.name, codes, c.code)
		}
	}
}

func TestCheckActualPeriodUsesUTC(t *testing.T) {
	// 23:30 on 30 November in New York is already 1 December in UTC: December is the current month.
	ny := time.FixedZone("EST", -5*3600)
	now := time.Date(2026, 11, 30, 23, 30, 0, 0, ny)
	if p, err := CheckActualPeriod(Monthly, "2026-12", date(2026, 1, 1), now); err != nil || p != mi(2026, 12) {
		t.Errorf("got %v, %v", p, err)
	}
}

func TestClassifyFiling(t *testing.T) {
	link, other := "https://x.example/a", "https://x.example/b"
	cases := []struct {
		previous *Filed
		next     Filed
		want     Filing
	}{
		{nil, Filed{Value: 10}, FirstValue},
		{nil, Filed{Value: 0}, FirstValue},
		{&Filed{Value: 10}, Filed{Value: 10}, SameValue},
		{&Filed{Value: 10}, Filed{Value: 10.5}, Correction},
		{&Filed{Value: 0}, Filed{Value: 0}, SameValue},
		{&Filed{Value: -3}, Filed{Value: 3}, Correction},
		{&Filed{Value: 10, Notes: "close"}, Filed{Value: 10, Notes: "close", EvidenceURL: &link}, Correction},
		{&Filed{Value: 10, Notes: "close"}, Filed{Value: 10, Notes: "restated"}, Correction},
		{&Filed{Value: 10, EvidenceURL: &link}, Filed{Value: 10, EvidenceURL: &other}, Correction},
		{&Filed{Value: 10, EvidenceURL: &link}, Filed{Value: 10, EvidenceURL: new("https://x.example/a")}, SameValue},
	}
	for i, c := range cases {
		if got := ClassifyFiling(c.previous, c.next); got != c.want {
			t.Errorf("case %d: ClassifyFiling(%+v, %+v) = %v, want %v", i, c.previous, c.next, got, c.want)
		}
	}
}

func TestCheckCanCorrect(t *testing.T) {
	if CheckCanCorrect(0) != nil || CheckCanCorrect(MaxRevisions-1) != nil {
		t.Error("below the limit a correction is allowed")
	}
	if !errors.Is(CheckCanCorrect(MaxRevisions), ErrTooManyRevisions) {
		t.Error("the 101st correction must be refused")
	}
}

func TestCheckEvidenceURL(t *testing.T) {
	for _, ok := range []string{"https://finance.example.com/close/2026-03", "http://intranet/x?y=1#z", "HTTPS://EXAMPLE.COM"} {
		if err := CheckEvidenceURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for s, code := range map[string]string{
		"finance.example.com/x":   validation.CodeInvalidFormat,
		"/relative/path":          validation.CodeInvalidFormat,
		"ftp://example.com/x":     validation.CodeInvalidFormat,
		"javascript:alert(1)":     validation.CodeInvalidFormat,
		"https://":                validation.CodeInvalidFormat,
		"mailto:cfo@example.com":  validation.CodeInvalidFormat,
		"https://example.com/a b": validation.CodeInvalidFormat,
		"":                        validation.CodeInvalidFormat,
		"https://example.com/" + strings.Repeat("a", MaxEvidenceURLLen): validation.CodeTooLong,
	} {
		if codes := fieldCodes(t, CheckEvidenceURL(s)); codes["evidence_url"] != code {
			t.Errorf("%.40q: got %v, want %s", s, codes, code)
		}
	}
}
