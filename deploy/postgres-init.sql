-- Run once by the postgres image on an empty data directory (docker-entrypoint-initdb.d),
-- as the POSTGRES_USER superuser, through psql.

-- The service's role: owns its database and runs the migrations, but is neither superuser nor
-- BYPASSRLS, so the FORCEd row-level security applies to it.
SELECT 'CREATE ROLE valuecase LOGIN PASSWORD ''valuecase'' NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB'
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'valuecase') \gexec
SELECT 'CREATE DATABASE valuecase OWNER valuecase ENCODING ''UTF8'' TEMPLATE template0'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'valuecase') \gexec

-- Temporal's own role and databases (persistence and visibility), kept apart from the service's.
-- temporalio/auto-setup creates the schemas in them (SKIP_DB_CREATE=true).
SELECT 'CREATE ROLE temporal LOGIN PASSWORD ''temporal'' NOSUPERUSER NOCREATEROLE'
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') \gexec
SELECT 'CREATE DATABASE temporal OWNER temporal'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'temporal') \gexec
SELECT 'CREATE DATABASE temporal_visibility OWNER temporal'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'temporal_visibility') \gexec
