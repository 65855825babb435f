# Sourced by `./dev compose`: the stack of docker-compose.yml on this machine, in one command.
#   ./dev compose up     the engine and Compose installed if missing, the base image made, the
#                        images built, the stack started; returns once every service is healthy
#   ./dev compose down   stops and removes the stack (its data goes with it)
#   ./dev compose <args> any other Compose command, on this project (ps, logs -f orders, exec ...)
# Profiles as Compose takes them: COMPOSE_PROFILES=cdc RELAY_MODE_ORDERS=debezium ./dev compose up
# (docs/docker.md).

compose_project=outbox-reference
# The base of every image: Debian 12, made with mmdebstrap from Debian's mirror, since no container
# registry may be reachable. Where one is, BASE_IMAGE=debian:bookworm-slim works as well.
base_image=${BASE_IMAGE:-local/debian:bookworm}

compose_say() { echo "compose: $*"; }

# 1. The engine, Compose and mmdebstrap: Debian's packages, installed when we may, else one line saying how.
compose_engine() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; } || missing+=(docker-compose)
  { command -v mmdebstrap >/dev/null 2>&1 || [ "$base_image" != local/debian:bookworm ]; } || missing+=(mmdebstrap)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "missing: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
    compose_say "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  if ! docker info >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "the Docker engine is not running; start it: sudo systemctl start docker" >&2
      exit 1
    fi
    mkdir -p .local/logs
    if [ -d /run/systemd/system ]; then
      systemctl start docker
    else
      # No init system (a container or a CI machine): dockerd in the background, detached from this shell.
      compose_say "starting dockerd (log: .local/logs/dockerd.log)"
      setsid nohup dockerd >>.local/logs/dockerd.log 2>&1 </dev/null &
    fi
    local deadline=$((SECONDS + 60))
    until docker info >/dev/null 2>&1; do
      [ $SECONDS -lt $deadline ] || { echo "dockerd did not start; see .local/logs/dockerd.log" >&2; exit 1; }
      sleep 0.5
    done
  fi
}

# 2. The base image: Debian 12 minbase from Debian's mirror, imported once (about 20 s).
compose_base_image() {
  docker image inspect "$base_image" >/dev/null 2>&1 && return
  if [ "$base_image" != local/debian:bookworm ]; then
    docker pull "$base_image"
    return
  fi
  compose_say "making the base image $base_image with mmdebstrap (once)"
  mkdir -p .local/compose
  mmdebstrap --quiet --variant=minbase bookworm .local/compose/base.tar
  docker import .local/compose/base.tar "$base_image" >/dev/null
  rm -f .local/compose/base.tar
}

compose_cli() {
  # RELAY_MODE picks the mode of every relay that has no RELAY_MODE_<SERVICE> of its own.
  export RELAY_MODE_ORDERS=${RELAY_MODE_ORDERS:-${RELAY_MODE:-polling}}
  export RELAY_MODE_INVENTORY=${RELAY_MODE_INVENTORY:-${RELAY_MODE:-polling}}
  export RELAY_MODE_BILLING=${RELAY_MODE_BILLING:-${RELAY_MODE:-polling}}
  if docker compose version >/dev/null 2>&1; then
    docker compose -p "$compose_project" "$@"
  else
    # Compose v1 applies deploy.resources.limits only in compatibility mode.
    docker-compose --compatibility -p "$compose_project" "$@"
  fi
}

# 3. Up: stage the build contexts, build (Docker's layer cache skips what did not change), start,
#    and wait for every started service's healthcheck.
#    OUTBOX_COMPOSE_BUILD=0 starts the images built last time as they are (the chaos suite builds
#    once, then starts a fresh stack for every scenario).
compose_up() {
  if [ "${OUTBOX_COMPOSE_BUILD:-1}" != 0 ]; then
    compose_base_image
    node scripts/compose/stageContexts.ts
    compose_say "building the images (the first build takes a few minutes)"
    BASE_IMAGE="$base_image" compose_cli build --build-arg BASE_IMAGE="$base_image" --quiet 2>&1 |
      grep -v -e 'legacy builder is deprecated' -e 'buildx component' -e 'docs.docker.com/go/buildx' -e '^ *$' || true
  fi
  if ! compose_cli up -d --no-build "$@"; then
    # Compose v1 abandons `up` the moment a dependency reports unhealthy, leaving its dependants
    # uncreated, though Docker keeps checking it: a JVM on a loaded host can pass its start period
    # and turn healthy later. Wait for what started, then start the rest once; a real failure
    # fails there, with the logs.
    compose_say "a dependency was not healthy within its start period; waiting for it, then starting the rest"
    node scripts/compose/waitHealthy.ts "$compose_project"
    compose_cli up -d --no-build "$@"
  fi
  node scripts/compose/waitHealthy.ts "$compose_project"
}

compose_main() {
  compose_engine
  # Compose (v1) checks every build context before any command, down and ps too: on a fresh clone,
  # before the first `up` stages them, the staged contexts must at least exist.
  mkdir -p .local/compose/app .local/compose/kafka .local/compose/connect .local/compose/zipkin
  case "${1:-help}" in
    up) shift; compose_up "$@" ;;
    # Every profile's services, so that a stack started with `cdc` goes down whole.
    down) shift; COMPOSE_PROFILES=cdc,grafana compose_cli down --remove-orphans "$@" ;;
    help | -h | --help) sed -n '2,7p' scripts/compose/compose.sh | sed 's/^# \{0,1\}//' ;;
    *) compose_cli "$@" ;;
  esac
}
