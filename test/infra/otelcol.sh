#!/usr/bin/env bash
# The OpenTelemetry Collector of the tests: bash test/infra/otelcol.sh install
#
# Built from the Go module proxy with the collector's own builder (ocb, go.opentelemetry.io/
# collector/cmd/builder) from the manifest test/infra/otelcol/builder.yaml: every component that
# observability/otel-collector/config.yaml names, plus the file exporter the tests read. GitHub
# release downloads are not reachable from every machine, and no released distribution carries
# exactly these components. Everything Go writes stays under .cache/go; the binary lands in
# .cache/bin/otelcol-sp-<version>-<manifest hash>, with the symlink .cache/bin/otelcol-sp pointing
# at it. When that file exists, go is not run at all, so a repeat install takes milliseconds.
#
# Writes to .cache/run/infra.env: OTELCOL_BIN (the .cache/bin/otelcol-sp symlink).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The collector release: the builder and the core modules. The manifest pins every component.
OTELCOL_VERSION=v0.165.0
MANIFEST="$ROOT/test/infra/otelcol/builder.yaml"

BIN="$CACHE/bin"
GODIR="$CACHE/go"

# go_mod: the distribution's go.mod, from the manifest: its module, every `gomod:` line as a
# requirement, the collector core (otelcol) at the release, and the manifest's `replaces`.
go_mod() {
  printf 'module %s\n\ngo 1.25\n\nrequire (\n' "$(sed -n 's/^  module: //p' "$MANIFEST")"
  sed -n 's/^ *\(- \)\{0,1\}gomod: /\t/p' "$MANIFEST"
  printf '\tgo.opentelemetry.io/collector/otelcol %s\n)\n\n' "$OTELCOL_VERSION"
  sed -n '/^replaces:/,/^[^ ]/s/^  - /replace /p' "$MANIFEST"
}

# build_otelcol TARGET: the builder (ocb) at the release generates the distribution's sources from
# the manifest; go builds them into TARGET.
build_otelcol() {
  local target=$1 tmp t0=$SECONDS
  tmp=$(mktemp -d "$GODIR/otelcol.XXXXXX")
  log "building the OpenTelemetry Collector $OTELCOL_VERSION with $("$GO" env GOVERSION) (builder from $MANIFEST)"
  GOBIN="$tmp/bin" "$GO" install -trimpath "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" \
    || { rm -rf "$tmp"; die "go install go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION failed"; }
  sed "s|OUTPUT_PATH|$tmp/dist|" "$MANIFEST" > "$tmp/builder.yaml"
  # ocb writes main.go and components.go. Its own module step (`go mod tidy`) also resolves the
  # tests of every component, whose test-only modules (e.g. contrib's pkg/semconvtest) the Go
  # module proxy does not serve; so go.mod is written here from the manifest (as ocb's template
  # does) and `go build -mod=mod` resolves what the collector itself imports.
  PATH="$(dirname "$GO"):$PATH" "$tmp/bin/builder" --config "$tmp/builder.yaml" --skip-get-modules --skip-compilation > "$tmp/builder.log" 2>&1 \
    || { tail -n 30 "$tmp/builder.log" >&2; rm -rf "$tmp"; die "the collector's builder failed"; }
  go_mod > "$tmp/dist/go.mod"
  (cd "$tmp/dist" && GOFLAGS="$GOFLAGS -mod=mod" "$GO" build -trimpath -ldflags "-s -w" -o otelcol-sp .) > "$tmp/build.log" 2>&1 \
    || { tail -n 30 "$tmp/build.log" >&2; rm -rf "$tmp"; die "the collector build failed"; }
  mv -f "$tmp/dist/otelcol-sp" "$target"
  rm -rf "$tmp"
  log "built the OpenTelemetry Collector $OTELCOL_VERSION in $((SECONDS - t0))s"
  # Drop binaries of other versions or manifests.
  find "$BIN" -maxdepth 1 -type f -name 'otelcol-sp-v*' ! -name "$(basename "$target")" -delete
}

install_otelcol() {
  local hash target link="$BIN/otelcol-sp"
  hash=$(sha256sum "$MANIFEST" | cut -c 1-12)
  target="$BIN/otelcol-sp-$OTELCOL_VERSION-$hash"
  go_build_once "$target" build_otelcol "$target"
  link_pinned "$link" "$(basename "$target")" "$OTELCOL_VERSION" --version
  env_set OTELCOL_BIN "$link"
}

case "${1:-}" in
  install) install_otelcol ;;
  *) die "usage: $0 install" ;;
esac
