#!/usr/bin/env bash
# Installs the packages of one of the clone's npm projects:
#   bash test/infra/npm.sh install root       the workspaces (the Makefile's `install`)
#   bash test/infra/npm.sh install gateway    gateway/, Hive Gateway's project of its own
# A clone without node_modules gets them from the machine-wide tool cache when another clone on
# this machine installed the same inputs: copying the node_modules folders takes seconds where a
# fresh `npm install` takes minutes (resolving, unpacking some 46,000 files, the patches). An entry
# is keyed by everything the install reads (the lock file, every package.json, the patches, Node's
# and npm's versions), verified like every entry, and holds exactly what the install left in the
# project's node_modules folders. A clone that has node_modules already runs npm itself: an
# incremental install is quick, and copying a tree over an older one would keep what it removed.
source "$(dirname "$0")/lib.sh"

# project NAME: DIR, the project's folder; INPUTS, the files its install reads (patterns, relative to
# DIR); INSTALL, the command.
project() {
  case "$1" in
    root)
      DIR=$ROOT
      INPUTS='package.json package-lock.json packages/*/package.json services/*/package.json patches/*.patch'
      # `npm install`, not `npm ci`: see the Makefile's install rule.
      INSTALL=(npm install --no-audit --no-fund --prefer-offline)
      ;;
    gateway)
      DIR=$ROOT/gateway
      INPUTS='package.json package-lock.json'
      INSTALL=(npm ci --no-audit --no-fund --prefer-offline)
      ;;
    *) die "unknown npm project: $1 (root or gateway)" ;;
  esac
}

# node_modules_dirs: the project's node_modules folders (the top one and the workspaces' own),
# relative, one a line; not gateway/ (a project of its own) nor what .cache or .git hold.
node_modules_dirs() {
  find . \( -path ./.cache -o -path ./.git -o -path ./gateway \) -prune -o -name node_modules -type d -prune -print
}

# install_into DIR: the build of an entry: the install runs in the clone, and what it left is
# copied into the entry's folder DIR.
install_into() {
  (cd "$DIR" && "${INSTALL[@]}")
  (cd "$DIR" && node_modules_dirs | xargs -r cp -a --parents -t "$1")
}

# restore ENTRY: the entry's node_modules folders into the project.
restore() {
  (cd "$1" && node_modules_dirs | xargs -r cp -a --parents -t "$DIR")
}

install() {
  project "$1"
  if [ -d "$DIR/node_modules" ]; then
    (cd "$DIR" && "${INSTALL[@]}")
    return 0
  fi
  local key t0
  # shellcheck disable=SC2086 # the patterns expand here, in the project's folder
  key=$(input_key "$(cd "$DIR" && shopt -s nullglob && sha256sum $INPUTS)" "$(node --version)" "$(npm --version)" \
    "$(declare -f node_modules_dirs install_into restore)" "${INSTALL[*]}")
  t0=$(date +%s%N)
  cached "npm-$1" "node-$(node --version)" "$key" "${INSTALL[*]} in $DIR, kept for this machine's other clones" install_into
  # A build installed into the project itself; a hit copies.
  if [ ! -d "$DIR/node_modules" ]; then
    restore "$ENTRY"
    say "npm-$1: node_modules copied from $ENTRY in $(duration_since "$t0")"
  fi
  drop_old_entries "npm-$1" 3
}

case "${1:-}" in
  install) install "${2:?usage: $0 install root|gateway}" ;;
  *) die "usage: $0 install root|gateway" ;;
esac
