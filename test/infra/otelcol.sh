#!/usr/bin/env bash
# The OpenTelemetry Collector of the tests: bash test/infra/otelcol.sh install
#
# Built from the Go module proxy with the collector's own builder (ocb, go.opentelemetry.io/
# collector/cmd/builder) from the manifest test/infra/otelcol/builder.yaml: every component that
# observability/otel-collector/config.yaml names, plus the file exporter the tests read. GitHub
# release downloads are not reachable from every machine, and no released distribution carries
# exactly these components. The binary is an entry of the machine-wide tool cache (lib.sh:
# cached), keyed by the release, the manifest, the go that builds and the build's text; the
# symlink .cache/bin/otelcol-sp points at it. A repeat install takes milliseconds.
#
# Writes to .cache/run/infra.env: OTELCOL_BIN (the .cache/bin/otelcol-sp symlink).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The collector release: the builder and the core modules. The manifest pins every component.
OTELCOL_VERSION=v0.165.0
MANIFEST="$ROOT/test/infra/otelcol/builder.yaml"
# Prometheus' service discoveries built in: those observability/otel-collector/config.yaml uses
# (file and http discovery are always in): the collector's own `validate` of the example
# (test/e2e/otel-collector.test.ts) refuses a discovery configuration that is not built in.
PROMETHEUS_SD_TAGS=remove_all_sd,enable_kubernetes_sd

BIN="$CACHE/bin"

# go_mod: the distribution's go.mod, from the manifest: its module, every `gomod:` line as a
# requirement, the collector core (otelcol) at the release, and the manifest's `replaces`.
go_mod() {
  printf 'module %s\n\ngo 1.25\n\nrequire (\n' "$(sed -n 's/^  module: //p' "$MANIFEST")"
  sed -n 's/^ *\(- \)\{0,1\}gomod: /\t/p' "$MANIFEST"
  printf '\tgo.opentelemetry.io/collector/otelcol %s\n)\n\n' "$OTELCOL_VERSION"
  sed -n '/^replaces:/,/^[^ ]/s/^  - /replace /p' "$MANIFEST"
}

# build_otelcol DIR: the builder (ocb) at the release generates the distribution's sources from
# the manifest; go builds them into DIR/otelcol-sp.
build_otelcol() {
  local dir=$1 tmp
  mkdir -p "$SHARED/go"
  tmp=$(mktemp -d "$SHARED/go/otelcol.XXXXXX")
  log "go install go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION ($("$GO" env GOVERSION))"
  GOBIN="$tmp/bin" "$GO" install -trimpath "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" \
    || { rm -rf "$tmp"; die "go install go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION failed"; }
  sed "s|OUTPUT_PATH|$tmp/dist|" "$MANIFEST" > "$tmp/builder.yaml"
  # ocb writes main.go and components.go. Its own module step (`go mod tidy`) also resolves the
  # tests of every component, whose test-only modules (e.g. contrib's pkg/semconvtest) the Go
  # module proxy does not serve; so go.mod is written here from the manifest (as ocb's template
  # does) and `go build -mod=mod` resolves what the collector itself imports.
  PATH="$(dirname "$GO"):$PATH" "$tmp/bin/builder" --config "$tmp/builder.yaml" --skip-get-modules --skip-compilation \
    || { rm -rf "$tmp"; die "the collector's builder failed"; }
  go_mod > "$tmp/dist/go.mod"
  # The Prometheus receiver registers every service discovery of Prometheus (its `plugins`
  # package: the AWS, Azure, GCE, OCI, … SDKs, most of the build) unless built with Prometheus' own
  # tags: remove_all_sd, then each one the configuration uses (kubernetes_sd_configs only).
  log "go build -tags $PROMETHEUS_SD_TAGS the collector (go.mod from $MANIFEST)"
  (cd "$tmp/dist" && GOFLAGS="$GOFLAGS -mod=mod" "$GO" build -trimpath -tags "$PROMETHEUS_SD_TAGS" -ldflags "-s -w" -o "$dir/otelcol-sp" .) \
    || { rm -rf "$tmp"; die "the collector build failed"; }
  rm -rf "$tmp"
}

install_otelcol() {
  local out
  go_tool otelcol "$OTELCOL_VERSION" "$(cat "$MANIFEST") $(declare -f go_mod) $PROMETHEUS_SD_TAGS" "the OpenTelemetry Collector $OTELCOL_VERSION with its builder, from the Go module proxy" build_otelcol
  own_dir "$BIN"
  if [ "$(readlink "$BIN/otelcol-sp" 2> /dev/null)" != "$ENTRY/otelcol-sp" ]; then
    out=$("$ENTRY/otelcol-sp" --version 2>&1) || die "otelcol-sp --version failed: $out"
    grep -qF "${OTELCOL_VERSION#v}" <<< "$out" || die "otelcol-sp does not report $OTELCOL_VERSION: $out"
    link_tool "$BIN/otelcol-sp" "$ENTRY/otelcol-sp"
  fi
  env_set OTELCOL_BIN "$BIN/otelcol-sp"
}

case "${1:-}" in
  install) install_otelcol ;;
  *) die "usage: $0 install" ;;
esac
