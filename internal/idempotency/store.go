package idempotency

// The store of keys and answers, in the tenant transaction of the request,
// so a stored answer commits with the change it answers.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Request is what identifies a request under its key.
type Request struct {
	Method, Path string
	Hash         []byte // Hash of method, path and query, caller and body
}

// Answer is a stored answer: status, the headers worth replaying (KeepHeader) and body.
type Answer struct {
	Status  int
	Headers [][2]string
	Body    []byte
}

// Begin claims a key for a request in the tenant transaction: ErrInFlight
// when another request holds it now, ErrMismatch when it answered another
// request. Replay comes with the stored answer; Run means the key is
// recorded in flight (an expired or abandoned record is discarded first) and
// the request may run.
func Begin(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, key string, req Request) (Action, Answer, error) {
	locked, err := db.Q.IdempotencyTryLock(ctx, tx, "idempotency/"+tenantID.String()+"/"+key)
	if err != nil {
		return Run, Answer{}, err
	}
	if !locked {
		return Run, Answer{}, ErrInFlight
	}
	id := dbsqlc.IdempotencyGetParams{TenantID: tenantID, Key: key}
	row, err := db.Q.IdempotencyGet(ctx, tx, id)
	found := err == nil
	if err != nil && !db.IsNotFound(err) {
		return Run, Answer{}, err
	}
	action, err := Decide(Stored{RequestHash: row.RequestHash, Status: int(row.Status), CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt}, found, req.Hash, time.Now())
	if err != nil {
		return action, Answer{}, err
	}
	if action == Replay {
		answer := Answer{Status: int(row.Status), Body: row.ResponseBody}
		return Replay, answer, json.Unmarshal(row.ResponseHeaders, &answer.Headers)
	}
	if found { // expired or abandoned: the key starts over
		if err := db.Q.IdempotencyDelete(ctx, tx, dbsqlc.IdempotencyDeleteParams(id)); err != nil {
			return Run, Answer{}, err
		}
	}
	return Run, Answer{}, db.Q.IdempotencyStart(ctx, tx, dbsqlc.IdempotencyStartParams{TenantID: tenantID, Key: key, RequestHash: req.Hash, Method: req.Method, Path: req.Path})
}

// Finish stores the answer of the request that claimed the key (Begin).
func Finish(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, key string, a Answer) error {
	headers, err := json.Marshal(a.Headers)
	if err != nil {
		return err
	}
	return db.Q.IdempotencyFinish(ctx, tx, dbsqlc.IdempotencyFinishParams{
		Status: int32(a.Status), ResponseHeaders: headers, ResponseBody: a.Body, TenantID: tenantID, Key: key,
	})
}
