#!/usr/bin/env bash
# Installs, starts or stops the local dependencies of the platform, each component beside the
# others:
#   bash test/infra/infra.sh up [component...]     start them, each installing what it runs (default: all)
#   bash test/infra/infra.sh down [component...]
#   bash test/infra/infra.sh install [up|test] [build|lint] [start]
#                                                  install what `make up` runs (up), or that and the
#                                                  tools the tests use (test); beside them, `make
#                                                  build` or `make lint`; with start, each
#                                                  dependency starts as soon as it is installed
#   bash test/infra/infra.sh verify                check every checksum of this clone's tool cache entries
#   bash test/infra/infra.sh disk                  free space, the largest parts of .cache and of the tool cache
# Components: redis kafka keycloak stripe-mock kube (etcd + kube-apiserver).
# One line on the screen per component as it ends (and, for a build, as it starts: what it does and
# how long it took last time); the tools' own output in .cache/logs/<step>.log, printed only when
# a step fails. Addresses land in .cache/run/infra.env; the processes' logs in .cache/run/<component>.log.
source "$(dirname "$0")/lib.sh"

ALL=(redis kafka keycloak stripe-mock kube)
action=${1:-up}
shift || true

infra() { bash "$ROOT/test/infra/$1" "${@:2}"; }
# The tools of the tests install a step lower in CPU priority: the tests wait for all of them, but
# `make test` builds the single-node cluster's commands beside them, and those wait for
# kube-apiserver's build first (kube.sh: the packages they share), the longest chain of a cold run.
infra_low() { nice -n 5 bash "$ROOT/test/infra/$1" "${@:2}"; }

# The install steps, one function each (run_parallel runs step_<name>).
step_redis() { infra redis.sh install; }
step_kafka() { infra kafka.sh install; }
step_keycloak() { infra keycloak.sh install; }
step_stripe_mock() { infra gotools.sh install stripe-mock; }
step_kube_apiserver() { infra kube.sh install control; }
step_etcd() { infra kube.sh install etcd; }
# The allocator the services run with (lib.sh); the tests start services with the images' settings too.
step_allocator() { install_allocator; }
# The tests' kubectl (not `make up`'s: it applies its objects through the Kubernetes client).
step_kubectl() { infra kube.sh install kubectl; }
# The tools of the tests (the integration tier): not installed by `make up`.
step_helm() { infra_low gotools.sh install helm; }
step_grpcurl() { infra_low gotools.sh install grpcurl; }
step_ghz() { infra_low gotools.sh install ghz; }
# The release test's signing and verifying (scripts/release.sh with SIGNING_KEY builds it too).
step_notation() { infra_low gotools.sh install notation; }
step_otelcol() { infra_low otelcol.sh install; }
step_deploy_tools() { infra_low deploy-tools.sh install; }
step_release_tools() { infra_low release-tools.sh install; }
step_chromium() { infra_low browser.sh install; }
# The reverse proxies of the forward-auth tests (test/forward-auth/nginx.test.ts, caddy.test.ts).
step_nginx() { infra_low proxies.sh install nginx; }
step_caddy() { infra_low proxies.sh install caddy; }
# Hive Gateway, the GraphQL gateway of `make up` and of the federation tests: gateway/ is an npm
# project of its own (graphql 16; the workspaces use 17), installed from its lock file (prebuilt,
# seconds from npm's cache or another clone's copy: npm.sh), again only when the lock file changes.
step_hive_gateway() {
  local stamp="$ROOT/gateway/node_modules/.installed"
  [ -f "$stamp" ] && [ "$stamp" -nt "$ROOT/gateway/package-lock.json" ] && return 0
  infra npm.sh install gateway && touch "$stamp"
}

# The Makefile's, as steps beside the installs.
step_build() { make -C "$ROOT" --no-print-directory build; }
step_lint() { make -C "$ROOT" --no-print-directory lint; }

UP_STEPS=(redis kafka keycloak stripe-mock kube-apiserver etcd hive-gateway allocator)
TEST_STEPS=(kubectl helm grpcurl ghz notation otelcol deploy-tools release-tools chromium nginx caddy)

# install_steps STEP...: side by side, one line each on the screen.
install_steps() {
  own_dir "$CACHE/bin"
  say "installing: $* (tools' output: $LOGS/<step>.log; built once per machine into $SHARED)"
  local t0
  t0=$(date +%s%N)
  run_parallel "$@"
  say "installed in $(duration_since "$t0")"
}

# A component's start installs what it runs first (milliseconds once installed).
step_start_redis() { infra redis.sh start; }
step_start_kafka() { infra kafka.sh start; }
step_start_keycloak() { infra keycloak.sh start; }
step_start_stripe_mock() { infra stripe-mock.sh start; }
step_start_kube() { infra kube.sh start; }
# The install steps of `make up` when it starts the dependencies too: each one's start in place of
# its install, so Redis and Kafka run while the workspaces compile and Keycloak installs.
START_STEPS=(start-redis start-kafka start-keycloak start-stripe-mock start-kube hive-gateway allocator)

# start_all COMPONENT...: side by side; fails if any failed.
start_all() {
  run_parallel "${@/#/start-}" || die "could not start: see above (logs in $LOGS and $RUN)"
}

stop_all() {
  local pids=() status=0 i
  for i in "$@"; do
    infra "$i.sh" stop &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || status=1; done
  return $status
}

case "$action" in
  install)
    set=${1:-up}
    shift || true
    extras=() dependencies=("${UP_STEPS[@]}")
    for extra in "$@"; do
      case "$extra" in
        build | lint) extras+=("$extra") ;;
        start) dependencies=("${START_STEPS[@]}") ;;
        *) die "usage: $0 install [up|test] [build|lint] [start]" ;;
      esac
    done
    case "$set" in
      up) install_steps "${extras[@]}" "${dependencies[@]}" ;;
      test) install_steps "${extras[@]}" "${dependencies[@]}" "${TEST_STEPS[@]}" ;;
      *) die "usage: $0 install [up|test] [build|lint] [start]" ;;
    esac
    ;;
  up)
    components=("$@")
    [ ${#components[@]} -gt 0 ] || components=("${ALL[@]}")
    started=$(date +%s%N)
    # Each start installs what its component runs first (a build says so on the screen): after
    # `infra.sh install` (the Makefile's targets run it first) that takes milliseconds.
    start_all "${components[@]}"
    say "dependencies up in $(duration_since "$started")"
    grep -E "_(URL|BROKERS)=" "$ENV_FILE" | sed "s/^/[infra]   /" >&2
    ;;
  down)
    components=("$@")
    [ ${#components[@]} -gt 0 ] || components=("${ALL[@]}")
    stop_all "${components[@]}"
    ;;
  verify)
    status=0
    for stamp in $(find "$CACHE/verified" -type f 2> /dev/null); do
      entry=${stamp#"$CACHE/verified"}
      [ -d "$entry" ] || { rm -f "$stamp"; continue; }
      if entry_verify "$entry"; then
        log "ok       $entry"
      else
        log "DAMAGED  $entry (the next install builds it again)"
        rm -f "$stamp"
        status=1
      fi
    done
    exit $status
    ;;
  disk)
    # One line for a run's log: a run that fails on a full disk shows what filled it.
    sizes() { (cd "$1" 2> /dev/null && du -sm -- * 2> /dev/null | sort -rn); }
    summary() {
      local s total largest
      s=$(sizes "$1")
      total=$(awk '{ sum += $1 } END { printf "%.1f", sum / 1024 }' <<< "$s")
      largest=$(head -n 6 <<< "$s" | awk '{ printf "%s%s %.1f", sep, $2, $1 / 1024; sep = ", " }')
      printf '%s GB (%s)' "$total" "${largest:-empty}"
    }
    log "disk: $(df -BG --output=avail "$ROOT" | tail -n 1 | tr -d ' ')B free; .cache $(summary "$CACHE"); tool cache $SHARED $(summary "$SHARED")"
    ;;
  *)
    die "usage: $0 up|down [component...]|install [up|test] [build|lint] [start]|verify|disk"
    ;;
esac
