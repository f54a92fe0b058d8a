// Package input reads a decoded JSON object field by field, so that a wrong
// type or an unknown field is reported against the field that has it and a
// client learns every failure of a request in one round. The single routes'
// bodies, the rows of a bulk import and nested objects are all read with it.
package input

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valuecase/valuecase/internal/validation"
)

// Object is a decoded JSON object whose fields are read one by one; failures
// collect until Done.
type Object struct {
	fields map[string]json.RawMessage
	errs   validation.Errors
	seen   map[string]bool
}

// New reads fields (a decoded JSON object; nil is an empty one).
func New(fields map[string]json.RawMessage) *Object {
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	return &Object{fields: fields, seen: map[string]bool{}}
}

// Decode reads raw as one JSON object; ok is false when it is not one.
func Decode(raw json.RawMessage) (o *Object, ok bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, false
	}
	return New(fields), true
}

// Raw is the field's JSON as sent (nil when absent); read Has first so the
// field counts as known.
func (o *Object) Raw(field string) json.RawMessage { return o.fields[field] }

// Errors are the failures collected so far.
func (o *Object) Errors() validation.Errors { return o.errs }

// Adopt takes a nested object's failures, their fields prefixed (e.g.
// "plan[2]." or "decision_request.").
func (o *Object) Adopt(prefix string, sub *Object) {
	for _, e := range sub.errs {
		o.errs = append(o.errs, &validation.Error{Field: prefix + e.Field, Code: e.Code, Message: e.Message})
	}
}

// Unknown lists, sorted, the fields no reader has asked for.
func (o *Object) Unknown() []string {
	var unknown []string
	for f := range o.fields {
		if !o.seen[f] {
			unknown = append(unknown, f)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// Fail records a failure of field.
func (o *Object) Fail(field, code, format string, args ...any) {
	o.errs.Add(field, code, format, args...)
}

// Has reports whether the field is present (null included).
func (o *Object) Has(field string) bool {
	o.seen[field] = true
	_, ok := o.fields[field]
	return ok
}

// IsNull reports whether the field was sent as null.
func (o *Object) IsNull(field string) bool {
	return string(o.fields[field]) == "null"
}

// Ignore marks read-only fields a client may send back unchanged (e.g. after a GET).
func (o *Object) Ignore(fields ...string) {
	for _, f := range fields {
		o.seen[f] = true
	}
}

// Text reads a string field. It returns nil when absent or null; a required
// field must be present and non-blank.
func (o *Object) Text(field string, required bool, maxLen int) *string {
	if !o.Has(field) || o.IsNull(field) {
		if required {
			o.Fail(field, "required", "is required")
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(o.fields[field], &s); err != nil {
		o.Fail(field, "invalid_type", "must be a string")
		return nil
	}
	if required && strings.TrimSpace(s) == "" {
		o.Fail(field, "required", "must not be blank")
		return nil
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		o.Fail(field, "too_long", "must be at most %d characters (got %d)", maxLen, n)
		return nil
	}
	// NUL, control and bidi-override characters, or only invisible ones: free text
	// (a limit above validation.MultilineAbove) may hold tabs and line breaks.
	if err := validation.Text(field, s, maxLen > validation.MultilineAbove); err != nil {
		o.errs.Append(err)
		return nil
	}
	return &s
}

// Date reads a YYYY-MM-DD field.
func (o *Object) Date(field string) *time.Time {
	s := o.Text(field, false, 10)
	if s == nil {
		return nil
	}
	d, err := time.Parse(time.DateOnly, *s)
	if err != nil {
		o.Fail(field, "invalid_format", "must be a calendar date YYYY-MM-DD")
		return nil
	}
	return &d
}

// Enum reads a string field that must be one of the allowed values.
func (o *Object) Enum(field string, required bool, allowed []string) *string {
	s := o.Text(field, required, 100)
	if s != nil && !slices.Contains(allowed, *s) {
		o.Fail(field, "invalid_value", "must be one of %s", strings.Join(allowed, ", "))
		return nil
	}
	return s
}

// Done reports unknown fields and returns every failure (validation.Errors), or nil.
func (o *Object) Done() error {
	for _, f := range o.Unknown() {
		o.Fail(f, "unknown_field", "is not a field of this request")
	}
	return o.errs.Err()
}

// TextList reads an array of strings; nil when absent or null.
func (o *Object) TextList(field string, maxItems, maxLen int) []string {
	if !o.Has(field) || o.IsNull(field) {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(o.fields[field], &raw); err != nil {
		o.Fail(field, "invalid_type", "must be an array of strings")
		return nil
	}
	if len(raw) > maxItems {
		o.Fail(field, "too_long", "must have at most %d items", maxItems)
		return nil
	}
	out := make([]string, 0, len(raw))
	ok := true
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			o.Fail(field+"["+strconv.Itoa(i)+"]", "invalid_type", "must be a string")
			ok = false
			continue
		}
		if s = strings.TrimSpace(s); s == "" || len(s) > maxLen {
			o.Fail(field+"["+strconv.Itoa(i)+"]", "invalid_value", "must be 1 to %d characters", maxLen)
			ok = false
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if !ok {
		return nil
	}
	return out
}

// Integer reads a whole number in [lo, hi]; nil when absent or null.
func (o *Object) Integer(field string, lo, hi int) *int {
	if !o.Has(field) || o.IsNull(field) {
		return nil
	}
	var f float64
	if err := json.Unmarshal(o.fields[field], &f); err != nil || f != float64(int64(f)) {
		o.Fail(field, "invalid_type", "must be a whole number")
		return nil
	}
	if f < float64(lo) || f > float64(hi) {
		o.Fail(field, "invalid_value", "must be from %d to %d", lo, hi)
		return nil
	}
	n := int(f)
	return &n
}

// maxEmailLen is the longest address SMTP can carry (RFC 5321).
const maxEmailLen = 254

// Email reads a bare e-mail address (no display name).
func (o *Object) Email(field string, required bool) *string {
	s := o.Text(field, required, maxEmailLen)
	if s == nil {
		return nil
	}
	a, err := mail.ParseAddress(*s)
	if err != nil || a.Address != *s || a.Name != "" {
		o.Fail(field, "invalid_format", "must be an e-mail address such as name@example.com")
		return nil
	}
	return s
}

// Boolean reads true or false; nil when absent or null.
func (o *Object) Boolean(field string) *bool {
	if !o.Has(field) || o.IsNull(field) {
		return nil
	}
	var v bool
	if err := json.Unmarshal(o.fields[field], &v); err != nil {
		o.Fail(field, "invalid_type", "must be true or false")
		return nil
	}
	return &v
}

// Number reads a finite JSON number; nil when absent or null. Bounds are
// the domain's to check.
func (o *Object) Number(field string, required bool) *float64 {
	if !o.Has(field) || o.IsNull(field) {
		if required {
			o.Fail(field, "required", "is required")
		}
		return nil
	}
	raw := o.fields[field]
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
			o.Fail(field, "out_of_range", "is too large for a number")
		} else {
			o.Fail(field, "invalid_type", "must be a number")
		}
		return nil
	}
	return &v
}

// EnumList reads a non-empty array of values from allowed (what names one
// value in messages, e.g. "event type"). Duplicates are dropped; an unknown
// value is named in the error.
func (o *Object) EnumList(field, what string, required bool, allowed []string) []string {
	if !o.Has(field) || o.IsNull(field) {
		if required {
			o.Fail(field, "required", "is required: a non-empty array of %ss", what)
		}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(o.fields[field], &raw); err != nil {
		o.Fail(field, "invalid_type", "must be an array of %ss", what)
		return nil
	}
	if len(raw) == 0 {
		o.Fail(field, "required", "must list at least one %s", what)
		return nil
	}
	out := make([]string, 0, len(raw))
	ok := true
	for i, r := range raw {
		var t string
		item := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case json.Unmarshal(r, &t) != nil:
			o.Fail(item, "invalid_type", "must be a string")
			ok = false
		case !slices.Contains(allowed, t):
			o.Fail(item, "invalid_value", "is not a known %s; one of %s", what, strings.Join(allowed, ", "))
			ok = false
		case !slices.Contains(out, t):
			out = append(out, t)
		}
	}
	if !ok {
		return nil
	}
	return out
}
