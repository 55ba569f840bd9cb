#!/usr/bin/env bash
# Builds the grpc-go peer of the cache benchmark (bench/go/cache-peer) and prints its path:
# protoc from Debian's protobuf-compiler, protoc-gen-go and protoc-gen-go-grpc with `go install`
# from the Go module proxy, the cachev1 package generated from proto/cache/v1/cache.proto at build
# time (nothing generated is checked in), grpc-go from the proxy. The binary is an entry of the
# machine-wide tool cache (test/infra/lib.sh: cached), keyed by the content of the program, the
# proto and the versions, so a second run builds nothing.
source "$(dirname "${BASH_SOURCE[0]}")/../../test/infra/lib.sh"

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
SRC="$ROOT/bench/go/cache-peer"
PROTO="$ROOT/proto/cache/v1/cache.proto"

build() {
  local out=$1 build
  command -v protoc > /dev/null || apt_install protobuf-compiler
  export GOFLAGS="$GOFLAGS -mod=mod"
  build=$(mktemp -d "$out/.src.XXXXXX")
  GOBIN="$build/bin" "$GO" install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION" >&2
  GOBIN="$build/bin" "$GO" install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION" >&2
  cp "$SRC/main.go" "$SRC/go.mod" "$build/"
  mkdir "$build/cachev1"
  # The proto names no go_package: M maps it to the package the program imports.
  mapping="Mcache/v1/cache.proto=sp.local/bench/cache-peer/cachev1"
  PATH="$build/bin:$PATH" protoc -I "$ROOT/proto" --go_out="$build/cachev1" --go_opt=paths=source_relative,"$mapping" \
    --go-grpc_out="$build/cachev1" --go-grpc_opt=paths=source_relative,"$mapping" cache/v1/cache.proto
  mv "$build/cachev1/cache/v1/"*.go "$build/cachev1/"
  log "building the grpc-go cache peer ($("$GO" env GOVERSION))"
  (cd "$build" && "$GO" mod tidy >&2 && "$GO" build -trimpath -ldflags "-s -w" -o "$out/cache-peer-go" .)
  rm -rf "$build"
}

go_tool cache-peer-go "$PROTOC_GEN_GO_VERSION-$PROTOC_GEN_GO_GRPC_VERSION" "$(cat "$SRC/main.go" "$SRC/go.mod" "$PROTO")" \
  "the grpc-go cache peer (bench/go/cache-peer)" build >&2
printf '%s\n' "$ENTRY/cache-peer-go"
