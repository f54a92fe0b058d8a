package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/validation"
)

// Error codes (spec section 7). INTERNAL_ERROR is ours: the spec names no code for a 500.
const (
	CodeValidation       = "VALIDATION_ERROR"
	CodeNotFound         = "NOT_FOUND"
	CodeConflict         = "CONFLICT"
	CodeAuthorization    = "AUTHORIZATION_ERROR"
	CodeInvalidParameter = "INVALID_PARAMETER"
	CodeAlreadyExists    = "ALREADY_EXISTS"
	CodeRateLimited      = "RATE_LIMIT_EXCEEDED"
	CodeUnavailable      = "SERVICE_UNAVAILABLE"
	CodeInternal         = "INTERNAL_ERROR"
)

// Error is the one error type handlers return: an HTTP status, a spec error
// code and a message safe to show the client.
type Error struct {
	Status  int
	Code    string
	Message string
	Fields  []FieldError // only with 422
}

// FieldError is one element of the 422 `errors` array.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func newError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParameter is a 400 for a malformed body, header or query value.
func InvalidParameter(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeInvalidParameter, format, args...)
}

// Unauthorized is a 401: no usable credentials.
func Unauthorized(format string, args ...any) *Error {
	return newError(http.StatusUnauthorized, CodeAuthorization, format, args...)
}

// Forbidden is a 403: known caller, not allowed.
func Forbidden(format string, args ...any) *Error {
	return newError(http.StatusForbidden, CodeAuthorization, format, args...)
}

// NotFound is a 404 for a record that does not exist in the tenant.
func NotFound(what string) *Error {
	return newError(http.StatusNotFound, CodeNotFound, "%s not found", what)
}

// Conflict is a 409 against the record's current state.
func Conflict(format string, args ...any) *Error {
	return newError(http.StatusConflict, CodeConflict, format, args...)
}

// AlreadyExists is a 409 for a duplicate.
func AlreadyExists(format string, args ...any) *Error {
	return newError(http.StatusConflict, CodeAlreadyExists, format, args...)
}

// Invalid is a 422 listing what is wrong with each field.
func Invalid(fields ...FieldError) *Error {
	msg := "the request has invalid fields"
	if len(fields) == 1 {
		msg = fields[0].Field + ": " + fields[0].Message
	}
	return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidation, Message: msg, Fields: fields}
}

// InvalidState is a 422 for an operation the record's state does not allow (e.g. a status transition).
func InvalidState(field, format string, args ...any) *Error {
	return Invalid(FieldError{Field: field, Code: "invalid_transition", Message: fmt.Sprintf(format, args...)})
}

type errorBody struct {
	Error struct {
		Code      string       `json:"code"`
		Message   string       `json:"message"`
		RequestID string       `json:"request_id"`
		Errors    []FieldError `json:"errors,omitempty"`
	} `json:"error"`
}

// errorHandler renders every error as the spec's error body. Internal error
// text goes to the log with the request id, never to the client.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	var apiErr *Error
	var fiberErr *fiber.Error
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &fiberErr):
		apiErr = fromFiber(fiberErr)
	case isValidation(err):
		apiErr = fromValidation(err)
	case errors.Is(err, db.ErrUnavailable):
		s.log.ErrorContext(c.UserContext(), "database unavailable", "request_id", requestID(c), "route", routeOf(c), "error", err)
		apiErr = newError(http.StatusServiceUnavailable, CodeUnavailable, "the database is unavailable; retry shortly")
	case db.IsWriteCollision(err):
		s.log.WarnContext(c.UserContext(), "write collided with a concurrent one", "request_id", requestID(c), "route", routeOf(c), "error", err)
		c.Set(fiber.HeaderRetryAfter, "1")
		apiErr = newError(http.StatusServiceUnavailable, CodeUnavailable, "the write collided with a concurrent one and was not applied; retry it (with the same Idempotency-Key, if any)")
	default:
		s.log.ErrorContext(c.UserContext(), "request failed", "request_id", requestID(c), "route", routeOf(c), "error", err)
		apiErr = newError(http.StatusInternalServerError, CodeInternal, "internal error; quote request id %s when reporting it", requestID(c))
	}
	var body errorBody
	body.Error.Code, body.Error.Message, body.Error.RequestID = apiErr.Code, apiErr.Message, requestID(c)
	if apiErr.Status == http.StatusUnprocessableEntity {
		body.Error.Errors = apiErr.Fields
		if body.Error.Errors == nil {
			body.Error.Errors = []FieldError{}
		}
	}
	if len(c.Response().Header.Peek("X-RateLimit-Limit")) == 0 && (strings.HasPrefix(c.Path(), "/v1/") || strings.HasPrefix(c.Path(), "/api/v1/agents/")) {
		s.chargeClientIP(c) // refused before the tenant's limits ran (body too large, database down)
	}
	if apiErr.Status == http.StatusUnauthorized {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="valuecase"`)
	}
	if apiErr.Status == http.StatusServiceUnavailable && len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
		c.Set(fiber.HeaderRetryAfter, analyticsRetryAfter) // every 503 says when to retry (analytics documents it)
	}
	return c.Status(apiErr.Status).JSON(body)
}

// isValidation reports a rule failure of a domain package (internal/validation).
func isValidation(err error) bool {
	_, one := errors.AsType[*validation.Error](err)
	_, many := errors.AsType[validation.Errors](err)
	return one || many
}

// fromValidation is the 422 for the field failures a domain package reported,
// so handlers return domain errors as they are.
func fromValidation(err error) *Error {
	var list validation.Errors
	if many, ok := errors.AsType[validation.Errors](err); ok {
		list = many
	} else if one, ok := errors.AsType[*validation.Error](err); ok {
		list = validation.Errors{one}
	}
	fields := make([]FieldError, len(list))
	for i, e := range list {
		fields[i] = FieldError{Field: e.Field, Code: e.Code, Message: e.Message}
	}
	return Invalid(fields...)
}

func fromFiber(e *fiber.Error) *Error {
	switch e.Code {
	case http.StatusNotFound:
		return newError(http.StatusNotFound, CodeNotFound, "no such route")
	case http.StatusMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, CodeNotFound, "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return newError(http.StatusRequestEntityTooLarge, CodeInvalidParameter, "request body exceeds the payload limit (5 MB; 50 MB for POST /v1/bulk/import)")
	case http.StatusUnsupportedMediaType:
		return newError(http.StatusUnsupportedMediaType, CodeInvalidParameter, "request body must be application/json")
	}
	if e.Code >= 500 {
		return newError(e.Code, CodeInternal, "internal error")
	}
	return newError(e.Code, CodeInvalidParameter, "%s", e.Message)
}
