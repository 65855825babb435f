#!/bin/bash
# Initialises an empty data directory once (superuser password from POSTGRES_PASSWORD, the SQL
# files of /docker-entrypoint-initdb.d run as the superuser), then runs the server in the foreground.
set -euo pipefail

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD: the superuser logs in over the network with it}"
  initdb --username="${POSTGRES_USER:-postgres}" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
  # Every client is another container on the compose network: passwords over TCP, replication too
  # (Debezium's connector streams the WAL over a replication connection).
  printf 'host all all all scram-sha-256\nhost replication all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  # The init scripts run against a server on the unix socket only, so the healthcheck (TCP) does
  # not pass before the databases exist.
  pg_ctl --silent --wait --options="-c listen_addresses=''" start
  for script in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$script" ] || continue
    echo "postgres-entrypoint: running $script"
    psql --quiet --set=ON_ERROR_STOP=1 --username="${POSTGRES_USER:-postgres}" --dbname=postgres --file="$script"
  done
  pg_ctl --silent --wait --mode=fast stop
fi

if [ "${1:-}" = postgres ]; then
  shift
  exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
