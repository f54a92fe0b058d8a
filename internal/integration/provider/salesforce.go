package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The salesforce provider reads Opportunities with the REST query resource:
//
//	GET {instance_url}/services/data/{api_version}/query?q=SELECT Id, SystemModstamp, <mapped fields>
//	    FROM Opportunity [WHERE SystemModstamp >= <since>] ORDER BY SystemModstamp ASC, Id ASC
//	Authorization: Bearer <oauth_token>
//	Sforce-Query-Options: batchSize=<page_size>
//
// and pages with the answer's nextRecordsUrl until done is true. since and
// the Watermark are RFC 3339 UTC times (the largest SystemModstamp seen). The
// filter is >= because SOQL datetimes have whole seconds: records modified in
// the watermark's second come again (the upsert finds them unchanged) rather
// than being missed; the first query also reaches lookback_minutes before
// since, so a record whose SystemModstamp (set when its transaction began)
// is older than a watermark another sync read before the record committed
// is read too. A query locator and its results live two days ("API Query
// Cursor Limits", Salesforce App Limits Cheatsheet); an expired one
// (INVALID_QUERY_LOCATOR) makes the next page re-run the query from the
// watermark the cursor carries.
//
// Auth: Bearer access token; with refresh_token and client_id the token is
// renewed by the OAuth 2.0 refresh token flow at token_url (default
// {instance_url}/services/oauth2/token) when Salesforce answers 401
// INVALID_SESSION_ID (its answer has no expires_in: the session timeout is
// the connected app's).
//
// Errors: 401 INVALID_SESSION_ID (and a refused refresh) → ErrUnauthorized;
// 403 REQUEST_LIMIT_EXCEEDED "TotalRequests Limit exceeded" (the org's
// rolling 24-hour API allowance: "calls are blocked until usage for the
// preceding 24 hours drops below the limit", Salesforce Help "System
// Overview: API Usage") → *RateLimitedError; REQUEST_LIMIT_EXCEEDED for
// concurrent long-running requests → *RetryableError; any other 403 (e.g.
// INSUFFICIENT_ACCESS, API_DISABLED_FOR_ORG) → ErrUnauthorized; 5xx →
// *RetryableError; 400 (INVALID_FIELD for a mapped field that does not exist,
// MALFORMED_QUERY) → a permanent error with Salesforce's message.
type salesforce struct {
	base     string
	version  string
	fields   sfMapping
	size     int
	lookback time.Duration
	t        *transport
}

type sfMapping struct{ name, industry, segment, owner, description string }

func newSalesforce(c conf, t *transport) *salesforce {
	return &salesforce{
		base:    c.str("instance_url"),
		version: c.str("api_version"),
		fields: sfMapping{
			name: c.str("name_field"), industry: c.str("industry_field"), segment: c.str("segment_field"),
			owner: c.str("owner_field"), description: c.str("description_field"),
		},
		size:     c.num("page_size"),
		lookback: c.lookback(),
		t:        t,
	}
}

type sfCursor struct {
	Locator   string `json:"l"` // nextRecordsUrl
	Watermark string `json:"w,omitempty"`
}

// soql is the query of records modified at or after since ("" = all).
func (s *salesforce) soql(since time.Time) string {
	fields := []string{"Id", "SystemModstamp"}
	seen := map[string]bool{"id": true, "systemmodstamp": true}
	for _, f := range []string{s.fields.name, s.fields.industry, s.fields.segment, s.fields.owner, s.fields.description} {
		if f != "" && !seen[strings.ToLower(f)] {
			seen[strings.ToLower(f)] = true
			fields = append(fields, f)
		}
	}
	q := "SELECT " + strings.Join(fields, ", ") + " FROM Opportunity"
	if !since.IsZero() {
		q += " WHERE SystemModstamp >= " + since.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
	}
	return q + " ORDER BY SystemModstamp ASC, Id ASC"
}

func parseSince(since string) (time.Time, error) {
	if since == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, since)
	if err != nil {
		return time.Time{}, fmt.Errorf("since %q is not an RFC 3339 time", truncate(since, 40))
	}
	return t, nil
}

func (s *salesforce) queryURL(since time.Time) string {
	return s.base + "/services/data/" + s.version + "/query?" + url.Values{"q": {s.soql(since)}}.Encode()
}

func (s *salesforce) Fetch(ctx context.Context, since, cursor string) (Page, error) {
	sinceT, err := parseSince(since)
	if err != nil {
		return Page{}, err
	}
	wm := since
	target := s.queryURL(lookBack(sinceT, s.lookback))
	var cur sfCursor
	if cursor != "" {
		if err := decodeCursor(cursor, &cur); err != nil || !strings.HasPrefix(cur.Locator, "/services/data/") {
			return Page{}, errors.New("invalid cursor")
		}
		target, wm = s.base+cur.Locator, cur.Watermark
	}
	r, err := s.get(ctx, target)
	if err != nil && cursor != "" && errors.Is(err, errQueryLocator) {
		// The locator expired (they live two days): query again from the
		// watermark reached.
		from, perr := parseSince(wm)
		if perr != nil {
			return Page{}, err
		}
		r, err = s.get(ctx, s.queryURL(from))
	}
	if err != nil {
		return Page{}, err
	}

	var res struct {
		TotalSize      int                           `json:"totalSize"`
		Done           *bool                         `json:"done"`
		NextRecordsURL string                        `json:"nextRecordsUrl"`
		Records        *[]map[string]json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil || res.Done == nil || res.Records == nil {
		return Page{}, fmt.Errorf("salesforce answered a body that is not a query result (totalSize, done, records)%s", errSuffix(err))
	}
	if len(*res.Records) > 2000 {
		return Page{}, fmt.Errorf("salesforce answered %d records in one batch; at most 2000", len(*res.Records))
	}
	page := Page{Items: make([]Item, 0, len(*res.Records))}
	for _, rec := range *res.Records {
		it := s.item(rec)
		if !it.ModifiedAt.IsZero() {
			if w := it.ModifiedAt.UTC().Format(time.RFC3339); wm == "" || laterRFC3339(w, wm) {
				wm = w
			}
		}
		page.Items = append(page.Items, it)
	}
	page.Watermark = wm
	if !*res.Done {
		if !strings.HasPrefix(res.NextRecordsURL, "/services/data/") {
			return Page{}, fmt.Errorf("salesforce answered done=false with nextRecordsUrl %q", truncate(res.NextRecordsURL, 100))
		}
		page.Next = encodeCursor(sfCursor{Locator: res.NextRecordsURL, Watermark: wm})
	}
	return page, nil
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + jsonErr(err)
}

// laterRFC3339 reports a > b for RFC 3339 times (false when unreadable).
func laterRFC3339(a, b string) bool {
	ta, e1 := time.Parse(time.RFC3339Nano, a)
	tb, e2 := time.Parse(time.RFC3339Nano, b)
	return e1 == nil && (e2 != nil || ta.After(tb))
}

var errQueryLocator = errors.New("salesforce query locator expired")

func (s *salesforce) get(ctx context.Context, target string) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Sforce-Query-Options", "batchSize="+strconv.Itoa(s.size))
	r, err := s.t.send(req)
	if err != nil {
		return nil, err
	}
	if r.status >= 200 && r.status <= 299 {
		return r, nil
	}
	code, msg := sfError(r.body)
	switch {
	case code == "INVALID_QUERY_LOCATOR":
		return nil, fmt.Errorf("%w: %s", errQueryLocator, truncate(msg, 200))
	case r.status == http.StatusForbidden && code == "REQUEST_LIMIT_EXCEEDED" && strings.Contains(msg, "TotalRequests"):
		return nil, &RateLimitedError{After: retryAfter(r.header, time.Now()), Reason: "REQUEST_LIMIT_EXCEEDED: " + truncate(msg, 200)}
	case r.status == http.StatusForbidden && code == "REQUEST_LIMIT_EXCEEDED":
		return nil, &RetryableError{Status: r.status, After: retryAfter(r.header, time.Now()), Reason: "REQUEST_LIMIT_EXCEEDED: " + truncate(msg, 200)}
	}
	if code != "" {
		msg = code + ": " + msg
	}
	return nil, statusError("salesforce", r, msg)
}

// sfError reads Salesforce's error body: [{"message": "...", "errorCode": "..."}].
func sfError(body []byte) (code, msg string) {
	var errs []struct {
		Message   string `json:"message"`
		ErrorCode string `json:"errorCode"`
	}
	if json.Unmarshal(body, &errs) == nil && len(errs) > 0 {
		return errs[0].ErrorCode, strings.Join(strings.Fields(errs[0].Message), " ")
	}
	return "", ""
}

// sfTime reads Salesforce's datetime form, 2026-01-31T10:00:00.000+0000.
func sfTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000-0700", "2006-01-02T15:04:05-0700", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a Salesforce datetime: %q", truncate(s, 40))
}

// item maps one Opportunity record.
func (s *salesforce) item(rec map[string]json.RawMessage) Item {
	id, _ := sfValue(rec, "Id")
	if id == "" {
		return Item{Invalid: "Opportunity record without an Id"}
	}
	it := Item{ExternalID: id}
	stamp, _ := sfValue(rec, "SystemModstamp")
	t, err := sfTime(stamp)
	if err != nil {
		return Item{ExternalID: id, Invalid: fmt.Sprintf("Opportunity %s: SystemModstamp %s", id, err)}
	}
	it.ModifiedAt = t
	var f InitiativeFields
	var bad []string
	for _, m := range []struct {
		field string
		dst   *string
	}{{s.fields.name, &f.Name}, {s.fields.industry, &f.Industry}, {s.fields.segment, &f.Segment}, {s.fields.owner, &f.Owner}, {s.fields.description, &f.Description}} {
		if m.field == "" {
			continue
		}
		v, ok := sfValue(rec, m.field)
		if !ok {
			bad = append(bad, m.field)
		}
		*m.dst = strings.TrimSpace(v)
	}
	switch {
	case len(bad) > 0:
		it.Invalid = fmt.Sprintf("Opportunity %s: field %s is not a text value", id, strings.Join(bad, ", "))
	case f.Name == "":
		it.Invalid = fmt.Sprintf("Opportunity %s has no %s (the initiative's name)", id, s.fields.name)
	default:
		it.Initiative = &f
	}
	return it
}

// sfValue reads field (or Relationship.Field) of a record as text: "" for
// null or absent, ok=false for an object or array where a value was expected.
func sfValue(rec map[string]json.RawMessage, field string) (string, bool) {
	parts := strings.SplitN(field, ".", 2)
	raw, ok := lookupFold(rec, parts[0])
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	if len(parts) == 2 {
		var sub map[string]json.RawMessage
		if json.Unmarshal(raw, &sub) != nil {
			return "", false
		}
		return sfValue(sub, parts[1])
	}
	return scalarText(raw)
}

func lookupFold(rec map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	if v, ok := rec[k]; ok {
		return v, true
	}
	for name, v := range rec {
		if strings.EqualFold(name, k) {
			return v, true
		}
	}
	return nil, false
}

// scalarText renders a JSON string, number or boolean as text.
func scalarText(raw json.RawMessage) (string, bool) {
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case '{', '[':
		return "", false
	}
	return string(raw), true
}
