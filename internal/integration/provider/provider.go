// Package provider holds the clients of the systems an integration syncs from:
// Salesforce (Opportunities → initiatives), HubSpot (CRM v3 deals →
// initiatives), Jira (epics → projects of one mapped initiative) and a generic
// HTTP feed (JSON or CSV rows of benefit_key, period, value[, evidence_url] →
// benefit actuals).
//
// Each client is a plain client of that system's public REST API. It does not
// build its own transport: the caller passes the *http.Client (the
// integrations code passes one whose dialer is the webhook SSRF guard). Every
// response body is read through a 10 MB bound (MaxBodyBytes) and every page
// size is bounded.
//
// A sync calls Fetch(ctx, since, "") and then Fetch(ctx, since, page.Next)
// until page.Next is "", and stores the last page's Watermark as the next
// sync's since (keep the old since when it is ""). Cursors and watermarks are
// opaque strings; a cursor stays valid when the worker restarts (it carries
// everything the next call needs), so heartbeat it. Watermarks are RFC 3339
// UTC times. The CRM providers filter "modified at or after since": the
// record(s) at the watermark itself come again in the next sync (the upsert
// finds them unchanged) so that nothing modified in the same second is lost.
// Fetch does no retrying and no sleeping: the caller's retry policy does,
// honouring RetryableError.After. Bound each call with the context (the
// webhook client sets no overall timeout). A Client is not safe for
// concurrent use (HubSpot caches the owners list); New is cheap.
//
// Errors of Fetch:
//   - ErrUnauthorized (errors.Is): the provider answered 401 (after one
//     refresh of a refreshable token), or 403 for a missing permission, or
//     its token endpoint refused the refresh. The integration needs new
//     credentials; do not retry.
//   - *RateLimitedError (errors.As): the provider's daily allowance is spent
//     (Salesforce REQUEST_LIMIT_EXCEEDED TotalRequests, HubSpot 429 DAILY).
//   - *RetryableError (errors.As): 429, 5xx, Salesforce's concurrent-request
//     REQUEST_LIMIT_EXCEEDED (403), or a network error reaching the provider.
//     After is the provider's Retry-After (seconds or HTTP date), 0 if absent.
//   - anything else is permanent for that page (bad config such as an invalid
//     JQL project, a malformed or oversized body, a refused address).
//
// Records that cannot be mapped do not fail the page: they come back as Items
// with Invalid set (the reason in words, with the row number for feeds).
//
// # Config keys
//
// Validate(provider, cfg, allowHTTP) checks and normalises config (defaults
// filled in); unknown keys are refused. Secrets never go in config: the
// secret keys of the API (SplitSecrets takes them out) are passed to New as
// Credentials. No credential appears in an error of a client: every answer
// is redacted of them before it is read.
//
//	provider    key                type     default / rule
//	(all)       instance_url       string   required, absolute https URL (http only with allowHTTP); no user info, query or fragment
//	                                        (hubspot: optional, default https://api.hubapi.com; http_feed: the feed URL itself, a query is kept;
//	                                        jira: the site, required with auth basic)
//	salesforce, hubspot  token_url string   "" (<instance_url>/services/oauth2/token, <instance_url>/oauth/v1/token)
//	sf, hs, jira lookback_minutes integer  5 (0..1440): incremental reads start this long before since
//	salesforce  api_version        string   "v60.0" (form vNN.N)
//	salesforce  name_field         string   "Name"
//	salesforce  industry_field     string   "Account.Industry"
//	salesforce  segment_field      string   "Type"
//	salesforce  owner_field        string   "Owner.Email"
//	salesforce  description_field  string   "Description"
//	salesforce  page_size          integer  2000 (200..2000, the Sforce-Query-Options batchSize)
//	hubspot     name_property      string   "dealname"
//	hubspot     industry_property  string   "" (not mapped; HubSpot deals have no standard industry property)
//	hubspot     segment_property   string   "dealtype"
//	hubspot     owner_property     string   "hubspot_owner_id" (owner ids are looked up as emails via /crm/v3/owners)
//	hubspot     description_property string "description"
//	hubspot     page_size          integer  100 (1..200, the search API's limit)
//	jira        initiative_id      string   required, a UUID: the initiative the epics become projects of
//	jira        auth               string   basic (default with email): Basic email:api_token at the site; oauth: Bearer through the gateway
//	jira        cloud_id           string   "" (found at gateway_url/oauth/token/accessible-resources)
//	jira        gateway_url        string   "https://api.atlassian.com"
//	jira        token_url          string   "https://auth.atlassian.com/oauth/token"
//	jira        jql                string   "issuetype = Epic" (no ORDER BY, at most 1000 characters)
//	jira        project_key        string   "" (all projects) or a Jira project key (A-Z, 0-9, _), added to the JQL
//	jira        email              string   the Atlassian account of the API token (auth basic)
//	jira        page_size          integer  50 (1..100, maxResults)
//	http_feed   format             string   "auto" (by Content-Type), "json" or "csv"
//	http_feed   since_param        string   "" (since is not sent; the feed returns everything) or a query parameter name for since
//
// Field names (salesforce *_field, hubspot *_property) are API names: letters,
// digits and underscores, and for Salesforce one relationship dot
// (Account.Industry); "" leaves that Valuecase field unmapped.
package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/webhook"
)

// Names of the providers (the API's `provider` values).
const (
	Salesforce = "salesforce"
	HubSpot    = "hubspot"
	Jira       = "jira"
	HTTPFeed   = "http_feed"
)

// Names returns the provider names, sorted.
func Names() []string { return []string{HTTPFeed, HubSpot, Jira, Salesforce} }

// MaxBodyBytes bounds every response body read from a provider.
const MaxBodyBytes = 10 << 20

// Item is one record a provider yields, already mapped to Valuecase's shape.
// Exactly one of Initiative, Project, Actual is set, or none and Invalid.
type Item struct {
	ExternalID string    // the provider's id of the record: Opportunity Id, deal id, Jira issue id (stable when the key changes), "<benefit_key>/<period>" for feeds
	ModifiedAt time.Time // provider's last-modified time (zero if the source has none)
	Initiative *InitiativeFields
	Project    *ProjectFields
	Actual     *ActualFields
	Invalid    string // non-empty: the source record cannot be mapped (why, in words); the sync records it and goes on
}

// InitiativeFields come from salesforce and hubspot. Empty strings mean the
// source had no value (or the field is not mapped).
type InitiativeFields struct {
	Name        string
	Industry    string
	Segment     string
	Owner       string // an email when the provider gives one
	Description string
}

// ProjectFields come from jira epics; the initiative they belong to is the
// integration's config initiative_id.
type ProjectFields struct {
	Key    string // the epic's issue key, e.g. "VC-12"
	Name   string // the epic's summary
	Status string // the epic's status name as Jira shows it, e.g. "In Progress"
}

// ActualFields come from http_feed rows.
type ActualFields struct {
	BenefitKey  string // the benefit's id or its external_key
	Period      string // "YYYY-MM"
	Value       string // the decimal number as sent, e.g. "1250.50"
	EvidenceURL string // "" when the row has none
}

// Page is one page of a Fetch.
type Page struct {
	Items     []Item
	Next      string // opaque cursor of the next page; "" when this was the last page
	Watermark string // the incremental high-water mark reached so far, for the next sync's since
}

// Client fetches pages of records from one provider.
type Client interface {
	// Fetch returns the page at cursor ("" = first page) of records changed
	// after since ("" = everything).
	Fetch(ctx context.Context, since, cursor string) (Page, error)
}

// ErrUnauthorized: the provider refused the credentials (401, or 403 for a
// missing permission). The integration needs re-authorisation; no retry.
var ErrUnauthorized = errors.New("provider refused the credentials")

// ErrUnknownProvider is returned by Validate and New for a name not in Names().
var ErrUnknownProvider = errors.New("unknown provider")

// RetryableError is a temporary refusal: 429, 5xx, a provider's rate-limit
// answer or a network error (Status 0). After is the provider's Retry-After,
// 0 when it sent none.
type RetryableError struct {
	Status int
	After  time.Duration
	Reason string
}

func (e *RetryableError) Error() string {
	s := "provider temporarily unavailable"
	if e.Status != 0 {
		s = fmt.Sprintf("provider answered %d", e.Status)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.After > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.After)
	}
	return s
}

// RateLimitedError: the provider's daily (or rolling 24-hour) request
// allowance is spent, so retrying within minutes cannot help (Salesforce's
// REQUEST_LIMIT_EXCEEDED TotalRequests, HubSpot's 429 with policyName
// DAILY). The sync ends as rate_limited and the schedule tries again. After is
// the provider's Retry-After, 0 when it sent none.
type RateLimitedError struct {
	After  time.Duration
	Reason string
}

func (e *RateLimitedError) Error() string {
	s := "the provider's daily request limit is reached"
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.After > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.After)
	}
	return s
}

// Validate checks a provider's config (the documented keys) and returns it
// normalised with defaults filled in, or field errors (config key → message).
// An unknown provider returns ErrUnknownProvider. Secrets are not config.
func Validate(provider string, cfg map[string]any, allowHTTP bool) (map[string]any, map[string]string, error) {
	var spec []key
	switch provider {
	case Salesforce:
		spec = salesforceKeys
	case HubSpot:
		spec = hubspotKeys
	case Jira:
		spec = jiraKeys
	case HTTPFeed:
		spec = feedKeys
	default:
		return nil, nil, fmt.Errorf("%w %q (one of %s)", ErrUnknownProvider, provider, strings.Join(Names(), ", "))
	}
	out, fe := validateKeys(provider, spec, cfg, allowHTTP)
	if provider == Jira {
		jiraDefaults(out, fe)
	}
	if len(fe) > 0 {
		return nil, fe, nil
	}
	return out, nil, nil
}

// New returns the client of provider for a config that Validate accepted
// (New validates it again and fails on field errors). creds are the
// integration's secrets; store keeps refreshed tokens (nil: in memory, for
// tests). Whatever the provider answers, no credential New was given or a
// refresh obtained appears in an error of the client.
func New(provider string, cfg map[string]any, creds Credentials, hc *http.Client, store TokenStore) (Client, error) {
	if hc == nil {
		return nil, errors.New("provider: an *http.Client is required")
	}
	norm, fe, err := Validate(provider, cfg, true)
	if err != nil {
		return nil, err
	}
	if len(fe) > 0 {
		return nil, fmt.Errorf("provider %s: invalid config: %s", provider, fieldErrorsString(fe))
	}
	if store == nil {
		store = NewMemoryTokens(creds)
	}
	c := conf(norm)
	t := &transport{hc: hc, red: &redactor{}}
	t.red.add(creds.AccessToken, creds.RefreshToken, creds.ClientSecret, creds.APIToken) // client_id is an identifier, not a credential
	t.auth = &authorizer{creds: creds, store: store, t: t}
	if creds.Refreshable() {
		switch provider {
		case Salesforce:
			t.auth.grant = &tokenGrant{url: orDefault(c.str("token_url"), c.str("instance_url")+"/services/oauth2/token"), name: "salesforce token endpoint"}
		case HubSpot:
			t.auth.grant = &tokenGrant{url: orDefault(c.str("token_url"), c.str("instance_url")+"/oauth/v1/token"), name: "hubspot token endpoint"}
		case Jira:
			t.auth.grant = &tokenGrant{url: c.str("token_url"), json: true, name: "atlassian token endpoint"}
		}
	}
	var inner Client
	switch provider {
	case Salesforce:
		inner = newSalesforce(c, t)
	case HubSpot:
		inner = newHubSpot(c, t)
	case Jira:
		inner = newJira(c, creds, t)
	default:
		inner = newFeed(c, t)
	}
	return &redacting{inner: inner, red: t.red}, nil
}

// CalledURLs are the configured URLs a client of a normalised config calls
// (the API checks each against private networks): instance_url, a
// token_url that is set, and for Jira the site with auth basic or the
// gateway and token endpoint with auth oauth.
func CalledURLs(provider string, cfg map[string]any) []string {
	c := conf(cfg)
	var out []string
	add := func(keys ...string) {
		for _, k := range keys {
			if u := c.str(k); u != "" {
				out = append(out, u)
			}
		}
	}
	switch {
	case provider == Jira && c.str("auth") == "oauth":
		add("gateway_url", "token_url")
	case provider == Jira:
		add("instance_url")
	default:
		add("instance_url", "token_url")
	}
	return out
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func fieldErrorsString(fe map[string]string) string {
	keys := make([]string, 0, len(fe))
	for k := range fe {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + fe[k]
	}
	return strings.Join(parts, "; ")
}

// ---- config validation ----

type kind int

const (
	kString kind = iota
	kInt
)

type key struct {
	name  string
	kind  kind
	def   any                                // default when absent (nil: absent stays absent)
	check func(v any, allowHTTP bool) string // "" when fine
	norm  func(v any) any                    // optional normalisation after check
	req   bool                               // required
}

func validateKeys(provider string, spec []key, cfg map[string]any, allowHTTP bool) (map[string]any, map[string]string) {
	fe := map[string]string{}
	known := map[string]bool{}
	out := map[string]any{}
	for _, k := range spec {
		known[k.name] = true
		v, ok := cfg[k.name]
		if !ok || v == nil {
			if k.req {
				fe[k.name] = "is required"
			} else if k.def != nil {
				out[k.name] = k.def
			}
			continue
		}
		switch k.kind {
		case kString:
			s, isStr := v.(string)
			if !isStr {
				fe[k.name] = "must be a string"
				continue
			}
			s = strings.TrimSpace(s)
			if s == "" && k.req {
				fe[k.name] = "is required"
				continue
			}
			v = s
		case kInt:
			n, okInt := toInt(v)
			if !okInt {
				fe[k.name] = "must be an integer"
				continue
			}
			v = n
		}
		if k.check != nil {
			if msg := k.check(v, allowHTTP); msg != "" {
				fe[k.name] = msg
				continue
			}
		}
		if k.norm != nil {
			v = k.norm(v)
		}
		out[k.name] = v
	}
	for name := range cfg {
		switch {
		case known[name]:
		case slices.Contains(SecretKeys(provider), name):
			fe[name] = "is a secret: take it out with SplitSecrets and pass it to New"
		case isSecretLike(name):
			fe[name] = fmt.Sprintf("is not a %s config key (its secrets are %s)", provider, strings.Join(SecretKeys(provider), ", "))
		default:
			fe[name] = fmt.Sprintf("is not a %s config key", provider)
		}
	}
	return out, fe
}

func isSecretLike(name string) bool {
	switch name {
	case "token", "api_token", "access_token", "bearer_token", "password", "secret", "api_key",
		RefreshTokenKey, ClientIDKey, ClientSecretKey:
		return true
	}
	return false
}

// Secret config keys: write-only, stored encrypted (never in the config),
// never returned, and passed to New as Credentials. oauth_token is the
// access token (Salesforce/HubSpot/Jira OAuth access token, HubSpot private
// app token, the feed's bearer token); refresh_token, client_id and
// client_secret make it refreshable (salesforce, hubspot, jira oauth);
// api_token is a Jira API token (jira basic).
const (
	SecretKey       = "oauth_token"
	RefreshTokenKey = "refresh_token"
	ClientIDKey     = "client_id"
	ClientSecretKey = "client_secret"
	APITokenKey     = "api_token"
)

// SecretKeys lists the secret config keys provider takes.
func SecretKeys(provider string) []string {
	switch provider {
	case Salesforce, HubSpot:
		return []string{SecretKey, RefreshTokenKey, ClientIDKey, ClientSecretKey}
	case Jira:
		return []string{SecretKey, RefreshTokenKey, ClientIDKey, ClientSecretKey, APITokenKey}
	}
	return []string{SecretKey}
}

// Field is the secret of key in c.
func (c *Credentials) Field(key string) *string {
	switch key {
	case SecretKey:
		return &c.AccessToken
	case RefreshTokenKey:
		return &c.RefreshToken
	case ClientIDKey:
		return &c.ClientID
	case ClientSecretKey:
		return &c.ClientSecret
	case APITokenKey:
		return &c.APIToken
	}
	return nil
}

// MaxTokenLength bounds a secret.
const MaxTokenLength = 4096

// SplitSecrets takes provider's secret keys out of an API config: it returns
// the config without them, the secrets sent ("" for a key absent or null: a
// PUT or PATCH keeps the stored one), and field errors (a secret is a string
// of printable ASCII without spaces, 4 to MaxTokenLength characters).
func SplitSecrets(provider string, cfg map[string]any) (map[string]any, Credentials, map[string]string) {
	secret := map[string]bool{}
	for _, k := range SecretKeys(provider) {
		secret[k] = true
	}
	rest := make(map[string]any, len(cfg))
	var sent Credentials
	fe := map[string]string{}
	for k, v := range cfg {
		if !secret[k] {
			rest[k] = v
			continue
		}
		if v == nil {
			continue
		}
		tok, isStr := v.(string)
		switch {
		case !isStr:
			fe[k] = "must be a string"
		case len(tok) > MaxTokenLength:
			fe[k] = fmt.Sprintf("must be at most %d characters", MaxTokenLength)
		case tok != "" && len(tok) < minSecretLength:
			fe[k] = fmt.Sprintf("must be at least %d characters", minSecretLength)
		case strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
			fe[k] = "must be printable ASCII without spaces"
		default:
			*sent.Field(k) = tok
		}
	}
	return rest, sent, fe
}

// CheckCredentials checks that the secrets an integration holds (stored and
// sent, merged) fit its normalised config: a refresh_token needs client_id
// (and client_secret for HubSpot and Atlassian, whose token endpoints
// require it); Jira basic takes api_token and no refresh_token, Jira oauth no
// api_token. A secret may be sent later (a sync without one fails as
// needs_reauth), as for every provider.
func CheckCredentials(provider string, cfg map[string]any, c Credentials) map[string]string {
	fe := map[string]string{}
	if c.RefreshToken != "" {
		if c.ClientID == "" {
			fe[ClientIDKey] = "is required with refresh_token (the OAuth app's client id)"
		}
		if c.ClientSecret == "" && (provider == HubSpot || provider == Jira) {
			fe[ClientSecretKey] = "is required with refresh_token (the OAuth app's client secret)"
		}
	}
	if provider == Jira {
		switch cfg["auth"] {
		case "basic":
			if c.RefreshToken != "" {
				fe[RefreshTokenKey] = "applies to auth oauth only"
			}
		case "oauth":
			if c.APIToken != "" {
				fe[APITokenKey] = "applies to auth basic only"
			}
		}
	}
	return fe
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n != float64(int(n)) {
			return 0, false
		}
		return int(n), true
	case interface{ Int64() (int64, error) }: // json.Number
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func intRange(lo, hi int) func(any, bool) string {
	return func(v any, _ bool) string {
		if n := v.(int); n < lo || n > hi {
			return fmt.Sprintf("must be between %d and %d", lo, hi)
		}
		return ""
	}
}

func oneOf(values ...string) func(any, bool) string {
	return func(v any, _ bool) string {
		for _, x := range values {
			if v.(string) == x {
				return ""
			}
		}
		return "must be one of " + strings.Join(values, ", ")
	}
}

// MaxURLLength bounds instance_url and feed URLs.
const MaxURLLength = 2048

// checkInstanceURL: absolute https (http with allowHTTP), a host, no user
// information, no fragment; a query only when allowQuery (feeds).
func checkInstanceURL(allowQuery bool) func(any, bool) string {
	return func(v any, allowHTTP bool) string {
		raw := v.(string)
		if len(raw) > MaxURLLength {
			return fmt.Sprintf("must be at most %d characters", MaxURLLength)
		}
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Opaque != "" || u.Hostname() == "" {
			return "must be an absolute https URL"
		}
		switch u.Scheme {
		case "https":
		case "http":
			if !allowHTTP {
				return "must be https (http is allowed only when OUTBOUND_ALLOW_PRIVATE_NETWORKS=true)"
			}
		default:
			return "must be an absolute https URL"
		}
		if u.User != nil {
			return "must not contain user information (user:password@); send the token separately"
		}
		if u.Fragment != "" || strings.Contains(raw, "#") {
			return "must not contain a fragment (#...)"
		}
		if !allowQuery && u.RawQuery != "" {
			return "must not contain a query (?...)"
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return "has an invalid port"
			}
		}
		return ""
	}
}

func trimSlash(v any) any { return strings.TrimRight(v.(string), "/") }

// conf reads a normalised config.
type conf map[string]any

func (c conf) str(k string) string { s, _ := c[k].(string); return s }
func (c conf) num(k string) int    { n, _ := c[k].(int); return n }

// lookback is config lookback_minutes as a duration.
func (c conf) lookback() time.Duration { return time.Duration(c.num("lookback_minutes")) * time.Minute }

// lookBack is the time an incremental read starts from: since minus the
// lookback (zero since: everything).
func lookBack(since time.Time, lookback time.Duration) time.Time {
	if since.IsZero() {
		return since
	}
	return since.Add(-lookback)
}

// ---- HTTP plumbing shared by the clients ----

// response is a provider answer read within MaxBodyBytes.
type response struct {
	status int
	header http.Header
	body   []byte
}

// transport is what a client sends through: the caller's *http.Client, the
// credentials and the redactor of everything the provider answers.
type transport struct {
	hc   *http.Client
	red  *redactor
	auth *authorizer
}

// send puts the credentials on req and sends it. When the provider refuses a
// refreshable token (401), the token is renewed once and req sent again.
func (t *transport) send(req *http.Request) (*response, error) {
	h, err := t.auth.header(req.Context())
	if err != nil {
		return nil, err
	}
	if h != "" {
		req.Header.Set("Authorization", h)
	}
	r, err := t.do(req)
	if err != nil || r.status != http.StatusUnauthorized || !t.auth.canRefresh() {
		return r, err
	}
	if _, err := t.auth.refresh(req.Context(), strings.TrimPrefix(h, "Bearer ")); err != nil {
		return nil, err
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	if h, err = t.auth.header(req.Context()); err != nil {
		return nil, err
	}
	retry.Header.Set("Authorization", h)
	return t.do(retry)
}

// do sends req and reads the body within MaxBodyBytes, with every
// credential the client sent replaced (so no error text quotes one, whatever
// the provider echoes). Network errors are *RetryableError (Status 0) unless
// the context ended or the address was refused by the caller's dialer
// (permanent).
func (t *transport) do(req *http.Request) (*response, error) {
	req.Header.Set("User-Agent", "Valuecase-Integrations/1")
	resp, err := t.hc.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		if isRefusedAddress(err) {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // without the URL: a feed's query may carry a key
			}
			return nil, fmt.Errorf("provider address refused: %w", err)
		}
		return nil, &RetryableError{Reason: "could not reach " + req.URL.Host + ": " + t.red.string(shortNetErr(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		return nil, &RetryableError{Status: resp.StatusCode, Reason: "reading the answer failed: " + t.red.string(shortNetErr(err))}
	}
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("provider answer is larger than %d bytes", MaxBodyBytes)
	}
	header := resp.Header.Clone()
	for _, k := range []string{"Location", "Content-Type", "WWW-Authenticate"} {
		if v := header.Get(k); v != "" {
			header.Set(k, t.red.string(v))
		}
	}
	return &response{status: resp.StatusCode, header: header, body: t.red.bytes(body)}, nil
}

func isRefusedAddress(err error) bool {
	var re *webhook.RefusedAddressError
	return errors.As(err, &re)
}

func shortNetErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return truncate(err.Error(), 200)
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	// cut on a rune boundary
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// statusError classifies a non-2xx answer. msg is the provider's message
// (already extracted from its error body). 401 and 403 → ErrUnauthorized,
// 429 and 5xx → *RetryableError, other → a permanent error.
func statusError(name string, r *response, msg string) error {
	msg = truncate(msg, 300)
	switch {
	case r.status >= 300 && r.status <= 399:
		return fmt.Errorf("%s answered a redirect (%d) to %q; set instance_url to the final address", name, r.status, truncate(r.header.Get("Location"), 200))
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		if msg == "" {
			return fmt.Errorf("%w (%s answered %d)", ErrUnauthorized, name, r.status)
		}
		return fmt.Errorf("%w (%s answered %d: %s)", ErrUnauthorized, name, r.status, msg)
	case r.status == http.StatusTooManyRequests || r.status >= 500:
		return &RetryableError{Status: r.status, After: retryAfter(r.header, time.Now()), Reason: msg}
	}
	if msg == "" {
		return fmt.Errorf("%s answered %d", name, r.status)
	}
	return fmt.Errorf("%s answered %d: %s", name, r.status, msg)
}

// retryAfter reads Retry-After as seconds or an HTTP date; 0 when absent or
// unreadable. Bounded to a day.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		if n > 86400 {
			n = 86400
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
		if d < 0 {
			return 0
		}
		if d > 24*time.Hour {
			d = 24 * time.Hour
		}
		d = d.Round(time.Second)
	}
	return d
}

// mediaType is the lower-cased media type of a Content-Type header.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.SplitN(h.Get("Content-Type"), ";", 2)[0]))
	}
	return mt
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json"
}

// sameOrigin reports whether u is on the scheme and host of base: a next
// page URL that a provider hands back must not send the token elsewhere.
func sameOrigin(base, u *url.URL) bool {
	return strings.EqualFold(base.Scheme, u.Scheme) && strings.EqualFold(base.Host, u.Host)
}
