package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/testenv"
)

// testServer is the real API on a fresh database: the one harness every API test uses.
type testServer struct {
	t      testing.TB
	srv    *api.Server
	pool   *pgxpool.Pool
	keys   *auth.KeyStore
	tenant uuid.UUID
}

// newTestServer builds the API on its own database with one tenant on the given plan.
// mod may adjust the config and dependencies before the server is built.
func newTestServer(t testing.TB, plan string, mod ...func(*api.Deps)) *testServer {
	t.Helper()
	pool := dbtest.NewPool(t)
	keys, err := auth.LoadKeyStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := auth.NewVerifier(t.Context(), keys, auth.VerifierOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deps := api.Deps{
		Config: testConfig(t), Pool: pool, Keys: keys, Verifier: verifier,
		Limits: ratelimit.NewMemory(nil), Concurrency: ratelimit.NewMemoryConcurrency(),
		Log: testenv.QuietLogger(),
	}
	for _, m := range mod {
		m(&deps)
	}
	return &testServer{t: t, srv: api.New(deps), pool: pool, keys: keys, tenant: dbtest.NewTenant(t, pool, plan)}
}

// listen serves the app on a real loopback port (for what app.Test cannot show:
// refusals by fasthttp itself, reused keep-alive buffers) and returns its address.
func (ts *testServer) listen() string {
	ts.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.t.Fatal(err)
	}
	app := ts.srv.App()
	go func() { _ = app.Listener(ln) }()
	ts.t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String()
}

// allPermissions is every permission of the spec.
func allPermissions() []string { return rbac.Names() }

// caller is who makes a request.
type caller struct {
	sub         string
	tenant      uuid.UUID
	roles       []string
	permissions []string
}

// admin is a caller of the server's tenant with every permission and the Admin role.
func (ts *testServer) admin() caller {
	return caller{sub: "admin-1", tenant: ts.tenant, roles: []string{"Admin"}, permissions: allPermissions()}
}

func (ts *testServer) token(c caller) string {
	ts.t.Helper()
	tok, err := ts.keys.Mint(auth.MintOptions{Subject: c.sub, TenantID: c.tenant.String(), Roles: c.roles, Permissions: c.permissions, TTL: time.Hour})
	if err != nil {
		ts.t.Fatal(err)
	}
	return tok
}

// response is a finished request.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// errorCode returns error.code of an error body.
func (r response) errorCode(t testing.TB) string {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error body: %s", r.body)
	}
	return e["code"].(string)
}

// do sends a request as the caller (nil caller: no Authorization header).
// A body that is not a string or []byte is sent as JSON.
func (ts *testServer) do(c *caller, method, path string, body any, headers ...string) response {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c != nil {
		req.Header.Set("Authorization", "Bearer "+ts.token(*c))
		req.Header.Set("X-Tenant-ID", c.tenant.String())
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := ts.srv.App().Test(req, -1)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// expect fails the test unless the response has the status (and error code, when given).
func expect(t testing.TB, r response, status int, code ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("want status %d, got %d: %s", status, r.status, r.body)
	}
	if len(code) > 0 && r.errorCode(t) != code[0] {
		t.Fatalf("want error code %s, got %s", code[0], r.body)
	}
}

// createInitiative creates an initiative as the caller and returns its id.
func (ts *testServer) createInitiative(c caller, body map[string]any) string {
	ts.t.Helper()
	r := ts.do(&c, "POST", "/v1/initiatives", body)
	expect(ts.t, r, 201)
	return r.json(ts.t)["id"].(string)
}
