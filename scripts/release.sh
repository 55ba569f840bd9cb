#!/usr/bin/env bash
# `make release` (docs/releasing.md): the release of the version in the root package.json.
#
#   make release [REGISTRY=host[:port][/path]] [PLAIN_HTTP=1] [SIGNING_KEY=key.pem SIGNING_CERT=cert.pem]
#                [RELEASE_DIR=dir] [ALLOW_DIRTY=1]
#
# 1. checks that every copy of the version agrees (scripts/version.ts --check) and that the work
#    tree is clean (the release names its commit; ALLOW_DIRTY=1 for a trial);
# 2. builds the five images from the Dockerfile (test/infra/images.sh: buildah, cached by content);
# 3. packages the umbrella chart (helm dependency build + helm package);
# 4. writes an SBOM per image (CycloneDX: npm sbom for the service's production dependencies, the
#    image's Debian packages from its dpkg database, Node.js and npm);
# 5. with REGISTRY: pushes each image as REGISTRY/subscription-platform/<service>:<version>
#    (skopeo) and the chart as oci://REGISTRY/charts/subscription-platform:<version> (helm push);
#    PLAIN_HTTP=1 for a registry without TLS (a local one). Log in first with `skopeo login` and
#    `helm registry login` where the registry wants credentials (and `notation login` to sign);
#    with SIGNING_KEY and SIGNING_CERT (PEM files: the private key, and its certificate or chain,
#    leaf first), signs each pushed image and the chart by digest with notation (Notary Project
#    signatures stored in the registry beside them; offline: a local key, no timestamp authority
#    or transparency log) and puts the certificate in the release folder, signing-cert.pem;
# 6. writes SHA256SUMS over the release folder's files (the chart, the SBOMs, images.txt and
#    chart.txt, which name each pushed image and the chart by digest, signing-cert.pem).
#
# The release folder: RELEASE_DIR, by default dist/release/<version> (git-ignored).
source "$(dirname "${BASH_SOURCE[0]}")/../test/infra/lib.sh"

SERVICES=(cache auth graph-registry webhooks graph-controller)
CHART="$ROOT/charts/subscription-platform"

VERSION=$(node -p "require('$ROOT/package.json').version")
(cd "$ROOT" && npx tsx scripts/version.ts --check) || die "the copies of the version disagree (above): not releasing"
COMMIT=$(git -C "$ROOT" rev-parse HEAD)
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=normal)" ]; then
  [ "${ALLOW_DIRTY:-}" = 1 ] || die "the work tree has changes: a release is made from a commit (ALLOW_DIRTY=1 for a trial)"
  COMMIT="$COMMIT-dirty"
fi
OUT=${RELEASE_DIR:-$ROOT/dist/release/$VERSION}
REGISTRY=${REGISTRY:-}
REGISTRY=${REGISTRY%/}
SIGNING_KEY=${SIGNING_KEY:-} SIGNING_CERT=${SIGNING_CERT:-}
if [ -n "$SIGNING_KEY$SIGNING_CERT" ]; then
  [ -n "$SIGNING_KEY" ] && [ -n "$SIGNING_CERT" ] || die "signing needs both SIGNING_KEY and SIGNING_CERT"
  [ -n "$REGISTRY" ] || die "signing needs REGISTRY: the signatures are stored in the registry beside what they sign"
  [ -r "$SIGNING_KEY" ] && [ -r "$SIGNING_CERT" ] || die "cannot read SIGNING_KEY $SIGNING_KEY or SIGNING_CERT $SIGNING_CERT"
  # Before anything is built or pushed: the key is the certificate's (its first, the leaf).
  apt_install openssl
  [ "$(openssl pkey -in "$SIGNING_KEY" -pubout 2> /dev/null)" = "$(openssl x509 -in "$SIGNING_CERT" -noout -pubkey 2> /dev/null)" ] \
    || die "SIGNING_KEY is not the key of SIGNING_CERT's (first) certificate"
  SIGNING_KEY=$(realpath "$SIGNING_KEY") SIGNING_CERT=$(realpath "$SIGNING_CERT")
  bash "$ROOT/test/infra/gotools.sh" install notation
  NOTATION="$CACHE/bin/notation"
fi
rm -rf "$OUT"
mkdir -p "$OUT/sbom"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "release $VERSION of $COMMIT into $OUT${REGISTRY:+, pushed to $REGISTRY}${SIGNING_KEY:+, signed}"

# 2. The images: built (or found in the tool cache) by content; images.env maps each to its archive.
bash "$ROOT/test/infra/images.sh" services "${SERVICES[@]}"
IMAGES_ENV="$CACHE/images/images.env"
archive_of() {
  local name
  name=$(sed -n "s|^subscription-platform/$1=||p" "$IMAGES_ENV")
  [ -n "$name" ] || die "no image of $1 in $IMAGES_ENV"
  sed -n "s|^$name=||p" "$IMAGES_ENV"
}

# 3. The chart: a copy with its dependencies built (the subcharts' platform-lib, the umbrella's
# unpacked subcharts), helm's home in the scratch folder.
bash "$ROOT/test/infra/gotools.sh" install helm
HELM="$CACHE/bin/helm"
export HELM_CACHE_HOME="$work/helm/cache" HELM_DATA_HOME="$work/helm/data"
cp -r "$CHART" "$work/chart"
for sub in "$work"/chart/charts/*/; do
  if [ -f "$sub/Chart.lock" ]; then "$HELM" dependency build "$sub" > /dev/null; fi
done
"$HELM" dependency build "$work/chart" > /dev/null
"$HELM" package "$work/chart" --destination "$OUT" > /dev/null
CHART_TGZ="$OUT/subscription-platform-$VERSION.tgz"
[ -f "$CHART_TGZ" ] || die "helm package wrote no $CHART_TGZ"
log "chart: $CHART_TGZ"

# 4. The SBOMs. The Debian packages: the dpkg database of the image's last layer that has one.
NODE_VERSION=$(sed -n 's/^NODE_VERSION=//p' "$ROOT/test/infra/toolchain.sh")
NPM_VERSION=$(sed -n 's/^NPM_VERSION=//p' "$ROOT/test/infra/images.sh")
dpkg_status() {
  local tar=$1 layer
  for layer in $(tar -xOf "$tar" manifest.json | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8"))[0].Layers.reverse().join("\n"))'); do
    tar -xOf "$tar" "$layer" | tar -xO --wildcards '*var/lib/dpkg/status' 2> /dev/null && return 0
  done
  die "no dpkg database in $tar"
}
for service in "${SERVICES[@]}"; do
  (cd "$ROOT" && npm sbom --sbom-format cyclonedx --omit dev --workspace "services/$service") > "$work/$service.npm.json"
  dpkg_status "$(archive_of "$service")" > "$work/$service.dpkg"
  (cd "$ROOT" && npx tsx scripts/release/sbom.ts "$service" "$VERSION" "$work/$service.npm.json" "$work/$service.dpkg" "$NODE_VERSION" "$NPM_VERSION") > "$OUT/sbom/$service.cdx.json"
done
log "SBOMs: $OUT/sbom"

# 5. The push, and the signatures. notation's configuration (signingkeys.json: the one key) in the
# scratch folder; its registry credentials are `notation login`'s, as usual.
sign() {
  [ -n "$SIGNING_KEY" ] || return 0
  XDG_CONFIG_HOME="$work/notation-config" "$NOTATION" sign --key release "${insecure[@]}" "$1" >&2 || die "signing $1 failed"
}
if [ -n "$SIGNING_KEY" ]; then
  mkdir -p "$work/notation-config/notation"
  printf '{"default":"release","keys":[{"name":"release","keyPath":"%s","certPath":"%s"}]}\n' "$SIGNING_KEY" "$SIGNING_CERT" > "$work/notation-config/notation/signingkeys.json"
  cp "$SIGNING_CERT" "$OUT/signing-cert.pem"
fi
tls=() plain=() insecure=()
[ "${PLAIN_HTTP:-}" = 1 ] && tls=(--dest-tls-verify=false) plain=(--plain-http) insecure=(--insecure-registry)
{
  printf '# release %s, commit %s\n' "$VERSION" "$COMMIT"
  if [ -n "$REGISTRY" ]; then
    apt_install skopeo
    for service in "${SERVICES[@]}"; do
      ref="$REGISTRY/subscription-platform/$service:$VERSION"
      skopeo copy --quiet "${tls[@]}" --digestfile "$work/digest" "docker-archive:$(archive_of "$service")" "docker://$ref" >&2 || die "pushing $ref failed"
      sign "$REGISTRY/subscription-platform/$service@$(cat "$work/digest")"
      printf '%s %s@%s\n' "$service" "$ref" "$(cat "$work/digest")"
    done
  else
    for service in "${SERVICES[@]}"; do printf '%s (not pushed: no REGISTRY) %s\n' "$service" "$(archive_of "$service")"; done
  fi
} > "$OUT/images.txt"
{
  printf '# release %s, commit %s\n' "$VERSION" "$COMMIT"
  if [ -n "$REGISTRY" ]; then
    pushed=$("$HELM" push "$CHART_TGZ" "oci://$REGISTRY/charts" "${plain[@]}" 2>&1) || die "pushing the chart failed: $pushed"
    printf '%s\n' "$pushed" >&2
    digest=$(sed -n 's/^Digest: \(sha256:[0-9a-f]\{64\}\)$/\1/p' <<< "$pushed")
    [ -n "$digest" ] || die "helm push named no digest: $pushed"
    sign "$REGISTRY/charts/subscription-platform@$digest"
    printf 'subscription-platform %s/charts/subscription-platform:%s@%s\n' "$REGISTRY" "$VERSION" "$digest"
  else
    printf 'subscription-platform (not pushed: no REGISTRY) %s\n' "$(basename "$CHART_TGZ")"
  fi
} > "$OUT/chart.txt"

# 6. The checksums.
(cd "$OUT" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
say "release $VERSION: $OUT (chart, sbom/, images.txt, chart.txt, ${SIGNING_KEY:+signing-cert.pem, }SHA256SUMS)${REGISTRY:+; pushed: helm install <name> oci://$REGISTRY/charts/subscription-platform --version $VERSION}"
