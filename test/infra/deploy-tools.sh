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
# Everything lands under .cache (git-ignored); a repeat install takes milliseconds.
# Writes to .cache/run/infra.env: PROMTOOL_BIN, PROMETHEUS_BIN, K8S_SCHEMA_DIR, PROMETHEUS_OPERATOR_CRD_DIR.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned versions. kubernetes-validate's version names the newest Kubernetes minor it carries.
KUBERNETES_VALIDATE_VERSION=1.37.0
# The oldest Kubernetes minor the chart supports (Chart.yaml kubeVersion) and the newest carried.
K8S_VERSIONS=(1.29.0 1.37.0)
PROMETHEUS_OPERATOR_VERSION=v0.85.0

BIN="$CACHE/bin"
SCHEMAS="$CACHE/k8s-schemas"

install_promtool() {
  local dir="$CACHE/promtool" deb version
  if [ ! -x "$dir/usr/bin/promtool" ] || [ ! -x "$dir/usr/bin/prometheus" ]; then
    local t0=$SECONDS
    mkdir -p "$CACHE/apt/archives" "$dir.tmp"
    if [ ! -f "$CACHE/apt/.updated" ] || [ -n "$(find "$CACHE/apt/.updated" -mmin +1440)" ]; then
      apt-get update -qq && touch "$CACHE/apt/.updated"
    fi
    deb=$(find "$CACHE/apt/archives" -maxdepth 1 -name 'prometheus_*.deb' | sort | tail -n 1)
    if [ -z "$deb" ]; then
      # apt's sandbox user cannot write into .cache: download as the caller, quietly.
      (cd "$CACHE/apt/archives" && apt-get download -qq -o APT::Sandbox::User=root prometheus) >&2 \
        || die "apt-get download prometheus failed"
      deb=$(find "$CACHE/apt/archives" -maxdepth 1 -name 'prometheus_*.deb' | sort | tail -n 1)
    fi
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp" ./usr/bin/promtool ./usr/bin/prometheus
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
    log "promtool and prometheus unpacked from $(basename "$deb") in $((SECONDS - t0))s"
  fi
  mkdir -p "$BIN"
  ln -sfn "../promtool/usr/bin/promtool" "$BIN/promtool"
  ln -sfn "../promtool/usr/bin/prometheus" "$BIN/prometheus"
  version=$("$BIN/promtool" --version 2>&1 | head -n 1) || die "promtool does not run: $version"
  version=$("$BIN/prometheus" --version 2>&1 | head -n 1) || die "prometheus does not run: $version"
  env_set PROMTOOL_BIN "$BIN/promtool"
  env_set PROMETHEUS_BIN "$BIN/prometheus"
}

install_k8s_schemas() {
  local stamp="$SCHEMAS/.kubernetes-validate-$KUBERNETES_VALIDATE_VERSION" v missing=()
  for v in "${K8S_VERSIONS[@]}"; do
    [ -f "$SCHEMAS/v$v/_definitions.json" ] || missing+=("$v")
  done
  if [ ${#missing[@]} -gt 0 ] || [ ! -f "$stamp" ]; then
    local t0=$SECONDS wheels="$CACHE/pip" wheel
    mkdir -p "$wheels" "$SCHEMAS"
    wheel="$wheels/kubernetes_validate-$KUBERNETES_VALIDATE_VERSION-py3-none-any.whl"
    if [ ! -f "$wheel" ]; then
      python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$wheels" \
        "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2 || die "pip download kubernetes-validate failed"
    fi
    for v in "${K8S_VERSIONS[@]}"; do
      rm -rf "$SCHEMAS/v$v" "$SCHEMAS/tmp"
      python3 - "$wheel" "$v" "$SCHEMAS/tmp" <<'PY' || die "no schemas for Kubernetes $v in $wheel"
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
      mv "$SCHEMAS/tmp" "$SCHEMAS/v$v"
    done
    touch "$stamp"
    log "Kubernetes schemas ${K8S_VERSIONS[*]} from kubernetes-validate $KUBERNETES_VALIDATE_VERSION in $((SECONDS - t0))s"
  fi
  env_set K8S_SCHEMA_DIR "$SCHEMAS"
}

install_prometheus_operator_crds() {
  local out="$SCHEMAS/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" go dir crd
  if [ ! -f "$out/monitoring.coreos.com_servicemonitors.yaml" ] || [ ! -f "$out/monitoring.coreos.com_prometheusrules.yaml" ]; then
    local t0=$SECONDS
    go=$(command -v go || true)
    [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; } || die "go not found (PATH or /usr/local/go/bin/go)"
    export GOPATH="$CACHE/go" GOMODCACHE="$CACHE/go/pkg/mod" GOCACHE="$CACHE/go/build" GOFLAGS=-modcacherw
    dir=$("$go" mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
      | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    [ -n "$dir" ] && [ -d "$dir/example/prometheus-operator-crd" ] || die "could not download prometheus-operator $PROMETHEUS_OPERATOR_VERSION"
    mkdir -p "$out"
    for crd in servicemonitors prometheusrules; do
      cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" "$out/"
    done
    log "prometheus-operator $PROMETHEUS_OPERATOR_VERSION CRDs in $((SECONDS - t0))s"
  fi
  env_set PROMETHEUS_OPERATOR_CRD_DIR "$out"
}

case "${1:-}" in
  install)
    install_promtool
    install_k8s_schemas
    install_prometheus_operator_crds
    ;;
  *) die "usage: $0 install" ;;
esac
