-- +goose Up

-- What an approved business-case version's documents show, frozen at approval (issue 11): the
-- complete export snapshot (figures, per-period values, monthly cash flow, benefits, costs,
-- stakeholders, projects, sensitivity, the calculation appendix, its data-as-of and content
-- hash) as JSON, written once in the approval's transaction. An export of an approved version
-- renders this document instead of reading the initiative live, so every export of it says the
-- same thing, whatever happens to the initiative afterwards. Drafts have no row.
CREATE TABLE business_case_documents (
    tenant_id        uuid        NOT NULL,
    business_case_id uuid        NOT NULL,
    document         jsonb       NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, business_case_id),
    FOREIGN KEY (tenant_id, business_case_id) REFERENCES business_cases (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE business_case_documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE business_case_documents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON business_case_documents USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- +goose Down
DROP TABLE business_case_documents;
