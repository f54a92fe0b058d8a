// Package validation is the one shape in which domain packages report what is
// wrong with a field, so that every handler maps rule failures to the 422
// `errors[]` array the same way and the codes stay stable across resources.
package validation

import (
	"errors"
	"fmt"
	"strings"
)

// Stable codes of the 422 `errors[].code` member. Clients branch on these, so
// they never change once published; the message is for people.
const (
	CodeRequired      = "required"       // missing, null or blank
	CodeInvalidValue  = "invalid_value"  // not one of the allowed values
	CodeInvalidFormat = "invalid_format" // not parseable (a malformed date, period, e-mail)
	CodeTooLong       = "too_long"       // text longer than its limit
	CodeOutOfRange    = "out_of_range"   // a number outside its limits, or not finite
	CodeNotAllowed    = "not_allowed"    // present although another field forbids it
	CodeDuplicate     = "duplicate"      // a value repeated where values must be unique
	CodeTooMany       = "too_many"       // a list longer than its limit
	CodeInFuture      = "in_future"      // a date or period after today / the current month
	CodeTooEarly      = "too_early"      // before the earliest allowed date or period
	CodeOffGrid       = "off_grid"       // a period that is not on the benefit's frequency grid
	CodeInvalidRange  = "invalid_range"  // an end before its start
)

// Error is one field that breaks a rule.
type Error struct {
	Field   string // JSON name of the field, with [i] for list elements: plan[2].period
	Code    string // one of the Code constants
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

// New builds an Error with a formatted message.
func New(field, code, format string, args ...any) *Error {
	return &Error{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Errors collects every failure of one request, so a client fixes them all in one round.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Add appends a failure.
func (es *Errors) Add(field, code, format string, args ...any) {
	*es = append(*es, New(field, code, format, args...))
}

// Append adds the failures in err, the result of a domain check: nil adds
// nothing, an *Error one failure, an Errors all of them. Single-field checks
// return error (not *Error) so that a nil result is never a non-nil
// interface; anything else is a programming error and panics.
func (es *Errors) Append(err error) {
	if err == nil {
		return
	}
	if one, ok := errors.AsType[*Error](err); ok {
		*es = append(*es, one)
	} else if many, ok := errors.AsType[Errors](err); ok {
		*es = append(*es, many...)
	} else {
		panic(fmt.Sprintf("validation: Append of a %T: %v", err, err))
	}
}

// Err returns the collected failures as an error, or nil when there are none
// (a nil Errors must not become a non-nil error interface).
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Names turns a list of string-typed constants into the []string the API's
// enum readers and OpenAPI enums take.
func Names[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
