package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/validation"
)

// body is a decoded JSON object whose fields are read one by one, so that a
// wrong type or an unknown field is reported against the field that has it.
type body struct {
	fields map[string]json.RawMessage
	errs   []FieldError
	seen   map[string]bool
}

// parseBody reads the request body as one JSON object. Malformed JSON, an
// empty body and text that is not valid UTF-8 (raw bytes or escaped lone
// surrogates, which the decoder would store as U+FFFD) are a 400.
func parseBody(c *fiber.Ctx) (*body, error) {
	if ct := c.Get(fiber.HeaderContentType); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != fiber.MIMEApplicationJSON {
			return nil, fiber.ErrUnsupportedMediaType
		}
	}
	b := &body{fields: map[string]json.RawMessage{}, seen: map[string]bool{}}
	raw := bytes.TrimSpace(c.Body())
	if len(raw) == 0 {
		return nil, InvalidParameter("the body must be one JSON object")
	}
	if !utf8.Valid(raw) {
		return nil, InvalidParameter("request body is not valid UTF-8")
	}
	if at := loneSurrogate(raw); at >= 0 {
		return nil, InvalidParameter("request body is not valid UTF-8: a lone surrogate escape at byte %d", at)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&b.fields); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, InvalidParameter("request body must be a JSON object")
		}
		return nil, InvalidParameter("request body is not valid JSON: %s", jsonErrorText(err))
	}
	if dec.More() {
		return nil, InvalidParameter("request body must hold exactly one JSON object")
	}
	if b.fields == nil { // the body was `null`
		return nil, InvalidParameter("request body must be a JSON object")
	}
	return b, nil
}

// loneSurrogate returns the offset of the first \u escape of a UTF-16
// surrogate that is not part of a high-low pair, or -1. JSON allows such
// escapes syntactically, but they name no character.
func loneSurrogate(raw []byte) int {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // an escape of one character (\\, \", ...): skip it
			continue
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00: // high: a low must follow
			if lo, ok := hex4(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return i
			}
			i += 11
		case utf16.IsSurrogate(r): // a low one on its own
			return i
		default:
			i += 5
		}
	}
	return -1
}

func jsonErrorText(err error) string {
	if syn, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf("%s at byte %d", syn.Error(), syn.Offset)
	}
	return "unexpected end of input"
}

func (b *body) fail(field, code, format string, args ...any) {
	b.errs = append(b.errs, FieldError{Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

// has reports whether the field is present (null included).
func (b *body) has(field string) bool {
	b.seen[field] = true
	_, ok := b.fields[field]
	return ok
}

func (b *body) isNull(field string) bool {
	return string(b.fields[field]) == "null"
}

// ignore marks read-only fields a client may send back unchanged (e.g. after a GET).
func (b *body) ignore(fields ...string) {
	for _, f := range fields {
		b.seen[f] = true
	}
}

// text reads a string field. It returns nil when absent or null; a required
// field must be present and non-blank.
func (b *body) text(field string, required bool, maxLen int) *string {
	if !b.has(field) || b.isNull(field) {
		if required {
			b.fail(field, "required", "is required")
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(b.fields[field], &s); err != nil {
		b.fail(field, "invalid_type", "must be a string")
		return nil
	}
	if required && strings.TrimSpace(s) == "" {
		b.fail(field, "required", "must not be blank")
		return nil
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		b.fail(field, "too_long", "must be at most %d characters (got %d)", maxLen, n)
		return nil
	}
	// NUL, control and bidi-override characters, or only invisible ones: free text
	// (a limit above validation.MultilineAbove) may hold tabs and line breaks.
	if err := validation.Text(field, s, maxLen > validation.MultilineAbove); err != nil {
		e, _ := errors.AsType[*validation.Error](err)
		b.fail(e.Field, e.Code, "%s", e.Message)
		return nil
	}
	return &s
}

// date reads a YYYY-MM-DD field.
func (b *body) date(field string) *time.Time {
	s := b.text(field, false, 10)
	if s == nil {
		return nil
	}
	d, err := time.Parse(time.DateOnly, *s)
	if err != nil {
		b.fail(field, "invalid_format", "must be a calendar date YYYY-MM-DD")
		return nil
	}
	return &d
}

// enum reads a string field that must be one of the allowed values.
func (b *body) enum(field string, required bool, allowed []string) *string {
	s := b.text(field, required, 100)
	if s != nil && !slices.Contains(allowed, *s) {
		b.fail(field, "invalid_value", "must be one of %s", strings.Join(allowed, ", "))
		return nil
	}
	return s
}

// done reports unknown fields and returns the 422 if anything failed.
func (b *body) done() error {
	var unknown []string
	for f := range b.fields {
		if !b.seen[f] {
			unknown = append(unknown, f)
		}
	}
	slices.Sort(unknown)
	for _, f := range unknown {
		b.fail(f, "unknown_field", "is not a field of this request")
	}
	if len(b.errs) > 0 {
		return Invalid(b.errs...)
	}
	return nil
}

// query reads list parameters, refusing unknown ones (400 INVALID_PARAMETER).
type query struct {
	values url.Values
	known  map[string]bool
	err    *Error
}

func parseQuery(c *fiber.Ctx) *query {
	v, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	q := &query{values: v, known: map[string]bool{}}
	if err != nil {
		q.err = InvalidParameter("query string is malformed")
	}
	return q
}

func (q *query) str(name string) (string, bool) {
	q.known[name] = true
	vals, ok := q.values[name]
	if !ok || q.err != nil {
		return "", false
	}
	if len(vals) > 1 {
		q.err = InvalidParameter("query parameter %s is given more than once", name)
		return "", false
	}
	if strings.ContainsFunc(vals[0], unicode.IsControl) || !utf8.ValidString(vals[0]) {
		q.err = InvalidParameter("query parameter %s contains control characters or invalid UTF-8", name)
		return "", false
	}
	return vals[0], true
}

func (q *query) intIn(name string, def, lo, hi int) int {
	s, ok := q.str(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		if q.err == nil {
			q.err = InvalidParameter("query parameter %s must be an integer from %d to %d", name, lo, hi)
		}
		return def
	}
	return n
}

// defaultPageSize is the page_size of a list that names none.
const defaultPageSize = 50

// page reads page (from 1) and page_size (1 to maxSize, default 50).
func (q *query) page(maxSize int) (page, size int) {
	return q.intIn("page", 1, 1, 1_000_000), q.intIn("page_size", defaultPageSize, 1, maxSize)
}

func (q *query) oneOf(name, def string, allowed []string) string {
	s, ok := q.str(name)
	if !ok {
		return def
	}
	if !slices.Contains(allowed, s) {
		if q.err == nil {
			q.err = InvalidParameter("query parameter %s must be one of %s", name, strings.Join(allowed, ", "))
		}
		return def
	}
	return s
}

func (q *query) done() error {
	if q.err != nil {
		return q.err
	}
	for name := range q.values {
		if !q.known[name] {
			// The name is not echoed (input never comes back outside errors[].field): the known ones are.
			if len(q.known) == 0 {
				return InvalidParameter("unknown query parameter: this endpoint takes no query parameters")
			}
			return InvalidParameter("unknown query parameter: this endpoint takes %s", strings.Join(slices.Sorted(maps.Keys(q.known)), ", "))
		}
	}
	return nil
}

// pathID reads an id from the path. Ids are opaque: one that cannot name a
// record is simply not found.
func pathID(c *fiber.Ctx, name, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Params(name))
	if err != nil {
		return uuid.Nil, NotFound(what)
	}
	return id, nil
}

// page is the list response meta of spec section 4.
type pagination struct {
	Page       int   `json:"page"`
	PageSize   int   `json:"page_size"`
	Total      int64 `json:"total"`
	TotalPages int64 `json:"total_pages"`
}

func newPagination(page, size int, total int64) pagination {
	return pagination{Page: page, PageSize: size, Total: total, TotalPages: (total + int64(size) - 1) / int64(size)}
}

type listResponse[T any] struct {
	Data []T `json:"data"`
	Meta struct {
		Pagination pagination `json:"pagination"`
	} `json:"meta"`
}

// paginate answers a list request: the rows of one page (each carrying the
// window count of all matches) mapped to their JSON form, with meta.pagination.
// Past the last page no row carries the count, so count supplies the total.
func paginate[R, J any](c *fiber.Ctx, page, size int, rows []R, total func(R) int64, toJSON func(R) J, count func() (int64, error)) error {
	resp := listResponse[J]{Data: make([]J, 0, len(rows))}
	var n int64
	for _, r := range rows {
		n = total(r)
		resp.Data = append(resp.Data, toJSON(r))
	}
	if len(rows) == 0 && page > 1 {
		var err error
		if n, err = count(); err != nil {
			return err
		}
	}
	resp.Meta.Pagination = newPagination(page, size, n)
	return c.JSON(resp)
}

// found maps a lookup's not-found to the 404 of what (never a hint that it
// exists elsewhere); any other error passes through. Every load goes through it.
func found(what string, err error) error {
	if db.IsNotFound(err) {
		return NotFound(what)
	}
	return err
}

// lockInitiative finds an initiative of the tenant that a child record
// (cost, benefit, stakeholder) is written under, locked for update: child
// limits count under the lock, and archiving waits for the write. Whether it
// is writable is the child group's rule.
func lockInitiative(c *fiber.Ctx, id uuid.UUID) (dbsqlc.Initiative, error) {
	in, err := db.Q.InitiativeGetForUpdate(c.UserContext(), tx(c), dbsqlc.InitiativeGetForUpdateParams{TenantID: principal(c).TenantID, ID: id})
	return in, found("initiative", err)
}

// ---- body readers beyond text (body.text and friends are above) ----

// noneIfBlank stores a blank optional text as null, so it reads and filters as absent.
func noneIfBlank(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	return trimmed(s)
}

// firstDay is the date a month is stored as (its first day); nil stays nil.
func firstDay(m *finance.Month) *time.Time {
	if m == nil {
		return nil
	}
	return new(m.FirstDay())
}

// trimmed drops surrounding white space, so " Alpha " and "alpha" are one name.
func trimmed(s *string) *string {
	if s != nil {
		t := strings.TrimSpace(*s)
		s = &t
	}
	return s
}

// textList reads an array of strings; nil when absent or null.
func (b *body) textList(field string, maxItems, maxLen int) []string {
	if !b.has(field) || b.isNull(field) {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.fields[field], &raw); err != nil {
		b.fail(field, "invalid_type", "must be an array of strings")
		return nil
	}
	if len(raw) > maxItems {
		b.fail(field, "too_long", "must have at most %d items", maxItems)
		return nil
	}
	out := make([]string, 0, len(raw))
	ok := true
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			b.fail(field+"["+strconv.Itoa(i)+"]", "invalid_type", "must be a string")
			ok = false
			continue
		}
		if s = strings.TrimSpace(s); s == "" || len(s) > maxLen {
			b.fail(field+"["+strconv.Itoa(i)+"]", "invalid_value", "must be 1 to %d characters", maxLen)
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

// integer reads a whole number in [lo, hi]; nil when absent or null.
func (b *body) integer(field string, lo, hi int) *int {
	if !b.has(field) || b.isNull(field) {
		return nil
	}
	var f float64
	if err := json.Unmarshal(b.fields[field], &f); err != nil || f != float64(int64(f)) {
		b.fail(field, "invalid_type", "must be a whole number")
		return nil
	}
	if f < float64(lo) || f > float64(hi) {
		b.fail(field, "invalid_value", "must be from %d to %d", lo, hi)
		return nil
	}
	n := int(f)
	return &n
}

// maxEmailLen is the longest address SMTP can carry (RFC 5321).
const maxEmailLen = 254

// email reads a bare e-mail address (no display name).
func (b *body) email(field string, required bool) *string {
	s := b.text(field, required, maxEmailLen)
	if s == nil {
		return nil
	}
	a, err := mail.ParseAddress(*s)
	if err != nil || a.Address != *s || a.Name != "" {
		b.fail(field, "invalid_format", "must be an e-mail address such as name@example.com")
		return nil
	}
	return s
}

// boolean reads true or false; nil when absent or null.
func (b *body) boolean(field string) *bool {
	if !b.has(field) || b.isNull(field) {
		return nil
	}
	var v bool
	if err := json.Unmarshal(b.fields[field], &v); err != nil {
		b.fail(field, "invalid_type", "must be true or false")
		return nil
	}
	return &v
}

// number reads a finite JSON number; nil when absent or null. Bounds are
// the domain's to check.
func (b *body) number(field string, required bool) *float64 {
	if !b.has(field) || b.isNull(field) {
		if required {
			b.fail(field, "required", "is required")
		}
		return nil
	}
	raw := b.fields[field]
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
			b.fail(field, "out_of_range", "is too large for a number")
		} else {
			b.fail(field, "invalid_type", "must be a number")
		}
		return nil
	}
	return &v
}

// enumList reads a non-empty array of values from allowed (what names one
// value in messages, e.g. "event type"). Duplicates are dropped; an unknown
// value is named in the error.
func (b *body) enumList(field, what string, required bool, allowed []string) []string {
	if !b.has(field) || b.isNull(field) {
		if required {
			b.fail(field, "required", "is required: a non-empty array of %ss", what)
		}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.fields[field], &raw); err != nil {
		b.fail(field, "invalid_type", "must be an array of %ss", what)
		return nil
	}
	if len(raw) == 0 {
		b.fail(field, "required", "must list at least one %s", what)
		return nil
	}
	out := make([]string, 0, len(raw))
	ok := true
	for i, r := range raw {
		var t string
		item := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case json.Unmarshal(r, &t) != nil:
			b.fail(item, "invalid_type", "must be a string")
			ok = false
		case !slices.Contains(allowed, t):
			b.fail(item, "invalid_value", "is not a known %s; one of %s", what, strings.Join(allowed, ", "))
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

// checkIfMatch enforces an If-Match precondition against the version of the
// record the write holds locked (FOR UPDATE, or under the lock its rule
// takes), so the comparison and the write are one transaction: no header,
// "*" (the record exists: it was loaded) or a tag of the current version pass;
// a tag of another version is the 409 of an optimistic lock failure; a header
// that is not a list of entity tags is a 400. Tags compare by their version
// part (see recordETag): a change computed from other records does not fail it.
func checkIfMatch(c *fiber.Ctx, version time.Time) error {
	header := strings.TrimSpace(c.Get(fiber.HeaderIfMatch))
	if header == "" || header == "*" {
		return nil
	}
	want := versionTag(version)
	matched := false
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimSpace(t)
		weak := strings.HasPrefix(t, "W/")
		opaque := strings.TrimPrefix(t, "W/")
		if len(opaque) < 2 || opaque[0] != '"' || opaque[len(opaque)-1] != '"' || len(opaque) > 200 ||
			strings.ContainsFunc(opaque[1:len(opaque)-1], func(r rune) bool { return r == '"' || r <= ' ' || r == 0x7f }) {
			return InvalidParameter(`header If-Match must be "*" or a list of quoted entity tags as the ETag header gives them`)
		}
		ver, _, _ := strings.Cut(opaque[1:len(opaque)-1], ".")
		if !weak && ver == want { // If-Match compares strongly: a weak tag never matches
			matched = true
		}
	}
	if !matched {
		return Conflict("the record changed since the version named in If-Match (optimistic lock failure): GET it again, reapply the change and send its new ETag")
	}
	return nil
}
