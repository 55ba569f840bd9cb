#!/usr/bin/env bash
# Compiles the workspaces (the Makefile's `build`: `tsc --build`):
#   bash test/infra/tsc.sh build
# A clone that has compiled nothing yet (a fresh clone) first takes the compiled output from the
# machine-wide tool cache when another clone on this machine compiled the same inputs: every
# project's dist/ and tsconfig.tsbuildinfo, a few MB copied in a second where a full compile takes
# about a minute on 2 cores. The entry's key covers every file tsc reads (the sources, every
# tsconfig and package.json, the lock file and patches/ for node_modules, Node's and tsc's
# versions); the copy gets the time of the copy, newer than the clone's files, so `tsc --build`,
# which runs after it as always, finds every project up to date in about two seconds and later
# edits compile incrementally against the copied build info. A clone that has compiled before
# runs tsc alone (an incremental build), as the Makefile did.
source "$(dirname "$0")/lib.sh"

# The projects tsc --build compiles (tsconfig.json's references), relative to the clone.
projects() { (cd "$ROOT" && for p in packages/* services/*; do [ -f "$p/tsconfig.json" ] && printf '%s\n' "$p"; done); }

# outputs: what tsc --build leaves in the projects, relative, one a line.
outputs() {
  local p
  for p in $(projects); do
    [ -d "$ROOT/$p/dist" ] && printf '%s\n' "$p/dist"
    [ -f "$ROOT/$p/tsconfig.tsbuildinfo" ] && printf '%s\n' "$p/tsconfig.tsbuildinfo"
  done
  return 0
}

# inputs: the files tsc reads that the clone holds (the sources, every tsconfig and package.json,
# the lock file and the patches for what node_modules holds), with their checksums.
inputs() {
  (cd "$ROOT" && find tsconfig*.json package.json package-lock.json patches $(projects) \
    \( -name node_modules -o -name dist -o -name test \) -prune -o -type f ! -name '*.tsbuildinfo' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum)
}

compile() { (cd "$ROOT" && npx tsc --build); }

# compile_into DIR: the build of an entry: tsc in the clone, and what it left copied into DIR.
compile_into() {
  compile
  (cd "$ROOT" && outputs | xargs -r cp -a --parents -t "$1")
}

build() {
  if [ -n "$(outputs)" ]; then
    compile
    return 0
  fi
  local key t0
  key=$(input_key "$(inputs)" "$(node --version)" "$(cd "$ROOT" && npx tsc --version)" "$(declare -f projects outputs inputs compile compile_into)")
  t0=$(date +%s%N)
  cached tsc-build "node-$(node --version)" "$key" "tsc --build of the workspaces, kept for this machine's other clones" compile_into
  # A miss compiled in the clone itself; a hit copies (not the entry's times: see above).
  if [ -z "$(outputs)" ]; then
    (cd "$ENTRY" && find . -mindepth 1 -maxdepth 1 ! -name '.manifest' ! -name '.sizes' -printf '%P\0' | xargs -0r cp -R --preserve=mode -t "$ROOT")
    compile
    say "tsc-build: compiled output copied from $ENTRY in $(duration_since "$t0")"
  fi
  drop_old_entries tsc-build 3
}

case "${1:-}" in
  build) build ;;
  *) die "usage: $0 build" ;;
esac
