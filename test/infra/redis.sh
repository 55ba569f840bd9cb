#!/usr/bin/env bash
# Local Redis for runs and tests: test/infra/redis.sh install|start|stop
#
# Uses the Debian redis-server package binary, but never the system service: our server
# runs on a free port chosen at start (not 6379, where the package's own service may be
# listening on some machines), bound to 127.0.0.1, without persistence, with its state
# under .cache/run/redis. Writes to .cache/run/infra.env:
#   REDIS_URL             redis://127.0.0.1:<port>
#   REDIS_SERVER_BIN      absolute path of redis-server (tests spawn private servers with it)
#   REDIS_BENCHMARK_BIN   absolute path of redis-benchmark (package redis-tools)
#   REDIS_CLI_BIN         absolute path of redis-cli (package redis-tools; `--cluster create`)
# The Cluster (3 primaries + 3 replicas) and Sentinel (1 primary, 2 replicas, 3 sentinels) sets
# are started by the suites that kill their nodes (test/support/redis-cluster.ts and
# redis-sentinel.ts) from these same binaries: redis-server in cluster mode, `redis-cli
# --cluster create`, and redis-server --sentinel (no separate redis-sentinel package needed).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NAME=redis
DATA="$RUN/redis"
PORT_FILE="$RUN/redis.port"
ENV_KEYS=(REDIS_URL REDIS_SERVER_BIN REDIS_BENCHMARK_BIN REDIS_CLI_BIN)

# The package's service is irrelevant to us: in containers policy-rc.d usually blocks it,
# elsewhere it may start on 6379; either way install succeeds and we use our own port.
install() {
  apt_install redis-server redis-tools
  command -v redis-server > /dev/null || die "redis-server not on PATH after install"
  command -v redis-cli > /dev/null || die "redis-cli not on PATH after install"
  command -v redis-benchmark > /dev/null || die "redis-benchmark not on PATH after install"
}

# Not resolved through symlinks on purpose: redis-server picks its mode from argv[0].
bin_path() { command -v "$1"; }

pong() { [ "$(redis-cli -h 127.0.0.1 -p "$1" ping)" = PONG ]; }

write_env() {
  env_set REDIS_URL "redis://127.0.0.1:$1"
  env_set REDIS_SERVER_BIN "$(bin_path redis-server)"
  env_set REDIS_BENCHMARK_BIN "$(bin_path redis-benchmark)"
  env_set REDIS_CLI_BIN "$(bin_path redis-cli)"
}

start() {
  install
  if is_running "$NAME"; then
    log "redis already running (pid $(cat "$RUN/$NAME.pid"), port $(cat "$PORT_FILE" 2>/dev/null || echo '?'))"
    [ -f "$PORT_FILE" ] && write_env "$(cat "$PORT_FILE")"
    return 0
  fi
  local port
  port=$(free_port)
  mkdir -p "$DATA"
  start_bg "$NAME" "$(bin_path redis-server)" \
    --bind 127.0.0.1 --port "$port" --protected-mode yes \
    --daemonize no --save '' --appendonly no \
    --dir "$DATA" --logfile '' --pidfile ''
  echo "$port" > "$PORT_FILE"
  await_start "$NAME" 30 "answer PING on 127.0.0.1:$port" pong "$port"
  write_env "$port"
  log "redis started on 127.0.0.1:$port (pid $(cat "$RUN/$NAME.pid"), log $RUN/$NAME.log)"
}

stop() { stop_component "$NAME" "${ENV_KEYS[@]}"; }

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 install|start|stop" ;;
esac
