#!/usr/bin/env bash
# Local single-node Apache Kafka broker (KRaft, broker+controller in one JVM) for dev runs
# and tests, built only from the Kafka jars on Maven Central (no apache.org tarball).
#
#   bash test/infra/kafka.sh install   # jars, once per machine, into the tool cache (lib.sh: cached)
#   bash test/infra/kafka.sh start     # background broker; KAFKA_BROKERS=127.0.0.1:<port> in .cache/run/infra.env
#   bash test/infra/kafka.sh stop
#   bash test/infra/kafka.sh status
#   bash test/infra/kafka.sh run-private <datadir> <brokerPort> <controllerPort> [advertisedHost]
#       # formats <datadir> unless already formatted (data survives a kill + restart with the
#       # same arguments) and execs the broker in the foreground; tests spawn this to get a
#       # private broker they can kill and restart. `start` runs the same code path.
#       # advertisedHost (default 127.0.0.1): the address clients are told to connect to, for a
#       # broker reached through a forwarded address (the cluster suite's pods: cluster.sh expose).
#   bash test/infra/kafka.sh run-cluster-node <datadir> <nodeId> <brokerPort> <controllerPort> <voters> <clusterId>
#       # one node (broker+controller) of a multi-node KRaft cluster, same exec-in-foreground
#       # contract; <voters> is controller.quorum.voters (1@127.0.0.1:p1,2@...,3@...), every node
#       # gets the same <clusterId>. Config: kafka/cluster-server.properties (replication 3,
#       # min.insync.replicas 2). test/support/kafka-cluster.ts starts three of these.
#
# Version: Kafka 4.4.0, the newest on Maven Central. Checked with kafkajs 2.2.4 (the client
# the Node services use): idempotent producer send with acks=-1, consumer group subscribe +
# consume from beginning, message headers (string and binary) round trip, admin
# createTopics, topic auto-creation and a transactional producer all work against 4.4.0.
# kafkajs picks the highest API versions both sides support, and the old versions KIP-896
# removed in 4.0 are below what kafkajs 2.2.4 picks. Fallback if that ever changes:
# KAFKA_VERSION=3.9.2 works with this same script (checked).
# Maven Central quirk: kafka_2.13:4.4.0 declares a dependency on
# org.apache.kafka:kafka-tools-api:4.4.0, which is not published there. That jar only holds
# the console tools' Decoder/RecordReader interfaces and no broker class refers to it
# (checked over the 4.3.1 and 4.4.0 jars), so kafka/pom.xml excludes it.
#
# Start time: on this shared 2-core machine a default JVM needed 5-9 s for `start`, mostly
# class loading and C2 compiler threads competing for the CPUs. Two JVM settings bring it
# to 2-3 s (the broker JVM alone: 1-2 s): C1 only (-XX:TieredStopAtLevel=1, plenty for a
# test broker; drop it via KAFKA_JVM_OPTS when benchmarking throughput), and an AppCDS
# archive of the broker's classes that `install` records once by starting and stopping a
# throwaway broker (an entry of the tool cache beside the jars, ~50 MB; KAFKA_CDS=0 disables it). RSS of the
# running broker: ~300 MB idle, ~340 MB after some traffic.
#
# Environment overrides: KAFKA_VERSION, KAFKA_JAVA (default /usr/bin/java; Kafka 4.x needs
# Java >= 17), KAFKA_HEAP_OPTS, KAFKA_JVM_OPTS, KAFKA_CDS (1/0), KAFKA_START_TIMEOUT (s,
# default 90), KAFKA_LOG4J2_CONFIG (e.g. a copy of kafka/log4j2.properties at INFO level).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
KAFKA_JAVA="${KAFKA_JAVA:-/usr/bin/java}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}"
# Serial GC, C1 only and a capped code cache/metaspace: low RSS and a fast start.
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=64m -XX:MaxMetaspaceSize=128m -Xss512k -Djava.awt.headless=true}"
KAFKA_CDS="${KAFKA_CDS:-1}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
KAFKA_LOG4J2_CONFIG="${KAFKA_LOG4J2_CONFIG:-$ROOT/test/infra/kafka/log4j2.properties}"

HERE="$ROOT/test/infra/kafka"
NAME=kafka
# Set by install: the jars' folder (an entry of the tool cache) and the class data sharing archive.
LIBS=""
CDS_ARCHIVE=""

# ---------------------------------------------------------------------------------------------
# install

install() {
  cached kafka-libs "$KAFKA_VERSION" "$(input_key "$(cat "$HERE/pom.xml")" "$(declare -f build_libs)")" \
    "Kafka $KAFKA_VERSION jars from Maven Central" build_libs
  LIBS=$ENTRY
  [ "$KAFKA_CDS" = 1 ] || return 0
  # The archive holds the class path it was recorded with: it is keyed by the jars' entry, and by
  # the Java that records and reads it. Recording it can fail (a broker that does not come up in
  # time on a busy machine): that only costs start time, so brokers then start without it, and
  # this clone does not try again with the same key (another clone, or a new key, does).
  local key failed="$CACHE/kafka-cds.failed"
  key=$(input_key "$LIBS" "$(java_id "$KAFKA_JAVA")" "$KAFKA_JVM_OPTS" "$(declare -f cds_train broker_exec)")
  [ "$(cat "$failed" 2> /dev/null)" != "$key" ] || return 0
  if (cached kafka-cds "$KAFKA_VERSION" "$key" "a class data sharing archive for faster broker starts" cds_train); then
    CDS_ARCHIVE="$SHARED/kafka-cds/$KAFKA_VERSION-$key/kafka.jsa"
  else
    say "  kafka-cds: not recorded (a busy machine?): brokers start without it, 1-2 s slower (log: the install's)"
    echo "$key" > "$failed"
  fi
}

# build_libs DIR: the broker's jars (kafka/pom.xml) into DIR. Maven's own repository is in the tool
# cache too, so a rebuild downloads only what changed.
build_libs() {
  local dir=$1
  command -v mvn > /dev/null || die "mvn not found (Maven is needed to fetch the Kafka jars)"
  log "mvn package -f $HERE/pom.xml -Dkafka.version=$KAFKA_VERSION"
  # Maven 3.8 prints bare ANSI resets even with -B -q: strip them.
  mvn -B -q -f "$HERE/pom.xml" -Dstyle.color=never \
    -Dmaven.repo.local="$SHARED/m2/kafka" \
    -Dkafka.version="$KAFKA_VERSION" \
    -Dlibs.dir="$dir" \
    package 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
  [ -f "$dir/kafka_2.13-$KAFKA_VERSION.jar" ] || die "kafka_2.13-$KAFKA_VERSION.jar missing after mvn"
  log "Kafka $KAFKA_VERSION: $(ls "$dir"/*.jar | wc -l) jars, $(du -sh "$dir" | cut -f1)"
}

# Explicit, sorted class path (not "libs/*") so it is identical on every run: a CDS archive is
# only used when the class path matches the one it was recorded with.
classpath() {
  local jars=("$LIBS"/*.jar)
  local IFS=:
  printf '%s\n' "${jars[*]}"
}

# cds_train DIR: record the class data sharing archive DIR/kafka.jsa: start a throwaway broker with
# -XX:ArchiveClassesAtExit, wait until it serves metadata, stop it (the JVM writes the archive
# while exiting).
cds_train() {
  local dir=$1 tmpd bport cport pid rc=0
  tmpd=$(mktemp -d "$dir/.train.XXXXXX")
  read -r bport cport < <(free_port 2)
  (broker_exec "$tmpd" "$bport" "$cport" "-XX:ArchiveClassesAtExit=$dir/kafka.jsa") > "$tmpd/broker.log" 2>&1 &
  pid=$!
  # Once per machine, beside the other installs' builds: more time than a start gets.
  node "$HERE/ready.cjs" 127.0.0.1 "$bport" "$((KAFKA_START_TIMEOUT > 300 ? KAFKA_START_TIMEOUT : 300))" "$pid" --warm > /dev/null || rc=$?
  kill -TERM "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  if [ $rc -ne 0 ] || [ ! -s "$dir/kafka.jsa" ]; then
    cat "$tmpd/broker.log"
    die "could not record the class data sharing archive (the training broker's log is above)"
  fi
  rm -rf "$tmpd"
}

# ---------------------------------------------------------------------------------------------
# broker

# Kafka UUIDs are 16 random bytes in URL-safe base64 without padding. Like Uuid.randomUuid(),
# avoid a leading '-' (looks like a CLI flag). Saves a JVM start for `kafka-storage random-uuid`.
random_cluster_id() {
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [ "${id:0:1}" != "-" ] && { printf '%s\n' "$id"; return; }
  done
}

# Single node by default; run-cluster-node sets these for one node of a cluster.
TEMPLATE="$HERE/server.properties"
NODE_ID=1
VOTERS=""
CLUSTER_ID=""
ADVERTISED_HOST=127.0.0.1

# render_config DATADIR BROKER_PORT CONTROLLER_PORT: write DATADIR/server.properties.
render_config() {
  local datadir=$1 bport=$2 cport=$3 esc
  esc=$(printf '%s' "$datadir" | sed 's/[\\|&]/\\&/g')
  sed -e "s|@DATA_DIR@|$esc|g" -e "s|@BROKER_PORT@|$bport|g" -e "s|@CONTROLLER_PORT@|$cport|g" \
    -e "s|@NODE_ID@|$NODE_ID|g" -e "s|@VOTERS@|$VOTERS|g" -e "s|@ADVERTISED_HOST@|$ADVERTISED_HOST|g" \
    "$TEMPLATE" > "$datadir/server.properties"
}

# broker_exec DATADIR BROKER_PORT CONTROLLER_PORT [JVM_OPT...]: write the config, format the
# storage unless already formatted, then exec the broker (this process becomes the JVM).
broker_exec() {
  local datadir=$1 bport=$2 cport=$3 cp cds=() out
  shift 3
  mkdir -p "$datadir"
  datadir=$(cd "$datadir" && pwd)
  render_config "$datadir" "$bport" "$cport"
  cp=$(classpath)
  if [ "$KAFKA_CDS" = 1 ] && [ $# -eq 0 ] && [ -n "$CDS_ARCHIVE" ]; then
    cds=("-XX:SharedArchiveFile=$CDS_ARCHIVE")
  fi
  if [ ! -f "$datadir/kraft/meta.properties" ]; then
    # Static quorum (controller.quorum.voters), so no --standalone/--initial-controllers.
    # Short-lived tool: small heap, C1 only. Its chatty stdout is only shown on failure.
    if ! out=$("$KAFKA_JAVA" -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "${cds[@]}" \
      "-Dlog4j2.configurationFile=$KAFKA_LOG4J2_CONFIG" -cp "$cp" \
      kafka.tools.StorageTool format --ignore-formatted \
      --cluster-id "${CLUSTER_ID:-$(random_cluster_id)}" --config "$datadir/server.properties" 2>&1); then
      printf '%s\n' "$out" >&2
      die "formatting $datadir failed"
    fi
  fi
  # shellcheck disable=SC2086 # the *_OPTS variables are intentionally word-split
  exec "$KAFKA_JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS "${cds[@]}" "$@" \
    "-Dlog4j2.configurationFile=$KAFKA_LOG4J2_CONFIG" -cp "$cp" \
    kafka.Kafka "$datadir/server.properties"
}

run_private() {
  [ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: kafka.sh run-private <datadir> <brokerPort> <controllerPort> [advertisedHost]"
  [[ $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ ]] || die "ports must be numbers: '$2' '$3'"
  ADVERTISED_HOST=${4:-127.0.0.1}
  [[ $ADVERTISED_HOST =~ ^[A-Za-z0-9.-]+$ ]] || die "advertisedHost must be a host name or IPv4 address: '$ADVERTISED_HOST'"
  install
  broker_exec "$1" "$2" "$3"
}

run_cluster_node() {
  [ $# -eq 6 ] || die "usage: kafka.sh run-cluster-node <datadir> <nodeId> <brokerPort> <controllerPort> <voters> <clusterId>"
  [[ $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ && $4 =~ ^[0-9]+$ ]] || die "node id and ports must be numbers: '$2' '$3' '$4'"
  [[ $5 =~ ^[0-9]+@[0-9.]+:[0-9]+(,[0-9]+@[0-9.]+:[0-9]+)*$ ]] || die "voters must look like 1@127.0.0.1:9093,2@...: '$5'"
  [[ $6 =~ ^[A-Za-z0-9_-]{22}$ ]] || die "cluster id must be 22 URL-safe base64 characters: '$6'"
  TEMPLATE="$HERE/cluster-server.properties"
  NODE_ID=$2
  VOTERS=$5
  CLUSTER_ID=$6
  install
  broker_exec "$1" "$3" "$4"
}

start() {
  if is_running "$NAME"; then
    log "kafka already running (pid $(cat "$RUN/$NAME.pid"), $(env_get KAFKA_BROKERS))"
    return 0
  fi
  stop_bg "$NAME" # clears a stale pid file
  local t0 bport cport attempt rc pid
  t0=$(date +%s%N)
  install
  for attempt in 1 2 3; do
    read -r bport cport < <(free_port 2)
    rm -rf "$RUN/kafka-data"
    start_bg "$NAME" bash "$ROOT/test/infra/kafka.sh" run-private "$RUN/kafka-data" "$bport" "$cport"
    pid=$(cat "$RUN/$NAME.pid")
    rc=0
    # Ready = a Metadata request lists the broker (registered and unfenced); --warm also waits
    # for producer ids and the group/transaction coordinators (creates their internal topics).
    node "$HERE/ready.cjs" 127.0.0.1 "$bport" "$KAFKA_START_TIMEOUT" "$pid" --warm > /dev/null || rc=$?
    if [ $rc -eq 0 ]; then
      env_set KAFKA_BROKERS "127.0.0.1:$bport"
      log "kafka $KAFKA_VERSION started on 127.0.0.1:$bport (controller 127.0.0.1:$cport, pid $pid) in $((($(date +%s%N) - t0) / 1000000)) ms"
      return 0
    fi
    # free_port only proposes a port; another process may grab it before the broker binds it.
    if [ $rc -eq 2 ] && grep -q -E 'BindException|Address already in use' "$RUN/$NAME.log"; then
      log "port taken before kafka could bind it (attempt $attempt), retrying with new ports"
      stop_bg "$NAME"
      continue
    fi
    break
  done
  tail -n 30 "$RUN/$NAME.log" >&2 || true
  stop_bg "$NAME"
  die "kafka did not become ready after $((($(date +%s%N) - t0) / 1000000)) ms (log: $RUN/$NAME.log)"
}

stop() {
  if is_running "$NAME"; then log "stopping kafka"; fi
  stop_bg "$NAME" 30
  env_unset KAFKA_BROKERS
}

status() { report_status "$NAME" "KAFKA_BROKERS=$(env_get KAFKA_BROKERS)"; }

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  run-private) shift; run_private "$@" ;;
  run-cluster-node) shift; run_cluster_node "$@" ;;
  *) die "usage: kafka.sh install|start|stop|status|run-private <datadir> <brokerPort> <controllerPort> [advertisedHost]|run-cluster-node <datadir> <nodeId> <brokerPort> <controllerPort> <voters> <clusterId>" ;;
esac
