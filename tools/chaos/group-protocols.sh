#!/usr/bin/env bash
# npm run chaos:group-protocols -- [scenario...]   (default: cluster-service-rolling-restart)
# Each scenario with every process on @platformatic/kafka, once with every consumer on the classic
# group protocol and once on the consumer protocol (KIP-848), one run after the other, each written
# where docs/dependencies.md's group-protocols figure reads it:
# bench/results/chaos/chaos.<scenario>.platformatic-<protocol>.{json,md}. Exit code 1 if a run failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(cluster-service-rolling-restart)
status=0
for scenario in "${scenarios[@]}"; do
  for protocol in classic consumer; do
    out="bench/results/chaos/chaos.${scenario}.platformatic-${protocol}"
    echo "== ${scenario} on the ${protocol} protocol (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    node tools/chaos/src/cli.ts "$scenario" --kafka-client platformatic --group-protocol "$protocol" \
      --json "${out}.json" --markdown "${out}.md" || status=1
  done
done
exit $status
