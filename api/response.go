package api

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/internal/wire"
)

// The response side of the kit: how values are written in every resource.

// optTimestamp writes an optional instant; null when absent.
func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := wire.Timestamp(*t)
	return &s
}

// optDate writes an optional calendar date (YYYY-MM-DD); null when absent.
func optDate(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format(time.DateOnly)
	return &s
}

// deref reads an optional string, "" when absent.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nonNil writes an absent list as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ---- entity tags (see docs/api-conventions.md, "Concurrent edits") ----

// recordETag is the strong entity tag of a single record's representation:
// "<version>.<digest>". The version names the stored row (its updated_at to
// the microsecond, which every write sets), so If-Match compares it
// (checkIfMatch); the digest names the bytes of the body, which also carry
// what is computed from other rows or the clock, so If-None-Match only
// answers 304 when the client's copy is byte for byte the current one.
func recordETag(version time.Time, body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + versionTag(version) + "." + base64.RawURLEncoding.EncodeToString(sum[:9]) + `"`
}

// versionTag writes a record version (zero: a record never saved, e.g. default settings).
func versionTag(version time.Time) string {
	if version.IsZero() {
		return "0"
	}
	return strconv.FormatInt(version.UnixMicro(), 36)
}

// sendRecord answers with one record as JSON (status 200 unless given) and
// its ETag; a GET whose If-None-Match names that ETag gets 304 and no body.
func sendRecord(c *fiber.Ctx, version time.Time, v any, status ...int) error {
	raw, err := c.App().Config().JSONEncoder(v)
	if err != nil {
		return err
	}
	etag := recordETag(version, raw)
	c.Set(fiber.HeaderETag, etag)
	if c.Method() == fiber.MethodGet && etagMatches(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	if len(status) > 0 {
		c.Status(status[0])
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(raw)
}

// etagMatches reports whether an If-None-Match header names etag: "*", or
// one of its tags by weak comparison (RFC 9110 13.1.2). Used by every 304.
func etagMatches(header, etag string) bool {
	etag = strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
