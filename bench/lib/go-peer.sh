#!/usr/bin/env bash
# Builds the grpc-go peer of the cache benchmark (bench/go/cache-peer) and prints its path:
# protoc from Debian's protobuf-compiler, protoc-gen-go and protoc-gen-go-grpc with `go install`
# from the Go module proxy, the cachev1 package generated from proto/cache/v1/cache.proto at build
# time (nothing generated is checked in), grpc-go from the proxy. Everything under .cache; the
# binary is keyed by the content of the program, the proto and the versions, so a second run
# builds nothing.
source "$(dirname "${BASH_SOURCE[0]}")/../../test/infra/lib.sh"

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
SRC="$ROOT/bench/go/cache-peer"
PROTO="$ROOT/proto/cache/v1/cache.proto"

key=$(cat "$SRC/main.go" "$SRC/go.mod" "$PROTO" <(echo "$PROTOC_GEN_GO_VERSION $PROTOC_GEN_GO_GRPC_VERSION") | sha256sum | cut -c1-16)
target="$CACHE/bin/cache-peer-go-$key"
if [ ! -x "$target" ]; then
  command -v protoc > /dev/null || apt_install protobuf-compiler
  go_env -mod=mod
  mkdir -p "$CACHE/bin" "$CACHE/go/bin"
  GOBIN="$CACHE/go/bin" "$GO" install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION" >&2
  GOBIN="$CACHE/go/bin" "$GO" install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION" >&2
  build=$(mktemp -d "$CACHE/go/cache-peer.XXXXXX")
  trap 'rm -rf "$build"' EXIT
  cp "$SRC/main.go" "$SRC/go.mod" "$build/"
  mkdir "$build/cachev1"
  # The proto names no go_package: M maps it to the package the program imports.
  mapping="Mcache/v1/cache.proto=sp.local/bench/cache-peer/cachev1"
  PATH="$CACHE/go/bin:$PATH" protoc -I "$ROOT/proto" --go_out="$build/cachev1" --go_opt=paths=source_relative,"$mapping" \
    --go-grpc_out="$build/cachev1" --go-grpc_opt=paths=source_relative,"$mapping" cache/v1/cache.proto
  mv "$build/cachev1/cache/v1/"*.go "$build/cachev1/"
  log "building the grpc-go cache peer ($("$GO" env GOVERSION))"
  (cd "$build" && "$GO" mod tidy >&2 && "$GO" build -trimpath -ldflags "-s -w" -o "$target" .)
  find "$CACHE/bin" -maxdepth 1 -type f -name 'cache-peer-go-*' ! -name "$(basename "$target")" -delete
fi
printf '%s\n' "$target"
