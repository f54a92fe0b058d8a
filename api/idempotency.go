package api

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/idempotency"
)

// idempotency makes a POST with an Idempotency-Key safe to retry (Stripe's
// semantics, internal/idempotency): it runs inside the tenant transaction, so
// the stored answer commits with the change it answers. Same key and same
// request within 24 h: the first answer again, with Idempotent-Replayed: true;
// same key, different request: 422; the first still running: 409.
func (s *Server) idempotency(c *fiber.Ctx) error {
	key := c.Get(idempotency.Header)
	if c.Method() != fiber.MethodPost || key == "" {
		return c.Next()
	}
	if err := idempotency.ValidKey(key); err != nil {
		return InvalidParameter("%s", err.Error())
	}
	p, t, ctx := principal(c), tx(c), c.UserContext()
	id := dbsqlc.IdempotencyGetParams{TenantID: p.TenantID, Key: key}
	locked, err := db.Q.IdempotencyTryLock(ctx, t, "idempotency/"+p.TenantID.String()+"/"+key)
	if err != nil {
		return err
	}
	if !locked {
		return Conflict("%s", idempotency.ErrInFlight.Error())
	}
	hash := idempotency.Hash(c.Method(), c.OriginalURL(), p.Subject, c.Body())
	row, err := db.Q.IdempotencyGet(ctx, t, id)
	found := err == nil
	if err != nil && !db.IsNotFound(err) {
		return err
	}
	action, err := idempotency.Decide(idempotency.Stored{RequestHash: row.RequestHash, Status: int(row.Status), CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt}, found, hash, time.Now())
	switch {
	case errors.Is(err, idempotency.ErrMismatch):
		return Invalid(FieldError{Field: idempotency.Header, Code: "idempotency_key_reused", Message: err.Error()})
	case errors.Is(err, idempotency.ErrInFlight):
		return Conflict("%s", err.Error())
	case err != nil:
		return err
	case action == idempotency.Replay:
		return replay(c, row)
	}
	if found { // expired or abandoned: the key starts over
		if err := db.Q.IdempotencyDelete(ctx, t, dbsqlc.IdempotencyDeleteParams(id)); err != nil {
			return err
		}
	}
	if err := db.Q.IdempotencyStart(ctx, t, dbsqlc.IdempotencyStartParams{TenantID: p.TenantID, Key: key, RequestHash: hash, Method: c.Method(), Path: c.Path()}); err != nil {
		return err
	}

	err = c.Next()
	committedEarly := c.Locals(localTx) == nil // endTx: the change (and the in-flight key) committed before the answer
	if !committedEarly {
		if err != nil || !idempotency.Stores(c.Response().StatusCode(), false) {
			return err // rolled back with the change: a retry runs again
		}
		return s.finishIdempotency(ctx, t, id, c)
	}
	if err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	// The answer goes in its own transaction; if this fails, the key stays in
	// flight and is retried after idempotency.AbandonedAfter.
	if ferr := db.InTenant(context.WithoutCancel(ctx), s.Pool, p.TenantID, func(t pgx.Tx) error {
		return s.finishIdempotency(ctx, t, id, c)
	}); ferr != nil {
		s.log.ErrorContext(ctx, "storing the idempotent answer failed", "request_id", requestID(c), "error", ferr)
	}
	return nil
}

func (s *Server) finishIdempotency(ctx context.Context, t pgx.Tx, id dbsqlc.IdempotencyGetParams, c *fiber.Ctx) error {
	var headers [][2]string
	c.Response().Header.VisitAll(func(k, v []byte) {
		if idempotency.KeepHeader(string(k)) {
			headers = append(headers, [2]string{string(k), string(v)})
		}
	})
	h, err := json.Marshal(headers)
	if err != nil {
		return err
	}
	return db.Q.IdempotencyFinish(context.WithoutCancel(ctx), t, dbsqlc.IdempotencyFinishParams{
		Status: int32(c.Response().StatusCode()), ResponseHeaders: h, ResponseBody: c.Response().Body(),
		TenantID: id.TenantID, Key: id.Key,
	})
}

// replay sends the stored answer.
func replay(c *fiber.Ctx, row dbsqlc.IdempotencyKey) error {
	var headers [][2]string
	if err := json.Unmarshal(row.ResponseHeaders, &headers); err != nil {
		return err
	}
	for _, h := range headers {
		c.Set(h[0], h[1])
	}
	c.Set(idempotency.ReplayedHeader, "true")
	return c.Status(int(row.Status)).Send(row.ResponseBody)
}
