package api_test

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valuecase/valuecase/api"
)

// syncBuffer is a log sink the server writes from its connection goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rawExchange sends bytes on a fresh connection and reads the one response.
func rawExchange(t *testing.T, addr, raw string) (response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(conn) // the server closes the connection after a refusal
	if err != nil && len(all) == 0 {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
	if err != nil {
		t.Fatalf("not an HTTP response: %v: %q", err, all)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}, all
}

// expectEdgeError checks the spec's error body with a request id equal to the
// X-Request-ID header, and the client IP's rate-limit headers.
func expectEdgeError(t *testing.T, r response, status int, code, message string) {
	t.Helper()
	expect(t, r, status, code)
	e := r.json(t)["error"].(map[string]any)
	if message != "" && e["message"] != message {
		t.Errorf("message %q, want %q", e["message"], message)
	}
	if id := r.header.Get("X-Request-ID"); id == "" || e["request_id"] != id {
		t.Errorf("request id: header %q, body %v", id, e["request_id"])
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Retry-After"} {
		if r.header.Get(h) == "" {
			t.Errorf("%d without %s: %v", status, h, r.header)
		}
	}
}

// Regression: a request the HTTP parser refuses used to get the parser's error
// text, which quotes the raw request with its credentials, as the 400 message.
func TestParserRefusalsDoNotEchoCredentials(t *testing.T) {
	logs := &syncBuffer{}
	ts := newTestServer(t, "enterprise", func(d *api.Deps) { d.Log = slog.New(slog.NewJSONHandler(logs, nil)) })
	addr := ts.listen()
	creds := "Authorization: Bearer HUSH1.jwt.part\r\nX-API-Key: vck_HUSH2\r\nCookie: session=HUSH3\r\n" +
		"Proxy-Authorization: Basic HUSH4\r\nX-Upstream-Token: HUSH5\r\nX-Request-ID: client-id-1\r\n"
	cases := map[string]string{
		"header line without a colon": "GET /v1/initiatives?api_key=HUSH6 HTTP/1.1\r\nHost: x\r\n" + creds + "X-Auth-Token HUSH7\r\n\r\n",
		"duplicate Content-Length":    "POST /v1/initiatives HTTP/1.1\r\nHost: x\r\n" + creds + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"negative Content-Length":     "POST /v1/initiatives HTTP/1.1\r\nHost: x\r\n" + creds + "Content-Length: -1\r\n\r\n",
		"garbage request line":        "\x16\x03\x01 garbage-line-8\r\n" + creds + "\r\n",
		"HTTP/0.9 request line":       "GET /v1/initiatives?token=HUSH9\r\n" + creds + "\r\n",
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			r, all := rawExchange(t, addr, raw)
			expectEdgeError(t, r, 400, "INVALID_PARAMETER", "malformed HTTP request")
			if bytes.Contains(all, []byte("HUSH")) || bytes.Contains(all, []byte("garbage-line")) || bytes.Contains(all, []byte("Buffer size")) {
				t.Fatalf("the response echoes the request: %q", all)
			}
			if r.header.Get("X-Request-ID") == "client-id-1" {
				t.Error("the X-Request-ID of a request that could not be parsed was trusted")
			}
		})
	}
	out := logs.String()
	if strings.Contains(out, "HUSH") {
		t.Fatalf("credentials reached the log:\n%s", out)
	}
	// The detail is kept for operators, with the credentials redacted.
	for _, want := range []string{"request refused by the HTTP parser", "missing colon", "duplicate Content-Length", "X-Api-Key: [REDACTED]", "Cookie: [REDACTED]"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// Regression: a 431 used to lack the rate-limit headers, and an unknown method
// answered plain text without a request id.
func TestEdgeAnswersCarryTheErrorShape(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	addr := ts.listen()

	r, all := rawExchange(t, addr, "GET /v1/initiatives HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer SECRET\r\nX-Padding: "+strings.Repeat("h", 17<<10)+"\r\n\r\n")
	expectEdgeError(t, r, 431, "INVALID_PARAMETER", "")
	if bytes.Contains(all, []byte("SECRET")) {
		t.Fatalf("431 echoes the request: %q", all)
	}

	// A method no route can have: 405 with the error body, Allow and the
	// rate-limit headers, before authentication.
	r = ts.do(nil, "FOOBAR", "/v1/initiatives", nil, "X-Request-ID", "foobar-1")
	expectEdgeError(t, r, 405, "NOT_FOUND", "")
	if r.header.Get("X-Request-ID") != "foobar-1" {
		t.Errorf("a well-formed request's X-Request-ID is echoed: %v", r.header)
	}
	if got := r.header.Get("Allow"); got != "GET, HEAD, POST" {
		t.Errorf("Allow = %q, want GET, HEAD, POST", got)
	}
	// The same on a real connection (curl -X FOOBAR).
	r, _ = rawExchange(t, addr, "FOOBAR /v1/initiatives HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	expectEdgeError(t, r, 405, "NOT_FOUND", "")
	r = ts.do(&admin, "FOOBAR", "/v1/initiatives/"+ts.createInitiative(admin, map[string]any{"name": "x"})+"/", nil)
	expectEdgeError(t, r, 405, "NOT_FOUND", "")
	if got := r.header.Get("Allow"); got != "GET, HEAD, PUT, DELETE, PATCH" {
		t.Errorf("Allow = %q", got)
	}
	// Outside /v1 there are no rate-limit headers; an unknown path is a 404 whatever the method.
	r = ts.do(nil, "FOOBAR", "/health", nil)
	expect(t, r, 405, "NOT_FOUND")
	if r.header.Get("Allow") != "GET, HEAD" || r.header.Get("X-RateLimit-Limit") != "" {
		t.Errorf("405 on /health: %v", r.header)
	}
	expect(t, ts.do(nil, "FOOBAR", "/nope", nil), 404, "NOT_FOUND")

	// A known method a route lacks still answers 405 through the router.
	r = ts.do(&admin, "PATCH", "/v1/initiatives", map[string]any{})
	expectEdgeError(t, r, 405, "NOT_FOUND", "")
}

func TestCORSPreflightOnV1CarriesRateHeaders(t *testing.T) {
	ts := newTestServer(t, "enterprise", func(d *api.Deps) { d.Config.CORSAllowedOrigins = []string{"https://app.example.com"} })
	r := ts.do(nil, "OPTIONS", "/v1/initiatives", nil, "Origin", "https://app.example.com", "Access-Control-Request-Method", "POST")
	expect(t, r, 204)
	if r.header.Get("X-RateLimit-Limit") == "" || r.header.Get("X-RateLimit-Remaining") == "" {
		t.Fatalf("preflight on /v1 without rate-limit headers: %v", r.header)
	}
}
