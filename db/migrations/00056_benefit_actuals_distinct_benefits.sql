-- +goose Up

-- The figures' refresh (benefit_measured_refresh) reads each touched benefit's actuals and plan by
-- (tenant_id, benefit_id). The planner sizes a benefit from the statistics, and ANALYZE counts the
-- distinct benefits of its sample, a number that stays put while the table grows: taken while a
-- table held one benefit's rows (a new database, a first tenant's first import), it put every
-- benefit at the whole table. The refresh then scanned benefit_actuals once per benefit,
-- sequentially or by the tenant's primary key, and benefit_plan_entries sequentially for each
-- EXISTS of a benefit without a plan: a bulk import into a growing tenant took 16 s, 20 s, then
-- over 30 s, and 10,000 benefits created in one statement 61 s, until autovacuum analyzed again.
-- Two changes, each needed (internal/benefit TestFilingReadsOnlyTheRowsOfItsBenefits):
-- - benefit_actuals.benefit_id counts its distinct values as a fraction of the rows (about 33
--   actuals a benefit: three years of months), which grows with the table and which ANALYZE keeps;
-- - the refresh runs without sequential scans: every lookup of it is by key, and an EXISTS planned
--   as a sequential scan that stops at the first match reads the whole table when there is none
--   (a later CREATE OR REPLACE of the function must say SET enable_seqscan = off again).
ALTER TABLE benefit_actuals ALTER COLUMN benefit_id SET (n_distinct = -0.03);
ALTER FUNCTION benefit_measured_refresh(uuid[], uuid[]) SET enable_seqscan = off;

-- +goose Down
ALTER FUNCTION benefit_measured_refresh(uuid[], uuid[]) RESET enable_seqscan;
ALTER TABLE benefit_actuals ALTER COLUMN benefit_id RESET (n_distinct);
