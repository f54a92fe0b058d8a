package providertest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// HubSpot is a fake HubSpot account serving deals through the CRM v3 search
// endpoint (POST /crm/v3/objects/deals/search: filterGroups ORed, their
// filters ANDed, on hs_lastmodifieddate and hs_object_id with
// EQ/GT/GTE/LT/LTE, one sort on either, properties, limit ≤ 200, and
// after: an opaque paging token, as HubSpot's is ("The cursor token for
// pagination. Use the value from the previous response's
// paging.next.after"), at most SearchCap results per query, 400 beyond,
// "paginating through results fails past the 10,000th"), its owners (GET
// /crm/v3/owners, paged) and its OAuth token endpoint (POST /oauth/v1/token,
// "Refresh an access token", developers.hubspot.com), with HubSpot's JSON
// shapes and error bodies. The search reads an index that lags writes by
// Options.IndexLag; paging by after is by position in the current index, so a
// deal modified between two pages shifts the later ones, as HubSpot's does.
//
// Deal i: id HubSpotID(i), dealname "Deal <i>", dealtype newbusiness /
// existingbusiness, description (null for every 3rd), amount, pipeline,
// dealstage, hubspot_owner_id 100+i%7 (null for every 10th), whose owner's
// email is rep<i%7>@example.com; hs_lastmodifieddate as the package doc says.
type HubSpot struct {
	*base
	noOwnersScope bool
	ownerRequests int
}

// SetNoOwnersScope makes GET /crm/v3/owners answer 403 MISSING_SCOPES (a
// token without the owners scope).
func (h *HubSpot) SetNoOwnersScope(v bool) { h.mu.Lock(); defer h.mu.Unlock(); h.noOwnersScope = v }

// NewHubSpot starts a fake account. Options.PageSize caps limit (default 200,
// HubSpot's maximum); Options.SearchCap defaults to 10,000.
func NewHubSpot(t testing.TB, o Options) *HubSpot {
	if o.SearchCap == 0 {
		o.SearchCap = 10_000
	}
	h := &HubSpot{}
	h.base = newBase(t, o, http.HandlerFunc(h.serve))
	return h
}

// HubSpotID is deal i's id.
func HubSpotID(i int) string { return strconv.Itoa(9_000_000_000 + i) }

// DealTypes cycle over the deals (i%2).
var DealTypes = []string{"newbusiness", "existingbusiness"}

// OwnerRequests counts GET /crm/v3/owners requests.
func (h *HubSpot) OwnerRequests() int { h.mu.Lock(); defer h.mu.Unlock(); return h.ownerRequests }

func corr() string { return "0d7f4a4c-5b8e-4e59-9d3a-6f1c2b3a4d5e" }

func hsErr(w http.ResponseWriter, status int, body map[string]any) {
	body["status"] = "error"
	body["correlationId"] = corr()
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// failure answers a queued Failure as HubSpot does: 429 RATE_LIMIT with policyName SECONDLY
// (the burst limit) or, with Kind "daily", DAILY: the account's daily allowance, which "resets
// at midnight based on the time zone setting of the HubSpot account" (HubSpot API usage
// guidelines).
func (h *HubSpot) failure(w http.ResponseWriter, f Failure, msg string) {
	pick := func(def string) string {
		if msg != "" {
			return msg
		}
		return def
	}
	switch {
	case f.Status == http.StatusTooManyRequests && f.Kind == "daily":
		hsErr(w, f.Status, map[string]any{"message": pick("You have reached your daily limit."), "errorType": "RATE_LIMIT", "policyName": "DAILY", "groupName": "publicapi:oauth:1234"})
	case f.Status == http.StatusTooManyRequests:
		hsErr(w, f.Status, map[string]any{"message": pick("You have reached your secondly limit."), "errorType": "RATE_LIMIT", "policyName": "SECONDLY", "groupName": "publicapi:oauth:1234"})
	case f.Status == http.StatusUnauthorized && msg == "":
		h.unauthorized(w)
	default:
		hsErr(w, f.Status, map[string]any{"message": pick("internal error"), "category": "INTERNAL_ERROR"})
	}
}

// token is POST /oauth/v1/token (form: grant_type=refresh_token, client_id, client_secret,
// refresh_token) answering {"token_type": "bearer", "refresh_token", "access_token",
// "expires_in"} or 400 {"status": "BAD_REFRESH_TOKEN", "message": ...}.
func (h *HubSpot) token(w http.ResponseWriter, r *http.Request) {
	access, refresh, ok, reason := h.tokenGrant(tokenParams(r), "CKFAKE-hs")
	if !ok {
		status := "BAD_REFRESH_TOKEN"
		if strings.Contains(reason, "client") {
			status = "BAD_CLIENT_ID"
		}
		hsErr(w, http.StatusBadRequest, map[string]any{"status": status, "message": reason})
		return
	}
	body := map[string]any{"token_type": "bearer", "refresh_token": refresh, "access_token": access}
	if h.opts.OAuth.ExpiresIn && h.opts.OAuth.TTL > 0 {
		body["expires_in"] = int(h.opts.OAuth.TTL / time.Second)
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	_ = json.NewEncoder(w).Encode(body)
}

// hsAfter is the fake's opaque paging token of a position.
func hsAfter(pos int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("pos:" + strconv.Itoa(pos)))
}

func (h *HubSpot) unauthorized(w http.ResponseWriter) {
	hsErr(w, http.StatusUnauthorized, map[string]any{
		"message":  "Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview",
		"category": "INVALID_AUTHENTICATION",
	})
}

func (h *HubSpot) serve(w http.ResponseWriter, r *http.Request) {
	if h.count(w, r, h.failure) {
		return
	}
	if r.URL.Path == "/oauth/v1/token" && r.Method == http.MethodPost {
		h.token(w, r)
		return
	}
	if !h.bearerOK(bearer(r)) {
		h.unauthorized(w)
		return
	}
	switch {
	case r.URL.Path == "/crm/v3/objects/deals/search" && r.Method == http.MethodPost:
		h.search(w, r)
	case (r.URL.Path == "/crm/v3/owners" || r.URL.Path == "/crm/v3/owners/") && r.Method == http.MethodGet:
		h.owners(w, r)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

type hsFilter struct {
	PropertyName string `json:"propertyName"`
	Operator     string `json:"operator"`
	Value        string `json:"value"`
}

func (h *HubSpot) search(w http.ResponseWriter, r *http.Request) {
	var req struct {
		FilterGroups []struct {
			Filters []hsFilter `json:"filters"`
		} `json:"filterGroups"`
		Sorts []struct {
			PropertyName string `json:"propertyName"`
			Direction    string `json:"direction"`
		} `json:"sorts"`
		Properties []string `json:"properties"`
		Limit      *int     `json:"limit"`
		After      string   `json:"after"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		hsErr(w, http.StatusBadRequest, map[string]any{"message": "Invalid input JSON on line 1", "category": "VALIDATION_ERROR"})
		return
	}
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	maxLimit := 200
	if h.opts.PageSize > 0 {
		maxLimit = min(maxLimit, h.opts.PageSize)
	}
	if limit < 1 || limit > 200 {
		hsErr(w, http.StatusBadRequest, map[string]any{"message": fmt.Sprintf("limit must be between 1 and 200 (was %d)", limit), "category": "VALIDATION_ERROR"})
		return
	}
	limit = min(limit, maxLimit)
	after := 0
	if req.After != "" {
		raw, err := base64.RawURLEncoding.DecodeString(req.After)
		n, aerr := strconv.Atoi(strings.TrimPrefix(string(raw), "pos:"))
		if err != nil || aerr != nil || !strings.HasPrefix(string(raw), "pos:") || n < 0 {
			hsErr(w, http.StatusBadRequest, map[string]any{"message": "Invalid after: use the value of paging.next.after", "category": "VALIDATION_ERROR"})
			return
		}
		after = n
	}
	if after+limit > h.opts.SearchCap {
		hsErr(w, http.StatusBadRequest, map[string]any{"message": fmt.Sprintf("The search API returns at most %d results per query; page by a property instead", h.opts.SearchCap), "category": "VALIDATION_ERROR"})
		return
	}
	mods := h.snapshot()
	var idx []int
	for i, m := range mods {
		ok := len(req.FilterGroups) == 0
		for _, g := range req.FilterGroups { // groups OR, filters AND
			all := true
			for _, f := range g.Filters {
				match, err := hsMatch(f, m, i)
				if err != nil {
					hsErr(w, http.StatusBadRequest, map[string]any{"message": err.Error(), "category": "VALIDATION_ERROR"})
					return
				}
				all = all && match
			}
			ok = ok || all
		}
		if ok {
			idx = append(idx, i)
		}
	}
	// One sort rule per search (HubSpot's search request takes a single sort; the request
	// schema's sorts has maxItems 1), and deals of the same hs_lastmodifieddate come in no
	// defined order: the fake puts them in descending id order, so a client that assumes an id
	// order among them is caught.
	if len(req.Sorts) > 1 {
		hsErr(w, http.StatusBadRequest, map[string]any{"message": "Only one sort is supported per search request", "category": "VALIDATION_ERROR"})
		return
	}
	byID, desc := false, false
	if len(req.Sorts) == 1 {
		switch req.Sorts[0].PropertyName {
		case "hs_lastmodifieddate":
		case "hs_object_id":
			byID = true
		default:
			hsErr(w, http.StatusBadRequest, map[string]any{"message": "the fake sorts by hs_lastmodifieddate or hs_object_id only", "category": "VALIDATION_ERROR"})
			return
		}
		desc = strings.EqualFold(req.Sorts[0].Direction, "DESCENDING")
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if byID {
			return (idx[a] < idx[b]) != desc
		}
		ma, mb := mods[idx[a]].Truncate(time.Millisecond), mods[idx[b]].Truncate(time.Millisecond)
		if len(req.Sorts) == 1 && !ma.Equal(mb) {
			return ma.Before(mb) != desc
		}
		return idx[a] > idx[b]
	})
	lo := min(after, len(idx))
	hi := min(lo+limit, len(idx))
	props := req.Properties
	if len(props) == 0 {
		props = []string{"dealname", "amount", "closedate", "pipeline", "dealstage", "createdate", "hs_lastmodifieddate", "hs_object_id"}
	}
	results := make([]map[string]any, 0, hi-lo)
	for _, i := range idx[lo:hi] {
		results = append(results, h.deal(i, mods[i], props))
	}
	body := map[string]any{"total": len(idx), "results": results}
	if hi < len(idx) {
		body["paging"] = map[string]any{"next": map[string]any{
			"after": hsAfter(hi),
			"link":  "?after=" + hsAfter(hi),
		}}
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	_ = json.NewEncoder(w).Encode(body)
}

func hsMatch(f hsFilter, mod time.Time, i int) (bool, error) {
	var cmp int
	switch f.PropertyName {
	case "hs_lastmodifieddate":
		var v time.Time
		if ms, err := strconv.ParseInt(f.Value, 10, 64); err == nil {
			v = time.UnixMilli(ms)
		} else if t, err := time.Parse(time.RFC3339Nano, f.Value); err == nil {
			v = t
		} else {
			return false, fmt.Errorf("%q is not a valid date value for hs_lastmodifieddate", f.Value)
		}
		cmp = mod.Truncate(time.Millisecond).Compare(v)
	case "hs_object_id":
		v, err := strconv.ParseInt(f.Value, 10, 64)
		if err != nil {
			return false, fmt.Errorf("%q is not a valid number for hs_object_id", f.Value)
		}
		id, _ := strconv.ParseInt(HubSpotID(i), 10, 64)
		cmp = compareInt(id, v)
	default:
		return false, fmt.Errorf("the fake filters on hs_lastmodifieddate and hs_object_id only, not %q", f.PropertyName)
	}
	switch f.Operator {
	case "EQ":
		return cmp == 0, nil
	case "GT":
		return cmp > 0, nil
	case "GTE":
		return cmp >= 0, nil
	case "LT":
		return cmp < 0, nil
	case "LTE":
		return cmp <= 0, nil
	}
	return false, fmt.Errorf("operator %q is not supported by the fake", f.Operator)
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func hsStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (h *HubSpot) deal(i int, mod time.Time, props []string) map[string]any {
	created := h.opts.Start.Add(-time.Duration(i+1) * time.Hour)
	p := map[string]any{}
	for _, k := range props {
		switch k {
		case "dealname":
			p[k] = fmt.Sprintf("Deal %d", i)
		case "dealtype":
			p[k] = DealTypes[i%2]
		case "description":
			if i%3 == 0 {
				p[k] = nil
			} else {
				p[k] = fmt.Sprintf("Deal %d description", i)
			}
		case "amount":
			p[k] = strconv.Itoa(i * 1000)
		case "pipeline":
			p[k] = "default"
		case "dealstage":
			p[k] = "appointmentscheduled"
		case "closedate":
			p[k] = nil
		case "hubspot_owner_id":
			if i%10 == 9 {
				p[k] = nil
			} else {
				p[k] = strconv.Itoa(100 + i%7)
			}
		case "createdate":
			p[k] = hsStamp(created)
		case "hs_lastmodifieddate":
			p[k] = hsStamp(mod)
		case "hs_object_id":
			p[k] = HubSpotID(i)
		}
		// unknown properties are left out, as HubSpot does
	}
	return map[string]any{
		"id": HubSpotID(i), "properties": p,
		"createdAt": hsStamp(created), "updatedAt": hsStamp(mod), "archived": false,
	}
}

func (h *HubSpot) owners(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.ownerRequests++
	noScope := h.noOwnersScope
	h.mu.Unlock()
	if noScope {
		hsErr(w, http.StatusForbidden, map[string]any{
			"message":  "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
			"category": "MISSING_SCOPES",
		})
		return
	}
	limit := min(max(atoiDefault(r.URL.Query().Get("limit"), 100), 1), 500)
	after := atoiDefault(r.URL.Query().Get("after"), 0)
	var results []map[string]any
	for k := after; k < 7 && len(results) < limit; k++ {
		results = append(results, map[string]any{
			"id": strconv.Itoa(100 + k), "email": fmt.Sprintf("rep%d@example.com", k), "type": "PERSON",
			"firstName": "Rep", "lastName": strconv.Itoa(k), "userId": 5000 + k,
			"createdAt": hsStamp(h.opts.Start.AddDate(-1, 0, 0)), "updatedAt": hsStamp(h.opts.Start.AddDate(-1, 0, 0)), "archived": false,
		})
	}
	body := map[string]any{"results": results}
	if after+len(results) < 7 {
		next := after + len(results)
		body["paging"] = map[string]any{"next": map[string]any{"after": strconv.Itoa(next), "link": "?after=" + strconv.Itoa(next)}}
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	_ = json.NewEncoder(w).Encode(body)
}
