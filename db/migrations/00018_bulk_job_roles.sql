-- +goose Up

-- The roles of who asked for a bulk import job (issue 13): a job's rows are checked with the
-- permissions of the request that stored it, and some rules depend on the caller's roles
-- (initiative status transitions and owner changes), so the worker needs them too.
ALTER TABLE bulk_jobs ADD COLUMN requested_roles text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE bulk_jobs DROP COLUMN requested_roles;
