package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Credentials are the secrets of one integration. AccessToken is what the
// provider's API takes (OAuth access token, HubSpot private-app token, feed
// token); ExpiresAt its expiry when the token endpoint said (expires_in),
// zero when unknown. RefreshToken, ClientID and ClientSecret make the token
// refreshable (the OAuth 2.0 refresh-token grant); APIToken is a Jira API
// token (Basic email:api_token).
type Credentials struct {
	AccessToken  string
	ExpiresAt    time.Time
	RefreshToken string
	ClientID     string
	ClientSecret string
	APIToken     string
}

// Refreshable reports whether the access token can be renewed.
func (c Credentials) Refreshable() bool { return c.RefreshToken != "" && c.ClientID != "" }

// TokenStore keeps an integration's credentials where every worker finds
// them. Refresh renews the access token at most once at a time per
// integration, across processes: under a lock it reads the stored
// credentials; when their access token is no longer stale (another sync
// refreshed meanwhile) it returns them as they are; otherwise it calls grant
// with them, stores what grant returns (a rotated refresh token replaces the
// old one) and only then returns it.
type TokenStore interface {
	Refresh(ctx context.Context, stale string, grant func(context.Context, Credentials) (Credentials, error)) (Credentials, error)
}

// MemoryTokens is a TokenStore in memory (tests and the bench; the worker
// stores tokens in the integration's row).
type MemoryTokens struct {
	mu    sync.Mutex
	creds Credentials
	// Grants counts the refresh grants run.
	Grants int
}

// NewMemoryTokens holds creds.
func NewMemoryTokens(creds Credentials) *MemoryTokens { return &MemoryTokens{creds: creds} }

// Refresh implements TokenStore.
func (m *MemoryTokens) Refresh(ctx context.Context, stale string, grant func(context.Context, Credentials) (Credentials, error)) (Credentials, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.creds.AccessToken != "" && m.creds.AccessToken != stale {
		return m.creds, nil
	}
	next, err := grant(ctx, m.creds)
	if err != nil {
		return Credentials{}, err
	}
	m.Grants++
	m.creds = next
	return next, nil
}

// Current is what the store holds.
func (m *MemoryTokens) Current() Credentials { m.mu.Lock(); defer m.mu.Unlock(); return m.creds }

// refreshMargin: a token this close to its expiry is refreshed before use.
const refreshMargin = time.Minute

// tokenGrant is one provider's refresh-token request.
type tokenGrant struct {
	url  string
	json bool // Atlassian takes a JSON body; Salesforce and HubSpot a form
	name string
}

// authorizer puts the credentials on requests and renews a refreshable
// access token before it expires and once when the provider refuses it.
type authorizer struct {
	mu    sync.Mutex
	basic string // "Basic ..." for Jira API tokens; "" for Bearer
	creds Credentials
	grant *tokenGrant // nil: the token is static
	store TokenStore
	t     *transport
}

// header is the Authorization value to send ("" for an open feed).
func (a *authorizer) header(ctx context.Context) (string, error) {
	if a.basic != "" {
		return a.basic, nil
	}
	a.mu.Lock()
	creds := a.creds
	a.mu.Unlock()
	if a.grant != nil && (creds.AccessToken == "" || (!creds.ExpiresAt.IsZero() && time.Now().Add(refreshMargin).After(creds.ExpiresAt))) {
		var err error
		if creds, err = a.refresh(ctx, creds.AccessToken); err != nil {
			return "", err
		}
	}
	if creds.AccessToken == "" {
		return "", nil
	}
	return "Bearer " + creds.AccessToken, nil
}

// canRefresh: a refused token may be renewed.
func (a *authorizer) canRefresh() bool { return a.basic == "" && a.grant != nil }

// refresh renews the token through the store (single-flight per integration).
func (a *authorizer) refresh(ctx context.Context, stale string) (Credentials, error) {
	creds, err := a.store.Refresh(ctx, stale, a.requestToken)
	if err != nil {
		return Credentials{}, err
	}
	a.t.red.add(creds.AccessToken, creds.RefreshToken)
	a.mu.Lock()
	a.creds = creds
	a.mu.Unlock()
	return creds, nil
}

// requestToken runs the refresh-token grant (RFC 6749 section 6) against the
// provider's token endpoint. A refusal (400 invalid_grant, 401
// invalid_client, Atlassian's 403) is ErrUnauthorized: the integration needs
// new credentials. A new refresh token in the answer replaces the old one
// (Atlassian always rotates; Salesforce when the connected app says so).
func (a *authorizer) requestToken(ctx context.Context, cur Credentials) (Credentials, error) {
	if !cur.Refreshable() {
		return Credentials{}, fmt.Errorf("%w (the access token expired and no refresh_token and client_id are stored)", ErrUnauthorized)
	}
	a.t.red.add(cur.RefreshToken, cur.ClientSecret)
	fields := map[string]string{"grant_type": "refresh_token", "refresh_token": cur.RefreshToken, "client_id": cur.ClientID}
	if cur.ClientSecret != "" {
		fields["client_secret"] = cur.ClientSecret
	}
	var body []byte
	ctype := "application/x-www-form-urlencoded"
	if a.grant.json {
		body, _ = json.Marshal(fields)
		ctype = "application/json"
	} else {
		form := url.Values{}
		for k, v := range fields {
			form.Set(k, v)
		}
		body = []byte(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.grant.url, bytes.NewReader(body))
	if err != nil {
		return Credentials{}, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	r, err := a.t.do(req)
	if err != nil {
		return Credentials{}, err
	}
	if r.status < 200 || r.status > 299 {
		msg := oauthError(r.body)
		if msg == "" {
			msg = feedErrorMessage(r) // any other shape: its message, or the start of a text body
		}
		switch r.status {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
			return Credentials{}, fmt.Errorf("%w (%s refused the refresh token: %d %s)", ErrUnauthorized, a.grant.name, r.status, truncate(msg, 200))
		}
		return Credentials{}, statusError(a.grant.name, r, msg)
	}
	var tok struct {
		AccessToken  string          `json:"access_token"`
		RefreshToken string          `json:"refresh_token"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(r.body, &tok); err != nil || tok.AccessToken == "" || len(tok.AccessToken) > MaxTokenLength || len(tok.RefreshToken) > MaxTokenLength {
		return Credentials{}, fmt.Errorf("%s answered a body that is not a token (access_token, expires_in)%s", a.grant.name, errSuffix(err))
	}
	next := cur
	next.AccessToken, next.ExpiresAt = tok.AccessToken, time.Time{}
	if tok.RefreshToken != "" {
		next.RefreshToken = tok.RefreshToken
	}
	if len(tok.ExpiresIn) > 0 {
		if s, ok := scalarText(tok.ExpiresIn); ok {
			if n, ok := toInt(json.Number(s)); ok && n > 0 && n <= 366*86400 {
				next.ExpiresAt = time.Now().Add(time.Duration(n) * time.Second)
			}
		}
	}
	a.t.red.add(next.AccessToken, next.RefreshToken)
	return next, nil
}

// oauthError reads an OAuth error body: {"error", "error_description"}
// (Salesforce, Atlassian) or HubSpot's {"status", "message"}.
func oauthError(body []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		Status      string `json:"status"`
		Message     string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		_, msg := sfError(body)
		return msg
	}
	code, msg := e.Error, e.Description
	if code == "" {
		code, msg = e.Status, e.Message
	}
	return strings.Trim(strings.TrimSpace(code+": "+msg), ": ")
}

// ---- redaction ----

// redacted replaces a credential in any text a provider answers.
const redacted = "[REDACTED]"

// minSecretLength: shorter values are not searched for (they would blank
// ordinary words); Validate refuses secrets this short.
const minSecretLength = 4

// redactor removes every credential the client sent, in the forms it went
// out in (as is, base64 as in Basic auth, URL-encoded as in a form body),
// from what a provider answers, before any of it becomes an error message.
type redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first
}

func (r *redactor) add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, s := range r.secrets {
		seen[s] = true
	}
	for _, v := range values {
		if len(v) < minSecretLength {
			continue
		}
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
			base64.URLEncoding.EncodeToString([]byte(v)), url.QueryEscape(v), url.PathEscape(v), jsonEscaped(v)} {
			if !seen[form] {
				seen[form] = true
				r.secrets = append(r.secrets, form)
			}
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func (r *redactor) bytes(b []byte) []byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, s := range r.secrets {
		if bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redacted))
		}
	}
	return b
}

func (r *redactor) string(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return s
}

// unauthorizedError is ErrUnauthorized with a redacted message.
type unauthorizedError struct{ msg string }

func (e *unauthorizedError) Error() string        { return e.msg }
func (e *unauthorizedError) Is(target error) bool { return target == ErrUnauthorized }

// err returns err with every credential removed from its message, of the
// same kind (ErrUnauthorized, *RetryableError, *RateLimitedError, context
// errors) and without the chain that carried the secret.
func (r *redactor) err(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := r.string(msg)
	if clean == msg {
		return err
	}
	var re *RetryableError
	var rl *RateLimitedError
	switch {
	case errors.Is(err, ErrUnauthorized):
		return &unauthorizedError{msg: clean}
	case errors.As(err, &re):
		return &RetryableError{Status: re.Status, After: re.After, Reason: r.string(re.Reason)}
	case errors.As(err, &rl):
		return &RateLimitedError{After: rl.After, Reason: r.string(rl.Reason)}
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return errors.New(clean)
}

// redacting is the Client New returns: every error of Fetch leaves with the
// credentials removed.
type redacting struct {
	inner Client
	red   *redactor
}

func (c *redacting) Fetch(ctx context.Context, since, cursor string) (Page, error) {
	p, err := c.inner.Fetch(ctx, since, cursor)
	if err != nil {
		return Page{}, c.red.err(err)
	}
	return p, nil
}
