#!/bin/bash
# Writes the distributed worker's properties from the environment, then runs the worker. The fixed
# lines are the local worker's (tools/devstack/src/connectWorker.ts): string keys, schemaless JSON
# values, plugins found on the classpath.
set -euo pipefail
: "${BOOTSTRAP_SERVERS:?set BOOTSTRAP_SERVERS}" "${GROUP_ID:?set GROUP_ID}"
config=/var/lib/connect/worker.properties
{
  echo "bootstrap.servers=$BOOTSTRAP_SERVERS"
  echo "group.id=$GROUP_ID"
  echo "config.storage.topic=${CONFIG_STORAGE_TOPIC:-_connect-configs}"
  echo "offset.storage.topic=${OFFSET_STORAGE_TOPIC:-_connect-offsets}"
  echo "status.storage.topic=${STATUS_STORAGE_TOPIC:-_connect-status}"
  echo "config.storage.replication.factor=${CONFIG_STORAGE_REPLICATION_FACTOR:--1}"
  echo "offset.storage.replication.factor=${OFFSET_STORAGE_REPLICATION_FACTOR:--1}"
  echo "status.storage.replication.factor=${STATUS_STORAGE_REPLICATION_FACTOR:--1}"
  echo "listeners=http://0.0.0.0:8083"
  echo "rest.advertised.host.name=$(hostname)"
  echo "rest.advertised.port=8083"
  echo "key.converter=org.apache.kafka.connect.storage.StringConverter"
  echo "value.converter=org.apache.kafka.connect.json.JsonConverter"
  echo "value.converter.schemas.enable=false"
  echo "plugin.discovery=only_scan"
  env | sort | while IFS='=' read -r name value; do
    case "$name" in
      CONNECT_*)
        key=${name#CONNECT_}
        key=${key,,}
        echo "${key//_/.}=$value"
        ;;
    esac
  done
} >"$config"

# shellcheck disable=SC2086 # KAFKA_HEAP_OPTS holds several JVM options
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+ExitOnOutOfMemoryError \
  -Dlog4j2.configurationFile=/opt/connect/config/log4j2.properties -cp '/opt/connect/lib/*' \
  org.apache.kafka.connect.cli.ConnectDistributed "$config"
