#!/usr/bin/env bash
# Shared helpers for the local dependency scripts in test/infra.
# Layout: downloads and installs under .cache/<component>, runtime state (pid files,
# logs, data) under .cache/run, and the generated address file .cache/run/infra.env
# that tests and `make up` read (KEY=VALUE lines).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="$ROOT/.cache"
RUN="$CACHE/run"
ENV_FILE="$RUN/infra.env"
mkdir -p "$CACHE" "$RUN"

log() { printf '[infra] %s\n' "$*" >&2; }
die() { printf '[infra] error: %s\n' "$*" >&2; exit 1; }

# Ask the kernel for a free TCP port on loopback.
free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# wait_until PROCESS SECONDS CHECK...: runs CHECK every 0.2 s until it succeeds. Returns 1 when
# SECONDS pass first, 2 as soon as PROCESS (a start_bg NAME; - for none) has exited: the one
# "wait until ready" loop of these scripts, whose callers say what failed and clean up.
wait_until() {
  local name=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@" 2> /dev/null; do
    [ "$name" = - ] || is_running "$name" || return 2
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# await_start NAME SECONDS WHAT CHECK...: waits (wait_until) for a process that start_bg NAME started;
# when it exits first or SECONDS pass, stops it, removes its .pid and .port files and fails, saying
# which ("NAME did not WHAT within SECONDS s").
await_start() {
  local name=$1 seconds=$2 what=$3 outcome=0
  shift 3
  wait_until "$name" "$seconds" "$@" || outcome=$?
  [ "$outcome" = 0 ] && return 0
  tail -n 20 "$RUN/$name.log" >&2 || true
  stop_bg "$name"
  rm -f "$RUN/$name.pid" "$RUN/$name.port"
  [ "$outcome" = 2 ] && die "$name exited during start (log: $RUN/$name.log)"
  die "$name did not $what within ${seconds}s (log: $RUN/$name.log)"
}

# port_open PORT [HOST]: something listens there (HOST: 127.0.0.1).
port_open() { (exec 3<> "/dev/tcp/${2:-127.0.0.1}/$1") 2> /dev/null; }
http_ok() { curl -fsS -o /dev/null --max-time 2 "$@" 2> /dev/null; }

# wait_for_port NAME PORT [SECONDS]
wait_for_port() {
  wait_until - "${3:-60}" port_open "$2" || die "$1 did not open port $2 within ${3:-60}s (log: $RUN/$1.log)"
}

# wait_for_http NAME URL [SECONDS]: until the URL answers 2xx.
wait_for_http() {
  wait_until - "${3:-60}" http_ok "$2" || die "$1 did not answer $2 within ${3:-60}s (log: $RUN/$1.log)"
}

# env_get KEY: value from the generated address file, empty when absent.
env_get() {
  [ -f "$ENV_FILE" ] || return 0
  sed -n "s/^$1=//p" "$ENV_FILE" | tail -n 1
}

# env_set KEY VALUE: write or replace one line of the generated address file.
# Components start in parallel, so every rewrite of the file holds a lock.
env_set() {
  (
    flock 9
    touch "$ENV_FILE"
    grep -v "^$1=" "$ENV_FILE" > "$ENV_FILE.tmp" || true
    printf '%s=%s\n' "$1" "$2" >> "$ENV_FILE.tmp"
    mv "$ENV_FILE.tmp" "$ENV_FILE"
  ) 9> "$ENV_FILE.lock"
}

env_unset() {
  [ -f "$ENV_FILE" ] || return 0
  (
    flock 9
    grep -v "^$1=" "$ENV_FILE" > "$ENV_FILE.tmp" || true
    mv "$ENV_FILE.tmp" "$ENV_FILE"
  ) 9> "$ENV_FILE.lock"
}

# alive PID: the process exists and is not a zombie waiting to be reaped.
alive() {
  kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != "Z" ]
}

is_running() {
  local pidfile="$RUN/$1.pid"
  [ -f "$pidfile" ] && alive "$(cat "$pidfile")"
}

# start_bg NAME COMMAND...: run detached in its own process group, log to .cache/run/NAME.log.
start_bg() {
  local name=$1; shift
  setsid nohup "$@" > "$RUN/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN/$name.pid"
}

# stop_bg NAME [SECONDS]: SIGTERM the process group, SIGKILL after the grace period.
stop_bg() {
  local name=$1 seconds=${2:-20} pid i
  [ -f "$RUN/$name.pid" ] || return 0
  pid=$(cat "$RUN/$name.pid")
  if alive "$pid"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < seconds * 5; i++)); do
      alive "$pid" || break
      sleep 0.2
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
}

# kill_bg NAME...: SIGKILL each process group start_bg started, without a grace period (an
# apiserver given SIGTERM drains open watches for up to 60 s), and remove its pid file.
kill_bg() {
  local name
  for name in "$@"; do
    [ -f "$RUN/$name.pid" ] || continue
    kill -KILL -- "-$(cat "$RUN/$name.pid")" 2> /dev/null || true
    rm -f "$RUN/$name.pid"
  done
}

# report_status NAME DETAIL: whether start_bg NAME runs, on stdout: "NAME running (pid P, DETAIL)",
# or "NAME not running" and status 1.
report_status() {
  if is_running "$1"; then
    echo "$1 running (pid $(cat "$RUN/$1.pid"), $2)"
  else
    echo "$1 not running"
    return 1
  fi
}

# stop_component NAME KEY...: stops what start_bg NAME started, removes its .port file and its KEYs
# from the address file.
stop_component() {
  local name=$1 k
  shift
  if is_running "$name"; then log "stopping $name (pid $(cat "$RUN/$name.pid"))"; fi
  stop_bg "$name"
  rm -f "$RUN/$name.port"
  for k in "$@"; do env_unset "$k"; done
}

# apt_install PACKAGE...: install Debian packages that are missing, keeping the .deb files
# under .cache/apt so a second run on the same machine downloads nothing.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  mkdir -p "$CACHE/apt/archives/partial"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ ! -f "$CACHE/apt/.updated" ] || [ -n "$(find "$CACHE/apt/.updated" -mmin +1440)" ]; then
    $sudo apt-get update -qq && touch "$CACHE/apt/.updated"
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o Dir::Cache::archives="$CACHE/apt/archives" "${missing[@]}" >&2
}

# link_pinned LINK FILE VERSION VERSION_ARGS...: points LINK at FILE (a name in LINK's folder);
# when it pointed elsewhere, checks once that `LINK VERSION_ARGS...` runs and reports VERSION.
link_pinned() {
  local link=$1 file=$2 version=$3 out
  shift 3
  [ "$(readlink "$link" 2> /dev/null)" != "$file" ] || return 0
  ln -sfn "$file" "$link.tmp.$$" && mv -Tf "$link.tmp.$$" "$link"
  out=$("$link" "$@" 2>&1) || die "$link $* failed: $out"
  grep -qF "${version#v}" <<< "$out" || die "$link $* does not report $version: $out"
  log "$(basename "$link"): $(head -n 1 <<< "$out")"
}

# go_env [GOFLAG...]: the machine's go (PATH or /usr/local/go/bin/go) as $GO, with everything it
# writes under .cache/go. Module cache files writable so `rm -rf .cache` works; no cgo, like the
# upstream releases. Extra flags (e.g. -mod=mod) are added to GOFLAGS.
go_env() {
  local go
  go=$(command -v go || true)
  [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; } || die "go not found (PATH or /usr/local/go/bin/go)"
  GO=$go
  export GOPATH="$CACHE/go" GOMODCACHE="$CACHE/go/pkg/mod" GOCACHE="$CACHE/go/build"
  export GOFLAGS="-modcacherw${1:+ $*}" CGO_ENABLED=0
  unset GOBIN
}

# go_build_once TARGET COMMAND...: unless TARGET exists, run COMMAND (which builds it) after go_env,
# holding the checkout's Go build lock: one Go build at a time (start scripts may install
# concurrently), and a caller that waited finds the target the first one built.
go_build_once() {
  local target=$1
  shift
  [ -x "$target" ] && return 0
  mkdir -p "$(dirname "$target")" "$CACHE/go"
  exec 9> "$CACHE/go/.lock"
  flock 9
  if [ ! -x "$target" ]; then
    go_env
    "$@"
  fi
  flock -u 9
  exec 9>&-
}

# trim_go_caches: once every Go-built tool is in .cache/bin, Go's build and module caches (13.6 GB
# after a cold install, measured) serve nothing that runs, and a full disk fails a run; a tool of
# another version downloads and builds again. Under both Go build locks, so no build is under way.
trim_go_caches() {
  local go_dir="$CACHE/go"
  # A filled build cache has its 00..ff folders; a filled module cache, any entry.
  [ -n "$(find "$go_dir/build" "$go_dir/pkg/mod" -mindepth 1 -maxdepth 1 -type d -print -quit 2> /dev/null)" ] || return 0
  exec 7> "$go_dir/.lock" 8> "$go_dir/.kube.lock"
  flock 7
  flock 8
  go_env
  local before
  before=$(du -scm "$go_dir/build" "$go_dir/pkg" 2> /dev/null | tail -n 1 | cut -f1)
  "$GO" clean -cache -modcache
  log "Go build and module caches removed (${before} MB; the tools are built)"
  exec 7>&- 8>&-
}

# module_dir MODULE VERSION: download the module source (go_env first), print its directory.
module_dir() {
  "$GO" mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'
}
