#!/usr/bin/env bash
# Runs every benchmark (bench/*.bench.ts) one after another against the running dependencies;
# each writes its figures to bench/results/<name>.json and prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
shopt -s nullglob
benches=(bench/*.bench.ts)
if [ ${#benches[@]} -eq 0 ]; then
  echo "no benchmarks yet"
  exit 0
fi
for bench in "${benches[@]}"; do
  echo "== $bench"
  # tsx: the test support the benchmarks share imports its siblings as the tests do (`./x.js` for
  # x.ts), which Node's own type stripping does not resolve.
  node --import tsx "$bench"
done
