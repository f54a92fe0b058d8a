package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the Jira user's IANA time zone resolves on any machine
)

// The jira provider reads epics with Jira Cloud's enhanced JQL search:
//
//	GET {instance_url}/rest/api/3/search/jql?jql=issuetype = Epic [AND project = "<project_key>"]
//	    [AND updated >= "<since, yyyy-MM-dd HH:mm in the user's time zone>"] ORDER BY updated ASC, key ASC
//	    &fields=summary,status,updated&maxResults=<page_size>[&nextPageToken=<token>]
//
// answering {"issues": [...], "nextPageToken": "...", "isLast": bool}. Auth:
// with config email, Basic email:<API token> (Atlassian Cloud API tokens);
// without, "Authorization: Bearer <token>" (OAuth 2.0 access token).
//
// JQL date literals have minute precision and are read in the time zone of
// the calling user's profile, so an incremental sync first asks
// GET /rest/api/3/myself for timeZone and writes since in that zone, floored
// to the minute (if Jira gives no usable zone, since minus 14 hours, which
// is at or before since in every zone). Issues updated before since that the
// coarser filter lets through are dropped. Each item's ExternalID is the
// issue id (stable when an epic moves to another project and its key
// changes); ProjectFields.Key is the key. since and the Watermark are RFC 3339
// UTC times (the largest fields.updated seen).
//
// Errors: 401 and 403 → ErrUnauthorized; 429 (Retry-After) and 5xx →
// *RetryableError; 400 (errorMessages, e.g. a project_key that does not
// exist) → a permanent error with Jira's message.
type jira struct {
	base    string
	project string
	size    int
	auth    string
	hc      *http.Client
}

func newJira(c conf, token string, hc *http.Client) *jira {
	auth := "Bearer " + token
	if email := c.str("email"); email != "" {
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+token))
	}
	return &jira{base: c.str("instance_url"), project: c.str("project_key"), size: c.num("page_size"), auth: auth, hc: hc}
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
		if err := decodeCursor(cursor, &cur); err != nil || cur.Token == "" || !strings.HasPrefix(cur.JQL, "issuetype = Epic") {
			return Page{}, fmt.Errorf("invalid cursor")
		}
	} else {
		cur.JQL, err = j.jql(ctx, sinceT)
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
		if !sinceT.IsZero() && t.Before(sinceT) {
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

// jql builds the search of epics updated at or after since.
func (j *jira) jql(ctx context.Context, since time.Time) (string, error) {
	q := "issuetype = Epic"
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", j.auth)
	req.Header.Set("Accept", "application/json")
	r, err := do(j.hc, req)
	if err != nil {
		return nil, err
	}
	if r.status >= 200 && r.status <= 299 {
		return r, nil
	}
	return nil, statusError("jira", r, jiraError(r.body))
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
