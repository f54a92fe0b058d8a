package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the Jira user's IANA time zone resolves on any machine
)

// The jira provider reads issues (epics by default) with Jira Cloud's
// enhanced JQL search:
//
//	GET {base}/rest/api/3/search/jql?jql=(<jql>) [AND project = "<project_key>"]
//	    [AND updated >= "<since - lookback, yyyy-MM-dd HH:mm in the user's time zone>"] ORDER BY updated ASC, key ASC
//	    &fields=summary,status,updated&maxResults=<page_size>[&nextPageToken=<token>]
//
// answering {"issues": [...], "nextPageToken": "...", "isLast": bool}. jql is
// config jql (default issuetype = Epic; sites rename the Epic type).
//
// Auth (config auth):
//   - basic: an Atlassian API token as HTTP Basic email:api_token, at the
//     site, {base} = instance_url ("Basic auth for REST APIs").
//   - oauth: an OAuth 2.0 (3LO) access token as Bearer. Atlassian accepts
//     these only through its gateway, {base} =
//     {gateway_url}/ex/jira/{cloud_id} ("Requests that use OAuth 2.0 (3LO)
//     are made via api.atlassian.com, not your-domain.atlassian.net",
//     developer.atlassian.com "Making calls to API"). Without config cloud_id
//     the client asks GET {gateway_url}/oauth/token/accessible-resources and
//     takes the site whose url is instance_url (or the only one). With
//     refresh_token, client_id and client_secret the token is renewed at
//     token_url (default https://auth.atlassian.com/oauth/token) before its
//     expires_in (an hour) runs out and once on a 401; Atlassian rotates the
//     refresh token on every refresh ("Implementing the Refresh Token Flow").
//
// JQL date literals have minute precision and are read in the time zone of
// the calling user's profile, so an incremental sync first asks
// GET /rest/api/3/myself for timeZone and writes since in that zone, floored
// to the minute (if Jira gives no usable zone, since minus 14 hours, which
// is at or before since in every zone). The search index is eventually
// consistent, so the filter starts lookback_minutes before since (issues the
// coarser filter lets through from before that are dropped). Each item's
// ExternalID is the issue id (stable when an epic moves to another project
// and its key changes); ProjectFields.Key is the key. since and the
// Watermark are RFC 3339 UTC times (the largest fields.updated seen).
//
// Errors: 401 and 403 → ErrUnauthorized; 429 (Retry-After) and 5xx →
// *RetryableError; 400 (errorMessages, e.g. a project_key or an issue type
// that does not exist) → a permanent error with Jira's message.
type jira struct {
	site     string // instance_url
	gateway  string // gateway_url (oauth)
	cloudID  string // oauth: from config or accessible-resources
	oauth    bool
	filter   string
	project  string
	size     int
	lookback time.Duration
	t        *transport
}

func newJira(c conf, creds Credentials, t *transport) *jira {
	j := &jira{site: c.str("instance_url"), gateway: c.str("gateway_url"), cloudID: c.str("cloud_id"), oauth: c.str("auth") == "oauth",
		filter: c.str("jql"), project: c.str("project_key"), size: c.num("page_size"), lookback: c.lookback(), t: t}
	if !j.oauth {
		tok := creds.APIToken
		if tok == "" {
			tok = creds.AccessToken // integrations connected before api_token existed keep the API token as oauth_token
		}
		basic := c.str("email") + ":" + tok
		t.red.add(basic)
		t.auth.basic = "Basic " + base64.StdEncoding.EncodeToString([]byte(basic))
	}
	return j
}

type jiraCursor struct {
	JQL   string `json:"q"`
	Token string `json:"t"`
	WM    string `json:"w,omitempty"`
}

func (j *jira) Fetch(ctx context.Context, since, cursor string) (Page, error) {
	sinceT, err := parseSince(since)
	if err != nil {
		return Page{}, err
	}
	cur := jiraCursor{WM: since}
	if cursor != "" {
		if err := decodeCursor(cursor, &cur); err != nil || cur.Token == "" || !strings.HasPrefix(cur.JQL, "("+j.filter+")") {
			return Page{}, fmt.Errorf("invalid cursor")
		}
	} else {
		cur.JQL, err = j.jql(ctx, lookBack(sinceT, j.lookback))
		if err != nil {
			return Page{}, err
		}
	}
	q := url.Values{"jql": {cur.JQL}, "fields": {"summary,status,updated"}, "maxResults": {strconv.Itoa(j.size)}}
	if cur.Token != "" {
		q.Set("nextPageToken", cur.Token)
	}
	r, err := j.get(ctx, "/rest/api/3/search/jql?"+q.Encode())
	if err != nil {
		return Page{}, err
	}
	var res struct {
		Issues *[]struct {
			ID     string `json:"id"`
			Key    string `json:"key"`
			Fields struct {
				Summary *string `json:"summary"`
				Status  *struct {
					Name string `json:"name"`
				} `json:"status"`
				Updated string `json:"updated"`
			} `json:"fields"`
		} `json:"issues"`
		NextPageToken *string `json:"nextPageToken"`
		IsLast        *bool   `json:"isLast"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil || res.Issues == nil {
		return Page{}, fmt.Errorf("jira answered a body that is not a search result (issues, nextPageToken, isLast)%s", errSuffix(err))
	}
	if len(*res.Issues) > 5000 {
		return Page{}, fmt.Errorf("jira answered %d issues in one page; at most 5000", len(*res.Issues))
	}
	page := Page{Items: make([]Item, 0, len(*res.Issues))}
	for _, is := range *res.Issues {
		if is.ID == "" || is.Key == "" {
			page.Items = append(page.Items, Item{ExternalID: is.ID, Invalid: "issue without an id or key"})
			continue
		}
		it := Item{ExternalID: is.ID}
		t, err := sfTime(is.Fields.Updated) // Jira's form is Salesforce's: 2026-01-31T10:00:00.000+0100
		if err != nil {
			it.Invalid = fmt.Sprintf("epic %s: updated %s", is.Key, err)
			page.Items = append(page.Items, it)
			continue
		}
		if !sinceT.IsZero() && t.Before(lookBack(sinceT, j.lookback)) {
			continue // let through by the minute-precision JQL filter
		}
		it.ModifiedAt = t
		if w := t.Format(time.RFC3339); cur.WM == "" || laterRFC3339(w, cur.WM) {
			cur.WM = w
		}
		name := ""
		if is.Fields.Summary != nil {
			name = strings.TrimSpace(*is.Fields.Summary)
		}
		if name == "" {
			it.Invalid = fmt.Sprintf("epic %s has no summary (the project's name)", is.Key)
		} else {
			p := &ProjectFields{Key: is.Key, Name: name}
			if is.Fields.Status != nil {
				p.Status = is.Fields.Status.Name
			}
			it.Project = p
		}
		page.Items = append(page.Items, it)
	}
	page.Watermark = cur.WM
	last := res.IsLast != nil && *res.IsLast
	if res.NextPageToken != nil && *res.NextPageToken != "" && !last {
		if len(*res.NextPageToken) > 4096 {
			return Page{}, fmt.Errorf("jira answered a nextPageToken of %d characters", len(*res.NextPageToken))
		}
		page.Next = encodeCursor(jiraCursor{JQL: cur.JQL, Token: *res.NextPageToken, WM: cur.WM})
	}
	return page, nil
}

// jql builds the search of the configured issues updated at or after since.
func (j *jira) jql(ctx context.Context, since time.Time) (string, error) {
	q := "(" + j.filter + ")"
	if j.project != "" {
		q += ` AND project = "` + j.project + `"`
	}
	if !since.IsZero() {
		loc, err := j.userZone(ctx)
		if err != nil {
			return "", err
		}
		at := since.In(time.UTC).Add(-14 * time.Hour)
		if loc != nil {
			at = since.In(loc)
		}
		q += ` AND updated >= "` + at.Format("2006-01-02 15:04") + `"`
	}
	return q + " ORDER BY updated ASC, key ASC", nil
}

// userZone is the time zone of the token's user (nil when Jira names none
// that resolves).
func (j *jira) userZone(ctx context.Context) (*time.Location, error) {
	r, err := j.get(ctx, "/rest/api/3/myself")
	if err != nil {
		return nil, err
	}
	var me struct {
		TimeZone string `json:"timeZone"`
	}
	if json.Unmarshal(r.body, &me) != nil || me.TimeZone == "" {
		return nil, nil
	}
	loc, err := time.LoadLocation(me.TimeZone)
	if err != nil {
		return nil, nil
	}
	return loc, nil
}

func (j *jira) get(ctx context.Context, path string) (*response, error) {
	base, err := j.base(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	r, err := j.t.send(req)
	if err != nil {
		return nil, err
	}
	if r.status >= 200 && r.status <= 299 {
		return r, nil
	}
	return nil, statusError("jira", r, jiraError(r.body))
}

// base is where the REST API is: the site for Basic auth, the gateway path
// of the site's cloud id for OAuth.
func (j *jira) base(ctx context.Context) (string, error) {
	if !j.oauth {
		return j.site, nil
	}
	if j.cloudID == "" {
		id, err := j.discoverCloudID(ctx)
		if err != nil {
			return "", err
		}
		j.cloudID = id
	}
	return j.gateway + "/ex/jira/" + url.PathEscape(j.cloudID), nil
}

// discoverCloudID reads the sites the token may reach (GET
// /oauth/token/accessible-resources: [{"id", "url", "name", "scopes"}]) and
// returns the id of the one at instance_url, or of the only one.
func (j *jira) discoverCloudID(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.gateway+"/oauth/token/accessible-resources", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	r, err := j.t.send(req)
	if err != nil {
		return "", err
	}
	if r.status < 200 || r.status > 299 {
		return "", statusError("atlassian accessible-resources", r, jiraError(r.body))
	}
	var sites []struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	if err := json.Unmarshal(r.body, &sites); err != nil {
		return "", fmt.Errorf("atlassian accessible-resources answered a body that is not a list of sites%s", errSuffix(err))
	}
	var found []string
	for _, s := range sites {
		if s.ID == "" || !cloudIDRe.MatchString(s.ID) {
			continue
		}
		if j.site != "" && strings.EqualFold(strings.TrimRight(s.URL, "/"), j.site) {
			return s.ID, nil
		}
		found = append(found, s.ID)
	}
	switch {
	case j.site == "" && len(found) == 1:
		return found[0], nil
	case len(found) == 0:
		return "", errors.New("the OAuth token reaches no Jira site (accessible-resources is empty); authorise the app for the site")
	case j.site != "":
		return "", fmt.Errorf("the OAuth token does not reach the site at instance_url (it reaches %d other site(s)); set config cloud_id or fix instance_url", len(found))
	}
	return "", fmt.Errorf("the OAuth token reaches %d Jira sites; set config cloud_id or instance_url to choose one", len(found))
}

// jiraError reads {"errorMessages": [...], "errors": {field: message}}.
func jiraError(body []byte) string {
	var e struct {
		ErrorMessages []string          `json:"errorMessages"`
		Errors        map[string]string `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	msgs := append([]string(nil), e.ErrorMessages...)
	for k, v := range e.Errors {
		msgs = append(msgs, k+": "+v)
	}
	return strings.Join(msgs, "; ")
}
