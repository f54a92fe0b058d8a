package api

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// docsFS is the offline API reference served at /docs: Swagger UI from the
// npm package swagger-ui-dist 5.35.0 (Apache-2.0, see docs/LICENSE and
// docs/NOTICE; third-party notices in docs/swagger-ui-bundle.js.LICENSE.txt),
// of which only swagger-ui-bundle.js, swagger-ui.css, index.css and the
// favicons are kept, plus our own index.html and docs-init.js. No CDN and no
// external fonts: the page works offline.
//
// To upgrade: `npm pack swagger-ui-dist@X`, copy the same files over and
// bump the ?v= query strings in docs/index.html (assets are cached for a
// year under those URLs).
//
//go:embed docs
var docsFS embed.FS

// docsAsset is one embedded file, ready to send.
type docsAsset struct {
	body        []byte
	contentType string
	etag        string
}

const (
	docsAssetCacheControl = "public, max-age=31536000, immutable"
	docsPageCacheControl  = "no-cache"
)

// mountDocs registers the API reference:
//
//	GET /docs           the Swagger UI page (text/html)
//	GET /docs/*         its assets, cached for a year; unknown names are 404
//	GET /openapi.yaml   spec, the OpenAPI document (application/yaml)
//
// The routes are public and read-only; spec is served as given.
func mountDocs(app *fiber.App, spec []byte) {
	assets := make(map[string]docsAsset)
	err := fs.WalkDir(docsFS, "docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := docsFS.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "docs/")
		assets[name] = docsAsset{body: body, contentType: docsContentType(name), etag: docsETag(body)}
		return nil
	})
	if err != nil {
		panic("api: reading embedded docs: " + err.Error()) // cannot happen with a valid embed
	}
	index, ok := assets["index.html"]
	if !ok {
		panic("api: embedded docs have no index.html")
	}
	openapi := docsAsset{body: spec, contentType: "application/yaml", etag: docsETag(spec)}

	page := func(c *fiber.Ctx) error { return docsSend(c, index, docsPageCacheControl) }
	app.Get("/docs", page)
	app.Get("/docs/*", func(c *fiber.Ctx) error {
		name := c.Params("*")
		if name == "" || name == "index.html" {
			return page(c)
		}
		a, ok := assets[name]
		if !ok {
			return fiber.ErrNotFound
		}
		return docsSend(c, a, docsAssetCacheControl)
	})
	app.Get("/openapi.yaml", func(c *fiber.Ctx) error {
		return docsSend(c, openapi, docsPageCacheControl)
	})
}

// docsSend writes a, or 304 Not Modified when the client already has it.
func docsSend(c *fiber.Ctx, a docsAsset, cacheControl string) error {
	c.Set(fiber.HeaderCacheControl, cacheControl)
	c.Set(fiber.HeaderETag, a.etag)
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), a.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, a.contentType)
	return c.Send(a.body)
}

func docsETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// docsContentType maps the extensions of the embedded files to their media
// types, independently of the host's MIME tables.
func docsContentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".json", ".map":
		return "application/json"
	case ".txt", "":
		return "text/plain; charset=utf-8" // LICENSE, NOTICE
	default:
		return "application/octet-stream"
	}
}
