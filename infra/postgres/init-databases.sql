-- Runs once, when the compose `postgres` container initialises an empty data directory
-- (mounted into /docker-entrypoint-initdb.d). Each service owns one database and logs in with its
-- own role, so a service cannot read another service's tables: the only way data crosses a service
-- boundary is an event on Kafka. Each database has its own outbox and its own relay
-- (relay-orders, relay-inventory, relay-billing), which logs in with that database's role.
--
-- Passwords are demo values for a stack that publishes no PostgreSQL port; do not reuse them.
-- Each service creates its own tables (MIGRATE_ON_START), as owner of its database; PostgreSQL 15
-- lets the database owner create tables in the `public` schema.

create role orders login password 'orders';
create database orders owner orders;

create role inventory login password 'inventory';
create database inventory owner inventory;

create role billing login password 'billing';
create database billing owner billing;

-- Each relay logs in with its database's role. In debezium mode (the `cdc` profile) it marks a row
-- published only once the connector's replication slot has confirmed it, and it identifies the
-- connector's reader by that walsender's pid and start time in pg_stat_activity, which PostgreSQL
-- shows for another role's session only to members of pg_read_all_stats (docs/design.md#polling-or-cdc).
-- Without it the relay never sees the reader: it marks nothing and the outbox grows for ever.
grant pg_read_all_stats to orders, inventory, billing;

-- The web console (apps/console) only reads: each outbox, processed_events and the stock. It logs in
-- with a role of its own that can read the tables the owners create later (their migrations run at
-- service start), and write nothing.
create role console login password 'console';
\connect orders
alter default privileges for role orders in schema public grant select on tables to console;
\connect inventory
alter default privileges for role inventory in schema public grant select on tables to console;
\connect billing
alter default privileges for role billing in schema public grant select on tables to console;
