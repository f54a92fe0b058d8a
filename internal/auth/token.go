package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// Claims are the token claims of spec section 5.
type Claims struct {
	OrgID       string   `json:"org_id"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	Email       string   `json:"email,omitempty"`
	Name        string   `json:"name,omitempty"`
	// ClientID is set in the service's own tokens for a service client
	// (client_credentials grant); honoured only when Self.
	ClientID string `json:"client_id,omitempty"`
	// SessionID is the refresh-token family an access token was issued from
	// (token exchange, refresh); honoured only when Self.
	SessionID string `json:"vc_sid,omitempty"`
	// Self reports that the service's own key signed the token (set by Verify).
	Self bool `json:"-"`
	jwt.RegisteredClaims
}

// ErrInvalidToken is every reason a token is refused; the detail goes to the log only.
var ErrInvalidToken = errors.New("invalid token")

// Verifier checks access tokens signed by the service's own keys or by the
// external identity providers' JWKS.
type Verifier struct {
	own      *KeyStore
	external keyfunc.Keyfunc // nil without AUTH_JWKS_URLS
	issuer   string
	audience string
	verified verifiedCache
}

// VerifierOptions configures the external identity providers.
type VerifierOptions struct {
	JWKSURLs []string
	Issuer   string // required iss of external tokens, when set
	Audience string // required aud of external tokens, when set
	// UnknownKIDRefreshEvery bounds how often an unknown key id may trigger a
	// JWKS refetch (default 5 minutes); other lookups of unknown ids fail at once.
	UnknownKIDRefreshEvery time.Duration
}

// NewVerifier builds a verifier; ctx ends the JWKS background refresh.
func NewVerifier(ctx context.Context, own *KeyStore, opts VerifierOptions) (*Verifier, error) {
	v := &Verifier{own: own, issuer: opts.Issuer, audience: opts.Audience}
	if len(opts.JWKSURLs) > 0 {
		every := opts.UnknownKIDRefreshEvery
		if every <= 0 {
			every = 5 * time.Minute
		}
		kf, err := keyfunc.NewDefaultOverrideCtx(ctx, opts.JWKSURLs, keyfunc.Override{
			HTTPTimeout:       5 * time.Second,
			RefreshInterval:   time.Hour,
			RefreshUnknownKID: rate.NewLimiter(rate.Every(every), 1),
			// A caller waits at most this long for the refresh limiter; in practice a
			// reservation further out than this is refused at once, so unknown kids never queue.
			RateLimitWaitMax: 5 * time.Second,
			RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
				return func(ctx context.Context, err error) {
					slog.WarnContext(ctx, "JWKS refresh failed", "url", u, "error", err)
				}
			},
		})
		if err != nil {
			return nil, fmt.Errorf("AUTH_JWKS_URLS: %w", err)
		}
		v.external = kf
	}
	return v, nil
}

var parser = jwt.NewParser(
	jwt.WithValidMethods([]string{"RS256", "ES256", "EdDSA"}),
	jwt.WithExpirationRequired(),
	jwt.WithLeeway(30*time.Second),
)

// Verify checks signature, exp, nbf, and iss/aud, and that sub and org_id are present.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Claims, error) {
	key, now := sha256Of(raw), time.Now()
	if hit, ok := v.verified.get(key, now); ok {
		if _, stillKnown := v.own.PublicKey(hit.kid); stillKnown || !hit.claims.Self {
			claims := hit.claims // a copy: callers may not change the cached one
			return &claims, nil
		}
	}
	self, kid := false, ""
	keyFor := func(t *jwt.Token) (any, error) {
		kid, _ = t.Header["kid"].(string)
		if k, ok := v.own.PublicKey(kid); ok {
			self = true
			return k, nil
		}
		if v.external == nil {
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		return v.external.KeyfuncCtx(ctx)(t)
	}
	claims := &Claims{}
	if _, err := parser.ParseWithClaims(raw, claims, keyFor); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	wantIss, wantAud := v.issuer, v.audience
	if self {
		wantIss, wantAud = SelfIssuer, ""
	}
	if wantIss != "" && claims.Issuer != wantIss {
		return nil, fmt.Errorf("%w: issuer %q", ErrInvalidToken, claims.Issuer)
	}
	if wantAud != "" && !slices.Contains(claims.Audience, wantAud) {
		return nil, fmt.Errorf("%w: audience %v", ErrInvalidToken, claims.Audience)
	}
	if claims.Subject == "" || claims.OrgID == "" {
		return nil, fmt.Errorf("%w: sub and org_id are required", ErrInvalidToken)
	}
	claims.Self = self
	v.verified.put(key, verifiedToken{claims: *claims, kid: kid, until: claims.ExpiresAt.Time}, now)
	return claims, nil
}

// MintOptions describes a token the service signs for itself.
type MintOptions struct {
	Subject, TenantID, Email, Name string
	Roles, Permissions             []string
	TTL                            time.Duration
	ClientID, SessionID            string // see Claims
}

// Mint signs an access token with the service's newest key.
func (ks *KeyStore) Mint(o MintOptions) (string, error) {
	now := time.Now()
	roles, perms := o.Roles, o.Permissions
	if roles == nil {
		roles = []string{}
	}
	if perms == nil {
		perms = []string{}
	}
	return ks.Sign(Claims{
		OrgID: o.TenantID, Roles: roles, Permissions: perms, Email: o.Email, Name: o.Name,
		ClientID: o.ClientID, SessionID: o.SessionID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    SelfIssuer,
			Subject:   o.Subject,
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(o.TTL)),
		},
	})
}
