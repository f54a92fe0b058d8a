package api

import "time"

// The response side of the kit: how values are written in every resource.

// timestamp writes an instant as RFC 3339 in UTC.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// optTimestamp writes an optional instant; null when absent.
func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
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

// truncate shortens s to n runes for a message, marking the cut.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
