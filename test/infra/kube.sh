#!/usr/bin/env bash
# A real Kubernetes API server for tests: etcd + kube-apiserver (+ kubectl for server-side
# dry-run), built from the Go module proxy.
#
#   test/infra/kube.sh install   build once into .cache/bin: the apiserver, kubectl and the
#                                 commands of the single-node cluster (cold ~15 min on 2 cores)
#   test/infra/kube.sh start     etcd + kube-apiserver on free loopback ports (~4 s)
#   test/infra/kube.sh stop
#   test/infra/kube.sh run-apiserver DIR PORT ETCD_URL [ETCD_PREFIX]
#                                 one more apiserver in the foreground, on the same etcd under its
#                                 own prefix (tests that SIGKILL and restart an apiserver use it)
#
# `go install k8s.io/kubernetes/cmd/kube-apiserver@v1.35.4` is refused: the module's go.mod
# replaces every k8s.io/* staging module with ./staging/…, which the module zip does not carry
# as modules. So the module source is copied, its replaces are pointed at the published
# k8s.io/* v0.35.4 modules, and the commands are built from there. etcd has no buildable
# main package in a published module: a three-line main calls etcdmain.Main.
#
# Writes to .cache/run/infra.env: KUBE_APISERVER_BIN, KUBECTL_BIN, ETCD_BIN (install);
# KUBE_ETCD_URL, KUBE_APISERVER_URL, KUBECONFIG_PATH (an admin kubeconfig) (start).
# State (keys, token file, certificates, etcd data) under .cache/run/kube; stop removes the data.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUBE_VERSION=v1.35.4
ETCD_VERSION=v3.6.16
# Cluster DNS of the single-node cluster (test/infra/cluster.sh).
COREDNS_VERSION=v1.15.0
# The single-node cluster's NetworkPolicy engine (test/infra/cluster.sh, "Network policies").
NETWORK_POLICIES_VERSION=v0.8.0

BIN="$CACHE/bin"
GODIR="$CACHE/go"
SRC="$CACHE/kube"
# Every Kubernetes command the tests use: the apiserver and kubectl for the API tests, the rest
# for the single-node cluster (test/infra/cluster.sh). Built together, installed together.
KUBE_COMMANDS=(kube-apiserver kubectl kubelet kube-proxy kube-controller-manager kube-scheduler)
STATE="$RUN/kube"


build_kubernetes() {
  local dir src="$SRC/kubernetes-$KUBE_VERSION" staging=v0.${KUBE_VERSION#v1.} out t0=$SECONDS
  dir=$(module_dir k8s.io/kubernetes "$KUBE_VERSION")
  [ -n "$dir" ] && [ -f "$dir/go.mod" ] || die "could not download k8s.io/kubernetes@$KUBE_VERSION"
  rm -rf "$src" && mkdir -p "$SRC" && cp -r "$dir" "$src" && chmod -R u+w "$src"
  rm -rf "$src/vendor" "$src"/go.work*
  # Every `k8s.io/X => ./staging/src/k8s.io/X` becomes the published k8s.io/X at the matching
  # v0 version (kubernetes v1.N.P publishes its staging repos as v0.N.P).
  local mod
  for mod in $(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\1#p' "$src/go.mod"); do
    (cd "$src" && "$GO" mod edit -replace "$mod=$mod@$staging")
  done
  ! grep -q '=> ./staging' "$src/go.mod" || die "unhandled staging replace in $src/go.mod"
  local v=k8s.io/component-base/version
  local ldflags="-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(cut -d. -f2 <<< "$KUBE_VERSION") -X $v.gitTreeState=clean"
  out=$(mktemp -d "$SRC/out.XXXXXX")
  log "building ${KUBE_COMMANDS[*]} $KUBE_VERSION with $("$GO" env GOVERSION) (cold: ~15 min on 2 cores)"
  # One `go build` for every command: the packages they share are compiled once.
  (cd "$src" && "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" "${KUBE_COMMANDS[@]/#/./cmd/}") \
    || { rm -rf "$out"; die "building kubernetes $KUBE_VERSION failed"; }
  local cmd
  for cmd in "${KUBE_COMMANDS[@]}"; do mv -f "$out/$cmd" "$BIN/$cmd-$KUBE_VERSION"; done
  rm -rf "$out" "$src"
  log "built ${KUBE_COMMANDS[*]} $KUBE_VERSION in $((SECONDS - t0))s"
}

# build_required NAME VERSION MODULE PACKAGE [MAIN_GO]: builds PACKAGE into $BIN/NAME-VERSION in a
# throwaway module that requires MODULE@VERSION (PACKAGE ".": the main MAIN_GO holds).
build_required() {
  local name=$1 version=$2 module=$3 pkg=$4 src="$SRC/$1-$2" t0=$SECONDS
  rm -rf "$src" && mkdir -p "$src"
  [ -z "${5:-}" ] || printf '%s\n' "$5" > "$src/main.go"
  log "building $name $version"
  (cd "$src" && "$GO" mod init "local/$name" > /dev/null 2>&1 \
    && "$GO" get "$module@$version" > /dev/null \
    && "$GO" build -trimpath -ldflags "-s -w" -o "$BIN/$name-$version" "$pkg") \
    || die "building $name $version failed"
  rm -rf "$src"
  log "built $name $version in $((SECONDS - t0))s"
}

# etcd has no buildable main package in a published module: a three-line main calls etcdmain.Main.
build_etcd() {
  build_required etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 . "$(cat <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
)"
}

build_coredns() {
  build_required coredns "$COREDNS_VERSION" github.com/coredns/coredns github.com/coredns/coredns
}

# kube-network-policies (kubernetes-sigs): decides each new connection of a pod against the
# NetworkPolicies, in user space, from an NFQUEUE. Its module has no main package at the root:
# the command is sigs.k8s.io/kube-network-policies/cmd.
build_network_policies() {
  build_required kube-network-policies "$NETWORK_POLICIES_VERSION" sigs.k8s.io/kube-network-policies sigs.k8s.io/kube-network-policies/cmd
}

# link NAME VERSION KEY: .cache/bin/NAME -> NAME-VERSION, recorded in infra.env.
link() {
  local name=$1 version=$2 key=$3
  ln -sfn "$name-$version" "$BIN/$name.tmp.$$" && mv -Tf "$BIN/$name.tmp.$$" "$BIN/$name"
  env_set "$key" "$BIN/$name"
}

kube_built() {
  local cmd
  for cmd in "${KUBE_COMMANDS[@]}"; do [ -x "$BIN/$cmd-$KUBE_VERSION" ] || return 1; done
}

install() {
  mkdir -p "$BIN" "$GODIR"
  if ! kube_built || [ ! -x "$BIN/etcd-$ETCD_VERSION" ] || [ ! -x "$BIN/coredns-$COREDNS_VERSION" ] \
    || [ ! -x "$BIN/kube-network-policies-$NETWORK_POLICIES_VERSION" ]; then
    # One build at a time per checkout (start may be called by several scripts at once).
    exec 9> "$GODIR/.kube.lock"
    flock 9
    go_env -mod=mod
    kube_built || build_kubernetes
    [ -x "$BIN/etcd-$ETCD_VERSION" ] || build_etcd
    [ -x "$BIN/coredns-$COREDNS_VERSION" ] || build_coredns
    [ -x "$BIN/kube-network-policies-$NETWORK_POLICIES_VERSION" ] || build_network_policies
    local cmd
    for cmd in "${KUBE_COMMANDS[@]}"; do
      find "$BIN" -maxdepth 1 -type f -name "$cmd-v*" ! -name "$cmd-$KUBE_VERSION" -delete
    done
    find "$BIN" -maxdepth 1 -type f -name 'etcd-v*' ! -name "etcd-$ETCD_VERSION" -delete
    find "$BIN" -maxdepth 1 -type f -name 'coredns-v*' ! -name "coredns-$COREDNS_VERSION" -delete
    find "$BIN" -maxdepth 1 -type f -name 'kube-network-policies-v*' ! -name "kube-network-policies-$NETWORK_POLICIES_VERSION" -delete
    flock -u 9
    exec 9>&-
  fi
  link kube-apiserver "$KUBE_VERSION" KUBE_APISERVER_BIN
  link kubectl "$KUBE_VERSION" KUBECTL_BIN
  local cmd
  for cmd in kubelet kube-proxy kube-controller-manager kube-scheduler; do ln -sfn "$cmd-$KUBE_VERSION" "$BIN/$cmd"; done
  ln -sfn "coredns-$COREDNS_VERSION" "$BIN/coredns"
  ln -sfn "kube-network-policies-$NETWORK_POLICIES_VERSION" "$BIN/kube-network-policies"
  link etcd "$ETCD_VERSION" ETCD_BIN
}


# Material shared by every apiserver of this checkout: service-account key pair, admin token.
make_secrets() {
  mkdir -p "$STATE"
  [ -f "$STATE/sa.key" ] || openssl genrsa -out "$STATE/sa.key" 2048 2> /dev/null
  [ -f "$STATE/sa.pub" ] || openssl rsa -in "$STATE/sa.key" -pubout -out "$STATE/sa.pub" 2> /dev/null
  if [ ! -f "$STATE/tokens.csv" ]; then
    # An admin in system:masters; tests make ServiceAccounts and request tokens for them.
    printf '%s,kube-admin,kube-admin-uid,system:masters\n' "$(openssl rand -hex 24)" > "$STATE/tokens.csv.tmp"
    chmod 600 "$STATE/tokens.csv.tmp" && mv "$STATE/tokens.csv.tmp" "$STATE/tokens.csv"
  fi
}

# run-apiserver DIR PORT ETCD_URL [ETCD_PREFIX]: exec kube-apiserver in the foreground (tests start
# private ones this way and SIGKILL them). DIR holds its serving certificate (made on first start,
# kept across restarts); keys and tokens come from the shared state.
run_apiserver() {
  local dir=$1 port=$2 etcd=$3 prefix=${4:-/registry}
  mkdir -p "$dir/certs"
  exec "$BIN/kube-apiserver" \
    --etcd-servers "$etcd" --etcd-prefix "$prefix" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
    --cert-dir "$dir/certs" \
    --token-auth-file "$STATE/tokens.csv" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$STATE/sa.pub" \
    --service-account-signing-key-file "$STATE/sa.key" \
    --authorization-mode RBAC \
    --service-cluster-ip-range 10.96.0.0/16 \
    --endpoint-reconciler-type none \
    --profiling=false --v=1
}

# kubeconfig FILE URL CA_FILE: an admin kubeconfig for one apiserver.
write_kubeconfig() {
  local file=$1 url=$2 ca=$3 token
  token=$(cut -d, -f1 "$STATE/tokens.csv")
  umask 077
  cat > "$file.tmp" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $url
    certificate-authority: $ca
users:
- name: kube-admin
  user:
    token: $token
contexts:
- name: local
  context: {cluster: local, user: kube-admin}
current-context: local
YAML
  mv "$file.tmp" "$file"
}

wait_ready() {
  local token
  token=$(cut -d, -f1 "$STATE/tokens.csv")
  wait_until - "$2" http_ok -k -H "Authorization: Bearer $token" "$1/readyz" ||
    die "kube-apiserver did not become ready at $1 within ${2}s (log: $RUN/kube-apiserver.log)"
}

start() {
  install
  make_secrets
  if ! is_running kube-etcd; then
    local client peer
    client=$(free_port); peer=$(free_port)
    rm -rf "$STATE/etcd"
    start_bg kube-etcd "$BIN/etcd" --name local --data-dir "$STATE/etcd" \
      --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
      --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
      --initial-cluster "local=http://127.0.0.1:$peer" --log-level warn \
      --unsafe-no-fsync
    env_set KUBE_ETCD_URL "http://127.0.0.1:$client"
    wait_for_port kube-etcd "$client" 30
  fi
  if ! is_running kube-apiserver; then
    local port
    port=$(free_port)
    rm -rf "$STATE/apiserver"
    start_bg kube-apiserver bash "$0" run-apiserver "$STATE/apiserver" "$port" "$(env_get KUBE_ETCD_URL)"
    wait_ready "https://127.0.0.1:$port" 60
    write_kubeconfig "$STATE/kubeconfig" "https://127.0.0.1:$port" "$STATE/apiserver/certs/apiserver.crt"
    env_set KUBE_APISERVER_URL "https://127.0.0.1:$port"
    env_set KUBECONFIG_PATH "$STATE/kubeconfig"
  fi
  log "kube-apiserver $KUBE_VERSION at $(env_get KUBE_APISERVER_URL) (kubeconfig $(env_get KUBECONFIG_PATH))"
}

stop() {
  # Nothing is kept.
  kill_bg kube-apiserver kube-etcd
  rm -rf "$STATE/etcd" "$STATE/apiserver"
  env_unset KUBE_APISERVER_URL
  env_unset KUBECONFIG_PATH
  env_unset KUBE_ETCD_URL
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  run-apiserver) shift; make_secrets; run_apiserver "$@" ;;
  *) die "usage: $0 install|start|stop|run-apiserver DIR PORT ETCD_URL [PREFIX]" ;;
esac
