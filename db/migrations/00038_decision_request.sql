-- +goose Up
-- What a business case asks its approvers to decide (internal/businesscase.DecisionRequest):
-- {ask, amount, currency, decide_by, recommendation}, checked by the API; null: none asked yet.
-- Part of the case row, so an approval (which locks the row) freezes it with the text.
ALTER TABLE business_cases ADD COLUMN decision_request jsonb;
ALTER TABLE business_cases ADD CONSTRAINT business_cases_decision_request_object
    CHECK (decision_request IS NULL OR (jsonb_typeof(decision_request) = 'object' AND octet_length(decision_request::text) <= 16384));

-- +goose Down
ALTER TABLE business_cases DROP COLUMN decision_request;
