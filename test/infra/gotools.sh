#!/usr/bin/env bash
# Go-built tools for local runs and tests: test/infra/gotools.sh install [stripe-mock|helm|grpcurl|ghz|notation]
# (no tool = all). grpcurl is the outside view of the cache service's reflection contract; ghz is
# grpc-go's client driving the cache's transport (the cache's client-compatibility test); notation
# (the Notary Project's CLI) signs a release's images and chart in the registry and verifies them
# (scripts/release.sh with SIGNING_KEY, docs/releasing.md).
#
# Built with `go install <module>/<cmd>@<pinned version>` from the Go module proxy (GitHub
# release downloads are not reachable from every machine) into the machine-wide tool cache
# (lib.sh: cached), keyed by the version, the go that builds and the build's text; the symlink
# .cache/bin/<tool> points at the entry's binary. When the entry is there, nothing is built, so a
# repeat install takes milliseconds.
#
# Writes to .cache/run/infra.env: STRIPE_MOCK_BIN, HELM_BIN, GRPCURL_BIN, GHZ_BIN, NOTATION_BIN (the
# .cache/bin/<tool> symlinks).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned versions (newest tags on proxy.golang.org when pinned). To bump: change the
# version; the build flags below are derived from the downloaded module source.
STRIPE_MOCK_VERSION=v0.203.0
HELM_VERSION=v4.3.1
GRPCURL_VERSION=v1.9.4
# The newest ghz the proxy serves (v0.121.0, 2025-12-07; `go list -m -versions` lists only up to v0.93.0).
GHZ_VERSION=v0.121.0
# The proxy here answers 403 to notation's version list and serves v1.3.2 (2025-04-24) by name.
# notation rather than cosign: its go.mod requires 24 modules, cosign v2.6.5's 300 (cloud KMS clients,
# sigstore services); it signs and verifies with a local key and certificate, offline.
NOTATION_VERSION=v1.3.2

BIN="$CACHE/bin"

# ldflags for each tool, mirroring what the upstream release builds set.
ldflags_stripe_mock() {
  # GoReleaser's default ldflags: -X main.version={{.Version}} (tag without the "v").
  printf '%s' "-s -w -X main.version=${STRIPE_MOCK_VERSION#v}"
}

ldflags_grpcurl() {
  # grpcurl's .goreleaser.yml: -X main.version=v{{.Version}}.
  printf '%s' "-s -w -X main.version=$GRPCURL_VERSION"
}

ldflags_ghz() {
  # ghz's .goreleaser.yml sets no ldflags: GoReleaser's default, -X main.version={{.Version}}.
  printf '%s' "-s -w -X main.version=${GHZ_VERSION#v}"
}

ldflags_notation() {
  # notation's Makefile: -X <module>/internal/version.GitCommit=<commit> and BuildMetadata, empty
  # for a tagged build (the version itself is a constant of the source). The commit is the tag's,
  # as the proxy's Origin record names it.
  local module=github.com/notaryproject/notation commit
  commit=$("$GO" mod download -json "$module@$NOTATION_VERSION" | sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)",\{0,1\}$/\1/p' | head -n 1)
  printf '%s' "-s -w -X $module/internal/version.GitCommit=$commit -X $module/internal/version.BuildMetadata="
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

# build_tool DIR NAME CMD_PACKAGE VERSION: go install with the tool's release ldflags, into DIR.
build_tool() {
  local dir=$1 name=$2 pkg=$3 version=$4 flags
  case $name in
    stripe-mock) flags=$(ldflags_stripe_mock) ;;
    helm) flags=$(ldflags_helm) ;;
    grpcurl) flags=$(ldflags_grpcurl) ;;
    ghz) flags=$(ldflags_ghz) ;;
  esac
  log "go install -trimpath -ldflags '$flags' $pkg@$version ($("$GO" env GOVERSION))"
  GOBIN="$dir" "$GO" install -trimpath -ldflags "$flags" "$pkg@$version"
  [ -x "$dir/$(basename "$pkg")" ] || die "go install $pkg@$version left no $(basename "$pkg")"
  [ "$(basename "$pkg")" = "$name" ] || mv "$dir/$(basename "$pkg")" "$dir/$name"
}

# build_notation DIR NAME CMD_PACKAGE VERSION: `go install pkg@version` first asks the proxy for
# the module's version list (for a deprecation notice), which the proxy here refuses for notation
# (403): so `go build` in the downloaded module instead, the same build (its go.sum pins every
# dependency; its go.mod has no replace directive that `go install` would refuse).
build_notation() {
  local dir=$1 name=$2 pkg=$3 version=$4 module=${3%/cmd/*} src flags
  flags=$(ldflags_notation)
  src=$(module_dir "$module" "$version")
  [ -n "$src" ] && [ -f "$src/go.mod" ] || die "could not download $module@$version"
  ! grep -q '^replace' "$src/go.mod" || die "$module@$version's go.mod replaces modules: go install would refuse it"
  log "go build -trimpath -ldflags '$flags' ./${pkg#"$module"/} in $module@$version ($("$GO" env GOVERSION))"
  (cd "$src" && "$GO" build -trimpath -ldflags "$flags" -o "$dir/$name" "./${pkg#"$module"/}")
}

# install_tool NAME CMD_PACKAGE VERSION ENV_KEY VERSION_ARGS...: built by build_<name> where there is
# one, else build_tool.
install_tool() {
  local name=$1 pkg=$2 version=$3 key=$4 out build=build_tool how="go install $2@$3"
  shift 4
  if declare -F "build_${name//-/_}" > /dev/null; then build=build_${name//-/_} how="go build of $pkg in $version's module"; fi
  go_tool "$name" "$version" "$pkg $(declare -f "ldflags_${name//-/_}")" "$how from the Go module proxy" \
    "$build" "$name" "$pkg" "$version"
  own_dir "$BIN"
  if [ "$(readlink "$BIN/$name" 2> /dev/null)" != "$ENTRY/$name" ]; then
    out=$("$ENTRY/$name" "$@" 2>&1) || die "$name $* failed: $out"
    grep -qF "${version#v}" <<< "$out" || die "$name $* does not report $version: $out"
    link_tool "$BIN/$name" "$ENTRY/$name"
  fi
  env_set "$key" "$BIN/$name"
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

install_ghz() {
  install_tool ghz github.com/bojand/ghz/cmd/ghz \
    "$GHZ_VERSION" GHZ_BIN --version
}

install_notation() {
  install_tool notation github.com/notaryproject/notation/cmd/notation \
    "$NOTATION_VERSION" NOTATION_BIN version
}

case "${1:-}" in
  install)
    case "${2:-all}" in
      stripe-mock) install_stripe_mock ;;
      helm) install_helm ;;
      grpcurl) install_grpcurl ;;
      ghz) install_ghz ;;
      notation) install_notation ;;
      all) install_stripe_mock; install_helm; install_grpcurl; install_ghz; install_notation ;;
      *) die "unknown tool '$2' (stripe-mock|helm|grpcurl|ghz|notation)" ;;
    esac
    ;;
  *) die "usage: $0 install [stripe-mock|helm|grpcurl|ghz|notation]" ;;
esac
