package benefit

import (
	"slices"
	"testing"

	"github.com/valuecase/valuecase/internal/finance"
)

func TestParsePeriod(t *testing.T) {
	good := map[string]finance.Month{"2026-01": mi(2026, 1), "2026-12": mi(2026, 12), "2000-06": mi(2000, 6), "9999-12": mi(9999, 12)}
	for s, want := range good {
		if got, ok := parsePeriod(s); !ok || got != want {
			t.Errorf("parsePeriod(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"2026-13", "2026-00", "2026-1", "26-01", "2026-01-01", "2026/01", "", "abcd-ef", "0000-01", " 2026-01", "2026-1 ", "+026-01"} {
		if _, ok := parsePeriod(s); ok {
			t.Errorf("parsePeriod(%q) accepted", s)
		}
	}
	if mi(2026, 4).String() != "2026-04" {
		t.Error("formatPeriod")
	}
}

func TestNormalise(t *testing.T) {
	quarterOf := []int{1, 1, 1, 4, 4, 4, 7, 7, 7, 10, 10, 10}
	for m := 1; m <= 12; m++ {
		if got := Normalise(Quarterly, mi(2026, m)); got != mi(2026, quarterOf[m-1]) {
			t.Errorf("quarterly 2026-%02d → %s, want 2026-%02d", m, got, quarterOf[m-1])
		}
		if Normalise(Monthly, mi(2026, m)) != mi(2026, m) {
			t.Errorf("monthly 2026-%02d must stay", m)
		}
		if OnGrid(Quarterly, mi(2026, m)) != (quarterOf[m-1] == m) {
			t.Errorf("OnGrid quarterly 2026-%02d", m)
		}
	}
}

func TestPeriods(t *testing.T) {
	cases := []struct {
		f        Frequency
		from, to finance.Month
		want     []finance.Month
	}{
		{Monthly, mi(2026, 1), mi(2026, 3), []finance.Month{mi(2026, 1), mi(2026, 2), mi(2026, 3)}},
		{Monthly, mi(2026, 5), mi(2026, 5), []finance.Month{mi(2026, 5)}},
		{Quarterly, mi(2026, 2), mi(2026, 11), []finance.Month{mi(2026, 1), mi(2026, 4), mi(2026, 7), mi(2026, 10)}},
		{Quarterly, mi(2025, 11), mi(2026, 1), []finance.Month{mi(2025, 10), mi(2026, 1)}},
		{Monthly, mi(2026, 3), mi(2026, 2), []finance.Month{}},
		{Quarterly, mi(2026, 5), mi(2026, 4), []finance.Month{}}, // inverted inside one quarter
	}
	for _, c := range cases {
		if got := Periods(c.f, c.from, c.to); !slices.Equal(got, c.want) || got == nil {
			t.Errorf("Periods(%s, %s, %s) = %v, want %v", c.f, c.from, c.to, got, c.want)
		}
	}
}
