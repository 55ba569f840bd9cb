#!/usr/bin/env bash
# Starts or stops the local dependencies of the platform, in parallel:
#   bash test/infra/infra.sh up [component...]     (default: all)
#   bash test/infra/infra.sh down [component...]
#   bash test/infra/infra.sh install               (download everything, start nothing)
#   bash test/infra/infra.sh disk                  (free space and the largest parts of .cache)
# Components: redis kafka keycloak stripe-mock kube (etcd + kube-apiserver). helm and kubectl are
# tools, installed by `install` and `up`.
# Addresses land in .cache/run/infra.env; logs in .cache/run/<component>.log.
source "$(dirname "$0")/lib.sh"

ALL=(redis kafka keycloak stripe-mock kube)
action=${1:-up}
shift || true
components=("$@")
[ ${#components[@]} -gt 0 ] || components=("${ALL[@]}")

# run_all ACTION COMPONENT...: one background job a component, all awaited; fails if any failed.
run_all() {
  local action=$1 pids=() names=() status=0 i
  shift
  for name in "$@"; do
    bash "$ROOT/test/infra/$name.sh" "$action" &
    pids+=($!)
    names+=("$name")
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      log "${names[$i]} $action failed"
      status=1
    fi
  done
  return $status
}

case "$action" in
  install)
    # Installs share the Maven and apt caches: run them one after another.
    bash "$ROOT/test/infra/redis.sh" install
    bash "$ROOT/test/infra/gotools.sh" install
    bash "$ROOT/test/infra/kafka.sh" install
    bash "$ROOT/test/infra/keycloak.sh" install
    bash "$ROOT/test/infra/deploy-tools.sh" install
    # First run on a machine: builds the OpenTelemetry Collector (see otelcol.sh for the time).
    bash "$ROOT/test/infra/otelcol.sh" install
    bash "$ROOT/test/infra/browser.sh" install
    # First run on a machine: builds kube-apiserver, kubectl and etcd (~6 min on 2 cores).
    bash "$ROOT/test/infra/kube.sh" install
    trim_go_caches
    ;;
  up)
    started=$SECONDS
    "$0" install
    run_all start "${components[@]}"
    log "dependencies up in $((SECONDS - started))s"
    grep -E "_(URL|BROKERS)=" "$ENV_FILE" | sed "s/^/[infra]   /" >&2
    ;;
  down)
    run_all stop "${components[@]}"
    ;;
  disk)
    # One line for a run's log: a run that fails on a full disk shows what filled it.
    sizes=$(cd "$CACHE" 2> /dev/null && du -sm -- * 2> /dev/null | sort -rn)
    total=$(awk '{ sum += $1 } END { printf "%.1f", sum / 1024 }' <<< "$sizes")
    largest=$(head -n 6 <<< "$sizes" | awk '{ printf "%s%s %.1f", sep, $2, $1 / 1024; sep = ", " }')
    log "disk: $(df -BG --output=avail "$ROOT" | tail -n 1 | tr -d ' ')B free; .cache ${total} GB (${largest:-empty})"
    ;;
  *)
    die "usage: $0 up|down|install|disk [component...]"
    ;;
esac
