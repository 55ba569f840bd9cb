#!/usr/bin/env bash
# The reverse proxies the forward-auth tests run in front of the auth service
# (test/e2e/forward-auth-proxies.test.ts, docs/forward-auth.md):
#   bash test/infra/proxies.sh install [nginx|caddy]    (no proxy = both)
#
# - nginx from Debian's `nginx` package (its `auth_request` module is built in). The .deb is
#   fetched with `apt-get download` and only /usr/sbin/nginx is unpacked: installing the package
#   would start an nginx on port 80 through its maintainer scripts. The tests run it with `-p`,
#   `-c` and `-e` of their own (nothing under /etc or /var is read or written).
# - Caddy v2.11.9 (`forward_auth`), built with `go install github.com/caddyserver/caddy/v2/cmd/caddy`
#   from the Go module proxy (the standard modules; its version comes from the module's build info).
#
# Each is an entry of the machine-wide tool cache (lib.sh: cached), linked from .cache/bin; a
# repeat install takes milliseconds. Installed by the test steps only (infra.sh TEST_STEPS), never
# by `make up`.
# Writes to .cache/run/infra.env: NGINX_BIN, CADDY_BIN.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CADDY_VERSION=v2.11.9

BIN="$CACHE/bin"

# unpack_nginx DIR DEB_VERSION: /usr/sbin/nginx of Debian's nginx package into DIR.
unpack_nginx() {
  local dir=$1 deb
  deb=$(deb_download nginx "$2")
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --strip-components=3 ./usr/sbin/nginx
}

install_nginx() {
  local version out
  version=$(deb_version nginx)
  cached nginx "$version" "$(input_key "$(declare -f unpack_nginx deb_download)")" "nginx from Debian's nginx $version" unpack_nginx "$version"
  own_dir "$BIN"
  if [ "$(readlink "$BIN/nginx" 2> /dev/null)" != "$ENTRY/nginx" ]; then
    out=$("$ENTRY/nginx" -V 2>&1) || die "nginx does not run: $out"
    grep -q -- '--with-http_auth_request_module' <<< "$out" || die "Debian's nginx $version has no auth_request module: $out"
    link_tool "$BIN/nginx" "$ENTRY/nginx"
  fi
  env_set NGINX_BIN "$BIN/nginx"
}

build_caddy() {
  local dir=$1
  log "go install -trimpath -ldflags '-s -w' github.com/caddyserver/caddy/v2/cmd/caddy@$CADDY_VERSION ($("$GO" env GOVERSION))"
  GOBIN="$dir" "$GO" install -trimpath -ldflags '-s -w' "github.com/caddyserver/caddy/v2/cmd/caddy@$CADDY_VERSION"
  [ -x "$dir/caddy" ] || die "go install left no caddy"
}

install_caddy() {
  local out
  go_tool caddy "$CADDY_VERSION" "caddy $CADDY_VERSION" "go install github.com/caddyserver/caddy/v2/cmd/caddy@$CADDY_VERSION from the Go module proxy" build_caddy
  own_dir "$BIN"
  if [ "$(readlink "$BIN/caddy" 2> /dev/null)" != "$ENTRY/caddy" ]; then
    # `caddy version` says "unknown" when Caddy is the main module (go install); its build info names the module's version.
    out=$("$ENTRY/caddy" build-info 2>&1) || die "caddy build-info failed: $out"
    grep -qE "^mod[[:space:]]+github.com/caddyserver/caddy/v2[[:space:]]+$CADDY_VERSION[[:space:]]" <<< "$out" || die "caddy's build info does not name $CADDY_VERSION: $(head -n 3 <<< "$out")"
    link_tool "$BIN/caddy" "$ENTRY/caddy"
  fi
  env_set CADDY_BIN "$BIN/caddy"
}

case "${1:-}" in
  install)
    case "${2:-all}" in
      nginx) install_nginx ;;
      caddy) install_caddy ;;
      all) install_nginx; install_caddy ;;
      *) die "unknown proxy '$2' (nginx|caddy)" ;;
    esac
    ;;
  *) die "usage: $0 install [nginx|caddy]" ;;
esac
