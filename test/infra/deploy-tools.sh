#!/usr/bin/env bash
# Tools and schemas of the deployment tests (test/deploy), all offline after the first run:
#   bash test/infra/deploy-tools.sh install
#
# - promtool and the Prometheus server, from Debian's `prometheus` package. The .deb is fetched
#   with `apt-get download` and only the two binaries are unpacked (dpkg-deb): installing the
#   package would pull ~100 MB of web assets and start a Prometheus server through its maintainer
#   scripts. The server's API needs no web assets; test/e2e/prometheus.test.ts runs it.
# - Kubernetes JSON schemas (strict: additionalProperties false), from the PyPI package
#   kubernetes-validate, which carries them for every Kubernetes minor from 1.25 on. Only the
#   `-local-strict` trees of the versions in K8S_VERSIONS are kept. The tests validate rendered
#   manifests against them with ajv (draft 2020-12; refs resolve by $id, nothing is fetched).
# - The prometheus-operator CRDs (ServiceMonitor, PrometheusRule) from the Go module
#   github.com/prometheus-operator/prometheus-operator, which carries them as YAML.
#
# Each is an entry of the machine-wide tool cache (lib.sh: cached), linked from .cache/bin and
# .cache/k8s-schemas; a repeat install takes milliseconds.
# Writes to .cache/run/infra.env: PROMTOOL_BIN, PROMETHEUS_BIN, K8S_SCHEMA_DIR, PROMETHEUS_OPERATOR_CRD_DIR.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned versions. kubernetes-validate's version names the newest Kubernetes minor it carries.
KUBERNETES_VALIDATE_VERSION=1.37.0
# The oldest Kubernetes minor the chart supports (Chart.yaml kubeVersion) and the newest carried.
K8S_VERSIONS=(1.29.0 1.37.0)
PROMETHEUS_OPERATOR_VERSION=v0.85.0

BIN="$CACHE/bin"

# unpack_promtool DIR DEB_VERSION: the two binaries of Debian's prometheus package into DIR.
unpack_promtool() {
  local dir=$1 deb
  deb=$(deb_download prometheus "$2")
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --strip-components=3 ./usr/bin/promtool ./usr/bin/prometheus
}

install_promtool() {
  local version out
  version=$(deb_version prometheus)
  cached promtool "$version" "$(input_key "$(declare -f unpack_promtool deb_download)")" "promtool and prometheus from Debian's prometheus $version" unpack_promtool "$version"
  own_dir "$BIN"
  if [ "$(readlink "$BIN/promtool" 2> /dev/null)" != "$ENTRY/promtool" ]; then
    out=$("$ENTRY/promtool" --version 2>&1) || die "promtool does not run: $out"
    out=$("$ENTRY/prometheus" --version 2>&1) || die "prometheus does not run: $out"
    link_tool "$BIN/prometheus" "$ENTRY/prometheus"
    link_tool "$BIN/promtool" "$ENTRY/promtool"
  fi
  env_set PROMTOOL_BIN "$BIN/promtool"
  env_set PROMETHEUS_BIN "$BIN/prometheus"
}

# unpack_schemas DIR: the -local-strict trees of K8S_VERSIONS from the kubernetes-validate wheel,
# as DIR/v<version>.
unpack_schemas() {
  local dir=$1 wheel v
  python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$dir/.wheel" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" || die "pip download kubernetes-validate failed"
  wheel="$dir/.wheel/kubernetes_validate-$KUBERNETES_VALIDATE_VERSION-py3-none-any.whl"
  for v in "${K8S_VERSIONS[@]}"; do
    python3 - "$wheel" "$v" "$dir/v$v" <<'PY' || die "no schemas for Kubernetes $v in $wheel"
import sys, zipfile, os
wheel, version, out = sys.argv[1:]
prefix = f"kubernetes_validate/kubernetes-json-schema/v{version}-local-strict/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and n.endswith(".json")]
    if not names:
        sys.exit(1)
    os.makedirs(out, exist_ok=True)
    for n in names:
        with open(os.path.join(out, n[len(prefix):]), "wb") as f:
            f.write(z.read(n))
PY
  done
  rm -rf "$dir/.wheel"
}

install_k8s_schemas() {
  cached k8s-schemas "$KUBERNETES_VALIDATE_VERSION" "$(input_key "${K8S_VERSIONS[*]}" "$(declare -f unpack_schemas)")" \
    "Kubernetes schemas ${K8S_VERSIONS[*]} from the PyPI package kubernetes-validate" unpack_schemas
  # A clone of the old layout has the schemas here as a folder.
  [ ! -d "$CACHE/k8s-schemas" ] || [ -L "$CACHE/k8s-schemas" ] || rm -rf "$CACHE/k8s-schemas"
  link_tool "$CACHE/k8s-schemas" "$ENTRY"
  env_set K8S_SCHEMA_DIR "$CACHE/k8s-schemas"
}

# copy_crds DIR: the two CRDs from the prometheus-operator module (Go module proxy).
copy_crds() {
  local dir
  go_env
  dir=$(module_dir "github.com/prometheus-operator/prometheus-operator" "$PROMETHEUS_OPERATOR_VERSION")
  [ -n "$dir" ] && [ -d "$dir/example/prometheus-operator-crd" ] || die "could not download prometheus-operator $PROMETHEUS_OPERATOR_VERSION"
  cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    "$dir/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" "$1/"
}

install_prometheus_operator_crds() {
  cached prometheus-operator-crds "$PROMETHEUS_OPERATOR_VERSION" "$(input_key "$(declare -f copy_crds)")" \
    "the prometheus-operator CRDs from the Go module proxy" copy_crds
  env_set PROMETHEUS_OPERATOR_CRD_DIR "$ENTRY"
}

case "${1:-}" in
  install)
    install_promtool
    install_k8s_schemas
    install_prometheus_operator_crds
    ;;
  *) die "usage: $0 install" ;;
esac
