package provider

import (
	"bytes"
	"context"
	"encoding/json"
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
//	Authorization: Bearer <oauth_token or private app token>
//	{"filterGroups": [{"filters": [{"propertyName": "hs_lastmodifieddate", "operator": "GTE", "value": "<ms>"}]}],
//	 "sorts": [{"propertyName": "hs_lastmodifieddate", "direction": "ASCENDING"}],
//	 "properties": [...mapped properties, "hs_lastmodifieddate"], "limit": <page_size>, "after": "<paging.next.after>"}
//
// HubSpot's search returns at most 10,000 results per query (paging beyond
// answers 400). So the client pages with paging.next.after inside a window
// and, before the window's 10,000th result, opens a new window from the
// largest hs_lastmodifieddate seen (GTE), skipping the deals already yielded
// at exactly that millisecond (their ids travel in the cursor). A sync of any
// size therefore advances by watermark, with no duplicates inside a sync.
// since and the Watermark are RFC 3339 UTC times with milliseconds; across
// syncs the filter is GTE, so the last deal(s) of the previous sync come again
// (unchanged for the upsert) rather than a deal modified in the same
// millisecond being missed.
//
// Owners: deals carry hubspot_owner_id; with owner_property hubspot_owner_id
// the client lists the account's owners once per client (GET
// /crm/v3/owners?limit=500, paged) and maps the id to the owner's email.
// When the token lacks the owners scope (403) the owner is left empty.
//
// Errors: 401 (category INVALID_AUTHENTICATION, EXPIRED_AUTHENTICATION) and
// 403 (MISSING_SCOPES) on the search → ErrUnauthorized; 429 (errorType
// RATE_LIMIT, policyName SECONDLY/DAILY, Retry-After) and 5xx →
// *RetryableError; 400 (VALIDATION_ERROR) → permanent.
type hubspot struct {
	base   string
	props  hsMapping
	size   int
	token  string
	hc     *http.Client
	owners map[string]string // owner id → email; nil until listed
}

type hsMapping struct{ name, industry, segment, owner, description string }

// hubspotSearchCap is HubSpot's limit of results per search query.
const hubspotSearchCap = 10_000

// maxSkipIDs bounds the ids carried in a cursor (deals sharing the
// watermark's millisecond).
const maxSkipIDs = 5_000

func newHubSpot(c conf, token string, hc *http.Client) *hubspot {
	return &hubspot{
		base: c.str("instance_url"),
		props: hsMapping{
			name: c.str("name_property"), industry: c.str("industry_property"), segment: c.str("segment_property"),
			owner: c.str("owner_property"), description: c.str("description_property"),
		},
		size:  c.num("page_size"),
		token: token,
		hc:    hc,
	}
}

type hsCursor struct {
	From  int64    `json:"f"`           // the window's GTE bound in ms; -1: no bound
	After string   `json:"a,omitempty"` // paging.next.after inside the window
	WM    int64    `json:"w"`           // largest hs_lastmodifieddate yielded, ms; -1: none
	Skip  []string `json:"x,omitempty"` // ids yielded at exactly WM (skipped in a new window)
}

func (h *hubspot) Fetch(ctx context.Context, since, cursor string) (Page, error) {
	cur := hsCursor{From: -1, WM: -1}
	if cursor != "" {
		if err := decodeCursor(cursor, &cur); err != nil {
			return Page{}, err
		}
	} else if since != "" {
		t, err := parseSince(since)
		if err != nil {
			return Page{}, err
		}
		cur.From = t.UnixMilli()
		cur.WM = cur.From
	}
	res, err := h.search(ctx, cur)
	if err != nil {
		return Page{}, err
	}
	skip := map[string]bool{}
	if cur.After == "" || cur.After == "0" {
		for _, id := range cur.Skip {
			skip[id] = true
		}
	}
	page := Page{Items: make([]Item, 0, len(res.Results))}
	for _, d := range res.Results {
		if skip[d.ID] {
			continue
		}
		it := h.item(d)
		if !it.ModifiedAt.IsZero() {
			ms := it.ModifiedAt.UnixMilli()
			switch {
			case ms > cur.WM:
				cur.WM, cur.Skip = ms, []string{d.ID}
			case ms == cur.WM:
				cur.Skip = append(cur.Skip, d.ID)
			}
		}
		page.Items = append(page.Items, it)
	}
	if err := h.resolveOwners(ctx, page.Items); err != nil {
		return Page{}, err
	}
	if cur.WM >= 0 {
		page.Watermark = time.UnixMilli(cur.WM).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	if res.Paging.Next.After == "" {
		return page, nil
	}
	after, err := strconv.Atoi(res.Paging.Next.After)
	if err != nil || after <= 0 {
		return Page{}, fmt.Errorf("hubspot answered paging.next.after %q", truncate(res.Paging.Next.After, 40))
	}
	next := hsCursor{From: cur.From, After: res.Paging.Next.After, WM: cur.WM, Skip: cur.Skip}
	if after+h.size > hubspotSearchCap {
		// The window is full: the next one starts at the watermark.
		if cur.WM <= cur.From {
			return Page{}, fmt.Errorf("hubspot: more than %d deals were modified at %s; the search cannot page past them", hubspotSearchCap, page.Watermark)
		}
		next = hsCursor{From: cur.WM, WM: cur.WM, Skip: cur.Skip}
	}
	if len(next.Skip) > maxSkipIDs {
		return Page{}, fmt.Errorf("hubspot: more than %d deals share the modification time %s", maxSkipIDs, page.Watermark)
	}
	page.Next = encodeCursor(next)
	return page, nil
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
	out := []string{"hs_lastmodifieddate"}
	seen := map[string]bool{"hs_lastmodifieddate": true}
	for _, p := range []string{h.props.name, h.props.industry, h.props.segment, h.props.owner, h.props.description} {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func (h *hubspot) search(ctx context.Context, cur hsCursor) (*hsResults, error) {
	body := map[string]any{
		"sorts":      []map[string]string{{"propertyName": "hs_lastmodifieddate", "direction": "ASCENDING"}},
		"properties": h.properties(),
		"limit":      h.size,
	}
	if cur.From >= 0 {
		body["filterGroups"] = []map[string]any{{"filters": []map[string]string{{
			"propertyName": "hs_lastmodifieddate", "operator": "GTE", "value": strconv.FormatInt(cur.From, 10),
		}}}}
	}
	if cur.After != "" {
		body["after"] = cur.After
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
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Accept", "application/json")
	r, err := do(h.hc, req)
	if err != nil {
		return nil, err
	}
	if r.status >= 200 && r.status <= 299 {
		return r, nil
	}
	return nil, statusError("hubspot", r, hsError(r.body))
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
		req.Header.Set("Authorization", "Bearer "+h.token)
		req.Header.Set("Accept", "application/json")
		r, err := do(h.hc, req)
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
