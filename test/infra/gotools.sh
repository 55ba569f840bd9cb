#!/usr/bin/env bash
# Go-built tools for local runs and tests: test/infra/gotools.sh install [stripe-mock|helm|grpcurl]
# (no tool = all). grpcurl is the outside view of the cache service's reflection contract.
#
# Built with `go install <module>/<cmd>@<pinned version>` from the Go module proxy (GitHub
# release downloads are not reachable from every machine). Everything Go writes stays under
# .cache/go (GOPATH, GOMODCACHE, GOCACHE); binaries land in .cache/bin/<tool>-<version>, with
# the symlink .cache/bin/<tool> pointing at the pinned one. When that file exists, go is not
# run at all, so a repeat install takes milliseconds.
#
# Writes to .cache/run/infra.env: STRIPE_MOCK_BIN, HELM_BIN, GRPCURL_BIN (the .cache/bin/<tool> symlinks).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned versions (newest tags on proxy.golang.org when pinned). To bump: change the
# version; the build flags below are derived from the downloaded module source.
STRIPE_MOCK_VERSION=v0.203.0
HELM_VERSION=v4.3.1
GRPCURL_VERSION=v1.9.4

BIN="$CACHE/bin"
GODIR="$CACHE/go"


# ldflags for each tool, mirroring what the upstream release builds set.
ldflags_stripe_mock() {
  # GoReleaser's default ldflags: -X main.version={{.Version}} (tag without the "v").
  printf '%s' "-s -w -X main.version=${STRIPE_MOCK_VERSION#v}"
}

ldflags_grpcurl() {
  # grpcurl's .goreleaser.yml: -X main.version=v{{.Version}}.
  printf '%s' "-s -w -X main.version=$GRPCURL_VERSION"
}

ldflags_helm() {
  # helm's Makefile: LDFLAGS += -X helm.sh/helm/vN/internal/version.{version,metadata,gitCommit,gitTreeState}
  # Read the package path from the Makefile of the pinned version rather than guessing.
  local dir pkg major=${HELM_VERSION%%.*}
  dir=$(module_dir "helm.sh/helm/$major" "$HELM_VERSION")
  [ -n "$dir" ] && [ -f "$dir/Makefile" ] || die "could not download helm.sh/helm/$major@$HELM_VERSION"
  pkg=$(sed -n 's/.*-X \([^ =]*\)\.version=.*/\1/p' "$dir/Makefile" | head -n 1)
  [ -n "$pkg" ] || die "no '-X <pkg>.version=' in $dir/Makefile: check how helm $HELM_VERSION sets its version"
  # A tagged release build has empty metadata and a clean tree. The commit is not known from
  # the module proxy (the zip carries no VCS data), so gitCommit stays empty.
  printf '%s' "-s -w -X $pkg.version=$HELM_VERSION -X $pkg.metadata= -X $pkg.gitTreeState=clean"
}

# build_tool NAME CMD_PACKAGE VERSION TARGET: go install with the tool's release ldflags, into TARGET.
build_tool() {
  local name=$1 pkg=$2 version=$3 target=$4 flags tmp t0=$SECONDS
  case $name in
    stripe-mock) flags=$(ldflags_stripe_mock) ;;
    helm) flags=$(ldflags_helm) ;;
    grpcurl) flags=$(ldflags_grpcurl) ;;
  esac
  tmp=$(mktemp -d "$GODIR/gobin.XXXXXX")
  log "building $name $version with $("$GO" env GOVERSION) (go install $pkg@$version)"
  GOBIN="$tmp" "$GO" install -trimpath -ldflags "$flags" "$pkg@$version" \
    || { rm -rf "$tmp"; die "go install $pkg@$version failed"; }
  mv -f "$tmp/$(basename "$pkg")" "$target"
  rm -rf "$tmp"
  log "built $name $version in $((SECONDS - t0))s"
  # Drop binaries of other versions.
  find "$BIN" -maxdepth 1 -type f -name "$name-v*" ! -name "$name-$version" -delete
}

# install_tool NAME CMD_PACKAGE VERSION ENV_KEY VERSION_ARGS...
install_tool() {
  local name=$1 pkg=$2 version=$3 key=$4; shift 4
  local target="$BIN/$name-$version" link="$BIN/$name"
  go_build_once "$target" build_tool "$name" "$pkg" "$version" "$target"
  link_pinned "$link" "$name-$version" "$version" "$@"
  env_set "$key" "$link"
}

install_stripe_mock() {
  install_tool stripe-mock github.com/stripe/stripe-mock \
    "$STRIPE_MOCK_VERSION" STRIPE_MOCK_BIN -version
}

install_helm() {
  local major=${HELM_VERSION%%.*}
  install_tool helm "helm.sh/helm/$major/cmd/helm" \
    "$HELM_VERSION" HELM_BIN version --short
}

install_grpcurl() {
  install_tool grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl \
    "$GRPCURL_VERSION" GRPCURL_BIN -version
}

case "${1:-}" in
  install)
    case "${2:-all}" in
      stripe-mock) install_stripe_mock ;;
      helm) install_helm ;;
      grpcurl) install_grpcurl ;;
      all) install_stripe_mock; install_helm; install_grpcurl ;;
      *) die "unknown tool '$2' (stripe-mock|helm|grpcurl)" ;;
    esac
    ;;
  *) die "usage: $0 install [stripe-mock|helm|grpcurl]" ;;
esac
