#!/bin/bash
# Writes server.properties from the KAFKA_* variables (KAFKA_NODE_ID=1 → node.id=1), formats the
# log directory once with CLUSTER_ID, then runs the broker in the foreground.
set -euo pipefail
: "${CLUSTER_ID:?set CLUSTER_ID (22 characters of base64url) to format the log directory}"
config=/var/lib/kafka/server.properties

env | sort | while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_HEAP_OPTS | KAFKA_OPTS) ;;
    KAFKA_*)
      key=${name#KAFKA_}
      key=${key,,}
      echo "${key//_/.}=$value"
      ;;
  esac
done >"$config"

classpath='/opt/kafka/lib/*'
java -Xmx128m -cp "$classpath" kafka.tools.StorageTool format --cluster-id="$CLUSTER_ID" \
  --config="$config" --ignore-formatted >/dev/null

# shellcheck disable=SC2086 # KAFKA_HEAP_OPTS holds several JVM options
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError ${KAFKA_OPTS:-} \
  -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties -cp "$classpath" kafka.Kafka "$config"
