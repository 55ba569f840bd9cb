#!/usr/bin/env bash
# Local Keycloak for runs and tests: a real server imported from test/infra/keycloak/realm.json.
#
#   test/infra/keycloak.sh install   download (Maven Central, cached in .cache/m2), unpack, build, seed
#   test/infra/keycloak.sh start     start on free loopback ports, write KEYCLOAK_* to .cache/run/infra.env;
#                                    trusts the local CA of local-ca.sh (--truststore-paths; its certificate's
#                                    path is KEYCLOAK_TRUSTED_CA)
#   test/infra/keycloak.sh stop      stop it and remove its keys from infra.env
#   test/infra/keycloak.sh configure apply what realm.json cannot hold (the auth service's verified phone
#                                    direct grant flow, keycloak/verified-phone-grant.mjs) to the running
#                                    server; idempotent, also done by install's seed and by start
#   test/infra/keycloak.sh status
#   test/infra/keycloak.sh start-https NAME CERT KEY CA
#                                    one more Keycloak of the same realm (a fresh copy of the seed),
#                                    https only, on a free loopback port with that certificate and
#                                    key, signed by CA (PEM files); prints its URL. For a test that needs an
#                                    identity provider over TLS (the cluster suite's Production auth).
#   test/infra/keycloak.sh stop-https NAME
#   test/infra/keycloak.sh start-private NAME [KEYCLOAK_OPTION...]
#                                    the same over http, with these Keycloak options (JVM options through
#                                    JAVA_OPTS_APPEND); prints its URL, its pid is .cache/run/NAME.pid.
#                                    KEYCLOAK_PRIVATE_IMPORT=1: imports realm.json into an empty database
#                                    instead of copying the seed (slower; sees realm.json as it is now).
#                                    For experiments and benchmarks beside the shared server.
#   test/infra/keycloak.sh stop-private NAME
#
# How start is kept fast (measured on 2 cores, see test/infra/keycloak/README.md):
#   - `kc.sh build` runs once at install time, `start --optimized` skips the Quarkus re-augmentation
#     that start-dev does on every start (~40 s here);
#   - install also creates a "seed": one start imports the realm into an empty H2 file database and is
#     stopped again; that database file is kept, and every start copies it into a fresh data dir
#     ($RUN/keycloak-data), so each start gets a clean realm without paying for the schema creation
#     (Liquibase), the master realm setup and the realm import (~20 s here);
#   - the same seeding run records a JDK AOT cache (JDK 25+, -XX:AOTCacheOutput) that later starts load;
#   - C1 only (-XX:TieredStopAtLevel=1), serial GC, local caches (no JGroups cluster).
# The seed is recreated automatically when realm.json, the version, the build options or the master
# admin credentials change.
#
# Environment (all optional):
#   KEYCLOAK_VERSION                 default below (newest 26.x on Maven Central when written)
#   KEYCLOAK_JAVA_HOME               JDK for Keycloak only (21+), default Temurin 25
#   KEYCLOAK_MASTER_ADMIN_USERNAME   bootstrap admin of the master realm, default admin
#   KEYCLOAK_MASTER_ADMIN_PASSWORD   default admin
#   KEYCLOAK_START_TIMEOUT           seconds to wait for the realm, default 180
#   KEYCLOAK_AOT                     0: no JDK AOT cache (saves ~190 MB in .cache, costs ~1-2 s per start)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KC_VERSION="${KEYCLOAK_VERSION:-26.7.3}"
KC_JAVA_HOME="${KEYCLOAK_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
KC_MASTER_USER="${KEYCLOAK_MASTER_ADMIN_USERNAME:-admin}"
KC_MASTER_PASSWORD="${KEYCLOAK_MASTER_ADMIN_PASSWORD:-admin}"
KC_START_TIMEOUT="${KEYCLOAK_START_TIMEOUT:-180}"
KC_AOT="${KEYCLOAK_AOT:-1}"

KC_SRC="$ROOT/test/infra/keycloak"
KC_REALM_FILE="$KC_SRC/realm.json"
# Realm settings a realm file cannot carry, applied through the admin API after the import.
KC_REALM_SETUP="$KC_SRC/verified-phone-grant.mjs"
KC_BASE="$CACHE/keycloak"
KC_HOME="$KC_BASE/keycloak-$KC_VERSION"
KC_SEED="$KC_BASE/seed-$KC_VERSION"
KC_DATA="$RUN/keycloak-data"
KC_NAME=keycloak

# Build-time options, baked in by `kc.sh build` (changing them triggers a rebuild).
KC_BUILD_OPTS=(--db=dev-file --health-enabled=true --metrics-enabled=false)
# Ports the other local services use: never hand them to Keycloak.
KC_RESERVED_PORTS=" 7777 5555 5145 5000 9464 9000 8080 "

KC_ENV_KEYS=(KEYCLOAK_URL KEYCLOAK_REALM
  KEYCLOAK_SERVICES_CLIENT_ID KEYCLOAK_SERVICES_CLIENT_SECRET
  KEYCLOAK_WEB_CLIENT_ID KEYCLOAK_WEB_CLIENT_SECRET
  KEYCLOAK_ADMIN_USERNAME KEYCLOAK_ADMIN_PASSWORD
  KEYCLOAK_MASTER_ADMIN_USERNAME KEYCLOAK_MASTER_ADMIN_PASSWORD KEYCLOAK_TRUSTED_CA)

now() { date +%s%N; }
elapsed() { local ms=$((($(now) - $1) / 1000000)); printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100)); }

java_major() {
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$KC_JAVA_HOME/release" 2>/dev/null
}

check_java() {
  [ -x "$KC_JAVA_HOME/bin/java" ] || die "no JDK at $KC_JAVA_HOME (set KEYCLOAK_JAVA_HOME to a JDK 21+)"
  local major; major=$(java_major)
  [ "${major:-0}" -ge 21 ] || die "Keycloak $KC_VERSION needs Java 21+, $KC_JAVA_HOME is ${major:-unknown}"
}

# JVM options for Keycloak (replace kc.sh's defaults, which select G1 and full tiered compilation).
kc_java_opts() {
  local opts="-XX:MetaspaceSize=96M -XX:MaxMetaspaceSize=256m -Xms64m -Xmx512m"
  opts+=" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError"
  opts+=" -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 -Dsun.err.encoding=UTF-8"
  opts+=" -Dstdout.encoding=UTF-8 -Dstderr.encoding=UTF-8 -Djava.security.egd=file:/dev/urandom"
  opts+=" -Djdk.tls.rejectClientInitiatedRenegotiation=true"
  printf '%s' "$opts"
}

# The clients' secrets and the realm admin come from realm.json itself (single source of truth).
realm_values() {
  node -e '
    const r = require(process.argv[1]);
    const client = (id) => r.clients.find((c) => c.clientId === id) || {};
    const admin = r.users.find((u) => u.username === "platform-admin") || {};
    const pw = ((admin.credentials || []).find((c) => c.type === "password") || {}).value || "";
    const out = {
      KEYCLOAK_REALM: r.realm,
      KEYCLOAK_SERVICES_CLIENT_ID: "platform-services",
      KEYCLOAK_SERVICES_CLIENT_SECRET: client("platform-services").secret,
      KEYCLOAK_WEB_CLIENT_ID: "platform-web",
      KEYCLOAK_WEB_CLIENT_SECRET: client("platform-web").secret,
      KEYCLOAK_ADMIN_USERNAME: admin.username,
      KEYCLOAK_ADMIN_PASSWORD: pw,
    };
    for (const [k, v] of Object.entries(out)) console.log(`${k}=${v ?? ""}`);
  ' "$KC_REALM_FILE"
}

realm_name() { node -e 'console.log(require(process.argv[1]).realm)' "$KC_REALM_FILE"; }

# A free loopback port that is none of the reserved ones and none of the given ones.
pick_port() {
  local avoid=" $* " port i
  for ((i = 0; i < 20; i++)); do
    port=$(free_port)
    case "$KC_RESERVED_PORTS$avoid" in *" $port "*) continue ;; esac
    printf '%s' "$port"
    return 0
  done
  die "could not find a free port for Keycloak"
}

build_key() { printf '%s\n' "$KC_VERSION" "${KC_BUILD_OPTS[*]}"; }

seed_key() {
  {
    echo "seed-format 1"
    build_key
    printf '%s\n' "$KC_MASTER_USER" "$KC_MASTER_PASSWORD" "$KC_JAVA_HOME" "$(kc_java_opts)" "$KC_AOT"
    cat "$KC_JAVA_HOME/release" 2>/dev/null || true
    cat "$KC_REALM_FILE" "$KC_REALM_SETUP"
  } | sha256sum | cut -d' ' -f1
}

download_and_unpack() {
  local artifact="org.keycloak:keycloak-quarkus-dist:$KC_VERSION:tar.gz"
  local archive="$CACHE/m2/org/keycloak/keycloak-quarkus-dist/$KC_VERSION/keycloak-quarkus-dist-$KC_VERSION.tar.gz"
  mkdir -p "$KC_BASE"
  if [ ! -s "$archive" ]; then
    log "keycloak: downloading $artifact from Maven Central"
    command -v mvn >/dev/null || die "mvn is needed to download Keycloak"
    mvn -B -q -Dmaven.repo.local="$CACHE/m2" -Dstyle.color=never \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get \
      -Dartifact="$artifact" -Dtransitive=false > "$KC_BASE/download.log" 2>&1 \
      || { tail -n 20 "$KC_BASE/download.log" >&2; die "download of $artifact failed"; }
    [ -s "$archive" ] || die "maven did not leave $archive"
  fi
  log "keycloak: unpacking $KC_VERSION"
  local tmp="$KC_BASE/.unpack-$$"
  rm -rf "$tmp" "$KC_HOME"
  mkdir -p "$tmp"
  tar -xzf "$archive" -C "$tmp"
  mv "$tmp/keycloak-$KC_VERSION" "$KC_HOME"
  rm -rf "$tmp"
}

# Keycloak keeps its database, transaction logs and import folder under <home>/data: point that at
# the per-run data dir.
link_data_dir() {
  if [ -e "$KC_HOME/data" ] && [ ! -L "$KC_HOME/data" ]; then rm -rf "$KC_HOME/data"; fi
  ln -sfn "$KC_DATA" "$KC_HOME/data"
}

fresh_data_dir() {
  rm -rf "$KC_DATA"
  mkdir -p "$KC_DATA"
  link_data_dir
}

# kc_launch NAME HTTP_PORT MGMT_PORT EXTRA_JAVA_OPTS [kc args...]: start_bg with our options.
kc_launch() {
  local name=$1 port=$2 mport=$3 extra=$4
  shift 4
  start_bg "$name" env \
    JAVA_HOME="$KC_JAVA_HOME" \
    JAVA_OPTS="$(kc_java_opts)${extra:+ $extra}" \
    KC_BOOTSTRAP_ADMIN_USERNAME="$KC_MASTER_USER" \
    KC_BOOTSTRAP_ADMIN_PASSWORD="$KC_MASTER_PASSWORD" \
    bash "$KC_HOME/bin/kc.sh" start --optimized \
    --http-enabled=true --http-host=127.0.0.1 --http-port="$port" \
    --http-management-port="$mport" --hostname-strict=false \
    --cache=local "$@"
}

# wait_for_realm NAME URL SECONDS: like wait_for_http, but returns 1 as soon as the process is gone.
wait_for_realm() {
  local outcome=0
  wait_until "$1" "$3" http_ok "$2" || outcome=$?
  [ "$outcome" != 1 ] || die "$1 did not answer $2 within ${3}s (log: $RUN/$1.log)"
  [ "$outcome" = 0 ]
}

# launch_and_wait NAME SECONDS PREPARE EXTRA_JAVA_OPTS [kc args...]: pick ports, run PREPARE (fills the
# data dir), start Keycloak and wait for the realm. Components start in parallel, so a port handed
# out by free_port can be taken before Keycloak binds it: then it retries with new ports.
# Sets KC_PORT, KC_MPORT and KC_URL.
launch_and_wait() {
  local name=$1 seconds=$2 prepare=$3 extra=$4 attempt realm
  shift 4
  realm=$(realm_name)
  for attempt in 1 2 3; do
    KC_PORT=$(pick_port)
    KC_MPORT=$(pick_port "$KC_PORT")
    KC_URL="http://127.0.0.1:$KC_PORT"
    "$prepare"
    kc_launch "$name" "$KC_PORT" "$KC_MPORT" "$extra" "$@"
    wait_for_realm "$name" "$KC_URL/realms/$realm/.well-known/openid-configuration" "$seconds" && return 0
    stop_bg "$name" 5
    if [ "$attempt" -lt 3 ] && grep -q 'Address already in use' "$RUN/$name.log"; then
      log "keycloak: port $KC_PORT or $KC_MPORT was taken meanwhile, retrying with other ports"
      continue
    fi
    tail -n 30 "$RUN/$name.log" >&2 || true
    die "$name exited during startup (log: $RUN/$name.log)"
  done
}

prepare_import() {
  fresh_data_dir
  mkdir -p "$KC_DATA/import"
  cp "$KC_REALM_FILE" "$KC_DATA/import/realm.json"
}

prepare_seeded() {
  fresh_data_dir
  mkdir -p "$KC_DATA/h2"
  cp "$KC_SEED/keycloakdb.mv.db" "$KC_DATA/h2/keycloakdb.mv.db"
}

# typical_requests URL [CURL_OPTION...]: a few typical requests (keys, login page, a client-credentials
# token, an admin query), which load the classes the services' first calls need. None of them writes
# to the database (no user sessions).
typical_requests() {
  local url=$1 realm sc tok
  shift
  realm=$(realm_name)
  sc=$(realm_values | sed -n 's/^KEYCLOAK_SERVICES_CLIENT_SECRET=//p')
  curl -fsS "$@" -o /dev/null "$url/realms/$realm/protocol/openid-connect/certs" || true
  curl -fsS "$@" -o /dev/null "$url/realms/$realm/protocol/openid-connect/auth?client_id=platform-web&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Flocalhost%3A5555%2Fredirect&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256" || true
  tok=$(curl -fsS "$@" -d grant_type=client_credentials -d client_id=platform-services \
    --data-urlencode "client_secret=$sc" "$url/realms/$realm/protocol/openid-connect/token" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).access_token||"")}catch{console.log("")}})') || true
  [ -n "$tok" ] && curl -fsS "$@" -o /dev/null -H "Authorization: Bearer $tok" "$url/admin/realms/$realm/users?max=5" || true
}

# One start that imports realm.json into an empty database; its database file becomes the seed that
# every later start copies, and (JDK 25+) it records the AOT cache.
create_seed() {
  local key=$1 t0 realm url aot="" tmp="$KC_SEED.tmp"
  t0=$(now)
  log "keycloak: seeding the database from realm.json (once per realm.json change)"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  if [ "$KC_AOT" != 0 ] && [ "$(java_major)" -ge 25 ]; then
    aot="-XX:AOTCacheOutput=$tmp/keycloak.aot -Xlog:aot=error"
  fi
  launch_and_wait keycloak-seed 600 prepare_import "$aot" --import-realm
  realm=$(realm_name)
  url=$KC_URL
  # So that the AOT cache covers the classes these requests load.
  typical_requests "$url"
  configure_realm "$url"
  # Graceful stop: H2 closes the file, the JVM then writes the AOT cache (can take a while).
  stop_bg keycloak-seed 300
  [ -s "$KC_DATA/h2/keycloakdb.mv.db" ] || die "seeding left no database (log: $RUN/keycloak-seed.log)"
  cp "$KC_DATA/h2/keycloakdb.mv.db" "$tmp/keycloakdb.mv.db"
  if [ -n "$aot" ] && [ ! -s "$tmp/keycloak.aot" ]; then
    log "keycloak: no AOT cache was written, starting without it (log: $RUN/keycloak-seed.log)"
  fi
  echo "$key" > "$tmp/key"
  rm -rf "$KC_SEED"
  mv "$tmp" "$KC_SEED"
  rm -rf "$KC_DATA"
  log "keycloak: seed ready in $(elapsed "$t0")"
}

# configure_realm URL: the admin-API part of the realm (verified-phone-grant.mjs), idempotent.
configure_realm() {
  node "$KC_REALM_SETUP" "$1" "$(realm_name)" "$KC_MASTER_USER" "$KC_MASTER_PASSWORD" >&2 \
    || die "configuring the realm at $1 failed"
}

cmd_install() {
  check_java
  [ -f "$KC_REALM_FILE" ] || die "missing $KC_REALM_FILE"
  local marker="$KC_HOME/.installed" key
  if [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$(build_key)" ]; then
    local t0; t0=$(now)
    if [ ! -x "$KC_HOME/bin/kc.sh" ] || [ ! -f "$KC_HOME/.unpacked" ]; then
      download_and_unpack
      touch "$KC_HOME/.unpacked"
    fi
    link_data_dir
    log "keycloak: kc.sh build ${KC_BUILD_OPTS[*]} (once)"
    JAVA_HOME="$KC_JAVA_HOME" bash "$KC_HOME/bin/kc.sh" build "${KC_BUILD_OPTS[@]}" \
      > "$KC_BASE/build.log" 2>&1 || { tail -n 30 "$KC_BASE/build.log" >&2; die "kc.sh build failed"; }
    build_key > "$marker"
    rm -rf "$KC_SEED"
    log "keycloak: $KC_VERSION installed in $(elapsed "$t0")"
  fi
  key=$(seed_key)
  if [ -f "$KC_SEED/key" ] && [ "$(cat "$KC_SEED/key")" = "$key" ]; then return 0; fi
  if is_running "$KC_NAME"; then
    log "keycloak: running, the seed is out of date; it is recreated on the next start after a stop"
    return 0
  fi
  create_seed "$key"
}

cmd_start() {
  local t0 t1 realm aot="" line ca
  t0=$(now)
  if is_running "$KC_NAME"; then
    log "keycloak: already running at $(env_get KEYCLOAK_URL)"
    [ -n "$(env_get KEYCLOAK_TRUSTED_CA)" ] ||
      log "keycloak: started without trusting the local CA (an older start): back-channel logout to the auth service fails until it is restarted (make down, make up)"
    # A server started from an older seed gets what the current realm setup adds.
    configure_realm "$(env_get KEYCLOAK_URL)"
    return 0
  fi
  stop_bg keycloak-seed 5
  cmd_install
  t1=$(now)
  [ -s "$KC_SEED/keycloak.aot" ] && aot="-XX:AOTCache=$KC_SEED/keycloak.aot -Xlog:aot=error"
  # Trusts the local CA (local-ca.sh), which signs the auth service's certificate under `make up` and
  # in the tests: Keycloak posts back-channel Logout Tokens to it over verified TLS.
  ca=$(bash "$ROOT/test/infra/local-ca.sh" ca)
  launch_and_wait "$KC_NAME" "$KC_START_TIMEOUT" prepare_seeded "$aot" --truststore-paths="$ca"
  realm=$(realm_name)
  env_set KEYCLOAK_URL "$KC_URL"
  env_set KEYCLOAK_TRUSTED_CA "$ca"
  while IFS= read -r line; do env_set "${line%%=*}" "${line#*=}"; done < <(realm_values)
  env_set KEYCLOAK_MASTER_ADMIN_USERNAME "$KC_MASTER_USER"
  env_set KEYCLOAK_MASTER_ADMIN_PASSWORD "$KC_MASTER_PASSWORD"
  if [ "$t1" -gt $((t0 + 1000000000)) ]; then
    log "keycloak: started at $KC_URL (realm $realm, management port $KC_MPORT) in $(elapsed "$t1"); $(elapsed "$t0") including install"
  else
    log "keycloak: started at $KC_URL (realm $realm, management port $KC_MPORT) in $(elapsed "$t0")"
  fi
}

cmd_stop() {
  stop_bg keycloak-seed 20
  stop_bg "$KC_NAME" 20
  local k
  for k in "${KC_ENV_KEYS[@]}"; do env_unset "$k"; done
  log "keycloak: stopped"
}

cmd_status() { report_status "$KC_NAME" "KEYCLOAK_URL=$(env_get KEYCLOAK_URL)"; }

# private_home NAME [import]: a Keycloak home of its own (a copy of the built one) on a fresh copy of
# the seed, or with `import` on an empty database and realm.json to import (what the seed would be
# now: the seed of a running shared server is not renewed); the data directory is a link inside the
# home, so two servers cannot share one. Sets PRIVATE_HOME.
private_home() {
  local name=$1 data="$RUN/$1-data"
  PRIVATE_HOME="$KC_BASE/$1-home"
  stop_bg "$name" 5
  cmd_install
  rm -rf "$PRIVATE_HOME" "$data"
  cp -a "$KC_HOME" "$PRIVATE_HOME"
  rm -rf "$PRIVATE_HOME/data"
  if [ "${2:-}" = import ]; then
    mkdir -p "$data/import"
    cp "$KC_REALM_FILE" "$data/import/realm.json"
  else
    mkdir -p "$data/h2"
    cp "$KC_SEED/keycloakdb.mv.db" "$data/h2/keycloakdb.mv.db"
  fi
  ln -s "$data" "$PRIVATE_HOME/data"
}

# private_launch NAME [kc args...]: start the private home of NAME with our JVM options (plus
# JAVA_OPTS_APPEND, which kc.sh adds after them) and the master admin.
private_launch() {
  local name=$1
  shift
  start_bg "$name" env JAVA_HOME="$KC_JAVA_HOME" JAVA_OPTS="$(kc_java_opts)" \
    KC_BOOTSTRAP_ADMIN_USERNAME="$KC_MASTER_USER" KC_BOOTSTRAP_ADMIN_PASSWORD="$KC_MASTER_PASSWORD" \
    bash "$PRIVATE_HOME/bin/kc.sh" start --optimized --http-host=127.0.0.1 --hostname-strict=false --cache=local "$@"
}

cmd_start_https() {
  local name=$1 cert=$2 key=$3 ca=${4:-} realm port mport url
  [ -f "$cert" ] && [ -f "$key" ] && [ -f "$ca" ] || die "usage: $0 start-https NAME CERT_FILE KEY_FILE CA_FILE"
  private_home "$name"
  realm=$(realm_name)
  port=$(pick_port)
  mport=$(pick_port "$port")
  url="https://127.0.0.1:$port"
  private_launch "$name" --http-enabled=false --https-port="$port" \
    --https-certificate-file="$cert" --https-certificate-key-file="$key" --http-management-port="$mport"
  await_start "$name" "$KC_START_TIMEOUT" "answer $url" http_ok --cacert "$ca" "$url/realms/$realm/.well-known/openid-configuration"
  # No AOT cache here (it is tied to the seed's home): the first calls would load their classes
  # while a service waits on them, past its timeout on a busy machine.
  typical_requests "$url" --cacert "$ca"
  # A seed older than the realm setup (kept while the shared server runs) lacks what it adds.
  NODE_EXTRA_CA_CERTS="$ca" configure_realm "$url"
  printf '%s\n' "$url"
}

# For experiments and benchmarks that must not disturb the shared server: http on a free loopback
# port, Keycloak options from the command line, JVM options added through JAVA_OPTS_APPEND.
cmd_start_private() {
  local name=$1 realm port mport url
  shift
  [ -n "$name" ] || die "usage: $0 start-private NAME [KEYCLOAK_OPTION...]"
  private_home "$name" "$([ "${KEYCLOAK_PRIVATE_IMPORT:-0}" = 1 ] && echo import)"
  [ "${KEYCLOAK_PRIVATE_IMPORT:-0}" = 1 ] && set -- --import-realm "$@"
  realm=$(realm_name)
  port=$(pick_port)
  mport=$(pick_port "$port")
  url="http://127.0.0.1:$port"
  private_launch "$name" --http-enabled=true --http-port="$port" --http-management-port="$mport" "$@"
  await_start "$name" "$KC_START_TIMEOUT" "answer $url" http_ok "$url/realms/$realm/.well-known/openid-configuration"
  typical_requests "$url"
  configure_realm "$url"
  printf '%s\n' "$url"
}

cmd_stop_private() {
  stop_bg "$1" 20
  rm -rf "$KC_BASE/$1-home" "$RUN/$1-data"
}

case "${1:-}" in
  install) cmd_install ;;
  start-https) shift; cmd_start_https "$@" ;;
  stop-https | stop-private) cmd_stop_private "$2" ;;
  start-private) shift; cmd_start_private "$@" ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  configure) is_running "$KC_NAME" || die "keycloak is not running"; configure_realm "$(env_get KEYCLOAK_URL)" ;;
  status) cmd_status ;;
  *) echo "usage: $0 install|start|stop|configure|status|start-https NAME CERT KEY CA|stop-https NAME|start-private NAME [OPTION...]|stop-private NAME" >&2; exit 2 ;;
esac
