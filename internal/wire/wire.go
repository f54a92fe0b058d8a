// Package wire holds the formats the API's JSON and its events share, so a
// resource reads the same in a response, in a webhook and in an export.
package wire

import "time"

// Timestamp writes an instant as the API does: RFC 3339 in UTC, with the
// fraction of a second it has.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
