package render

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/money"
)

// Number formats, one per kind of value, used by every format so a figure
// reads the same in the PDF, the DOCX and the PPTX (charts' axes too).
// Negatives carry the minus sign (U+2212), never a hyphen or parentheses:
//
//	amount in a table   1,250,000.00   negative −1,250,000.00   (the currency's minor units)
//	amount in prose     CHF 1,250,000.00   negative −CHF 1,250,000.00
//	big number          CHF 4.25m, CHF 850k, −CHF 1.2m   (axis labels: 4.25m, −2m)
//	percent             184.3%   −12.5%   change +20%, −10%
//	months              14 months, 14.5 months
//	dates               30 Jun 2028; months Jun 2028

// Minus is the sign of every negative figure.
const Minus = "\u2212"

// FormatAmount formats a table amount in currency: its ISO 4217 minor units
// (money.Places: USD 2, JPY 0, BHD 3), thousands separated by commas. The
// amount is rounded by the service's one rule (money.Round), so a document
// shows what the API shows.
func FormatAmount(v float64, currency string) string {
	places := money.Places(currency)
	r := money.RoundFloat(v, places)
	s := groupThousands(math.Abs(r), int(places))
	if r < 0 {
		return Minus + s
	}
	return s
}

// FormatMoney formats an amount with its currency for prose and figures.
func FormatMoney(v float64, currency string) string {
	places := money.Places(currency)
	r := money.RoundFloat(v, places)
	s := currency + " " + groupThousands(math.Abs(r), int(places))
	if r < 0 {
		return Minus + s
	}
	return s
}

// FormatMoneyShort formats a headline amount: CHF 4.25m, CHF 850k, CHF 900.
func FormatMoneyShort(v float64, currency string) string {
	s := shortNumber(math.Abs(v))
	if currency != "" {
		s = currency + " " + s
	}
	if money.RoundFloat(v, 0) < 0 {
		return Minus + s
	}
	return s
}

// shortNumber abbreviates: 4.25m, 850k, 1.2k, 900 (also the charts' axis
// labels). A value that rounds up into the next unit moves to it (999,999.7
// reads 1m, not 1000k).
func shortNumber(v float64) string {
	a := math.Abs(v)
	s := "0"
	for _, u := range []struct {
		min, div float64
		places   int
		suffix   string
	}{{1e9, 1e9, 2, "bn"}, {1e6, 1e6, 2, "m"}, {1e4, 1e3, 0, "k"}, {1e3, 1e3, 1, "k"}, {0, 1, 1, ""}} {
		r := money.RoundFloat(a/u.div, int32(u.places))
		if r*u.div < u.min {
			continue
		}
		s = trimZeros(strconv.FormatFloat(r, 'f', u.places, 64)) + u.suffix
		break
	}
	if v < 0 && s != "0" {
		return Minus + s
	}
	return s
}

// FormatPercent formats a percentage given in percent (12.5 → "12.5%").
func FormatPercent(v float64) string {
	r := money.RoundFloat(v, 1)
	if r == 0 {
		r = 0 // no "-0.0%"
	}
	if r < 0 {
		return Minus + groupThousands(-r, 1) + "%"
	}
	return groupThousands(r, 1) + "%"
}

// FormatChange formats a change in percent with its sign and no decimals
// when whole: +20%, −10%, +2.5%.
func FormatChange(v float64) string {
	r := money.RoundFloat(v, 1)
	s := trimZeros(strconv.FormatFloat(math.Abs(r), 'f', 1, 64)) + "%"
	switch {
	case r > 0:
		return "+" + s
	case r < 0:
		return Minus + s
	}
	return s
}

// FormatMonths formats a duration in months.
func FormatMonths(v float64) string {
	r := money.RoundFloat(v, 1)
	s := trimZeros(strconv.FormatFloat(r, 'f', 1, 64))
	if s == "1" {
		return "1 month"
	}
	return s + " months"
}

// FormatDate formats a date unambiguously for any reader: 31 Mar 2027.
func FormatDate(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Format("2 Jan 2006")
}

// FormatMonth formats a month the way FormatDate writes its month: Mar 2027.
func FormatMonth(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Format("Jan 2006")
}

// FormatTime formats an instant in UTC: 31 Mar 2027, 14:05 UTC.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2 Jan 2006, 15:04 MST")
}

// roiText is the ROI figure for display; an undefined one reads "n/a".
func (c *Case) roiText(f Figure) string {
	if f.Value == nil {
		return "n/a"
	}
	return FormatPercent(*f.Value)
}

// npvText is a money figure in the base currency; short abbreviates it for tight spaces.
func (c *Case) npvText(f Figure, short bool) string {
	if f.Value == nil {
		return "n/a"
	}
	if short {
		return FormatMoneyShort(*f.Value, c.BaseCurrency)
	}
	return FormatMoney(*f.Value, c.BaseCurrency)
}

// rateText is an annual rate given as a fraction (IRR, MIRR) in percent.
func rateText(f Figure) string {
	if f.Value == nil {
		return "n/a"
	}
	return FormatPercent(*f.Value * 100)
}

func paybackText(f Figure) string {
	if f.Value == nil {
		return "n/a"
	}
	return FormatMonths(*f.Value)
}

// optAmount is a nullable table amount; "–" when not measured yet.
func optAmount(v *float64, currency string) string {
	if v == nil {
		return "–"
	}
	return FormatAmount(*v, currency)
}

func optPercent(v *float64) string {
	if v == nil {
		return "–"
	}
	return FormatPercent(*v)
}

// labels are the enum values whose words are not the identifier's.
var labels = map[string]string{
	"capex": "Capital expenditure",
	"opex":  "Operating expenditure",
	"once":  "One-off",
}

// Label is an identifier in words for a reader, the one way every
// document shows an enum value: cost_savings → Cost savings, capex →
// Capital expenditure, pending_approval → Pending approval.
func Label(id string) string {
	if id == "" {
		return "–"
	}
	if l, ok := labels[id]; ok {
		return l
	}
	s := strings.ReplaceAll(id, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// groupThousands prints v with places decimals and commas between thousands.
func groupThousands(v float64, places int) string {
	s := strconv.FormatFloat(v, 'f', places, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// parseAmount reads a table amount as printed (1,234.50, −75.00); false
// for anything else (percentages, dashes, text).
func parseAmount(s string) (float64, bool) {
	neg := strings.HasPrefix(s, Minus)
	s = strings.ReplaceAll(strings.TrimPrefix(s, Minus), ",", "")
	if s == "" || strings.ContainsAny(s, "%–") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
