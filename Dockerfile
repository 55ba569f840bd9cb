# syntax=docker/dockerfile:1
# The image of every service, chosen by the SERVICE build argument (auth, cache, graph-registry,
# graph-controller, webhooks). Build from the repository root (the context needs the workspace):
#   docker build --build-arg SERVICE=cache -t subscription-platform/cache:<tag> .
# One file for all five, so the images share their base and dependency layers and cannot drift
# apart; test/deploy/dockerfiles.test.ts assembles and starts each service's bundle from it
# without a container engine, and the cluster suite (test/cluster) builds the real images.

# Node.js 24 LTS, the version the project builds and tests with (test/infra/toolchain.sh).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
# No default: an image of "some" service is never what was meant.
ARG SERVICE

# ---- build: the workspace with dev dependencies, compiled by tsc --build ---------------------
# Nothing in this stage depends on SERVICE: the five images share it, so building all five installs
# and compiles once (their builds find this stage's layers in the builder's cache).
FROM ${NODE_IMAGE} AS build
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /src
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
# Fixes to dependencies, applied by the root package's postinstall (patch-package; see the README).
COPY patches/ patches/
COPY proto/ proto/
COPY packages/ packages/
COPY services/ services/
# `npm install` with the lock file rather than `npm ci`: the registry mirror this project's
# machines reach serves only the Linux builds of packages with per-platform binaries, so the lock
# cannot list the others and `npm ci` refuses it (see the Makefile); `npm install` installs the
# locked versions. With a complete registry, `npm ci` is the stricter choice.
RUN npm install
RUN npx tsc --build

# ---- production: this service's production dependencies and build, gathered into /bundle ------
FROM build AS production
ARG SERVICE
ARG BUNDLE=/bundle
# The guard: a build without --build-arg SERVICE (or with an unknown one) stops here.
RUN test -n "${SERVICE}" && test -d "services/${SERVICE}/src" || { echo "build with --build-arg SERVICE=<a folder of services/>" >&2; exit 1; }
# One step that writes only new folders (prod, removed again, and the bundle), so that the layer
# holds the bundle alone and nothing of the build stage is copied up. The production install runs
# in prod, a workspace of the root manifests, the packages and this service alone (package.json
# and dist), so that only what the service links lands in node_modules/@sp. The root package's
# postinstall applies patches/ with patch-package, a dev dependency the production install leaves
# out: the build stage's node_modules lends it, and that install's npm cache the packages (the
# lock file pins them: --prefer-offline asks the registry nothing the cache holds). What runs:
# the root package.json and node_modules, the proto the cache client loads from <root>/proto, and
# of each workspace package the service links (itself included) its package.json, dist and own
# node_modules; no sources, tests or type declarations.
RUN set -eu; \
    for dir in packages/* "services/${SERVICE}"; do \
      mkdir -p "prod/$dir"; \
      cp -a "$dir/package.json" "$dir/dist" "prod/$dir/"; \
    done; \
    cp -a package.json package-lock.json patches prod/; \
    (cd prod && PATH="$OLDPWD/node_modules/.bin:$PATH" npm install --omit=dev --workspace "services/${SERVICE}" --include-workspace-root=false --prefer-offline); \
    mkdir -p "$BUNDLE"; \
    cp -a package.json proto "$BUNDLE/"; \
    for link in prod/node_modules/@sp/*; do \
      dir=$(realpath --relative-to=prod "$link"); \
      mkdir -p "$BUNDLE/$dir"; \
      mv "prod/$dir/package.json" "prod/$dir/dist" "$BUNDLE/$dir/"; \
      if [ -d "prod/$dir/node_modules" ]; then mv "prod/$dir/node_modules" "$BUNDLE/$dir/"; fi; \
    done; \
    mv prod/node_modules "$BUNDLE/"; \
    rm -rf prod; \
    find "$BUNDLE/packages" "$BUNDLE/services" -path "*/dist/*" \( -name "*.d.ts" -o -name "*.d.ts.map" \) -delete

# ---- runtime ----------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
# jemalloc in place of glibc's malloc, for every service: 10 s after hostile gRPC clients left
# (5,000 never-finished 512 KiB messages), the cache's RSS stayed 12-46 MiB above its start with
# glibc (freed chunks held in its brk heap), -1 to 18 MiB with jemalloc, at the same CPU per call
# (bench/cache-variants.bench.ts, bench/grpc-attacks.bench.ts; docs/benchmarks.md). Debian's
# package, pinned; one layer before ARG SERVICE, so the five images share it. Its background
# thread gives freed pages back within about a second, idle or not. `make up` runs the services
# with the same two settings (scripts/platform.sh reads them from here).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libjemalloc2=5.3.0-1 \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
ENV LD_PRELOAD=libjemalloc.so.2
ENV MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0
ARG SERVICE
ENV NODE_ENV=production
# Root owns the files; the service runs as the image's `node` user (uid 1000) and cannot change them.
COPY --from=production /bundle/ /app/
WORKDIR /app/services/${SERVICE}
USER 1000:1000
# Kubernetes and docker read the API port from the chart or `-p`; EXPOSE documents the management
# port (/livez, /readyz, /metrics) every service has. The API ports: auth 5555, cache 7777,
# graph-registry 5145, webhooks 5000; the controller has none.
EXPOSE 9464
# No HEALTHCHECK: Kubernetes probes the management port (/livez, /readyz) and, for the cache,
# the gRPC health protocol. node is PID 1 and handles SIGTERM itself (graceful shutdown).
# The same command line as each service's `npm start`, one rule for the five: `--enable-source-maps`,
# so every stack a service logs or Node prints names TypeScript lines. Weighed for the cache, whose
# Node formats a stack for each stream a client resets with an error code (a reset storm: 10,000
# streams): its CPU with and without the flag in interleaved rounds was the same within the noise
# (bench/cache-variants.bench.ts; docs/benchmarks.md, "Hostile clients"). Those stacks hold only
# Node's own frames, which the source maps pass over.
ENTRYPOINT ["node", "--enable-source-maps", "--import", "./dist/instrument.js", "dist/main.js"]
