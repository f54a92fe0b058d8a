package validation_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/internal/validation"
)

func TestText(t *testing.T) {
	cases := []struct {
		in        string
		multiline bool
		ok        bool
	}{
		{"Cloud migration", false, true},
		{"Caf\u00e9 \u05e9\u05dc\u05d5\u05dd \u200f", false, true}, // RTL text with a right-to-left mark
		{"\U0001F469\u200D\U0001F4BB", false, true},                // a ZWJ emoji sequence is not blank
		{"   ", false, true},                                       // white space alone: the caller's required rule
		{"", false, true},
		{"a\x00b", true, false}, // NUL: PostgreSQL text cannot hold it (code invalid_value)
		{"a\tb", false, false},
		{"a\tb\r\nc", true, true},
		{"a\x1bb", true, false},
		{"a\u0085b", true, false},
		{"a\u007fb", true, false},
		{"a\u2028b", false, false},
		{"a\u2028b", true, true},
		{"abc\u202Etxt", true, false},
		{"\u202A", false, false},
		{"a\u2069", false, false},
		{"\u200b", false, false},
		{" \u200b\u200c\u200d\u2060\ufeff ", false, false},
		{"\u3164\u115f", false, false},
		{"\u00ad", false, false},
		{"x\u200b", false, true},
	}
	for _, c := range cases {
		err := validation.Text("name", c.in, c.multiline)
		if (err == nil) != c.ok {
			t.Errorf("Text(%q, multiline=%v) = %v, want ok=%v", c.in, c.multiline, err, c.ok)
			continue
		}
		if err != nil {
			e, _ := errors.AsType[*validation.Error](err)
			want := validation.CodeInvalidCharacters
			if strings.ContainsRune(c.in, 0) {
				want = validation.CodeInvalidValue
			}
			if e == nil || e.Field != "name" || e.Code != want {
				t.Errorf("Text(%q): %#v", c.in, err)
			}
		}
	}
}
