package input

import "strings"

// Trimmed drops the spaces around a text read (nil stays nil).
func Trimmed(s *string) *string {
	if s != nil {
		t := strings.TrimSpace(*s)
		s = &t
	}
	return s
}

// NoneIfBlank stores a blank optional text as none, so it reads and filters as absent.
func NoneIfBlank(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	return Trimmed(s)
}
