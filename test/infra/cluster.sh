#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, for the end-to-end suite (test/cluster)
# and for `make cluster-up` / `make cluster-down`:
#
#   test/infra/cluster.sh install    build or reuse everything (kube binaries, images; the machine-wide
#                                    tool cache keeps them); starts nothing
#   test/infra/cluster.sh up         etcd, kube-apiserver, controller-manager, scheduler, containerd,
#                                    kubelet, kube-proxy, CoreDNS; the images imported; the node Ready
#   test/infra/cluster.sh down       stop all of it and restore the machine as it was before `up`
#   test/infra/cluster.sh run CMD…   up, run CMD, down, also when CMD fails or is interrupted
#   test/infra/cluster.sh snapshot   the machine state the cluster changes (compared by the suite)
#   test/infra/cluster.sh import ARCHIVE…  docker archives into the running node's containerd
#
# Everything listens on a bridge this script makes (BRIDGE, 10.244.0.1/24): the apiserver, the
# kubelet, the node IP and the pods (CNI bridge + host-local). Pods cannot send anything off the
# bridge (a FORWARD rule drops it); a dependency listening on this machine's loopback (Keycloak and
# stripe-mock of test/infra/infra.sh, the suite's own Kafka, Redis and fixtures) is made reachable
# at 10.244.0.1:<same port> by DNAT to 127.0.0.1 (`expose PORT`), from pods and from this machine
# alike, so that pods and the suite call it by one URL (Keycloak's issuer is the URL it was asked on).
#
# The kubelet and kube-proxy change machine-wide settings: sysctls, iptables chains (KUBE-*, and
# CNI-* of the bridge plugin), mounts under the kubelet and containerd folders, network namespaces
# (cni-*), cgroups (kubepods). `up` records the sysctls first; `down` restores them and removes the
# rest, and runs on every exit path of `up` and `run` (trap EXIT INT TERM). Only one cluster runs on
# a machine: a machine-wide lock (LOCK) makes a second `up` fail at once, naming the holder.
#
# NetworkPolicies are enforced by kube-network-policies (kubernetes-sigs, built by kube.sh), a
# process of the node like CoreDNS: it decides every new connection of a pod in user space, from
# an NFQUEUE, against the NetworkPolicies of the cluster. Its own nftables rules need the kernel's
# nftables queue expression (CONFIG_NFT_QUEUE), which this machine's kernel lacks: `up` sends the
# same connections to its queue with iptables' NFQUEUE target instead (SPK-NETPOL, see
# network_policies()). Without the engine reading the queue, those connections are dropped.
#
# Writes to .cache/run/infra.env: CLUSTER_KUBECONFIG, CLUSTER_NODE_IP, CLUSTER_APISERVER_URL.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN="$CACHE/bin"
# Physical paths: /proc/self/mountinfo names mounts by them, and .cache may be a symlink (a
# worktree sharing another checkout's), which `down` would otherwise not recognise under its mounts.
CL=$(realpath -m "$RUN/cluster")
# The content store survives `down`: images are imported once.
CONTAINERD_ROOT=$(realpath -m "$CACHE/cluster/containerd")
LOCK=/run/lock/subscription-platform-cluster.lock
BRIDGE=spk0
NODE_IP=10.244.0.1
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
NODE_NAME=sp-node
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.ipv4.conf.all.route_localnet
  net.ipv6.conf.default.disable_ipv6)
CLUSTER_DNS=10.96.0.10
CTR_SOCK="$CL/containerd/containerd.sock"
# The NFQUEUE the policy engine reads (its default).
NETPOL_QUEUE=100

timing() { log "stage $1: $(($SECONDS - $2))s"; }

# The install steps (run_parallel runs step_<name>): the Debian packages, the node's commands
# (CPU-bound Go builds) and the images (much of it waiting on package downloads), side by side.
CLUSTER_DEBS=(containerd runc containernetworking-plugins iptables conntrack buildah mmdebstrap gcc libc6-dev)
step_cluster_debs() { apt_install "${CLUSTER_DEBS[@]}"; }
step_kube_node() { bash "$ROOT/test/infra/kube.sh" install && bash "$ROOT/test/infra/kube.sh" install-node commands; }
step_coredns() { bash "$ROOT/test/infra/kube.sh" install-node coredns; }
step_network_policies() { bash "$ROOT/test/infra/kube.sh" install-node network-policies; }
step_images() { bash "$ROOT/test/infra/images.sh" all; }

install() {
  local t0 lock
  # One install at a time in this clone (the cluster suite waits here for the one `make test`
  # started in the background): the steps' logs have fixed names.
  mkdir -p "$LOGS"
  exec {lock}> "$LOGS/.cluster-install.lock"
  flock "$lock"
  t0=$(date +%s%N)
  say "installing the cluster: ${CLUSTER_DEBS[*]} (Debian), the node's commands, the images (tools' output: $LOGS/<step>.log)"
  run_parallel cluster-debs kube-node coredns network-policies images
  # The last Go builds of `make test`: Go's caches serve nothing that runs now.
  trim_go_caches
  say "cluster installed in $(duration_since "$t0")"
}

# ---- machine state --------------------------------------------------------------------------

# What `up` changes, in a stable text form. Counters and packet numbers are left out; only the
# cluster's own iptables chains, links, mounts, netns and cgroups are listed, so that other
# developers' work on the same machine does not show up.
snapshot() {
  local s
  for s in "${SYSCTLS[@]}"; do printf 'sysctl %s=%s\n' "$s" "$(sysctl -n "$s" 2> /dev/null || echo absent)"; done
  local cmd
  for cmd in iptables-save ip6tables-save; do
    command -v "$cmd" > /dev/null || continue
    "$cmd" 2> /dev/null | grep -E 'KUBE-|CNI-|SPK-|cni0|'"$BRIDGE"'|10\.244\.' | sed -e 's/\[[0-9]*:[0-9]*\]//' | sed "s/^/$cmd /" || true
  done
  ip -o link show 2> /dev/null | awk -F': ' '{print $2}' | grep -E "^($BRIDGE|cni0|veth|kube-)" | sed 's/@.*//; s/^/link /' | sort || true
  awk '{print $5}' /proc/self/mountinfo | grep -E "^($CL|$CONTAINERD_ROOT|/var/lib/kubelet|/run/containerd|/var/run/netns|/run/netns)" | sed 's/^/mount /' | sort || true
  ls /var/run/netns 2> /dev/null | sed 's/^/netns /' | sort || true
  ls -d /sys/fs/cgroup/*/kubepods* 2> /dev/null | sed 's/^/cgroup /' | sort || true
}

record_machine() {
  mkdir -p "$CL"
  [ -f "$CL/machine-before" ] && return 0 # an earlier interrupted `up`: its record is the truth
  local s
  for s in "${SYSCTLS[@]}"; do printf '%s=%s\n' "$s" "$(sysctl -n "$s" 2> /dev/null || echo absent)"; done > "$CL/sysctls.tmp"
  mv "$CL/sysctls.tmp" "$CL/sysctls"
  snapshot > "$CL/machine-before"
}

# Rules of a table without the cluster's chains and the jumps to them; iptables-restore replaces
# the table at once, so rules others added meanwhile stay.
clean_iptables() {
  local save=$1 restore=$2 table rules
  command -v "$save" > /dev/null || return 0
  for table in nat filter mangle raw; do
    # Read whole (not `| grep -q`: under pipefail, grep's early exit fails the pipeline).
    rules=$("$save" -t "$table" 2> /dev/null) || continue
    grep -qE 'KUBE-|CNI-|SPK-' <<< "$rules" || continue
    grep -vE 'KUBE-|CNI-|SPK-' <<< "$rules" | "$restore" -T "$table" || log "could not clean the $table table of $save"
  done
}

restore_machine() {
  clean_iptables iptables-save iptables-restore
  clean_iptables ip6tables-save ip6tables-restore
  local name
  for name in $(ls /var/run/netns 2> /dev/null | grep '^cni-' || true); do
    grep -qx "netns $name" "$CL/machine-before" 2> /dev/null || ip netns delete "$name" 2> /dev/null || { umount -l "/var/run/netns/$name" 2> /dev/null; rm -f "/var/run/netns/$name"; }
  done
  # Deepest first, lazily: a container's overlay under a pod's volume under the kubelet.
  local mount
  for mount in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($CL|$CONTAINERD_ROOT|/var/lib/kubelet|/run/containerd)" | sort -r); do
    umount -l "$mount" 2> /dev/null || true
  done
  for name in $(ip -o link show 2> /dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^veth' || true); do
    [ "$(basename "$(readlink -f "/sys/class/net/$name/master" 2> /dev/null)")" = "$BRIDGE" ] && ip link delete "$name" 2> /dev/null || true
  done
  ip link delete "$BRIDGE" 2> /dev/null || true
  for name in $(ls -d /sys/fs/cgroup/*/kubepods* 2> /dev/null || true); do
    find "$name" -depth -type d -exec rmdir {} \; 2> /dev/null || true
  done
  if [ -f "$CL/sysctls" ]; then
    local line
    while IFS= read -r line; do
      [ "${line#*=}" = absent ] || sysctl -qw "$line" > /dev/null 2>&1 || log "could not restore $line"
    done < "$CL/sysctls"
  fi
  [ -d /var/run/netns ] && [ -z "$(ls -A /var/run/netns)" ] && ! grep -q '^netns ' "$CL/machine-before" 2> /dev/null \
    && [ ! -f "$CL/had-netns-dir" ] && rmdir /var/run/netns 2> /dev/null || true
  rm -f "$CL/sysctls" "$CL/machine-before"
}

# ---- processes ------------------------------------------------------------------------------

kill_containers() {
  [ -S "$CTR_SOCK" ] || return 0
  local task
  for task in $(ctr --address "$CTR_SOCK" -n k8s.io tasks ls -q 2> /dev/null || true); do
    ctr --address "$CTR_SOCK" -n k8s.io tasks kill -a -s SIGKILL "$task" > /dev/null 2>&1 || true
  done
  sleep 0.5
  for task in $(ctr --address "$CTR_SOCK" -n k8s.io tasks ls -q 2> /dev/null || true); do
    ctr --address "$CTR_SOCK" -n k8s.io tasks delete -f "$task" > /dev/null 2>&1 || true
  done
  for task in $(ctr --address "$CTR_SOCK" -n k8s.io containers ls -q 2> /dev/null || true); do
    ctr --address "$CTR_SOCK" -n k8s.io containers delete "$task" > /dev/null 2>&1 || true
  done
}

# ours: the cluster lock is free, or held by this checkout's cluster (its processes inherit it).
ours() {
  local owner
  exec 7> "$LOCK"
  flock -n 7 && { flock -u 7; return 0; }
  owner=$(cat "$LOCK.owner" 2> /dev/null || true)
  [ "${owner%% (pid*}" = "$ROOT" ]
}

down() {
  local t0=$SECONDS name pid
  mkdir -p "$(dirname "$LOCK")"
  ours || die "the cluster that runs is not this checkout's ($(cat "$LOCK.owner" 2> /dev/null)): not touching it"
  # The kubelet first, so it does not restart what is killed next.
  for name in kubelet kube-proxy; do stop_bg "cluster-$name" 10; done
  kill_containers
  for name in containerd coredns kube-network-policies kube-scheduler kube-controller-manager; do stop_bg "cluster-$name" 10; done
  kill_bg cluster-kube-apiserver cluster-etcd
  # Shims left by a containerd that died: they name its socket on their command line.
  for pid in $(pgrep -f "containerd-shim.*-address $CTR_SOCK" || true); do kill -KILL "$pid" 2> /dev/null || true; done
  restore_machine
  # Keys and tokens are made anew by every `up`.
  rm -rf "$CL/containerd" "$CL/etcd" "$CL/kubelet" "$CL/cni" "$CL/pki" "$CL/apiserver" "$CL/netpol-sa" "$CL"/*.kubeconfig
  env_unset CLUSTER_KUBECONFIG
  env_unset CLUSTER_NODE_IP
  env_unset CLUSTER_APISERVER_URL
  rm -f "$LOCK.owner"
  timing "cluster down" "$t0"
}

# ---- up ---------------------------------------------------------------------------------------

lock() {
  mkdir -p "$(dirname "$LOCK")"
  exec 8> "$LOCK"
  if ! flock -n 8; then
    die "another cluster runs on this machine ($(cat "$LOCK.owner" 2> /dev/null || echo 'unknown owner')); stop it with its 'cluster.sh down' first"
  fi
  printf '%s (pid %s)\n' "$ROOT" "$$" > "$LOCK.owner"
}

secrets() {
  mkdir -p "$CL/pki"
  local pki="$CL/pki"
  [ -f "$pki/sa.key" ] || openssl genrsa -out "$pki/sa.key" 2048 2> /dev/null
  [ -f "$pki/sa.pub" ] || openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2> /dev/null
  if [ ! -f "$pki/tokens.csv" ]; then
    # One static token per identity, each in the groups the default RBAC and the Node
    # authorizer expect.
    {
      printf '%s,kube-admin,kube-admin-uid,system:masters\n' "$(openssl rand -hex 24)"
      printf '%s,system:node:%s,kubelet-uid,system:nodes\n' "$(openssl rand -hex 24)" "$NODE_NAME"
      printf '%s,system:kube-proxy,kube-proxy-uid\n' "$(openssl rand -hex 24)"
      printf '%s,system:kube-controller-manager,kcm-uid\n' "$(openssl rand -hex 24)"
      printf '%s,system:kube-scheduler,scheduler-uid\n' "$(openssl rand -hex 24)"
      printf '%s,system:coredns,coredns-uid\n' "$(openssl rand -hex 24)"
      printf '%s,system:kube-network-policies,knp-uid\n' "$(openssl rand -hex 24)"
    } > "$pki/tokens.csv.tmp"
    chmod 600 "$pki/tokens.csv.tmp" && mv "$pki/tokens.csv.tmp" "$pki/tokens.csv"
  fi
}

# kubeconfig NAME USER: a kubeconfig for one identity of tokens.csv.
kubeconfig() {
  local file="$CL/$1.kubeconfig" token
  token=$(awk -F, -v u="$2" '$2 == u {print $1}' "$CL/pki/tokens.csv")
  (
    umask 077
    cat > "$file" << YAML
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://$NODE_IP:$APISERVER_PORT
    certificate-authority: $CL/apiserver/apiserver.crt
users:
- name: $2
  user:
    token: $token
contexts:
- name: local
  context: {cluster: local, user: "$2"}
current-context: local
YAML
  )
}

bridge() {
  # The cluster is IPv4 only. Without this, the bridge and every Pod's veth would get an IPv6
  # link-local address as they come and go: an address change of the machine, which Chromium takes
  # as a network change, failing every connection it is opening with ERR_NETWORK_CHANGED (the
  # browser tests beside the cluster tier; reproduced with a veth made during a slow TLS handshake:
  # 4 of 4 navigations failed, none without the address). Interfaces made before keep theirs;
  # `down` restores the setting (SYSCTLS).
  sysctl -qw net.ipv6.conf.default.disable_ipv6=1
  ip link show "$BRIDGE" > /dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr replace "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  [ -d /var/run/netns ] && touch "$CL/had-netns-dir"
  # Pods talk to the bridge and to each other, never past it.
  iptables -N SPK-FORWARD 2> /dev/null || iptables -F SPK-FORWARD
  iptables -A SPK-FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
  iptables -A SPK-FORWARD -i "$BRIDGE" -j DROP
  iptables -A SPK-FORWARD -o "$BRIDGE" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
  iptables -I FORWARD 1 -j SPK-FORWARD
  iptables -t nat -N SPK-EXPOSE 2> /dev/null || iptables -t nat -F SPK-EXPOSE
  iptables -t nat -I PREROUTING 1 -i "$BRIDGE" -d "$NODE_IP" -j SPK-EXPOSE
  iptables -t nat -N SPK-EXPOSE-LOCAL 2> /dev/null || iptables -t nat -F SPK-EXPOSE-LOCAL
  iptables -t nat -I OUTPUT 1 -d "$NODE_IP" -j SPK-EXPOSE-LOCAL
  # DNAT to 127.0.0.1 is routed only with route_localnet on the receiving interface.
  sysctl -qw "net.ipv4.conf.$BRIDGE.route_localnet=1"
  sysctl -qw net.bridge.bridge-nf-call-iptables=1 > /dev/null 2>&1 || true
}

# expose PORT...: a loopback port of this machine reachable at NODE_IP:PORT, from pods (packets
# arriving on the bridge) and from this machine (packets it sends).
expose() {
  local port chain
  ip link show "$BRIDGE" > /dev/null 2>&1 || die "no cluster runs: 'cluster.sh up' first"
  for port in "$@"; do
    [[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "not a port: '$port'"
    for chain in SPK-EXPOSE SPK-EXPOSE-LOCAL; do
      iptables -t nat -C "$chain" -p tcp --dport "$port" -j DNAT --to-destination "127.0.0.1:$port" 2> /dev/null \
        || iptables -t nat -A "$chain" -p tcp --dport "$port" -j DNAT --to-destination "127.0.0.1:$port"
    done
  done
}

containerd_config() {
  mkdir -p "$CL/containerd" "$CL/cni" "$CONTAINERD_ROOT"
  cat > "$CL/cni/10-spk.conflist" << JSON
{
  "cniVersion": "1.0.0",
  "name": "spk",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$NODE_IP" }]],
                "routes": [{ "dst": "0.0.0.0/0" }], "dataDir": "$CL/cni/ipam" }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
  cat > "$CL/containerd/config.toml" << TOML
version = 2
root = "$CONTAINERD_ROOT"
state = "$CL/containerd/state"
[grpc]
  address = "$CTR_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:static-1"
  # Root here lacks CAP_SYS_RESOURCE: without this runc fails with "can't get final child's PID".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CL/cni"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CACHE/cluster/opt"
TOML
}

kubelet_config() {
  mkdir -p "$CL/kubelet"
  cat > "$CL/kubelet/config.yaml" << YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
# This machine is cgroup v1, which the kubelet refuses unless told otherwise.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
# The apiserver reaches the kubelet (logs, exec, port-forward) without a client certificate; the
# kubelet listens on the bridge address only.
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
clusterDNS: [$CLUSTER_DNS]
podCIDR: $POD_CIDR
resolvConf: /etc/resolv.conf
containerRuntimeEndpoint: unix://$CTR_SOCK
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
serializeImagePulls: false
staticPodPath: ""
YAML
}

start_control_plane() {
  local t0=$SECONDS etcd_client etcd_peer
  read -r etcd_client etcd_peer < <(free_port 2)
  rm -rf "$CL/etcd"
  start_bg cluster-etcd "$BIN/etcd" --name local --data-dir "$CL/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "local=http://127.0.0.1:$etcd_peer" --log-level warn --unsafe-no-fsync
  await_start cluster-etcd 30 "open port $etcd_client" port_open "$etcd_client"
  mkdir -p "$CL/apiserver"
  start_bg cluster-kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_client" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
    --cert-dir "$CL/apiserver" \
    --token-auth-file "$CL/pki/tokens.csv" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$CL/pki/sa.pub" \
    --service-account-signing-key-file "$CL/pki/sa.key" \
    --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --kubelet-preferred-address-types InternalIP \
    --allow-privileged=false --profiling=false --v=1
  local token
  token=$(awk -F, '$2 == "kube-admin" {print $1}' "$CL/pki/tokens.csv")
  await_start cluster-kube-apiserver 60 "get ready" http_ok -k -H "Authorization: Bearer $token" "https://$NODE_IP:$APISERVER_PORT/readyz"
  kubeconfig admin kube-admin
  kubeconfig kubelet "system:node:$NODE_NAME"
  kubeconfig kube-proxy system:kube-proxy
  kubeconfig controller-manager system:kube-controller-manager
  kubeconfig scheduler system:kube-scheduler
  start_bg cluster-kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$CL/controller-manager.kubeconfig" --authentication-skip-lookup \
    --bind-address 127.0.0.1 --secure-port 0 \
    --use-service-account-credentials \
    --service-account-private-key-file "$CL/pki/sa.key" --root-ca-file "$CL/apiserver/apiserver.crt" \
    --service-cluster-ip-range "$SERVICE_CIDR" --cluster-cidr "$POD_CIDR" --allocate-node-cidrs=false \
    --controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller' \
    --leader-elect=false --v=1
  start_bg cluster-kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$CL/scheduler.kubeconfig" --authentication-kubeconfig "$CL/scheduler.kubeconfig" \
    --authorization-kubeconfig "$CL/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false --v=1
  timing "control plane" "$t0"
}

import_images() {
  local t0=$SECONDS line name file
  while IFS= read -r line; do
    name=${line%%=*} file=${line#*=}
    # Archives only (not the service → reference lines), not the base image, not pruned ones.
    [[ $file == /*.tar ]] && [[ $name != node:* ]] && [ -f "$file" ] || continue
    [ "$(ctr --address "$CTR_SOCK" -n k8s.io images ls -q "name==$name" 2> /dev/null)" = "$name" ] && continue
    ctr --address "$CTR_SOCK" -n k8s.io images import --no-unpack=false "$file" > /dev/null || die "importing $file failed"
  done < "$CACHE/images/images.env"
  prune_images
  timing "images imported" "$t0"
}

# import ARCHIVE...: docker archives (images another build made: the previous release's, for the
# upgrade test) into the running node's containerd, under the names they carry. The next `up`
# prunes them with the other service images that are not this clone's current ones.
import_archives() {
  local file
  [ -S "$CTR_SOCK" ] || die "no cluster runs here (no $CTR_SOCK): cluster.sh up first"
  for file in "$@"; do
    ctr --address "$CTR_SOCK" -n k8s.io images import --no-unpack=false "$file" > /dev/null || die "importing $file failed"
  done
}

# The content store survives `down`, so each source change would leave its five service images
# there for good (10 GB on one developer's machine): every reference (the name, and the sha256:
# one the CRI adds) to a service image that is not the current one goes, and containerd's garbage
# collection frees its content and snapshots. Runs before the kubelet, when no container runs.
prune_images() {
  local ref digest listing current
  local -A keep=() stale=()
  local refs=()
  current=$(sed -n 's#^subscription-platform/[^=]*=##p' "$CACHE/images/images.env")
  listing=$(ctr --address "$CTR_SOCK" -n k8s.io images ls | awk 'NR > 1 { print $1, $3 }')
  while read -r ref digest; do
    if grep -qxF "$ref" <<< "$current"; then keep[$digest]=1; fi
  done <<< "$listing"
  while read -r ref digest; do
    if [[ $ref == localhost/subscription-platform/* ]] && [ -z "${keep[$digest]:-}" ]; then stale[$digest]=1; fi
  done <<< "$listing"
  while read -r ref digest; do
    if [ -n "${stale[$digest]:-}" ]; then refs+=("$ref"); fi
  done <<< "$listing"
  [ "${#refs[@]}" -gt 0 ] || return 0
  ctr --address "$CTR_SOCK" -n k8s.io images rm --sync "${refs[@]}" > /dev/null || die "removing earlier images failed"
  log "removed ${#stale[@]} earlier service images (${#refs[@]} references)"
}

# The node reports Ready.
node_ready() {
  [ "$("$BIN/kubectl" --kubeconfig "$CL/admin.kubeconfig" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

start_node() {
  local t0=$SECONDS
  containerd_config
  start_bg cluster-containerd containerd --config "$CL/containerd/config.toml"
  await_start cluster-containerd 30 "open its socket" test -S "$CTR_SOCK"
  import_images
  kubelet_config
  start_bg cluster-kubelet "$BIN/kubelet" --config "$CL/kubelet/config.yaml" \
    --kubeconfig "$CL/kubelet.kubeconfig" --root-dir "$CL/kubelet/root" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
  local proxy_ports
  read -ra proxy_ports < <(free_port 2)
  start_bg cluster-kube-proxy "$BIN/kube-proxy" --kubeconfig "$CL/kube-proxy.kubeconfig" \
    --hostname-override "$NODE_NAME" --bind-address "$NODE_IP" --cluster-cidr "$POD_CIDR" \
    --proxy-mode iptables --masquerade-all --metrics-bind-address "127.0.0.1:${proxy_ports[0]}" --healthz-bind-address "127.0.0.1:${proxy_ports[1]}" \
    --conntrack-max-per-core 0 --v=1
  await_start cluster-kubelet 60 "get node $NODE_NAME Ready" node_ready
  timing "node Ready" "$t0"
}

# list_watch_role USER GROUP:[RESOURCES]...: a ClusterRole named USER that may list and watch those
# resources, bound to that user of tokens.csv (the node's own processes: CoreDNS, the policy engine).
list_watch_role() {
  local user=$1 rule rules=""
  shift
  for rule in "$@"; do
    rules+="- {apiGroups: [${rule%%:*}], resources: ${rule#*:}, verbs: [list, watch]}"$'\n'
  done
  "$BIN/kubectl" --kubeconfig "$CL/admin.kubeconfig" apply -f - > /dev/null << YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "$user"}
rules:
$rules---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "$user"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "$user"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$user"}]
YAML
}

# Cluster DNS: CoreDNS as a process of the node on the bridge address, behind the kube-dns Service
# (CLUSTER_DNS) through an EndpointSlice. It answers cluster.local only: nothing is forwarded
# off the machine.
start_dns() {
  local t0=$SECONDS kc="$CL/admin.kubeconfig"
  kubeconfig coredns system:coredns
  # Only the plugins kube.sh builds in (COREDNS_PLUGINS there).
  cat > "$CL/Corefile" << COREFILE
.:53 {
  bind $NODE_IP
  errors
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig $CL/coredns.kubeconfig local
    pods insecure
  }
  cache 5
}
COREFILE
  list_watch_role system:coredns '"":[endpoints, services, pods, namespaces]' 'discovery.k8s.io:[endpointslices]'
  "$BIN/kubectl" --kubeconfig "$kc" apply -f - > /dev/null << YAML
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $CLUSTER_DNS
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: kube-dns-node, namespace: kube-system, labels: {kubernetes.io/service-name: kube-dns}}
addressType: IPv4
endpoints: [{addresses: ["$NODE_IP"], conditions: {ready: true}}]
ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
YAML
  start_bg cluster-coredns "$BIN/coredns" -conf "$CL/Corefile"
  await_start cluster-coredns 20 "listen on $NODE_IP:53" port_open 53 "$NODE_IP"
  timing "cluster DNS" "$t0"
}

# NetworkPolicy enforcement: kube-network-policies as a process of the node, then the iptables rules
# that hand it every new connection of a pod (the equivalent of the nftables rules it would write).
# It reads its credentials the in-cluster way (/var/run/secrets/kubernetes.io/serviceaccount and
# KUBERNETES_SERVICE_*): they are laid out on a tmpfs over /run in a mount namespace of its own,
# so nothing is written to the machine's /run.
start_network_policies() {
  local t0=$SECONDS sa="$CL/netpol-sa"
  list_watch_role system:kube-network-policies '"":[pods, namespaces, nodes]' 'networking.k8s.io:[networkpolicies]'
  mkdir -p "$sa"
  (umask 077 && awk -F, '$2 == "system:kube-network-policies" {printf "%s", $1}' "$CL/pki/tokens.csv" > "$sa/token")
  cp "$CL/apiserver/apiserver.crt" "$sa/ca.crt"
  # NRI off: pod addresses come from the apiserver (the containerd here runs without NRI).
  start_bg cluster-kube-network-policies env KUBERNETES_SERVICE_HOST="$NODE_IP" KUBERNETES_SERVICE_PORT="$APISERVER_PORT" \
    unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io \
      && cp -r "$1" /run/secrets/kubernetes.io/serviceaccount && shift && exec "$@"' sh "$sa" \
    "$BIN/kube-network-policies" --hostname-override "$NODE_NAME" --disable-nri --nfqueue-id "$NETPOL_QUEUE" \
    --metrics-bind-address "127.0.0.1:$(free_port)" --v=1
  # It reads the queue once its informers have synced, right after it tried its nftables rules.
  await_start cluster-kube-network-policies 60 "sync its rules" grep -q 'Syncing nftables rules' "$RUN/cluster-kube-network-policies.log"
  network_policies
  timing "network policies" "$t0"
}

# The connections the engine decides: a new connection but DNS over UDP (as its own rules: DNS
# over UDP is let through), seen where NetworkPolicy sees it,
#  - to a pod, after Service translation (POSTROUTING, out on the bridge), not from the node's
#    own processes (the kubelet's probes; its rules skip uid 0 the same way);
#  - from a pod to the node's address, before the DNAT to loopback of `expose` (PREROUTING): the
#    dependencies outside the cluster, the apiserver;
#  - from a pod to a Service whose endpoint is the node (INPUT, DNAT'ed): the apiserver's Service.
network_policies() {
  local table="iptables -t mangle"
  $table -N SPK-NETPOL 2> /dev/null || $table -F SPK-NETPOL
  $table -A SPK-NETPOL -m conntrack ! --ctstate NEW -j RETURN
  $table -A SPK-NETPOL -p udp --dport 53 -j RETURN
  $table -A SPK-NETPOL -j NFQUEUE --queue-num "$NETPOL_QUEUE"
  $table -N SPK-NETPOL-TO-POD 2> /dev/null || $table -F SPK-NETPOL-TO-POD
  $table -A SPK-NETPOL-TO-POD -m owner --uid-owner 0 -j RETURN
  $table -A SPK-NETPOL-TO-POD -j SPK-NETPOL
  $table -I POSTROUTING 1 -o "$BRIDGE" -d "$POD_CIDR" -j SPK-NETPOL-TO-POD
  $table -I PREROUTING 1 -i "$BRIDGE" -s "$POD_CIDR" -d "$NODE_IP" -j SPK-NETPOL
  $table -I INPUT 1 -i "$BRIDGE" -s "$POD_CIDR" -d "$NODE_IP" -m conntrack --ctstate DNAT -j SPK-NETPOL
}

# `up` starts what `install` built; building is `install`'s (make cluster-up and make test run it first).
require_installed() {
  local cmd
  for cmd in etcd kube-apiserver kubectl kubelet kube-proxy kube-controller-manager kube-scheduler coredns kube-network-policies; do
    [ -x "$BIN/$cmd" ] || die "$BIN/$cmd is missing: run 'bash test/infra/cluster.sh install' (or make cluster-install) first"
  done
  for cmd in containerd runc iptables conntrack; do
    command -v "$cmd" > /dev/null || die "$cmd is missing: run 'bash test/infra/cluster.sh install' first"
  done
  grep -q '^localhost/pause:' "$CACHE/images/images.env" 2> /dev/null || die "no images: run 'bash test/infra/images.sh all' (or cluster.sh install) first"
}

up() {
  local t0=$SECONDS
  require_installed
  lock
  # From here on, any way out but success puts the machine back.
  trap 'status=$?; trap - EXIT INT TERM; if [ "${UP_DONE:-}" != 1 ]; then log "up interrupted or failed: restoring the machine"; down; fi; exit $status' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  record_machine
  secrets
  bridge
  APISERVER_PORT=6443
  start_control_plane
  start_node
  start_dns
  start_network_policies
  env_set CLUSTER_KUBECONFIG "$CL/admin.kubeconfig"
  env_set CLUSTER_NODE_IP "$NODE_IP"
  env_set CLUSTER_APISERVER_URL "https://$NODE_IP:$APISERVER_PORT"
  UP_DONE=1
  trap - EXIT INT TERM
  timing "cluster up" "$t0"
  log "kubectl --kubeconfig $CL/admin.kubeconfig get nodes"
}

# run CMD...: up, CMD, down; down also on failure, Ctrl-C or SIGTERM.
run() {
  local status=0
  trap 'trap - EXIT INT TERM; down; exit 130' INT
  trap 'trap - EXIT INT TERM; down; exit 143' TERM
  trap 'down' EXIT
  up
  trap 'trap - EXIT INT TERM; down; exit 130' INT
  trap 'trap - EXIT INT TERM; down; exit 143' TERM
  trap 'down' EXIT
  "$@" || status=$?
  return $status
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  down) down ;;
  run) shift; run "$@" ;;
  snapshot) snapshot ;;
  expose) shift; expose "$@" ;;
  import) shift; import_archives "$@" ;;
  *) die "usage: $0 install|up|down|run CMD...|snapshot|expose PORT...|import ARCHIVE..." ;;
esac
