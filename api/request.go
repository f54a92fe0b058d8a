package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
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
	"github.com/valuecase/valuecase/internal/input"
)

// parseBody reads the request body as one JSON object. Malformed JSON, an
// empty body and text that is not valid UTF-8 (raw bytes or escaped lone
// surrogates, which the decoder would store as U+FFFD) are a 400.
func parseBody(c *fiber.Ctx) (*input.Object, error) {
	if ct := c.Get(fiber.HeaderContentType); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != fiber.MIMEApplicationJSON {
			return nil, fiber.ErrUnsupportedMediaType
		}
	}
	var fields map[string]json.RawMessage
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
	if err := dec.Decode(&fields); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, InvalidParameter("request body must be a JSON object")
		}
		return nil, InvalidParameter("request body is not valid JSON: %s", jsonErrorText(err))
	}
	if dec.More() {
		return nil, InvalidParameter("request body must hold exactly one JSON object")
	}
	if fields == nil { // the body was `null`
		return nil, InvalidParameter("request body must be a JSON object")
	}
	return input.New(fields), nil
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

// pagination is the list response meta of spec section 4.
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

// ---- body readers beyond text (body.text and friends are above) ----

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
