-- +goose Up

-- How many actuals a benefit has, as the planner sees it: ANALYZE counts the distinct benefits of
-- its sample, a number that stays put while the table grows. Taken while the table held one
-- benefit's actuals (a new database, the first tenant's first import), it put every benefit at the
-- whole table, and the lookups of one benefit's actuals by (tenant_id, benefit_id) - the figures'
-- refresh of benefit_measured_refresh after every filing, among others - became sequential scans of
-- the table, or scans of the tenant by the primary key, once per benefit: a bulk import into a
-- growing tenant took 16 s, 20 s, then over 30 s, and 10,000 benefits created in one statement 61 s,
-- until autovacuum analyzed the table again. As a fraction of the rows (about 33 actuals a
-- benefit: three years of months) the estimate grows with the table, and ANALYZE keeps it.
ALTER TABLE benefit_actuals ALTER COLUMN benefit_id SET (n_distinct = -0.03);

-- +goose Down
ALTER TABLE benefit_actuals ALTER COLUMN benefit_id RESET (n_distinct);
