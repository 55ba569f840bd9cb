#!/usr/bin/env bash
# A real browser for the tests that need one (the auth service's browser login):
#   bash test/infra/browser.sh install
# Debian's chromium (the .deb files are kept in .cache/apt); tests drive it headless with
# playwright-core, which downloads no browser of its own.
# Writes to .cache/run/infra.env: CHROMIUM_BIN.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install() {
  apt_install chromium
  local bin
  bin=$(command -v chromium || true)
  [ -n "$bin" ] || die "chromium not on PATH after install"
  env_set CHROMIUM_BIN "$bin"
}

case "${1:-}" in
  install) install ;;
  *) die "usage: $0 install" ;;
esac
