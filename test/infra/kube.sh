#!/usr/bin/env bash
# A real Kubernetes API server for tests: etcd + kube-apiserver, built from the Go module proxy;
# kubectl (the chart tests' server-side dry-runs, the single-node cluster) as a build of its own.
#
#   test/infra/kube.sh install [control|etcd|kubectl]
#                                 kube-apiserver (control) and etcd: what `make up` and the API
#                                 tests run (the default), built once per machine into the tool
#                                 cache; kubectl: what the tests run beside them (`make test`)
#   test/infra/kube.sh install-node [commands|coredns|network-policies]
#                                 the commands of the single-node cluster: kubectl, kubelet,
#                                 kube-proxy, kube-controller-manager, kube-scheduler (commands),
#                                 coredns, kube-network-policies (default: all; cluster.sh builds
#                                 the three side by side)
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
# Binaries in the machine-wide tool cache (lib.sh: cached), linked as .cache/bin/<command>.
# Writes to .cache/run/infra.env: KUBE_APISERVER_BIN, ETCD_BIN (install), KUBECTL_BIN (install kubectl);
# KUBE_ETCD_URL, KUBE_APISERVER_URL, KUBECONFIG_PATH (an admin kubeconfig) (start).
# State (keys, token file, certificates, etcd data) under .cache/run/kube; stop removes the data.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUBE_VERSION=v1.35.4
ETCD_VERSION=v3.6.16
# Cluster DNS of the single-node cluster (test/infra/cluster.sh).
COREDNS_VERSION=v1.15.0
# The plugins the cluster's Corefile uses (cluster.sh: start_dns), the only ones built in.
COREDNS_PLUGINS=(bind errors cache kubernetes)
# The single-node cluster's NetworkPolicy engine (test/infra/cluster.sh, "Network policies").
NETWORK_POLICIES_VERSION=v0.8.0

BIN="$CACHE/bin"
# The Kubernetes commands the tests use, in three builds: what `make up` runs (kube-apiserver
# alone: the longest build of a cold `make up`), kubectl (the tests': 66 s of CPU on top of the
# apiserver's 717 s, measured, 2m20s on a busy machine, off `make up`'s path), and what only the single-node cluster
# (test/infra/cluster.sh) runs. The later builds find the packages they share with the first
# compiled in Go's build cache.
KUBE_CONTROL=(kube-apiserver)
KUBE_NODE=(kubelet kube-proxy kube-controller-manager kube-scheduler)
STATE="$RUN/kube"

# build_kubernetes DIR COMMAND...: the commands, built into DIR from the module's source.
build_kubernetes() {
  local out=$1 dir src staging=v0.${KUBE_VERSION#v1.} mod
  shift
  export GOFLAGS="$GOFLAGS -mod=mod"
  dir=$(module_dir k8s.io/kubernetes "$KUBE_VERSION")
  [ -n "$dir" ] && [ -f "$dir/go.mod" ] || die "could not download k8s.io/kubernetes@$KUBE_VERSION"
  mkdir -p "$SHARED/go"
  src=$(mktemp -d "$SHARED/go/kubernetes-$KUBE_VERSION.XXXXXX")
  cp -r "$dir/." "$src" && chmod -R u+w "$src"
  rm -rf "$src/vendor" "$src"/go.work*
  # Every `k8s.io/X => ./staging/src/k8s.io/X` becomes the published k8s.io/X at the matching
  # v0 version (kubernetes v1.N.P publishes its staging repos as v0.N.P).
  for mod in $(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\1#p' "$src/go.mod"); do
    (cd "$src" && "$GO" mod edit -replace "$mod=$mod@$staging")
  done
  ! grep -q '=> ./staging' "$src/go.mod" || die "unhandled staging replace in $src/go.mod"
  local v=k8s.io/component-base/version
  local ldflags="-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(cut -d. -f2 <<< "$KUBE_VERSION") -X $v.gitTreeState=clean"
  log "go build $* $KUBE_VERSION with $("$GO" env GOVERSION)"
  # One `go build` for the commands: the packages they share are compiled once.
  (cd "$src" && "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" "${@/#/./cmd/}") \
    || { rm -rf "$src"; die "building kubernetes $KUBE_VERSION failed"; }
  rm -rf "$src"
}

# build_required DIR NAME VERSION MODULE PACKAGE [MAIN_GO]: builds PACKAGE into DIR/NAME in a
# throwaway module that requires MODULE@VERSION (PACKAGE ".": the main MAIN_GO holds).
build_required() {
  local out=$1 name=$2 version=$3 module=$4 pkg=$5 src
  export GOFLAGS="$GOFLAGS -mod=mod"
  mkdir -p "$SHARED/go"
  src=$(mktemp -d "$SHARED/go/$name-$version.XXXXXX")
  [ -z "${6:-}" ] || printf '%s\n' "$6" > "$src/main.go"
  log "go build $pkg ($module@$version) with $("$GO" env GOVERSION)"
  (cd "$src" && "$GO" mod init "local/$name" && "$GO" get "$module@$version" \
    && "$GO" build -trimpath -ldflags "-s -w" -o "$out/$name" "$pkg") \
    || { rm -rf "$src"; die "building $name $version failed"; }
  rm -rf "$src"
}

# etcd has no buildable main package in a published module: a three-line main calls etcdmain.Main.
ETCD_MAIN='package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }'

# kube_tool TOOL VERSION WHAT BUILD ARG...: the entry (lib.sh: go_tool) of a build function of this
# file, keyed by its arguments too; ENTRY is set.
kube_tool() {
  local tool=$1 version=$2 what=$3
  shift 3
  go_tool "$tool" "$version" "$* $(declare -f build_required)" "$what" "$@"
}

# link_commands ENTRY COMMAND...: .cache/bin/COMMAND -> ENTRY/COMMAND, each checked once to run.
link_commands() {
  local entry=$1 cmd
  shift
  own_dir "$BIN"
  for cmd in "$@"; do
    [ "$(readlink "$BIN/$cmd" 2> /dev/null)" = "$entry/$cmd" ] && continue
    [ -x "$entry/$cmd" ] || die "$entry has no $cmd"
    link_tool "$BIN/$cmd" "$entry/$cmd"
  done
}

# install: what `make up` and the API tests run.
install() { install_control; install_etcd; }

install_control() {
  kube_tool kubernetes-control "$KUBE_VERSION" "go build ${KUBE_CONTROL[*]} from the Go module proxy" build_kubernetes "${KUBE_CONTROL[@]}"
  if [ "$(readlink "$BIN/kube-apiserver" 2> /dev/null)" != "$ENTRY/kube-apiserver" ]; then
    # Without the version ldflags the server says v0.0.0 and helm refuses the chart's kubeVersion.
    "$ENTRY/kube-apiserver" --version | grep -qF "$KUBE_VERSION" || die "$ENTRY/kube-apiserver does not report $KUBE_VERSION"
  fi
  link_commands "$ENTRY" "${KUBE_CONTROL[@]}"
  env_set KUBE_APISERVER_BIN "$BIN/kube-apiserver"
}

# install_kubectl: after kube-apiserver (its packages compiled already, when built on this machine
# now: two `go build`s side by side would compile the shared ones twice).
install_kubectl() {
  install_control
  kube_tool kubectl "$KUBE_VERSION" "go build kubectl from the Go module proxy" build_kubernetes kubectl
  link_commands "$ENTRY" kubectl
  env_set KUBECTL_BIN "$BIN/kubectl"
}

install_etcd() {
  kube_tool etcd "$ETCD_VERSION" "go build etcd from the Go module proxy" build_required etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 . "$ETCD_MAIN"
  link_commands "$ENTRY" etcd
  env_set ETCD_BIN "$BIN/etcd"
}

# build_coredns DIR PLUGIN...: CoreDNS with those plugins alone, in the order of the release's
# plugin.cfg (the order they run in), chosen the way CoreDNS documents for a build of one's own: a
# main that imports the plugins and calls dnsserver.SetDirectives before coremain.Run. The full
# build also compiles every plugin the cluster never runs (the cloud DNS providers' SDKs: Route 53,
# Azure, Cloud DNS; etcd, dnstap, gRPC). A Corefile naming a plugin left out fails at start.
build_coredns() {
  local out=$1 dir name pkg imports="" names=""
  shift
  dir=$(module_dir github.com/coredns/coredns "$COREDNS_VERSION")
  [ -f "$dir/plugin.cfg" ] || die "could not download github.com/coredns/coredns@$COREDNS_VERSION"
  while IFS=: read -r name pkg; do
    [[ " $* " == *" $name "* ]] || continue
    [[ $pkg == */* ]] || pkg=github.com/coredns/coredns/plugin/$pkg
    imports+=$'\t_ "'"$pkg"$'"\n'
    names+="${names:+, }\"$name\""
  done < <(grep -v '^#' "$dir/plugin.cfg")
  [ "$(grep -o '"[^"]*"' <<< "$names" | wc -l)" = $# ] || die "not all of $* are plugins of coredns $COREDNS_VERSION's plugin.cfg (found: $names)"
  build_required "$out" coredns "$COREDNS_VERSION" github.com/coredns/coredns . "package main

import (
	\"log\"

	\"github.com/coredns/coredns/core/dnsserver\"
	\"github.com/coredns/coredns/coremain\"

$imports)

func main() {
	if err := dnsserver.SetDirectives([]string{$names}); err != nil {
		log.Fatal(err)
	}
	coremain.Run()
}"
}

# install-node: what only the single-node cluster runs.
install_node_commands() {
  install_kubectl
  kube_tool kubernetes-node "$KUBE_VERSION" "go build ${KUBE_NODE[*]} from the Go module proxy" build_kubernetes "${KUBE_NODE[@]}"
  link_commands "$ENTRY" "${KUBE_NODE[@]}"
}

install_coredns() {
  go_tool coredns "$COREDNS_VERSION" "${COREDNS_PLUGINS[*]} $(declare -f build_required)" \
    "go build of coredns with the plugins ${COREDNS_PLUGINS[*]}, from the Go module proxy" build_coredns "${COREDNS_PLUGINS[@]}"
  link_commands "$ENTRY" coredns
}

# kube-network-policies (kubernetes-sigs) decides each new connection of a pod against the
# NetworkPolicies, in user space, from an NFQUEUE; its module has no main package at the root:
# the command is .../cmd.
install_network_policies() {
  kube_tool kube-network-policies "$NETWORK_POLICIES_VERSION" "go build kube-network-policies from the Go module proxy" \
    build_required kube-network-policies "$NETWORK_POLICIES_VERSION" sigs.k8s.io/kube-network-policies sigs.k8s.io/kube-network-policies/cmd
  link_commands "$ENTRY" kube-network-policies
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
    read -r client peer < <(free_port 2)
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
  install)
    case "${2:-}" in
      '') install ;;
      control) install_control ;;
      etcd) install_etcd ;;
      kubectl) install_kubectl ;;
      *) die "usage: $0 install [control|etcd|kubectl]" ;;
    esac
    ;;
  install-node)
    case "${2:-all}" in
      commands) install_node_commands ;;
      coredns) install_coredns ;;
      network-policies) install_network_policies ;;
      all) install_node_commands; install_coredns; install_network_policies ;;
      *) die "usage: $0 install-node [commands|coredns|network-policies]" ;;
    esac
    ;;
  start) start ;;
  stop) stop ;;
  run-apiserver) shift; make_secrets; run_apiserver "$@" ;;
  *) die "usage: $0 install|install-node|start|stop|run-apiserver DIR PORT ETCD_URL [PREFIX]" ;;
esac
