#!/usr/bin/env bash
# Builds oauth2-proxy, the forward-auth peer of the auth benchmark (bench/auth.bench.ts), and prints
# its path: `go install` of the pinned release from the Go module proxy, as test/infra/gotools.sh
# builds helm and stripe-mock, into the machine-wide tool cache (test/infra/lib.sh: cached). A
# second run builds nothing (~4 min cold on 2 busy cores).
#
# Pinned: v7.15.6, the newest release on proxy.golang.org when pinned (2026-11-26). The release
# line's security audit fixes landed in v7.15.2 (health-check User-Agent and X-Forwarded-Uri
# authentication bypasses, among others); no advisory against v7.15.6 was found. Check the
# project's GitHub security advisories before bumping.
source "$(dirname "${BASH_SOURCE[0]}")/../../test/infra/lib.sh"

OAUTH2_PROXY_VERSION=v7.15.6
MODULE=github.com/oauth2-proxy/oauth2-proxy/v7

build() {
  log "go install $MODULE@$OAUTH2_PROXY_VERSION ($("$GO" env GOVERSION))"
  # The release's Makefile sets the version through this variable.
  GOBIN="$1" "$GO" install -trimpath -ldflags "-s -w -X $MODULE/pkg/version.VERSION=$OAUTH2_PROXY_VERSION" "$MODULE@$OAUTH2_PROXY_VERSION" >&2
}

go_tool oauth2-proxy "$OAUTH2_PROXY_VERSION" "" "go install $MODULE@$OAUTH2_PROXY_VERSION from the Go module proxy" build >&2
printf '%s\n' "$ENTRY/oauth2-proxy"
