package api

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/valuecase/valuecase/internal/testenv"
)

// A write PostgreSQL aborted as a deadlock or serialization failure is a 503
// that says to retry (Retry-After: 1), not a 500: nothing was written, and
// the same request succeeds again (an error answer is never stored for an
// Idempotency-Key, so a retry with the key runs afresh).
func TestWriteCollisionIs503(t *testing.T) {
	s := &Server{log: testenv.QuietLogger()}
	app := fiber.New(fiber.Config{ErrorHandler: s.errorHandler})
	for _, code := range []string{"40P01", "40001"} {
		app.Get("/collide/"+code, func(c *fiber.Ctx) error {
			return fmt.Errorf("insert actuals: %w", &pgconn.PgError{Code: code, Message: "deadlock detected"})
		})
		res, err := app.Test(httptest.NewRequest("GET", "/collide/"+code, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body errorBody
		_ = json.NewDecoder(res.Body).Decode(&body)
		if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || body.Error.Code != CodeUnavailable {
			t.Errorf("%s: %d Retry-After %q %+v", code, res.StatusCode, res.Header.Get("Retry-After"), body.Error)
		}
	}
}
