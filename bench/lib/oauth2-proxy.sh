#!/usr/bin/env bash
# Builds oauth2-proxy, the forward-auth peer of the auth benchmark (bench/auth.bench.ts), and prints
# its path: `go install` of the pinned release from the Go module proxy, as test/infra/gotools.sh
# builds helm and stripe-mock; everything Go writes under .cache/go, the binary at
# .cache/bin/oauth2-proxy-<version>. A second run builds nothing (~4 min cold on 2 busy cores).
#
# Pinned: v7.15.6, the newest release on proxy.golang.org when pinned (2026-11-26). The release
# line's security audit fixes landed in v7.15.2 (health-check User-Agent and X-Forwarded-Uri
# authentication bypasses, among others); no advisory against v7.15.6 was found. Check the
# project's GitHub security advisories before bumping.
source "$(dirname "${BASH_SOURCE[0]}")/../../test/infra/lib.sh"

OAUTH2_PROXY_VERSION=v7.15.6
MODULE=github.com/oauth2-proxy/oauth2-proxy/v7
target="$CACHE/bin/oauth2-proxy-$OAUTH2_PROXY_VERSION"

build() {
  local tmp
  mkdir -p "$CACHE/bin"
  tmp=$(mktemp -d "$CACHE/go/gobin.XXXXXX")
  log "building oauth2-proxy $OAUTH2_PROXY_VERSION with $("$GO" env GOVERSION) (go install $MODULE@$OAUTH2_PROXY_VERSION)"
  # The release's Makefile sets the version through this variable.
  GOBIN="$tmp" "$GO" install -trimpath -ldflags "-s -w -X $MODULE/pkg/version.VERSION=$OAUTH2_PROXY_VERSION" "$MODULE@$OAUTH2_PROXY_VERSION" >&2 \
    || { rm -rf "$tmp"; die "go install $MODULE@$OAUTH2_PROXY_VERSION failed"; }
  mv -f "$tmp/oauth2-proxy" "$target"
  rm -rf "$tmp"
}

go_build_once "$target" build
printf '%s\n' "$target"
