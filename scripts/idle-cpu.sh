#!/usr/bin/env bash
# CPU used by each process of a running demo over a window: ./scripts/idle-cpu.sh [seconds] (default 20).
# Counts the demo process (with its console), the services and relays, the Kafka JVM, Zipkin and
# Prometheus; PostgreSQL is shared with everything else on the machine and left out.
# Reads utime+stime from /proc/<pid>/stat before and after (clock ticks, 100 per second on Linux).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
root=$PWD
pids=$(pgrep -f "node scripts/demo.ts|$root/apps/[a-z]+/src/main.ts|$root/.local/kafka/demo/server.properties|zipkin-server.*exec.jar|prometheus --config.file=.local/prometheus" || true)
[ -n "$pids" ] || { echo "no demo of $root is running" >&2; exit 1; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
declare -A before
for p in $pids; do before[$p]=$(ticks "$p"); done
sleep "$secs"
hz=$(getconf CLK_TCK)
total=0
for p in $pids; do
  [ -e "/proc/$p" ] || continue # exited during the window
  name=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -oE 'apps/[a-z]+|scripts/demo.ts|kafka.Kafka|zipkin-server|prometheus' | head -1)
  [ "$name" = apps/relay ] && name="apps/relay ($(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^RELAY_ID=//p'))"
  used=$(( $(ticks "$p") - ${before[$p]} ))
  total=$((total + used))
  awk -v n="$name" -v u="$used" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%-28s %6.0f ms  %5.2f%% of a core\n", n, u * 1000 / hz, u * 100 / hz / s }'
done
awk -v u="$total" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%-28s %6.0f ms  %5.2f%% of a core\n", "all of these", u * 1000 / hz, u * 100 / hz / s }' 
