#!/usr/bin/env bash
# Local stripe-mock for runs and tests: test/infra/stripe-mock.sh install|start|stop
#
# HTTP on a free port chosen at start, bound to 127.0.0.1 (-http-addr). stripe-mock also
# opens HTTPS unless told otherwise, and with only -http-addr it would still listen for
# HTTPS on :12112 on every interface ($PORT if set), so HTTPS is bound explicitly to
# 127.0.0.1:0 (a port the kernel picks; we don't use it). Writes to .cache/run/infra.env:
#   STRIPE_MOCK_URL   http://127.0.0.1:<port>
# stripe-node: new Stripe('sk_test_123', {host: '127.0.0.1', port: <port>, protocol: 'http'})
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NAME=stripe-mock
PORT_FILE="$RUN/stripe-mock.port"
ENV_KEYS=(STRIPE_MOCK_URL)

# 200 from an authenticated list call means the spec and fixtures are loaded.
answers() {
  curl -fsS -o /dev/null --max-time 2 -H 'Authorization: Bearer sk_test_123' \
    "http://127.0.0.1:$1/v1/customers" 2> /dev/null
}

install() { bash "$ROOT/test/infra/gotools.sh" install stripe-mock; }

start() {
  install
  if is_running "$NAME"; then
    log "stripe-mock already running (pid $(cat "$RUN/$NAME.pid"), port $(cat "$PORT_FILE" 2>/dev/null || echo '?'))"
    [ -f "$PORT_FILE" ] && env_set STRIPE_MOCK_URL "http://127.0.0.1:$(cat "$PORT_FILE")"
    return 0
  fi
  local port
  port=$(free_port)
  start_bg "$NAME" env -u PORT "$CACHE/bin/stripe-mock" \
    -http-addr "127.0.0.1:$port" -https-addr "127.0.0.1:0"
  echo "$port" > "$PORT_FILE"
  await_start "$NAME" 30 "answer GET /v1/customers on 127.0.0.1:$port" answers "$port"
  env_set STRIPE_MOCK_URL "http://127.0.0.1:$port"
  log "stripe-mock started on http://127.0.0.1:$port (pid $(cat "$RUN/$NAME.pid"), log $RUN/$NAME.log)"
}

stop() { stop_component "$NAME" "${ENV_KEYS[@]}"; }

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 install|start|stop" ;;
esac
