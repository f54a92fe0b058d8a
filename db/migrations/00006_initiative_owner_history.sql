-- +goose Up

-- The status history also records changes of an initiative's owner (owner_id), since ownership
-- decides who may make the owner-only transitions. A `status` entry is a transition (or the
-- creation); an `owner` entry keeps the status unchanged (from_status = to_status) and names the
-- previous and the new owner (either may be null: no owner).
ALTER TABLE initiative_status_history
    ADD COLUMN kind       text NOT NULL DEFAULT 'status' CHECK (kind IN ('status', 'owner')),
    ADD COLUMN from_owner text,
    ADD COLUMN to_owner   text;

-- +goose Down
ALTER TABLE initiative_status_history DROP COLUMN kind, DROP COLUMN from_owner, DROP COLUMN to_owner;
