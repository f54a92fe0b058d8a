package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// The http_feed provider: GET instance_url answers either
//
//   - JSON: an array of rows, or {"data": [rows], "next": "<url of the next page>"}
//     (next absent, null or "" on the last page; a relative next is resolved
//     against the page's URL and must stay on the feed's scheme and host),
//     each row {"benefit_key": "...", "period": "YYYY-MM", "value": 1250.5 or
//     "1250.50", "evidence_url": "https://..." (optional)};
//   - CSV (text/csv): a header naming benefit_key, period, value and optionally
//     evidence_url (any order, case-insensitive; other columns are refused), then
//     one row per line.
//
// The format comes from the Content-Type (config format "auto"), or is forced
// by config format "json" / "csv". An optional token is sent as
// "Authorization: Bearer <token>". Rows that cannot be read become Items with
// Invalid = "row N: <why>" (N counts data rows from 1 across all pages of a
// sync; for CSV the line number is given too); the rest come through.
//
// Incremental syncs: feeds rows have no modification time, so by default
// since is not used and every sync reads the whole feed (upserts by
// benefit_key/period are idempotent). With config since_param the first
// request carries ?<since_param>=<since> (RFC 3339, UTC) when since is set,
// and the Watermark is the time of the first page's answer (its Date header,
// else the client's clock), so the next sync asks for rows changed since this
// one started.

const (
	// MaxFeedRows bounds the rows of one feed page (JSON page or CSV document).
	MaxFeedRows = 50_000
	// MaxFeedPages bounds the pages of one sync of a feed.
	MaxFeedPages = 10_000
	maxKeyLen    = 200
)

var feedKeys = []key{
	{name: "instance_url", kind: kString, req: true, check: checkInstanceURL(true)},
	{name: "format", kind: kString, def: "auto", check: oneOf("auto", "json", "csv")},
	{name: "since_param", kind: kString, def: "", check: func(v any, _ bool) string {
		if s := v.(string); s != "" && !paramName.MatchString(s) {
			return "must be a query parameter name (letters, digits, _ . -; at most 64)"
		}
		return ""
	}},
}

var (
	paramName = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,64}$`)
	periodRe  = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)
	decimalRe = regexp.MustCompile(`^[+-]?[0-9]{1,15}(\.[0-9]{1,10})?$`)
)

type feed struct {
	url        *url.URL
	format     string
	sinceParam string
	t          *transport
}

func newFeed(c conf, t *transport) *feed {
	u, _ := url.Parse(c.str("instance_url")) // Validate checked it
	return &feed{url: u, format: c.str("format"), sinceParam: c.str("since_param"), t: t}
}

// feedCursor is the opaque cursor of the next feed page.
type feedCursor struct {
	URL       string `json:"u"`
	Rows      int    `json:"r"` // data rows read before this page
	Page      int    `json:"p"` // pages read before this page
	Watermark string `json:"w,omitempty"`
}

func encodeCursor(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, v) != nil {
		return errors.New("invalid cursor")
	}
	return nil
}

func (f *feed) Fetch(ctx context.Context, since, cursor string) (Page, error) {
	cur := feedCursor{}
	target := *f.url
	if cursor != "" {
		if err := decodeCursor(cursor, &cur); err != nil {
			return Page{}, err
		}
		u, err := url.Parse(cur.URL)
		if err != nil || !sameOrigin(f.url, u) {
			return Page{}, errors.New("invalid cursor")
		}
		target = *u
	} else if f.sinceParam != "" && since != "" {
		q := target.Query()
		q.Set(f.sinceParam, since)
		target.RawQuery = q.Encode()
	}
	if cur.Page >= MaxFeedPages {
		return Page{}, fmt.Errorf("feed has more than %d pages", MaxFeedPages)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return Page{}, err
	}
	switch f.format {
	case "json":
		req.Header.Set("Accept", "application/json")
	case "csv":
		req.Header.Set("Accept", "text/csv")
	default:
		req.Header.Set("Accept", "application/json, text/csv;q=0.9")
	}
	r, err := f.t.send(req)
	if err != nil {
		return Page{}, err
	}
	if r.status < 200 || r.status > 299 {
		return Page{}, statusError("feed", r, feedErrorMessage(r))
	}

	wm := cur.Watermark
	if f.sinceParam != "" && cursor == "" {
		at := time.Now().UTC()
		if t, err := http.ParseTime(r.header.Get("Date")); err == nil {
			at = t.UTC()
		}
		wm = at.Format(time.RFC3339)
	}

	format := f.format
	if format == "auto" {
		mt := mediaType(r.header)
		switch {
		case isJSONType(mt):
			format = "json"
		case mt == "text/csv" || mt == "application/csv" || mt == "text/comma-separated-values":
			format = "csv"
		default:
			return Page{}, fmt.Errorf("feed answered Content-Type %q: expected application/json or text/csv (or set config format)", truncate(r.header.Get("Content-Type"), 100))
		}
	}

	var (
		items []Item
		next  string
	)
	if format == "json" {
		items, next, err = parseFeedJSON(r.body, cur.Rows)
	} else {
		items, err = parseFeedCSV(r.body, cur.Rows)
	}
	if err != nil {
		return Page{}, err
	}
	page := Page{Items: items, Watermark: wm}
	if next != "" {
		nu, err := target.Parse(next)
		if err != nil || (nu.Scheme != "http" && nu.Scheme != "https") {
			return Page{}, fmt.Errorf("feed next %q is not a URL", truncate(next, 100))
		}
		if !sameOrigin(f.url, nu) {
			return Page{}, fmt.Errorf("feed next URL must stay on %s://%s", f.url.Scheme, f.url.Host)
		}
		if nu.String() == target.String() {
			return Page{}, errors.New("feed next URL points to the page itself")
		}
		page.Next = encodeCursor(feedCursor{URL: nu.String(), Rows: cur.Rows + len(items), Page: cur.Page + 1, Watermark: wm})
	}
	return page, nil
}

// feedErrorMessage: a short text of an error answer (JSON "error"/"message"
// when present, else the start of the body when it is text).
func feedErrorMessage(r *response) string {
	var e struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(r.body, &e) == nil {
		if e.Message != "" {
			return e.Message
		}
		if s, ok := e.Error.(string); ok {
			return s
		}
	}
	if utf8.Valid(r.body) && !bytes.ContainsAny(r.body, "<\x00") {
		return truncate(string(r.body), 200)
	}
	return ""
}

// feedRow is one row as the feed sent it; values are kept raw to report
// wrong types row by row.
type feedRow struct {
	BenefitKey  json.RawMessage `json:"benefit_key"`
	Period      json.RawMessage `json:"period"`
	Value       json.RawMessage `json:"value"`
	EvidenceURL json.RawMessage `json:"evidence_url"`
}

func parseFeedJSON(body []byte, rowsBefore int) ([]Item, string, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, "", errors.New("feed answered an empty body; expected a JSON array or {\"data\": [...]}")
	}
	var rows []json.RawMessage
	var next string
	switch trimmed[0] {
	case '[':
		if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, "", fmt.Errorf("feed JSON is malformed: %s", jsonErr(err))
		}
	case '{':
		var env struct {
			Data *[]json.RawMessage `json:"data"`
			Next *string            `json:"next"`
		}
		if err := json.Unmarshal(trimmed, &env); err != nil {
			return nil, "", fmt.Errorf("feed JSON is malformed: %s", jsonErr(err))
		}
		if env.Data == nil {
			return nil, "", errors.New(`feed JSON object has no "data" array`)
		}
		rows = *env.Data
		if env.Next != nil {
			next = strings.TrimSpace(*env.Next)
		}
	default:
		return nil, "", errors.New("feed JSON is malformed: expected an array or an object with \"data\"")
	}
	if len(rows) > MaxFeedRows {
		return nil, "", fmt.Errorf("feed page has %d rows; at most %d per page (page it with \"next\")", len(rows), MaxFeedRows)
	}
	items := make([]Item, 0, len(rows))
	for i, raw := range rows {
		n := rowsBefore + i + 1
		var fr feedRow
		if err := json.Unmarshal(raw, &fr); err != nil {
			items = append(items, Item{Invalid: fmt.Sprintf("row %d: not an object with benefit_key, period, value", n)})
			continue
		}
		key, kerr := jsonString(fr.BenefitKey, false)
		period, perr := jsonString(fr.Period, false)
		value, verr := jsonNumberText(fr.Value)
		ev, eerr := jsonString(fr.EvidenceURL, true)
		var why string
		switch {
		case kerr != "":
			why = "benefit_key " + kerr
		case perr != "":
			why = "period " + perr
		case verr != "":
			why = "value " + verr
		case eerr != "":
			why = "evidence_url " + eerr
		}
		items = append(items, feedItem(fmt.Sprintf("row %d", n), key, period, value, ev, why))
	}
	return items, next, nil
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return truncate(err.Error(), 200)
}

// jsonString reads a JSON string ("" and a message when it is not one).
func jsonString(raw json.RawMessage, optional bool) (string, string) {
	if len(raw) == 0 || string(raw) == "null" {
		if optional {
			return "", ""
		}
		return "", "is missing"
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "must be a string"
	}
	return s, ""
}

// jsonNumberText reads a JSON number or a string holding one, as text.
func jsonNumberText(raw json.RawMessage) (string, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", "is missing"
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "must be a number"
		}
		return s, ""
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", "must be a number"
	}
	return n.String(), ""
}

// feedItem checks one row's values and maps it; why is a reading error found
// before (then the row is Invalid).
func feedItem(where, key, period, value, evidence, why string) Item {
	key, period, value, evidence = strings.TrimSpace(key), strings.TrimSpace(period), strings.TrimSpace(value), strings.TrimSpace(evidence)
	if why == "" {
		switch {
		case key == "":
			why = "benefit_key is empty"
		case utf8.RuneCountInString(key) > maxKeyLen || !utf8.ValidString(key) || strings.ContainsAny(key, "\x00\r\n"):
			why = fmt.Sprintf("benefit_key must be at most %d characters of one line", maxKeyLen)
		case !periodRe.MatchString(period):
			why = fmt.Sprintf("period %q is not a month YYYY-MM", truncate(period, 40))
		case !decimalRe.MatchString(value):
			why = fmt.Sprintf("value %q is not a decimal number (digits, optional sign and decimal point)", truncate(value, 40))
		case evidence != "" && checkEvidenceURL(evidence) != "":
			why = "evidence_url " + checkEvidenceURL(evidence)
		}
	}
	if why != "" {
		return Item{Invalid: where + ": " + why}
	}
	return Item{
		ExternalID: key + "/" + period,
		Actual:     &ActualFields{BenefitKey: key, Period: period, Value: value, EvidenceURL: evidence},
	}
}

func checkEvidenceURL(s string) string {
	if len(s) > MaxURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "must be an absolute http or https URL"
	}
	return ""
}

var feedColumns = []string{"benefit_key", "period", "value", "evidence_url"}

func parseFeedCSV(body []byte, rowsBefore int) ([]Item, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		return nil, errors.New("feed CSV is not UTF-8 text")
	}
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("feed CSV is empty; expected a header benefit_key,period,value[,evidence_url]")
	}
	if err != nil {
		return nil, fmt.Errorf("feed CSV header: %s", truncate(err.Error(), 200))
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		known := false
		for _, c := range feedColumns {
			known = known || h == c
		}
		if !known {
			return nil, fmt.Errorf("feed CSV header has column %q; the columns are benefit_key, period, value and optionally evidence_url", truncate(h, 40))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("feed CSV header names %q twice", h)
		}
		col[h] = i
	}
	for _, c := range feedColumns[:3] {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("feed CSV header lacks %q (the header is benefit_key,period,value[,evidence_url])", c)
		}
	}
	evCol, hasEv := col["evidence_url"]
	var items []Item
	n := rowsBefore
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		n++
		if len(items) >= MaxFeedRows {
			return nil, fmt.Errorf("feed CSV has more than %d rows", MaxFeedRows)
		}
		if err != nil {
			// FieldPos must not be called after an error (it panics).
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				items = append(items, Item{Invalid: fmt.Sprintf("row %d (line %d): %s", n, pe.StartLine, truncate(pe.Err.Error(), 100))})
				continue
			}
			return nil, fmt.Errorf("feed CSV: %s", truncate(err.Error(), 200))
		}
		line, _ := cr.FieldPos(0)
		where := fmt.Sprintf("row %d (line %d)", n, line)
		if len(rec) != len(header) {
			items = append(items, Item{Invalid: fmt.Sprintf("%s: has %d fields, the header has %d", where, len(rec), len(header))})
			continue
		}
		ev := ""
		if hasEv {
			ev = rec[evCol]
		}
		items = append(items, feedItem(where, rec[col["benefit_key"]], rec[col["period"]], rec[col["value"]], ev, ""))
	}
	return items, nil
}
