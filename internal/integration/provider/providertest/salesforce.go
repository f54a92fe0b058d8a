package providertest

import (
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

// Salesforce is a fake Salesforce org (sessions, refresh token flow and
// daily limits as the Options and Failures say) serving Opportunities through the REST
// query resource (/services/data/vXX.X/query?q=SOQL and the nextRecordsUrl
// locators it hands out), with Salesforce's JSON shapes and error bodies
// ([{"message": ..., "errorCode": ...}]). It understands the SOQL the client
// sends: SELECT <fields> FROM Opportunity [WHERE SystemModstamp >|>= <datetime>]
// [ORDER BY ...] (always ordered by SystemModstamp, Id).
//
// Record i: Id SalesforceID(i), Name "Opportunity <i>", Type (segment),
// Description, StageName, Amount, Account{Name, Industry} (null for every
// 25th), Owner{Email "rep<i%7>@example.com", Name}, SystemModstamp.
type Salesforce struct {
	*base
	lmu      sync.Mutex
	locators map[string][]map[string]any // locator id → the rest of its result
	nextLoc  int
}

// NewSalesforce starts a fake org. Options.PageSize caps the batch size (the
// client's Sforce-Query-Options batchSize, 200..2000, default 2000).
func NewSalesforce(t testing.TB, o Options) *Salesforce {
	s := &Salesforce{locators: map[string][]map[string]any{}}
	s.base = newBase(t, o, http.HandlerFunc(s.serve))
	return s
}

// SalesforceID is record i's Opportunity Id (18 characters).
func SalesforceID(i int) string { return fmt.Sprintf("006Fk%010dAAA", i) }

// Industries and Segments cycle over the records (i%len).
var (
	Industries = []string{"Banking", "Manufacturing", "Healthcare", "Retail", "Energy"}
	Segments   = []string{"New Customer", "Existing Customer - Upgrade", "Existing Customer - Replacement"}
)

// ExpireLocators forgets every query locator, as Salesforce does two days
// after the query ran ("Cursors and their related query results are available
// for 2 days", API Query Cursor Limits, Salesforce App Limits Cheatsheet): the
// next nextRecordsUrl request answers INVALID_QUERY_LOCATOR.
func (s *Salesforce) ExpireLocators() {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	s.locators = map[string][]map[string]any{}
}

func sfStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000-0700") }

func sfErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode([]map[string]string{{"message": msg, "errorCode": code}})
}

// failure answers a queued Failure the way Salesforce does. 403 is REQUEST_LIMIT_EXCEEDED:
// "TotalRequests Limit exceeded." is the org's rolling 24-hour allowance ("calls are blocked
// until usage for the preceding 24 hours drops below the limit", Salesforce Help "System
// Overview: API Usage"; no Retry-After); Kind "concurrent" is the limit of 25 concurrent
// long-running requests ("API Request Limits and Allocations", Salesforce App Limits
// Cheatsheet), which clears within seconds.
func (s *Salesforce) failure(w http.ResponseWriter, f Failure, msg string) {
	pick := func(def string) string {
		if msg != "" {
			return msg
		}
		return def
	}
	switch {
	case f.Status == http.StatusForbidden && f.Kind == "concurrent":
		sfErr(w, f.Status, "REQUEST_LIMIT_EXCEEDED", pick("ConcurrentRequests (Concurrent API Requests) Limit exceeded."))
	case f.Status == http.StatusForbidden:
		sfErr(w, f.Status, "REQUEST_LIMIT_EXCEEDED", pick("TotalRequests Limit exceeded."))
	case f.Status == http.StatusUnauthorized:
		sfErr(w, f.Status, "INVALID_SESSION_ID", pick("Session expired or invalid"))
	case f.Status == http.StatusServiceUnavailable:
		sfErr(w, f.Status, "SERVER_UNAVAILABLE", pick("Server is temporarily unavailable."))
	default:
		sfErr(w, f.Status, "UNKNOWN_EXCEPTION", pick("An unexpected error occurred. Please include this ErrorId if you contact support: 1234567-89012 (-1)"))
	}
}

// token is the OAuth 2.0 refresh token flow's endpoint, POST /services/oauth2/token with a form
// (grant_type, refresh_token, client_id, client_secret): {"access_token", "instance_url",
// "id", "token_type", "issued_at", "signature"} (a new "refresh_token" only with rotation; no
// expires_in), or 400 {"error": "invalid_grant", "error_description": "expired access/refresh
// token"} ("OAuth 2.0 Refresh Token Flow for Renewed Sessions", help.salesforce.com).
func (s *Salesforce) token(w http.ResponseWriter, r *http.Request) {
	access, refresh, ok, reason := s.tokenGrant(tokenParams(r), "00DFAKE!sf")
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		code := "invalid_grant"
		if strings.Contains(reason, "client") {
			code = "invalid_client"
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": reason})
		return
	}
	body := map[string]any{"access_token": access, "instance_url": "http://" + r.Host, "id": "http://" + r.Host + "/id/00DFAKE/005FAKE",
		"token_type": "Bearer", "issued_at": strconv.FormatInt(time.Now().UnixMilli(), 10), "signature": "ZmFrZS1zaWduYXR1cmU=", "scope": "api refresh_token"}
	if s.opts.OAuth.Rotate {
		body["refresh_token"] = refresh
	}
	_ = json.NewEncoder(w).Encode(body)
}

var (
	sfQueryPath   = regexp.MustCompile(`^/services/data/v[0-9]{2}\.[0-9]/query/?$`)
	sfLocatorPath = regexp.MustCompile(`^/services/data/(v[0-9]{2}\.[0-9])/query/(01gFAKE[0-9]+)-([0-9]+)$`)
	soqlRe        = regexp.MustCompile(`(?is)^\s*SELECT\s+(.+?)\s+FROM\s+(\w+)(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+(.+?))?(?:\s+LIMIT\s+([0-9]+))?\s*$`)
	soqlWhereRe   = regexp.MustCompile(`(?i)^SystemModstamp\s*(>=|>)\s*([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))$`)
)

var sfFields = map[string]bool{
	"id": true, "name": true, "type": true, "description": true, "stagename": true, "amount": true,
	"systemmodstamp": true, "lastmodifieddate": true, "segment__c": true,
	"account.name": true, "account.industry": true, "owner.email": true, "owner.name": true,
}

func (s *Salesforce) serve(w http.ResponseWriter, r *http.Request) {
	if s.count(w, r, s.failure) {
		return
	}
	if r.URL.Path == "/services/oauth2/token" && r.Method == http.MethodPost {
		s.token(w, r)
		return
	}
	if !s.bearerOK(bearer(r)) {
		sfErr(w, http.StatusUnauthorized, "INVALID_SESSION_ID", "Session expired or invalid")
		return
	}
	batch := 2000
	if v := r.Header.Get("Sforce-Query-Options"); strings.HasPrefix(v, "batchSize=") {
		batch = min(max(atoiDefault(strings.TrimPrefix(v, "batchSize="), 2000), 200), 2000)
	}
	if s.opts.PageSize > 0 {
		batch = min(batch, s.opts.PageSize)
	}
	if m := sfLocatorPath.FindStringSubmatch(r.URL.Path); m != nil {
		s.lmu.Lock()
		rest, ok := s.locators[m[2]]
		s.lmu.Unlock()
		if !ok {
			sfErr(w, http.StatusBadRequest, "INVALID_QUERY_LOCATOR", "invalid query locator")
			return
		}
		s.answer(w, m[1], rest, batch, atoiDefault(m[3], 0), -1)
		return
	}
	if !sfQueryPath.MatchString(r.URL.Path) || r.Method != http.MethodGet {
		sfErr(w, http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
		return
	}
	version := strings.Split(r.URL.Path, "/")[3]
	q := r.URL.Query().Get("q")
	m := soqlRe.FindStringSubmatch(q)
	if m == nil {
		sfErr(w, http.StatusBadRequest, "MALFORMED_QUERY", "unexpected token: '"+firstWord(q)+"'")
		return
	}
	if !strings.EqualFold(m[2], "Opportunity") {
		sfErr(w, http.StatusBadRequest, "INVALID_TYPE", fmt.Sprintf("sObject type '%s' is not supported.", m[2]))
		return
	}
	var fields []string
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(f)
		if !sfFields[strings.ToLower(f)] {
			sfErr(w, http.StatusBadRequest, "INVALID_FIELD", fmt.Sprintf("\n%s\n^\nERROR at Row:1:Column:8\nNo such column '%s' on entity 'Opportunity'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.", q, f))
			return
		}
		fields = append(fields, f)
	}
	var (
		from      time.Time
		inclusive bool
	)
	if m[3] != "" {
		wm := soqlWhereRe.FindStringSubmatch(strings.TrimSpace(m[3]))
		if wm == nil {
			sfErr(w, http.StatusBadRequest, "MALFORMED_QUERY", "the fake understands only WHERE SystemModstamp > or >= a datetime literal")
			return
		}
		from, _ = time.Parse(time.RFC3339Nano, wm[2])
		inclusive = wm[1] == ">="
	}
	mods := s.snapshot()
	idx := modifiedAfter(mods, from, inclusive)
	sortByModified(idx, mods, func(a, b int) bool { return SalesforceID(a) < SalesforceID(b) })
	if m[5] != "" {
		limit := atoiDefault(m[5], -1)
		if limit >= 0 && limit < len(idx) {
			idx = idx[:limit]
		}
	}
	recs := make([]map[string]any, len(idx))
	for k, i := range idx {
		recs[k] = s.record(version, i, mods[i], fields)
	}
	s.answer(w, version, recs, batch, 0, len(recs))
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// answer writes the batch at recs[0:batch]; the rest goes behind a locator.
// total is the query's totalSize (-1: carried from the first answer).
func (s *Salesforce) answer(w http.ResponseWriter, version string, recs []map[string]any, batch, offset, total int) {
	n := min(batch, len(recs))
	body := map[string]any{"done": n == len(recs), "records": recs[:n]}
	if total >= 0 {
		body["totalSize"] = total
	} else {
		body["totalSize"] = offset + len(recs)
	}
	if n < len(recs) {
		s.lmu.Lock()
		s.nextLoc++
		id := fmt.Sprintf("01gFAKE%07d", s.nextLoc)
		s.locators[id] = recs[n:]
		s.lmu.Unlock()
		body["nextRecordsUrl"] = fmt.Sprintf("/services/data/%s/query/%s-%d", version, id, offset+n)
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Salesforce) record(version string, i int, mod time.Time, fields []string) map[string]any {
	id := SalesforceID(i)
	rec := map[string]any{"attributes": map[string]any{"type": "Opportunity", "url": "/services/data/" + version + "/sobjects/Opportunity/" + id}}
	for _, f := range fields {
		switch strings.ToLower(f) {
		case "id":
			rec[f] = id
		case "name":
			rec[f] = fmt.Sprintf("Opportunity %d", i)
		case "type":
			rec[f] = Segments[i%len(Segments)]
		case "segment__c":
			rec[f] = nil
		case "description":
			if i%3 == 0 {
				rec[f] = nil
			} else {
				rec[f] = fmt.Sprintf("Deal %d for account %d", i, i%50)
			}
		case "stagename":
			rec[f] = "Prospecting"
		case "amount":
			rec[f] = float64(i*1000) + 0.5
		case "systemmodstamp", "lastmodifieddate":
			rec[f] = sfStamp(mod)
		case "account.name", "account.industry":
			if i%25 == 24 {
				rec["Account"] = nil
				continue
			}
			acc, _ := rec["Account"].(map[string]any)
			if acc == nil {
				acc = map[string]any{"attributes": map[string]any{"type": "Account", "url": fmt.Sprintf("/services/data/%s/sobjects/Account/001Fk%010dAAA", version, i%50)}}
				rec["Account"] = acc
			}
			if strings.EqualFold(f, "account.name") {
				acc["Name"] = fmt.Sprintf("Account %d", i%50)
			} else {
				acc["Industry"] = Industries[i%len(Industries)]
			}
		case "owner.email", "owner.name":
			own, _ := rec["Owner"].(map[string]any)
			if own == nil {
				own = map[string]any{"attributes": map[string]any{"type": "User", "url": fmt.Sprintf("/services/data/%s/sobjects/User/005Fk%010dAAA", version, i%7)}}
				rec["Owner"] = own
			}
			if strings.EqualFold(f, "owner.email") {
				own["Email"] = fmt.Sprintf("rep%d@example.com", i%7)
			} else {
				own["Name"] = fmt.Sprintf("Rep %d", i%7)
			}
		}
	}
	return rec
}
