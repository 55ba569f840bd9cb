#!/usr/bin/env bash
# `make up` / `make down`: the local dependencies plus every service, with local defaults.
#   bash scripts/platform.sh up     start (safe to run twice), wait until ready, print a table
#   bash scripts/platform.sh down   stop everything
# Each service runs from its build (npm start -w services/<name>), logs to .cache/run/<name>.log.
source "$(dirname "$0")/../test/infra/lib.sh"

# Services, in start order: name|management port. Each gets its settings from service_env.
SERVICES=("cache|9464" "graph-registry|9465")

# service_env NAME: prints the VAR=value settings of a service for a local run, one a line.
service_env() {
  case "$1" in
    cache) printf '%s\n' Cache__Backend=memory Cache__Host=127.0.0.1 ;;
    graph-registry) printf '%s\n' "STORE_URL=$(env_get REDIS_URL)" MONITOR_API_KEY=local-dev-key Registry__Host=127.0.0.1 ;;
    *) die "unknown service $1" ;;
  esac
}

service_up() {
  local name=$1 management_port=$2 settings
  if is_running "$name"; then
    log "$name already running"
    return 0
  fi
  mapfile -t settings < <(service_env "$name")
  (cd "$ROOT" && start_bg "$name" env "${settings[@]}" "Management__Port=$management_port" npm start --silent -w "services/$name")
  wait_for_http "$name" "http://127.0.0.1:$management_port/readyz" 90
}

up() {
  bash "$ROOT/test/infra/infra.sh" up
  local entry
  for entry in "${SERVICES[@]}"; do service_up "${entry%%|*}" "${entry##*|}"; done
  print_table
}

down() {
  local i entry
  for ((i = ${#SERVICES[@]} - 1; i >= 0; i--)); do
    entry=${SERVICES[$i]}
    stop_bg "${entry%%|*}"
  done
  bash "$ROOT/test/infra/infra.sh" down
}

print_table() {
  printf '\n%-16s %s\n' "COMPONENT" "ADDRESS"
  printf '%-16s %s\n' cache "127.0.0.1:7777 (gRPC; metrics http://127.0.0.1:9464/metrics)"
  printf '%-16s %s\n' graph-registry "http://127.0.0.1:5145 (X-Api-Key: local-dev-key; metrics http://127.0.0.1:9465/metrics)"
  printf '%-16s %s\n' redis "$(env_get REDIS_URL)" kafka "$(env_get KAFKA_BROKERS)" \
    keycloak "$(env_get KEYCLOAK_URL) (admin console: $(env_get KEYCLOAK_MASTER_ADMIN_USERNAME) / $(env_get KEYCLOAK_MASTER_ADMIN_PASSWORD))" \
    stripe-mock "$(env_get STRIPE_MOCK_URL)"
  printf '\nLogs: .cache/run/<component>.log   Stop: make down\n'
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) die "usage: $0 up|down" ;;
esac
