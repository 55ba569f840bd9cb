#!/usr/bin/env bash
# Shared helpers for the local dependency scripts in test/infra.
# Layout: what is built or downloaded once per machine lives in the machine-wide tool cache
# ($SHARED, below); the clone's .cache holds links into it (.cache/bin/<tool>), its own copies of
# what writes into itself (Keycloak's home), the install logs (.cache/logs/<step>.log), runtime
# state (pid files, logs, data) under .cache/run, and the generated address file
# .cache/run/infra.env that tests and `make up` read (KEY=VALUE lines).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="$ROOT/.cache"
RUN="$CACHE/run"
LOGS="$CACHE/logs"
ENV_FILE="$RUN/infra.env"
# The machine-wide cache of built tools: every clone on this machine reuses what one of them built
# and verified. SUBSCRIPTION_PLATFORM_CACHE moves it (a fresh folder: a cold build from the
# declared sources, as on a new machine).
SHARED="${SUBSCRIPTION_PLATFORM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/subscription-platform}"
mkdir -p "$CACHE" "$RUN" "$SHARED"

log() { printf '[infra] %s\n' "$*" >&2; }
die() { printf '[infra] error: %s\n' "$*" >&2; exit 1; }
# say TEXT: a line for the person at the screen. Under run_step (whose log file takes the tools'
# output and log()), it goes to the screen all the same, through fd SP_SAY_FD.
say() { printf '[infra] %s\n' "$*" >&"${SP_SAY_FD:-2}"; }

# free_port [N]: N (1) different free TCP ports on loopback, on one line, below the kernel's
# ephemeral range (test/support/free-port.ts says why; the clone's Node 24 runs TypeScript as is).
free_port() {
  local node=node
  [ -x "$CACHE/node/bin/node" ] && node="$CACHE/node/bin/node"
  "$node" --input-type=module -e "const { freePorts } = await import('$ROOT/test/support/free-port.ts'); console.log((await freePorts(${1:-1})).join(' '));"
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
  # fd 3 is run_step's screen channel: a daemon holding it would keep `make up | tee` waiting.
  setsid nohup "$@" > "$RUN/$name.log" 2>&1 < /dev/null 3>&- &
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


# ---- the screen and the logs --------------------------------------------------------------------

# duration_since START_NS: "0.4s", "42s", "8m05s".
duration_since() { duration_ms $((($(date +%s%N) - $1) / 1000000)); }

# duration_ms MS: the same form for a number of milliseconds.
duration_ms() {
  local ms=$1
  if ((ms < 10000)); then
    printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100))
  elif ((ms < 60000)); then
    printf '%ds' $((ms / 1000))
  else
    printf '%dm%02ds' $((ms / 60000)) $((ms % 60000 / 1000))
  fi
}

# run_step NAME COMMAND...: runs COMMAND with its output (the tools' own, and log()) in
# .cache/logs/NAME.log. On the screen: what COMMAND say()s (a long build says what it does and how
# long it took last time), then one line when it ends, with its time; when it fails, the log's last
# lines and its path. The exit status is COMMAND's.
run_step() {
  local name=$1 log="$LOGS/$1.log" t0 status=0
  shift
  t0=$(date +%s%N)
  own_dir "$LOGS"
  # fd 3 is the screen (or the enclosing step's screen) for say(). Not `|| status=$?`: bash would
  # then ignore set -e inside COMMAND.
  set +e
  (set -e; export SP_SAY_FD=3; "$@") 3>&"${SP_SAY_FD:-2}" > "$log" 2>&1 < /dev/null
  status=$?
  set -e
  if [ "$status" = 0 ]; then
    say "✓ $name $(duration_since "$t0")"
  else
    say "✗ $name failed after $(duration_since "$t0") (exit $status); the end of $log:"
    tail -n 25 "$log" | sed 's/^/    /' >&"${SP_SAY_FD:-2}"
  fi
  return "$status"
}

# run_parallel STEP...: run_step STEP step_STEP (hyphens as underscores) for each, side by side;
# waits for all and fails when any failed (each failure has printed its log's end).
run_parallel() {
  local pids=() names=() failed=() i
  for i in "$@"; do
    run_step "$i" "step_${i//-/_}" &
    pids+=($!)
    names+=("$i")
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
  [ ${#failed[@]} -eq 0 ] || { say "failed: ${failed[*]} (logs in $LOGS)"; return 1; }
}

# ---- the machine-wide tool cache ------------------------------------------------------------------
#
# An entry is a folder $SHARED/TOOL/VERSION-KEY: KEY hashes everything the build reads (the build
# function's own text, versions, the Go or Java used, input files), so a change to any of them
# builds a new entry and a clone on older inputs keeps finding its own. It is built in a temporary
# folder beside it, gets .manifest (the sha256 of every file) and .sizes last, and is renamed into
# place: an entry is complete or absent. One lock file per entry: a second installer (another
# clone, another step) waits for the first and then uses what it built.
#
# A clone verifies an entry (every checksum) the first time it uses it and records that under
# .cache/verified/; later uses compare the files' sizes with .sizes. An entry that fails either
# check is removed and built again.

# input_key INPUT...: 16 hex digits of sha256 over the inputs.
input_key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

entry_sizes() { (cd "$1" && find . -type f ! -name .manifest ! -name .sizes -printf '%s %P\n' | LC_ALL=C sort); }

# entry_verify ENTRY: its files are those of .manifest, each with its checksum.
entry_verify() {
  [ -f "$1/.manifest" ] && [ -f "$1/.sizes" ] || return 1
  [ "$(entry_sizes "$1")" = "$(cat "$1/.sizes")" ] || return 1
  (cd "$1" && sha256sum --quiet --status -c .manifest)
}

# entry_quick ENTRY: complete, each file of the size recorded (a truncated or missing file shows).
entry_quick() {
  [ -f "$1/.manifest" ] && [ -f "$1/.sizes" ] && [ "$(entry_sizes "$1")" = "$(cat "$1/.sizes")" ]
}

# cpu_ms TIMES_FILE: the children's user + system CPU time in bash's `times` output (its second
# line, "0m12.340s 0m1.200s"), in milliseconds.
cpu_ms() {
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$1"
}

last_time() {
  local file="$SHARED/timings/$1"
  [ -s "$file" ] && printf '; last time on this machine %s' "$(cat "$file")"
  return 0
}

# cached TOOL VERSION KEY WHAT BUILD [ARG...]: sets ENTRY to $SHARED/TOOL/VERSION-KEY, built first
# (BUILD DIR ARG..., DIR a fresh folder to fill) unless present and sound. WHAT says on the screen
# what a build does ("go build ... from the Go module proxy").
cached() {
  local tool=$1 version=$2 key=$3 what=$4 build=$5
  shift 5
  local dir="$SHARED/$tool" entry="$SHARED/$tool/$version-$key" stamp
  stamp="$CACHE/verified$entry"
  ENTRY=$entry
  if [ -f "$stamp" ]; then
    entry_quick "$entry" && return 0
  elif entry_verify "$entry"; then
    mkdir -p "$(dirname "$stamp")" && touch "$stamp"
    return 0
  fi
  rm -f "$stamp"
  own_dir "$CACHE/verified"
  mkdir -p "$dir" "$SHARED/timings"
  local lock building tmp t0
  exec {lock}> "$dir/.$version-$key.lock"
  flock "$lock"
  if ! entry_verify "$entry"; then
    if [ -e "$entry" ]; then
      say "$tool $version: the cached $entry is incomplete or damaged: building it again"
      mv -T "$entry" "$dir/.damaged-$version-$key.$$" && rm -rf "$dir/.damaged-$version-$key.$$"
    fi
    # Left by an interrupted build of this entry (the lock is ours): folders and their manifests.
    rm -rf "$dir/.tmp-$version-$key".*
    say "▸ $tool $version: $what$(last_time "$tool")"
    t0=$(date +%s%N)
    tmp=$(mktemp -d "$dir/.tmp-$version-$key.XXXXXX")
    # Held shared by every build: trim_go_caches waits for none and skips while one runs.
    exec {building}> "$SHARED/.building"
    flock -s "$building"
    local status cpu="$dir/.cpu-$version-$key.$$"
    set +e
    # `times`: the CPU the build's processes used, all of them waited for (a Go build's compilers,
    # an image build's containers): on two shared cores, the figure that compares across runs.
    (set -e; "$build" "$tmp" "$@"; times > "$cpu")
    status=$?
    set -e
    exec {building}>&-
    [ "$status" = 0 ] || { rm -rf "$tmp" "$cpu"; die "building $tool $version failed"; }
    # Written beside the folder, then moved in: find must not list them.
    find "$tmp" -type f -printf '%P\0' | LC_ALL=C sort -z | (cd "$tmp" && xargs -0r sha256sum) > "$tmp.manifest"
    entry_sizes "$tmp" > "$tmp.sizes"
    mv "$tmp.manifest" "$tmp/.manifest"
    mv "$tmp.sizes" "$tmp/.sizes"
    mv -T "$tmp" "$entry"
    printf '%s, %s of CPU\n' "$(duration_since "$t0")" "$(duration_ms "$(cpu_ms "$cpu")")" > "$SHARED/timings/$tool"
    rm -f "$cpu"
    say "  $tool $version built in $(cat "$SHARED/timings/$tool") ($entry)"
  fi
  exec {lock}>&-
  mkdir -p "$(dirname "$stamp")" && touch "$stamp"
}

# drop_old_entries TOOL KEEP: the KEEP newest entries of TOOL stay, older ones go (other clones on
# this machine may be on other commits, and an entry can be large: an image, a node_modules tree).
drop_old_entries() {
  local old
  [ -d "$SHARED/$1" ] || return 0
  for old in $(ls -1dt "$SHARED/$1"/*/ 2> /dev/null | tail -n +$(($2 + 1))); do
    rm -rf "${old%/}"
  done
}

# java_id JAVA: which Java JAVA is (its path and its JDK's release file), for keys.
java_id() {
  local java
  java=$(readlink -f "$1")
  printf '%s\n' "$java"
  cat "$(dirname "$(dirname "$java")")/release" 2> /dev/null || "$java" -version 2>&1
}

# link_tool LINK TARGET: LINK (in .cache/bin, say) points at TARGET, replaced atomically.
link_tool() {
  mkdir -p "$(dirname "$1")"
  [ "$(readlink "$1" 2> /dev/null)" = "$2" ] && return 0
  ln -sfn "$2" "$1.tmp.$$" && mv -Tf "$1.tmp.$$" "$1"
}

# own_dir PATH: PATH is a folder of this clone. A clone set up by sharing another checkout's
# .cache folders through symlinks (the old layout) gets its own folder instead, holding links to
# what the other one held (so what is not installed anew yet still works); the other checkout's
# folder is left as it is.
own_dir() {
  local old e
  if [ -L "$1" ]; then
    old=$(readlink -f "$1")
    rm -f "$1"
    mkdir -p "$1"
    for e in "$old"/*; do
      [ -e "$e" ] && { ln -s "$e" "$1/${e##*/}" 2> /dev/null || true; }
    done
  fi
  mkdir -p "$1"
}

# ---- Debian packages --------------------------------------------------------------------------

# apt_install PACKAGE...: install Debian packages that are missing. The .deb files are kept in the
# machine-wide cache; one apt command at a time on the machine (apt's own locks would fail the
# second: the lists lock has no timeout option).
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_lock
  missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    refresh_apt_lists
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=600 -o Dir::Cache::archives="$SHARED/apt/archives" "${missing[@]}" >&2
  fi
  apt_unlock
}

# install_allocator: the allocator the images preload into every service and `make up` gives them
# too (Debian's jemalloc; the Dockerfile pins its version and says why).
install_allocator() { apt_install libjemalloc2; }

# apt_update: the package lists, refreshed once a day, under the machine's apt lock.
apt_update() {
  apt_lock
  refresh_apt_lists
  apt_unlock
}

# apt_lock / apt_unlock: the machine-wide lock every apt command of these scripts holds (a second
# clone's install included).
apt_lock() {
  mkdir -p "$SHARED/apt/archives/partial"
  exec {APT_LOCK_FD}> "$SHARED/apt/.lock"
  flock "$APT_LOCK_FD"
}
apt_unlock() { exec {APT_LOCK_FD}>&-; }

# refresh_apt_lists: `apt-get update` when the lists are older than a day; the caller holds apt_lock.
refresh_apt_lists() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ ! -f "$SHARED/apt/.updated" ] || [ -n "$(find "$SHARED/apt/.updated" -mmin +1440)" ]; then
    $sudo apt-get update -qq -o DPkg::Lock::Timeout=600 >&2 && touch "$SHARED/apt/.updated"
  fi
}

# deb_download PACKAGE VERSION: the .deb of PACKAGE=VERSION in the tool cache's apt folder (apt's
# sandbox user cannot write there: download as the caller); prints its path.
deb_download() {
  local package=$1 version=$2 archives="$SHARED/apt/archives" deb
  mkdir -p "$archives"
  deb=$(find "$archives" -maxdepth 1 -name "${package}_${version//:/%3a}_*.deb" | head -n 1)
  if [ -z "$deb" ]; then
    apt_lock
    (cd "$archives" && apt-get download -qq -o APT::Sandbox::User=root "$package=$version") || die "apt-get download $package=$version failed"
    apt_unlock
    deb=$(find "$archives" -maxdepth 1 -name "${package}_${version//:/%3a}_*.deb" | head -n 1)
  fi
  [ -n "$deb" ] || die "no $package $version .deb in $archives"
  printf '%s\n' "$deb"
}

# deb_version PACKAGE: the version of PACKAGE apt would install (the lists refreshed once a day).
deb_version() {
  local version
  apt_update
  version=$(apt-cache show --no-all-versions "$1" 2> /dev/null | sed -n 's/^Version: //p' | head -n 1)
  [ -n "$version" ] || die "Debian's $1 package is not known to apt (apt-get update?)"
  printf '%s\n' "$version"
}

# ---- Go ---------------------------------------------------------------------------------------

# go_env [GOFLAG...]: the machine's go (PATH or /usr/local/go/bin/go) as $GO, with its module and
# build caches in the machine-wide cache (Go's caches are safe for concurrent builds). Module cache
# files writable so `rm -rf` works; no cgo, like the upstream releases. Extra flags (e.g. -mod=mod)
# are added to GOFLAGS. GOGC=400: the compiler collects garbage a quarter as often, for 17% less
# CPU in a cold build of k8s.io/client-go/kubernetes (560 packages: 218 s instead of 262 s of
# CPU; largest compile 600 MB instead of 550 MB; measured 2026-12-02): the CPU time is what a
# cold install on two cores waits for, and the binaries are the same. -dwarf=false: the compiler
# writes no debug information, which every build's `-ldflags -s -w` drops at the link anyway: 6%
# less CPU (a cold build of CoreDNS with the cluster's plugins: 157 s instead of 168 s), a build
# cache a fifth smaller, binaries of the same size (`go version -m` lists the flag among their
# build settings).
go_env() {
  local go
  go=$(command -v go || true)
  [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; } || die "go not found (PATH or /usr/local/go/bin/go)"
  GO=$go
  export GOPATH="$SHARED/go/path" GOMODCACHE="$SHARED/go/mod" GOCACHE="$SHARED/go/build"
  export GOFLAGS="-modcacherw -gcflags=all=-dwarf=false${1:+ $*}" CGO_ENABLED=0 GOGC=400
  unset GOBIN
}

# go_version: the go that builds, part of every Go-built entry's key.
go_version() { go_env && "$GO" env GOVERSION; }

# trim_go_caches: once the tools are built, Go's build and module caches (13.6 GB after a cold
# install, measured) serve nothing that runs, and a full disk fails a run; a tool of another
# version downloads and builds again. Skipped while any build of the tool cache runs.
trim_go_caches() {
  local go_dir="$SHARED/go" lock before
  [ -n "$(find "$go_dir/build" "$go_dir/mod" -mindepth 1 -maxdepth 1 -type d -print -quit 2> /dev/null)" ] || return 0
  exec {lock}> "$SHARED/.building"
  flock -n -x "$lock" || { log "a build is under way: Go's caches stay"; return 0; }
  go_env
  before=$(du -scm "$go_dir/build" "$go_dir/mod" 2> /dev/null | tail -n 1 | cut -f1)
  "$GO" clean -cache -modcache
  log "Go build and module caches removed (${before} MB; the tools are built)"
  exec {lock}>&-
}

# module_dir MODULE VERSION: download the module source (go_env first), print its directory.
module_dir() {
  "$GO" mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'
}

# go_tool TOOL VERSION KEY_INPUT WHAT BUILD [ARG...]: a Go-built entry (cached), its key also
# holding the go version and BUILD's text; BUILD DIR ARG... runs after go_env (in a subshell:
# what it exports stays there).
go_tool() {
  local tool=$1 version=$2 inputs=$3 what=$4 build=$5
  shift 5
  cached "$tool" "$version" "$(input_key "$inputs" "$(go_version)" "$(declare -f "$build")")" "$what" go_build_in "$build" "$@"
}
# The build's wall and CPU time go to the step's log: on two shared cores the CPU time is the
# figure that compares across runs.
go_build_in() {
  local dir=$1 build=$2 TIMEFORMAT
  shift 2
  go_env
  TIMEFORMAT="$build $*: %0R s wall, %0U s user + %0S s system CPU (load $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
  time "$build" "$dir" "$@"
}
