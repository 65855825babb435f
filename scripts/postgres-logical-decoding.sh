#!/usr/bin/env bash
# Turns on logical decoding (wal_level=logical) on the machine's PostgreSQL, for the CDC relay
# (Debezium reads the outbox table from the write-ahead log through a replication slot).
#
# Run by .ci/run before the tests; a developer runs it once: `bash scripts/postgres-logical-decoding.sh`.
# It does nothing when wal_level is already logical. Otherwise it says what it changes, runs
# `ALTER SYSTEM SET wal_level = logical` (written to postgresql.auto.conf) and restarts the server,
# because wal_level is read only at start. logical is a superset of replica: everything else works
# as before. The restart drops every open connection, so do not run it while tests are running.
#
# The embedded PostgreSQL of the demo (tools/devstack/src/embeddedPostgres.ts) starts with
# wal_level=logical already and needs nothing from here.
set -euo pipefail

url="${POSTGRES_ADMIN_URL:-postgresql://postgres@127.0.0.1:5432/postgres}"

level=$(psql "$url" -Atqc 'show wal_level')
if [ "$level" = logical ]; then
  echo "postgres: wal_level is already logical (logical decoding on); nothing to change"
  exit 0
fi

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "postgres: wal_level is $level; the CDC relay needs logical. Run, as a superuser:" >&2
  echo "  ALTER SYSTEM SET wal_level = logical;  -- then restart PostgreSQL" >&2
  exit 1
fi

version=$(psql "$url" -Atqc 'show server_version_num' | cut -c1-2)
echo "postgres: wal_level is $level; changing it to logical for the CDC relay (Debezium):"
echo "postgres:   ALTER SYSTEM SET wal_level = logical   (in $(psql "$url" -Atqc 'show data_directory')/postgresql.auto.conf)"
echo "postgres:   pg_ctlcluster $version main restart      (wal_level is read only at start; open connections are dropped)"
psql "$url" -qc 'alter system set wal_level = logical'
pg_ctlcluster --skip-systemctl-redirect "$version" main restart
for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
level=$(psql "$url" -Atqc 'show wal_level')
if [ "$level" != logical ]; then
  echo "postgres: wal_level is still $level after the restart; check the server's log" >&2
  exit 1
fi
echo "postgres: wal_level is now logical"
