package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The hubspot provider reads deals with the CRM v3 search endpoint:
//
//	POST {instance_url}/crm/v3/objects/deals/search
//	Authorization: Bearer <access token or private app token>
//	{"filterGroups": [{"filters": [{"propertyName": "hs_lastmodifieddate", "operator": "GTE", "value": "<ms>"}]}],
//	 "sorts": [{"propertyName": "hs_lastmodifieddate", "direction": "ASCENDING"}],
//	 "properties": [...mapped properties, "hs_lastmodifieddate", "hs_object_id"], "limit": <page_size>}
//
// Every page is a keyset query on (hs_lastmodifieddate, hs_object_id), never
// an offset: the deals modified at or after the last time T read, less the
// deals already read at exactly T (their ids travel in the cursor). A search
// takes one sort rule, and deals modified in the same millisecond come in no
// defined order, so when a full page holds nothing new (more deals share T
// than a page holds) the client reads that millisecond on its own, sorted by
// hs_object_id (hs_lastmodifieddate EQ T and hs_object_id GT the last id),
// then goes on after T. No page depends on a position, so a deal modified
// while the sync pages moves to the end and is read there rather than
// shifting the later deals past a page boundary; HubSpot's cap of 10,000
// results per query ("paginating through results fails past the 10,000th")
// never applies; paging.next.after is not interpreted (it only says that
// more deals match). The first page of an incremental sync starts
// lookback_minutes before since: the search index lags writes ("changes
// made by other API calls take several seconds to propagate to the search
// index"), so a deal modified just before the last watermark but indexed
// after that sync read is read by the next one (the upsert finds the others
// unchanged). since and the Watermark are RFC 3339 UTC times with
// milliseconds.
//
// Owners: deals carry hubspot_owner_id; with owner_property hubspot_owner_id
// the client lists the account's owners once per client (GET
// /crm/v3/owners?limit=500, paged) and maps the id to the owner's email.
// When the token lacks the owners scope (403) the owner is left empty.
//
// Auth: a private app token (static), or an OAuth access token with
// refresh_token, client_id and client_secret: renewed at token_url (default
// {instance_url}/oauth/v1/token) before its expires_in (30 minutes) runs out
// and once on a 401.
//
// Errors: 401 (category INVALID_AUTHENTICATION, EXPIRED_AUTHENTICATION) and
// 403 (MISSING_SCOPES) on the search → ErrUnauthorized; 429 with policyName
// DAILY (the account's daily allowance, reset at midnight in the account's
// time zone) → *RateLimitedError; other 429 (SECONDLY, TEN_SECONDLY_ROLLING,
// Retry-After) and 5xx → *RetryableError; 400 (VALIDATION_ERROR) → permanent.
type hubspot struct {
	base     string
	props    hsMapping
	size     int
	lookback time.Duration
	t        *transport
	owners   map[string]string // owner id → email; nil until listed
}

type hsMapping struct{ name, industry, segment, owner, description string }

// maxSkipIDs bounds the ids carried in a cursor (deals read at its time);
// beyond it a deal may be read twice (the upsert finds it unchanged).
const maxSkipIDs = 5_000

func newHubSpot(c conf, t *transport) *hubspot {
	return &hubspot{
		base: c.str("instance_url"),
		props: hsMapping{
			name: c.str("name_property"), industry: c.str("industry_property"), segment: c.str("segment_property"),
			owner: c.str("owner_property"), description: c.str("description_property"),
		},
		size:     c.num("page_size"),
		lookback: c.lookback(),
		t:        t,
	}
}

// hsCursor is the keyset position.
type hsCursor struct {
	T      int64    `json:"t"`           // hs_lastmodifieddate in ms; -1: from the start
	Strict bool     `json:"g,omitempty"` // every deal at T was read: the deals after T come next
	Skip   []string `json:"x,omitempty"` // deals at exactly T already read
	Tie    string   `json:"e,omitempty"` // reading T on its own: the deals at T with an id above Tie ("0": all)
	WM     int64    `json:"w"`           // largest hs_lastmodifieddate read, ms; -1: none
}

func (h *hubspot) Fetch(ctx context.Context, since, cursor string) (Page, error) {
	cur := hsCursor{T: -1, WM: -1}
	if cursor != "" {
		if err := decodeCursor(cursor, &cur); err != nil || (cur.Tie != "" && !digits.MatchString(cur.Tie)) {
			return Page{}, errors.New("invalid cursor")
		}
	} else if since != "" {
		t, err := parseSince(since)
		if err != nil {
			return Page{}, err
		}
		cur.T, cur.WM = lookBack(t, h.lookback).UnixMilli(), t.UnixMilli()
	}
	res, err := h.search(ctx, cur)
	if err != nil {
		return Page{}, err
	}
	skip := make(map[string]bool, len(cur.Skip))
	for _, id := range cur.Skip {
		skip[id] = true
	}
	page := Page{Items: make([]Item, 0, len(res.Results))}
	lastT, lastID, atLast := int64(-1), "", []string(nil)
	for _, d := range res.Results {
		it := h.item(d)
		ms := int64(-1)
		if !it.ModifiedAt.IsZero() && digits.MatchString(d.ID) {
			ms = it.ModifiedAt.UnixMilli()
			if ms != lastT {
				lastT, atLast = ms, nil
			}
			lastID, atLast = d.ID, append(atLast, d.ID)
		}
		if skip[d.ID] && ms == cur.T { // read already at this time (one modified since comes again)
			continue
		}
		if !it.ModifiedAt.IsZero() {
			cur.WM = max(cur.WM, it.ModifiedAt.UnixMilli())
		}
		page.Items = append(page.Items, it)
	}
	if err := h.resolveOwners(ctx, page.Items); err != nil {
		return Page{}, err
	}
	if cur.WM >= 0 {
		page.Watermark = time.UnixMilli(cur.WM).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	more := res.Paging.Next.After != "" && len(res.Results) > 0
	var next hsCursor
	switch {
	case cur.Tie != "" && !more: // every deal at T read
		next = hsCursor{T: cur.T, Strict: true, WM: cur.WM}
	case cur.Tie != "":
		next = hsCursor{T: cur.T, Tie: lastID, Skip: cur.Skip, WM: cur.WM}
	case !more:
		return page, nil
	case lastT < 0:
		return Page{}, errors.New("hubspot answered a page of deals without a readable id and hs_lastmodifieddate; the sync cannot go past it")
	case len(page.Items) == 0 || len(atLast) == len(res.Results): // a full page of one millisecond: read it by id
		next = hsCursor{T: lastT, Tie: "0", Skip: unionIDs(cur, lastT, atLast), WM: cur.WM}
	default:
		next = hsCursor{T: lastT, Skip: unionIDs(cur, lastT, atLast), WM: cur.WM}
	}
	if len(next.Skip) > maxSkipIDs {
		next.Skip = nil
	}
	page.Next = encodeCursor(next)
	return page, nil
}

// unionIDs are the ids read at t: those of this page, and the cursor's when it was at t too.
func unionIDs(cur hsCursor, t int64, page []string) []string {
	if cur.T == t && !cur.Strict {
		return append(append([]string(nil), cur.Skip...), page...)
	}
	return page
}

type hsDeal struct {
	ID         string                     `json:"id"`
	Properties map[string]json.RawMessage `json:"properties"`
	UpdatedAt  string                     `json:"updatedAt"`
}

type hsSearchResult struct {
	Total   int       `json:"total"`
	Results *[]hsDeal `json:"results"`
	Paging  struct {
		Next struct {
			After string `json:"after"`
		} `json:"next"`
	} `json:"paging"`
}

type hsResults struct {
	Results []hsDeal
	Paging  struct{ Next struct{ After string } }
}

func (h *hubspot) properties() []string {
	out := []string{"hs_lastmodifieddate", "hs_object_id"}
	seen := map[string]bool{"hs_lastmodifieddate": true, "hs_object_id": true}
	for _, p := range []string{h.props.name, h.props.industry, h.props.segment, h.props.owner, h.props.description} {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

type hsFilter struct {
	PropertyName string `json:"propertyName"`
	Operator     string `json:"operator"`
	Value        string `json:"value"`
}

func (h *hubspot) search(ctx context.Context, cur hsCursor) (*hsResults, error) {
	body := map[string]any{
		"sorts":      []map[string]string{{"propertyName": "hs_lastmodifieddate", "direction": "ASCENDING"}},
		"properties": h.properties(),
		"limit":      h.size,
	}
	t := strconv.FormatInt(cur.T, 10)
	switch {
	case cur.T < 0:
	case cur.Tie != "":
		body["sorts"] = []map[string]string{{"propertyName": "hs_object_id", "direction": "ASCENDING"}}
		body["filterGroups"] = []map[string]any{{"filters": []hsFilter{{"hs_lastmodifieddate", "EQ", t}, {"hs_object_id", "GT", cur.Tie}}}}
	case cur.Strict:
		body["filterGroups"] = []map[string]any{{"filters": []hsFilter{{"hs_lastmodifieddate", "GT", t}}}}
	default:
		body["filterGroups"] = []map[string]any{{"filters": []hsFilter{{"hs_lastmodifieddate", "GTE", t}}}}
	}
	buf, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/crm/v3/objects/deals/search", bytes.NewReader(buf))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	r, err := h.send(req)
	if err != nil {
		return nil, err
	}
	var res hsSearchResult
	if err := json.Unmarshal(r.body, &res); err != nil || res.Results == nil {
		return nil, fmt.Errorf("hubspot answered a body that is not a search result (total, results, paging)%s", errSuffix(err))
	}
	if len(*res.Results) > 200 {
		return nil, fmt.Errorf("hubspot answered %d deals in one page; at most 200", len(*res.Results))
	}
	out := &hsResults{Results: *res.Results}
	out.Paging.Next.After = res.Paging.Next.After
	return out, nil
}

func (h *hubspot) send(req *http.Request) (*response, error) {
	req.Header.Set("Accept", "application/json")
	r, err := h.t.send(req)
	if err != nil {
		return nil, err
	}
	if r.status >= 200 && r.status <= 299 {
		return r, nil
	}
	if r.status == http.StatusTooManyRequests && hsPolicy(r.body) == "DAILY" {
		return nil, &RateLimitedError{After: retryAfter(r.header, time.Now()), Reason: truncate(hsError(r.body), 200)}
	}
	return nil, statusError("hubspot", r, hsError(r.body))
}

func hsPolicy(body []byte) string {
	var e struct {
		Policy string `json:"policyName"`
	}
	_ = json.Unmarshal(body, &e)
	return strings.ToUpper(e.Policy)
}

// hsError reads HubSpot's error body: {"status": "error", "message": ...,
// "category": ... or "errorType": ..., "correlationId": ...}.
func hsError(body []byte) string {
	var e struct {
		Message   string `json:"message"`
		Category  string `json:"category"`
		ErrorType string `json:"errorType"`
		Policy    string `json:"policyName"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	code := e.Category
	if code == "" {
		code = e.ErrorType
	}
	if e.Policy != "" {
		code += " " + e.Policy
	}
	if code == "" {
		return e.Message
	}
	return strings.TrimSpace(code) + ": " + e.Message
}

func (h *hubspot) item(d hsDeal) Item {
	if d.ID == "" {
		return Item{Invalid: "deal without an id"}
	}
	it := Item{ExternalID: d.ID}
	mod, _ := propText(d.Properties, "hs_lastmodifieddate")
	if mod == "" {
		mod = d.UpdatedAt
	}
	t, err := hsTime(mod)
	if err != nil {
		return Item{ExternalID: d.ID, Invalid: fmt.Sprintf("deal %s: hs_lastmodifieddate %s", d.ID, err)}
	}
	it.ModifiedAt = t
	var f InitiativeFields
	var bad []string
	for _, m := range []struct {
		prop string
		dst  *string
	}{{h.props.name, &f.Name}, {h.props.industry, &f.Industry}, {h.props.segment, &f.Segment}, {h.props.owner, &f.Owner}, {h.props.description, &f.Description}} {
		if m.prop == "" {
			continue
		}
		v, ok := propText(d.Properties, m.prop)
		if !ok {
			bad = append(bad, m.prop)
		}
		*m.dst = strings.TrimSpace(v)
	}
	switch {
	case len(bad) > 0:
		it.Invalid = fmt.Sprintf("deal %s: property %s is not a text value", d.ID, strings.Join(bad, ", "))
	case f.Name == "":
		it.Invalid = fmt.Sprintf("deal %s has no %s (the initiative's name)", d.ID, h.props.name)
	default:
		it.Initiative = &f
	}
	return it
}

func propText(props map[string]json.RawMessage, k string) (string, bool) {
	raw, ok := props[k]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	return scalarText(raw)
}

// hsTime reads hs_lastmodifieddate: ISO 8601 in search results, or epoch
// milliseconds.
func hsTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("is not a time: %q", truncate(s, 40))
}

var digits = regexp.MustCompile(`^[0-9]{1,20}$`)

// resolveOwners replaces owner ids by emails (owner_property
// hubspot_owner_id only).
func (h *hubspot) resolveOwners(ctx context.Context, items []Item) error {
	if h.props.owner != "hubspot_owner_id" {
		return nil
	}
	need := false
	for _, it := range items {
		need = need || (it.Initiative != nil && it.Initiative.Owner != "")
	}
	if !need {
		return nil
	}
	if h.owners == nil {
		owners, err := h.listOwners(ctx)
		if err != nil {
			return err
		}
		h.owners = owners
	}
	for _, it := range items {
		if it.Initiative != nil && it.Initiative.Owner != "" {
			id := it.Initiative.Owner
			if !digits.MatchString(id) {
				continue // not an owner id: kept as sent
			}
			it.Initiative.Owner = h.owners[id] // "" for an owner unknown (deactivated) or without email
		}
	}
	return nil
}

// listOwners lists the account's owners: GET /crm/v3/owners?limit=500,
// paged by paging.next.after (at most 20 pages). A 403 (no owners scope)
// gives an empty map: owners stay unmapped.
func (h *hubspot) listOwners(ctx context.Context) (map[string]string, error) {
	owners := map[string]string{}
	after := ""
	for range 20 {
		q := url.Values{"limit": {"500"}}
		if after != "" {
			q.Set("after", after)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+"/crm/v3/owners?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		r, err := h.t.send(req)
		if err != nil {
			return nil, err
		}
		if r.status == http.StatusForbidden {
			return owners, nil
		}
		if r.status < 200 || r.status > 299 {
			return nil, statusError("hubspot owners", r, hsError(r.body))
		}
		var page struct {
			Results []struct {
				ID    string `json:"id"`
				Email string `json:"email"`
			} `json:"results"`
			Paging struct {
				Next struct {
					After string `json:"after"`
				} `json:"next"`
			} `json:"paging"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			return nil, fmt.Errorf("hubspot owners answered a body that is not an owners page%s", errSuffix(err))
		}
		for _, o := range page.Results {
			owners[o.ID] = strings.TrimSpace(o.Email)
		}
		if page.Paging.Next.After == "" {
			return owners, nil
		}
		after = page.Paging.Next.After
	}
	return owners, nil
}
