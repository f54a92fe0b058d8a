package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

const docsTestSpec = "openapi: 3.0.3\ninfo:\n  title: Docs test\n  version: 0.0.1\npaths: {}\n"

func docsTestApp(t *testing.T) *fiber.App {
	t.Helper()
	app := fiber.New()
	mountDocs(app, []byte(docsTestSpec))
	return app
}

// docsReply is what the docs tests read of a response (its body is read and closed by docsGet).
type docsReply struct {
	StatusCode int
	Header     http.Header
}

func docsGet(t *testing.T, app *fiber.App, target string, header ...string) (docsReply, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return docsReply{StatusCode: resp.StatusCode, Header: resp.Header}, string(body)
}

func TestDocsPage(t *testing.T) {
	app := docsTestApp(t)
	for _, target := range []string{"/docs", "/docs/", "/docs/index.html"} {
		resp, body := docsGet(t, app, target)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", target, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", target, ct)
		}
		for _, want := range []string{`src="/docs/swagger-ui-bundle.js`, `href="/docs/swagger-ui.css`, `src="/docs/docs-init.js`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: page does not reference %s", target, want)
			}
		}
		// Offline: nothing may be loaded from another origin.
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Contains(body, "//cdn") {
			t.Errorf("GET %s: page references an external URL", target)
		}
	}
}

func TestDocsAssets(t *testing.T) {
	app := docsTestApp(t)
	tests := []struct {
		path, contentType, contains string
	}{
		{"/docs/swagger-ui-bundle.js", "text/javascript; charset=utf-8", "SwaggerUIBundle"},
		{"/docs/swagger-ui-bundle.js?v=5.35.0", "text/javascript; charset=utf-8", "SwaggerUIBundle"},
		{"/docs/docs-init.js", "text/javascript; charset=utf-8", `url: "/openapi.yaml"`},
		{"/docs/swagger-ui.css", "text/css; charset=utf-8", ".swagger-ui"},
		{"/docs/favicon-32x32.png", "image/png", "PNG"},
		{"/docs/LICENSE", "text/plain; charset=utf-8", "Apache License"},
	}
	for _, tt := range tests {
		resp, body := docsGet(t, app, tt.path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", tt.path, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); ct != tt.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", tt.path, ct, tt.contentType)
		}
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") {
			t.Errorf("GET %s: Cache-Control %q", tt.path, cc)
		}
		if !strings.Contains(body, tt.contains) {
			t.Errorf("GET %s: body lacks %q", tt.path, tt.contains)
		}
	}

	// The configuration the page starts Swagger UI with.
	_, init := docsGet(t, app, "/docs/docs-init.js")
	for _, want := range []string{"deepLinking: true", "tryItOutEnabled: true", "validatorUrl: null"} {
		if !strings.Contains(init, want) {
			t.Errorf("docs-init.js lacks %q", want)
		}
	}
}

func TestDocsMissingAsset(t *testing.T) {
	app := docsTestApp(t)
	for _, target := range []string{
		"/docs/nope.js",
		"/docs/swagger-ui-bundle.js.map",
		"/docs/../go.mod",
		"/docs/%2e%2e/docs.go",
		"/docs/docs/index.html",
	} {
		resp, _ := docsGet(t, app, target)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", target, resp.StatusCode)
		}
	}
}

func TestDocsOpenAPI(t *testing.T) {
	app := docsTestApp(t)
	resp, body := docsGet(t, app, "/openapi.yaml")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("Content-Type %q", ct)
	}
	if body != docsTestSpec {
		t.Errorf("body %q, want the spec bytes", body)
	}

	// Revalidation answers 304 without a body.
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	resp, body = docsGet(t, app, "/openapi.yaml", "If-None-Match", etag)
	if resp.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("If-None-Match: status %d, body %d bytes", resp.StatusCode, len(body))
	}
}
