#!/usr/bin/env bash
# The previous release (release/previous: its version and commit), built from this clone's own
# history for the upgrade test (test/cluster/upgrade.test.ts, docs/releasing.md):
#
#   scripts/release/previous.sh       prints the entry's folder: <service>.tar (docker archives, named
#                                     localhost/subscription-platform/<service>:<tag>), images.env
#                                     (<service>=<image name>), subscription-platform-<version>.tgz
#
# The commit is checked out in a throwaway git worktree of the same clone (no tag, no registry)
# and its own test/infra/images.sh builds its five images from its own Dockerfile, as that release
# was built; its chart is packaged with helm. The result is an entry of the machine-wide tool cache
# keyed by the commit: built once per machine (cold: the five image builds, minutes each), reused
# by every clone and run after. The images.sh entries the build made are dropped once copied here:
# they would count against the two archives per service images.sh keeps for the clones' own.
source "$(dirname "${BASH_SOURCE[0]}")/../../test/infra/lib.sh"

SERVICES=(cache auth graph-registry webhooks graph-controller)
VERSION=$(sed -n 's/^version=//p' "$ROOT/release/previous")
COMMIT=$(sed -n 's/^commit=//p' "$ROOT/release/previous")
[[ $COMMIT =~ ^[0-9a-f]{40}$ ]] || die "release/previous: no full commit= line"
[ -n "$VERSION" ] || die "release/previous: no version= line"
git -C "$ROOT" cat-file -e "$COMMIT^{commit}" 2> /dev/null || die "the previous release's commit $COMMIT is not in this clone (a shallow clone? git fetch --unshallow)"

# build_previous DIR: the images and chart of COMMIT into DIR.
build_previous() {
  local dir=$1 service name archive
  # Not local: the EXIT trap runs after this function returned (cached runs it in a subshell).
  work=$(mktemp -d)
  # The worktree is registered in the clone's .git: removed on every way out.
  trap 'git -C "$ROOT" worktree remove --force "$work/src" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
  git -C "$ROOT" worktree add --quiet --detach "$work/src" "$COMMIT"
  log "building the $VERSION images from $COMMIT (its own test/infra/images.sh and Dockerfile)"
  bash "$work/src/test/infra/images.sh" services "${SERVICES[@]}" >&2
  for service in "${SERVICES[@]}"; do
    name=$(sed -n "s|^subscription-platform/$service=||p" "$work/src/.cache/images/images.env")
    archive=$(sed -n "s|^$name=||p" "$work/src/.cache/images/images.env")
    [ -n "$name" ] && [ -f "$archive" ] || die "the $VERSION build recorded no image of $service"
    cp "$archive" "$dir/$service.tar"
    printf '%s=%s\n' "$service" "$name" >> "$dir/images.env"
    # Dropped unless a clone's current image has the same content (a service unchanged since).
    [ "${name##*:}" = "$(bash "$ROOT/test/infra/images.sh" key "$service")" ] || rm -rf "$(dirname "$archive")"
  done
  # helm after the images: a cold machine builds it meanwhile (make test, cluster.sh install).
  bash "$ROOT/test/infra/gotools.sh" install helm >&2
  local HELM="$CACHE/bin/helm"
  export HELM_CACHE_HOME="$work/helm/cache" HELM_DATA_HOME="$work/helm/data" HELM_CONFIG_HOME="$work/helm/config"
  local chart="$work/src/charts/subscription-platform" sub
  for sub in "$chart"/charts/*/; do
    if [ -f "$sub/Chart.lock" ]; then "$HELM" dependency build "$sub" > /dev/null; fi
  done
  "$HELM" dependency build "$chart" > /dev/null
  "$HELM" package "$chart" --destination "$dir" > /dev/null
  [ -f "$dir/subscription-platform-$VERSION.tgz" ] || die "helm package wrote no subscription-platform-$VERSION.tgz"
}

cached previous-release "$VERSION" "${COMMIT:0:16}" "the $VERSION release's images and chart, built from $COMMIT" build_previous
printf '%s\n' "$ENTRY"
