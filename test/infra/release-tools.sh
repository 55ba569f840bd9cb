#!/usr/bin/env bash
# Tools of the release tests (test/cluster/release.test.ts; docs/releasing.md), installed by
# `make test` and `make deps` only (not `make up`):
#   bash test/infra/release-tools.sh install [registry|buf|oasdiff]   (no tool: all)
#
# - An OCI registry to push a release into: Debian's docker-registry package (the CNCF
#   Distribution registry, 2.8: OCI image manifests and Helm's OCI charts). As with promtool, the
#   .deb is fetched with `apt-get download` and only its binary unpacked (dpkg-deb): installing the
#   package would add a system user and start a registry through its maintainer scripts.
# - The contract checks against the previous release (scripts/contracts.ts, `make contracts`):
#   buf (`buf breaking`, the cache proto), the release binary from Buf's own npm package
#   (`@bufbuild/buf-linux-x64`, which Buf publishes with every release: a download instead of a go
#   build of 4 minutes of CPU), and oasdiff (`oasdiff breaking`, the OpenAPI documents), built with
#   `go install` from the Go module proxy (neither is in Debian bookworm; oasdiff is on no registry
#   this project reaches).
#
# Each is an entry of the machine-wide tool cache (lib.sh: cached), linked from .cache/bin.
# Writes to .cache/run/infra.env: DOCKER_REGISTRY_BIN, BUF_BIN, OASDIFF_BIN.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN="$CACHE/bin"
# Pinned versions (the newest the Go module proxy, for buf its npm package, served when pinned).
BUF_VERSION=v1.75.0
OASDIFF_VERSION=v1.37.0

# unpack_registry DIR DEB_VERSION: docker-registry's binary into DIR.
unpack_registry() {
  local dir=$1 deb
  deb=$(deb_download docker-registry "$2")
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --strip-components=3 ./usr/bin/docker-registry
}

install_registry() {
  local version out
  version=$(deb_version docker-registry)
  cached docker-registry "$version" "$(input_key "$(declare -f unpack_registry deb_download)")" \
    "docker-registry from Debian's docker-registry $version" unpack_registry "$version"
  own_dir "$BIN"
  if [ "$(readlink "$BIN/docker-registry" 2> /dev/null)" != "$ENTRY/docker-registry" ]; then
    out=$("$ENTRY/docker-registry" --version 2>&1) || die "docker-registry does not run: $out"
    link_tool "$BIN/docker-registry" "$ENTRY/docker-registry"
  fi
  env_set DOCKER_REGISTRY_BIN "$BIN/docker-registry"
}

# go_install DIR PACKAGE VERSION NAME [LDFLAGS]: `go install PACKAGE@VERSION` into DIR as NAME.
go_install() {
  local dir=$1 pkg=$2 version=$3 name=$4 flags=${5:-}
  log "go install -trimpath -ldflags '-s -w $flags' $pkg@$version ($("$GO" env GOVERSION))"
  # This go meets both modules' go line; oasdiff's go.mod also names a newer toolchain, which the
  # go command would otherwise try to download.
  GOTOOLCHAIN=local GOBIN="$dir" "$GO" install -trimpath -ldflags "-s -w $flags" "$pkg@$version"
  [ -x "$dir/$(basename "$pkg")" ] || die "go install $pkg@$version left no $(basename "$pkg")"
  [ "$(basename "$pkg")" = "$name" ] || mv "$dir/$(basename "$pkg")" "$dir/$name"
}

# install_go_tool NAME PACKAGE VERSION ENV_KEY LDFLAGS VERSION_ARGS...: built once per machine, linked
# from .cache/bin after it ran once and named its version.
install_go_tool() {
  local name=$1 pkg=$2 version=$3 key=$4 flags=$5 out
  shift 5
  go_tool "$name" "$version" "$pkg $flags" "go install $pkg@$version from the Go module proxy" go_install "$pkg" "$version" "$name" "$flags"
  own_dir "$BIN"
  if [ "$(readlink "$BIN/$name" 2> /dev/null)" != "$ENTRY/$name" ]; then
    out=$("$ENTRY/$name" "$@" 2>&1) || die "$name $* failed: $out"
    grep -qF "${version#v}" <<< "$out" || die "$name $* does not report $version: $out"
    link_tool "$BIN/$name" "$ENTRY/$name"
  fi
  env_set "$key" "$BIN/$name"
}

# unpack_buf DIR VERSION: buf's release binary from its npm package into DIR (npm checks the
# tarball against the registry's integrity hash).
unpack_buf() {
  local dir=$1 version=$2
  (cd "$dir" && npm pack --silent "@bufbuild/buf-linux-x64@$version" > /dev/null) || die "npm pack @bufbuild/buf-linux-x64@$version failed"
  tar -xzf "$dir/bufbuild-buf-linux-x64-$version.tgz" -C "$dir" --strip-components=2 package/bin/buf
  rm "$dir/bufbuild-buf-linux-x64-$version.tgz"
}

install_buf() {
  local out
  cached buf "$BUF_VERSION" "$(input_key "$(declare -f unpack_buf)")" "Buf's release binary, the npm package @bufbuild/buf-linux-x64@${BUF_VERSION#v}" unpack_buf "${BUF_VERSION#v}"
  own_dir "$BIN"
  if [ "$(readlink "$BIN/buf" 2> /dev/null)" != "$ENTRY/buf" ]; then
    out=$("$ENTRY/buf" --version 2>&1) || die "buf --version failed: $out"
    [ "$out" = "${BUF_VERSION#v}" ] || die "buf --version does not report ${BUF_VERSION#v}: $out"
    link_tool "$BIN/buf" "$ENTRY/buf"
  fi
  env_set BUF_BIN "$BIN/buf"
}

# oasdiff's version is set at build time, as its release build does.
install_oasdiff() {
  install_go_tool oasdiff github.com/oasdiff/oasdiff "$OASDIFF_VERSION" OASDIFF_BIN "-X github.com/oasdiff/oasdiff/build.Version=${OASDIFF_VERSION#v}" --version
}

case "${1:-}" in
  install)
    case "${2:-all}" in
      registry) install_registry ;;
      buf) install_buf ;;
      oasdiff) install_oasdiff ;;
      all) install_registry; install_buf; install_oasdiff ;;
      *) die "unknown tool '$2' (registry|buf|oasdiff)" ;;
    esac
    ;;
  *) die "usage: $0 install [registry|buf|oasdiff]" ;;
esac
