package webhook

import (
	"net"
	"net/http"
	"time"
)

// DefaultAttemptTimeout bounds one delivery attempt end to end (connect, send,
// response headers and the capped body read); spec section 6 rule 3.
const DefaultAttemptTimeout = 30 * time.Second

// Client sends deliveries. Build it with NewClient; it is safe for concurrent use.
type Client struct {
	HTTP      *http.Client
	Timeout   time.Duration    // per attempt; DefaultAttemptTimeout when zero
	UserAgent string           // "Valuecase-Webhooks/1" when empty
	Now       func() time.Time // clock for signature timestamps; time.Now when nil
}

// ClientOptions configure NewClient.
type ClientOptions struct {
	// AllowPrivate lets deliveries reach loopback, private, link-local and
	// other non-public addresses (OUTBOUND_ALLOW_PRIVATE_NETWORKS=true).
	// Only for development and tests.
	AllowPrivate bool
	// Timeout per attempt; DefaultAttemptTimeout when zero.
	Timeout time.Duration
	// MaxIdleConnsPerHost is how many idle keep-alive connections to one
	// receiver are kept for reuse (0: 64). Concurrency is not capped here:
	// the caller bounds it, so one slow receiver cannot queue others' attempts.
	MaxIdleConnsPerHost int
}

// NewClient returns a Client whose dialer refuses non-public destinations at
// dial time (after DNS resolution, so rebinding cannot slip through), which
// never follows redirects and never uses an environment proxy (a proxy would
// make the guard check the proxy's address instead of the receiver's).
func NewClient(o ClientOptions) *Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		dialer.Control = dialControl
	}
	perHost := o.MaxIdleConnsPerHost
	if perHost <= 0 {
		perHost = 64
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   perHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // the per-attempt context bounds it
		ExpectContinueTimeout: time.Second,
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultAttemptTimeout
	}
	return &Client{
		HTTP: &http.Client{
			Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse // a 3xx is returned as is: a failed attempt
			},
		},
		Timeout: timeout,
	}
}

// CloseIdleConnections releases pooled connections.
func (c *Client) CloseIdleConnections() { c.HTTP.CloseIdleConnections() }
