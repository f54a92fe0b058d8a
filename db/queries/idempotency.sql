-- name: IdempotencyTryLock :one
-- Only one request per tenant and key runs at a time: a duplicate that arrives while the first
-- is in flight is refused (409) instead of waiting. Held until the transaction ends.
-- lock_name is "idempotency/<tenant>/<key>".
SELECT pg_try_advisory_xact_lock(hashtextextended(@lock_name::text, 0))::boolean AS locked;

-- name: IdempotencyGet :one
SELECT * FROM idempotency_keys WHERE tenant_id = @tenant_id AND key = @key;

-- name: IdempotencyDelete :exec
DELETE FROM idempotency_keys WHERE tenant_id = @tenant_id AND key = @key;

-- name: IdempotencyStart :exec
INSERT INTO idempotency_keys (tenant_id, key, request_hash, method, path)
VALUES (@tenant_id, @key, @request_hash, @method, @path);

-- name: IdempotencyFinish :exec
UPDATE idempotency_keys
SET status = @status, response_headers = @response_headers, response_body = @response_body
WHERE tenant_id = @tenant_id AND key = @key;
