package api

import (
	"errors"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// The edge: answers given before Fiber routes a request. fasthttp refuses
// requests it cannot parse with its own ErrorHandler, and Fiber answers an
// HTTP method it does not know with plain text; both get the error body, a
// request id and the client IP's rate-limit headers here.

// installEdge wires the parser's error handler and the unknown-method check
// into the fasthttp server under the Fiber app.
func (s *Server) installEdge() {
	srv := s.app.Server()
	srv.ErrorHandler = s.parserError
	srv.HeaderReceived = bulkBodyLimit // the bulk import's own payload limit (bulk.go)
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if !slices.Contains(fiber.DefaultMethods, string(fctx.Method())) {
			s.unknownMethod(fctx)
			return
		}
		next(fctx)
	}
}

// parserError answers a request fasthttp could not read. Its error text
// quotes the raw request (credentials included), so the client gets a fixed
// message and the log a redacted copy.
func (s *Server) parserError(fctx *fasthttp.RequestCtx, err error) {
	start := time.Now()
	c := s.app.AcquireCtx(fctx)
	defer s.app.ReleaseCtx(c)
	var apiErr *Error
	var netErr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		// The headers were read: the path and the client's X-Request-ID are known,
		// and the error handler charges /v1 paths to the client IP as for any refusal.
		_ = s.errorHandler(c, fiber.ErrRequestEntityTooLarge)
		s.logEdge(c, "request refused by the HTTP parser", err, start)
		return
	case errors.As(err, new(*fasthttp.ErrSmallBuffer)):
		apiErr = newError(http.StatusRequestHeaderFieldsTooLarge, CodeInvalidParameter, "the request line and headers exceed 16 KB")
	case errors.As(err, &netErr) && netErr.Timeout():
		apiErr = newError(http.StatusRequestTimeout, CodeInvalidParameter, "the request was not received in time")
	default:
		apiErr = InvalidParameter("malformed HTTP request")
	}
	// Nothing of the request can be trusted, its path and X-Request-ID included:
	// a fresh id, and the refusal counts against the client IP whatever the path.
	freshRequestID(c)
	s.chargeClientIP(c)
	_ = s.errorHandler(c, apiErr)
	s.logEdge(c, "request refused by the HTTP parser", err, start)
}

// unknownMethod answers a method no route can have (e.g. FOOBAR): 405 with
// Allow when the path exists, 404 otherwise, before any authentication.
func (s *Server) unknownMethod(fctx *fasthttp.RequestCtx) {
	start := time.Now()
	c := s.app.AcquireCtx(fctx)
	defer s.app.ReleaseCtx(c)
	requestID(c)
	allow := s.allowedMethods(c.Path())
	if len(allow) == 0 {
		_ = s.errorHandler(c, fiber.ErrNotFound)
	} else {
		c.Set(fiber.HeaderAllow, strings.Join(allow, ", "))
		_ = s.errorHandler(c, fiber.ErrMethodNotAllowed)
	}
	s.logEdge(c, "request", nil, start)
}

// logEdge logs and counts a request answered at the edge (the observe
// middleware does not see it). The method label is bounded: unknown methods are OTHER.
func (s *Server) logEdge(c *fiber.Ctx, msg string, err error, start time.Time) {
	method := c.Method()
	if err != nil || !slices.Contains(fiber.DefaultMethods, method) {
		method = "OTHER"
	}
	status := c.Response().StatusCode()
	elapsed := time.Since(start)
	s.metrics.observe(method, "unmatched", status, elapsed)
	attrs := []any{"request_id", requestID(c), "method", method, "route", "unmatched", "status", status,
		"duration_ms", float64(elapsed.Microseconds()) / 1000, "remote_ip", s.clientIP(c)}
	if err != nil {
		attrs = append(attrs, "error", redactRequest(err.Error()))
	}
	s.log.InfoContext(c.UserContext(), msg, attrs...)
}

// allowedMethods lists, in Fiber's order, the methods routed for path.
func (s *Server) allowedMethods(path string) []string {
	var allow []string
	for _, r := range s.app.GetRoutes(true) {
		if routeMatches(r.Path, path) && !slices.Contains(allow, r.Method) {
			allow = append(allow, r.Method)
		}
	}
	slices.SortFunc(allow, func(a, b string) int {
		return slices.Index(fiber.DefaultMethods, a) - slices.Index(fiber.DefaultMethods, b)
	})
	return allow
}

// routeMatches matches a route template (":param" one segment, "*" or "+"
// the rest) as Fiber does by default: case-insensitive, trailing slash optional.
func routeMatches(template, path string) bool {
	norm := func(p string) []string {
		p = strings.ToLower(strings.TrimRight(p, "/"))
		return strings.Split(p, "/")
	}
	t, p := norm(template), norm(path)
	for i, seg := range t {
		if seg == "*" || seg == "+" {
			return seg == "*" || i < len(p)
		}
		if i >= len(p) {
			return false
		}
		if strings.HasPrefix(seg, ":") {
			if p[i] == "" {
				return false
			}
			continue
		}
		if seg != p[i] {
			return false
		}
	}
	return len(t) == len(p)
}

// lineBreak separates the lines of a quoted request in a parser error
// (escaped by %q) or of raw text.
var lineBreak = regexp.MustCompile(`\\r\\n|\\n|\\r|\r\n|\n|\r`)

// credentialHeader is a header line whose value is a credential, by name.
var credentialHeader = regexp.MustCompile(`(?i)^(.*?\b(?:authorization|proxy-authorization|x-api-key|cookie|set-cookie|[a-z0-9_-]*(?:token|secret|key|password|session|auth)[a-z0-9_-]*)[ \t]*:)(.*?)("(?:\.\.\.)?)?$`)

// credentialValues are credential-looking values anywhere (a header line
// without its colon, a query string, the tail of a cut snippet).
var credentialValues = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)\b(authorization|proxy-authorization|api-key|cookie|token|secret|password|session)([a-z0-9_-]*)[ \t]+[^"\\]+`), "$1$2 [REDACTED]"},
	{regexp.MustCompile(`(?i)\b(bearer|basic)[ \t]+[^\s"\\]+`), "$1 [REDACTED]"},
	{regexp.MustCompile(`(?i)\b((?:[a-z0-9_-]*)(?:token|secret|key|password|session|auth)[a-z0-9_-]*=)[^&\s"\\]*`), "$1[REDACTED]"},
	{regexp.MustCompile(`\bvc[a-z]_[A-Za-z0-9_-]+`), "[REDACTED]"}, // the service's keys, client secrets, refresh tokens
	{regexp.MustCompile(`[A-Za-z0-9+/=_.-]{32,}`), "[REDACTED]"},   // JWTs and other long opaque strings
}

// redactRequest removes credentials from a parser error, which quotes the raw
// request: values of credential headers, bearer/basic values, keys, JWTs and
// long opaque strings.
func redactRequest(msg string) string {
	var out strings.Builder
	last := 0
	for _, loc := range append(lineBreak.FindAllStringIndex(msg, -1), []int{len(msg), len(msg)}) {
		line := msg[last:loc[0]]
		line = credentialHeader.ReplaceAllString(line, "$1 [REDACTED]$3")
		for _, v := range credentialValues {
			line = v.re.ReplaceAllString(line, v.repl)
		}
		out.WriteString(line)
		out.WriteString(msg[loc[0]:loc[1]])
		last = loc[1]
	}
	return out.String()
}
