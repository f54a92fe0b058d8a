package providertest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// JiraProject is the project key of the fake's epics.
const JiraProject = "VC"

// Jira is a fake Jira Cloud site serving epics through the enhanced JQL
// search (GET /rest/api/3/search/jql: issues, nextPageToken, isLast; fields;
// maxResults up to 100) and GET /rest/api/3/myself, with Jira's JSON shapes
// and error bodies ({"errorMessages": [...], "errors": {}}). It understands
// the JQL the client sends: clauses joined by AND among issuetype = Epic,
// project = KEY, updated >=|> "yyyy-MM-dd HH:mm" (read in the user's time
// zone, as Jira does), and ORDER BY updated.
//
// Issue i: id JiraID(i), key VC-<i+1>, summary "Epic <i>", status
// JiraStatuses[i%3], updated as the package doc says (rendered in the user's
// zone like 2026-01-01T01:01:00.000+0100).
//
// Auth as Atlassian Cloud has it: at the site paths (/rest/api/3/...) HTTP Basic
// Email:Token only (an API token, "Basic auth for REST APIs"); a Bearer token there is
// refused with 401, because 3LO tokens work only through the gateway ("Requests that use OAuth
// 2.0 (3LO) are made via api.atlassian.com (not https://your-domain.atlassian.net)",
// developer.atlassian.com "Making calls to API"). The gateway paths /ex/jira/<CloudID>/rest/api/3/...
// and /oauth/token/accessible-resources ([{"id", "url", "name", "scopes", "avatarUrl"}]) take
// Bearer access tokens (Options.Token and those of the token endpoint); POST /oauth/token (JSON:
// grant_type, client_id, client_secret, refresh_token) is auth.atlassian.com's token endpoint,
// answering {"access_token", "refresh_token", "expires_in", "scope", "token_type"} with a new
// refresh token each time, or 403 {"error": "invalid_grant", "error_description": "Unknown or
// invalid refresh token."} for a reused one. The search reads an index that lags writes by
// Options.IndexLag. Options.IssueType renames the epic type (sites rename it): JQL naming
// another type answers 400 as Jira does for a type that does not exist.
type Jira struct {
	*base
	loc     *time.Location
	jmu     sync.Mutex
	lastJQL string
}

// NewJira starts a fake site. Options.PageSize caps maxResults (default 100).
func NewJira(t testing.TB, o Options) *Jira {
	if o.TimeZone == "" {
		o.TimeZone = "Europe/Berlin"
	}
	if o.Email == "" {
		o.Email = "sync@example.com"
	}
	if o.IssueType == "" {
		o.IssueType = "Epic"
	}
	loc, err := time.LoadLocation(o.TimeZone)
	if err != nil {
		panic(fmt.Sprintf("providertest: time zone %q: %v", o.TimeZone, err))
	}
	j := &Jira{loc: loc}
	j.base = newBase(t, o, http.HandlerFunc(j.serve))
	return j
}

// Email is the account email Basic auth expects.
func (j *Jira) Email() string { return j.opts.Email }

// JiraID is issue i's id.
func JiraID(i int) string { return strconv.Itoa(10_000 + i) }

// JiraKey is issue i's key.
func JiraKey(i int) string { return fmt.Sprintf("%s-%d", JiraProject, i+1) }

// JiraStatuses cycle over the epics (i%3).
var JiraStatuses = []string{"To Do", "In Progress", "Done"}

// LastJQL is the jql of the last search request.
func (j *Jira) LastJQL() string { j.jmu.Lock(); defer j.jmu.Unlock(); return j.lastJQL }

func jiraErr(w http.ResponseWriter, status int, msgs ...string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errorMessages": msgs, "errors": map[string]string{}})
}

func (j *Jira) failure(w http.ResponseWriter, f Failure, msg string) {
	switch {
	case msg != "":
		jiraErr(w, f.Status, msg)
	case f.Status == http.StatusTooManyRequests:
		jiraErr(w, f.Status, "Rate limit exceeded.")
	case f.Status == http.StatusUnauthorized:
		jiraErr(w, f.Status, "You are not authenticated. Authentication required to perform this operation.")
	default:
		jiraErr(w, f.Status, "Internal server error")
	}
}

// CloudID is the site's cloud id (the gateway path's and accessible-resources').
const CloudID = "11223344-a1b2-43c4-9d5e-fakec10ud001"

// token is auth.atlassian.com's POST /oauth/token.
func (j *Jira) token(w http.ResponseWriter, r *http.Request) {
	access, refresh, ok, reason := j.tokenGrant(tokenParams(r), "eyJFAKE-atl")
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusForbidden)
		desc := "Unknown or invalid refresh token."
		if strings.Contains(reason, "client") {
			desc = "Unauthorized"
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": desc})
		return
	}
	body := map[string]any{"access_token": access, "refresh_token": refresh, "scope": "read:jira-work offline_access", "token_type": "Bearer"}
	if j.opts.OAuth.TTL > 0 {
		body["expires_in"] = int(j.opts.OAuth.TTL / time.Second)
	}
	_ = json.NewEncoder(w).Encode(body)
}

func (j *Jira) unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `OAuth realm="https://fake.atlassian.net"`)
	jiraErr(w, http.StatusUnauthorized, "You are not authenticated. Authentication required to perform this operation.")
}

func (j *Jira) serve(w http.ResponseWriter, r *http.Request) {
	if j.count(w, r, j.failure) {
		return
	}
	gateway := "/ex/jira/" + CloudID
	switch {
	case r.URL.Path == "/oauth/token" && r.Method == http.MethodPost:
		j.token(w, r)
		return
	case r.URL.Path == "/oauth/token/accessible-resources":
		if !j.bearerOK(bearer(r)) {
			j.unauthorized(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode([]map[string]any{{"id": CloudID, "url": j.URL, "name": "fake", "scopes": []string{"read:jira-work"},
			"avatarUrl": "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png"}})
		return
	case strings.HasPrefix(r.URL.Path, "/ex/jira/"):
		if !strings.HasPrefix(r.URL.Path, gateway+"/") {
			jiraErr(w, http.StatusNotFound, "Site not found")
			return
		}
		if !j.bearerOK(bearer(r)) {
			j.unauthorized(w)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, gateway)
	default:
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(j.opts.Email+":"+j.Token()))
		if r.Header.Get("Authorization") != basic {
			j.unauthorized(w)
			return
		}
	}
	switch {
	case r.URL.Path == "/rest/api/3/myself" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"self": "http://" + r.Host + "/rest/api/3/user?accountId=5b10a2844c20165700ede21g", "accountId": "5b10a2844c20165700ede21g",
			"accountType": "atlassian", "emailAddress": j.opts.Email, "displayName": "Valuecase Sync", "active": true,
			"timeZone": j.opts.TimeZone, "locale": "en_US",
		})
	case r.URL.Path == "/rest/api/3/search/jql" && r.Method == http.MethodGet:
		j.search(w, r)
	default:
		jiraErr(w, http.StatusNotFound, "Not found")
	}
}

var (
	jqlOrderRe   = regexp.MustCompile(`(?i)\s+ORDER\s+BY\s+(.+)$`)
	jqlTypeRe    = regexp.MustCompile(`(?i)^\(?issuetype\s*=\s*"?([A-Za-z ]+?)"?\)?$`)
	jqlProjectRe = regexp.MustCompile(`(?i)^project\s*=\s*"?([A-Z][A-Z0-9_]*)"?$`)
	jqlUpdatedRe = regexp.MustCompile(`(?i)^updated\s*(>=|>)\s*"([0-9]{4})[-/]([0-9]{2})[-/]([0-9]{2})(?: ([0-9]{2}):([0-9]{2}))?"$`)
)

func (j *Jira) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	jql := strings.TrimSpace(q.Get("jql"))
	j.jmu.Lock()
	j.lastJQL = jql
	j.jmu.Unlock()
	if jql == "" {
		jiraErr(w, http.StatusBadRequest, "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.")
		return
	}
	where := jql
	if m := jqlOrderRe.FindStringSubmatch(jql); m != nil {
		where = strings.TrimSpace(jql[:len(jql)-len(m[0])])
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(m[1])), "updated") {
			jiraErr(w, http.StatusBadRequest, "the fake orders by updated only")
			return
		}
	}
	var (
		from      time.Time
		inclusive bool
	)
	for _, clause := range regexp.MustCompile(`(?i)\s+AND\s+`).Split(where, -1) {
		clause = strings.TrimSpace(clause)
		switch {
		case jqlTypeRe.MatchString(clause):
			if typ := jqlTypeRe.FindStringSubmatch(clause)[1]; !strings.EqualFold(typ, j.opts.IssueType) {
				jiraErr(w, http.StatusBadRequest, fmt.Sprintf("The value '%s' does not exist for the field 'issuetype'.", typ))
				return
			}
		case jqlProjectRe.MatchString(clause):
			if p := jqlProjectRe.FindStringSubmatch(clause)[1]; p != JiraProject {
				jiraErr(w, http.StatusBadRequest, fmt.Sprintf("The value '%s' does not exist for the field 'project'.", p))
				return
			}
		case jqlUpdatedRe.MatchString(clause):
			m := jqlUpdatedRe.FindStringSubmatch(clause)
			y, mo, d := atoiDefault(m[2], 0), atoiDefault(m[3], 0), atoiDefault(m[4], 0)
			hh, mm := atoiDefault(m[5], 0), atoiDefault(m[6], 0)
			from = time.Date(y, time.Month(mo), d, hh, mm, 0, 0, j.loc)
			inclusive = m[1] == ">="
		default:
			jiraErr(w, http.StatusBadRequest, fmt.Sprintf("Error in the JQL Query: the fake does not understand %q.", clause))
			return
		}
	}
	size := min(max(atoiDefault(q.Get("maxResults"), 50), 1), 100)
	if j.opts.PageSize > 0 {
		size = min(size, j.opts.PageSize)
	}
	offset := 0
	if tok := q.Get("nextPageToken"); tok != "" {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || !strings.HasPrefix(string(raw), "o:") {
			jiraErr(w, http.StatusBadRequest, "Invalid nextPageToken.")
			return
		}
		offset = atoiDefault(strings.TrimPrefix(string(raw), "o:"), 0)
	}
	mods := j.snapshot()
	idx := modifiedAfter(mods, from, inclusive)
	sortByModified(idx, mods, func(a, b int) bool { return a < b })
	lo := min(offset, len(idx))
	hi := min(lo+size, len(idx))
	fields := map[string]bool{}
	for _, f := range strings.Split(q.Get("fields"), ",") {
		fields[strings.TrimSpace(f)] = true
	}
	issues := make([]map[string]any, 0, hi-lo)
	for _, i := range idx[lo:hi] {
		f := map[string]any{}
		if fields["summary"] {
			f["summary"] = fmt.Sprintf("Epic %d", i)
		}
		if fields["status"] {
			f["status"] = map[string]any{
				"self": "http://" + r.Host + "/rest/api/3/status/1", "name": JiraStatuses[i%3], "id": strconv.Itoa(1 + i%3),
				"statusCategory": map[string]any{"key": []string{"new", "indeterminate", "done"}[i%3]},
			}
		}
		if fields["updated"] {
			f["updated"] = mods[i].In(j.loc).Format("2006-01-02T15:04:05.000-0700")
		}
		issues = append(issues, map[string]any{
			"expand": "", "id": JiraID(i), "key": JiraKey(i),
			"self": "http://" + r.Host + "/rest/api/3/issue/" + JiraID(i), "fields": f,
		})
	}
	body := map[string]any{"issues": issues, "isLast": hi >= len(idx)}
	if hi < len(idx) {
		body["nextPageToken"] = base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(hi)))
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_ = json.NewEncoder(w).Encode(body)
}
