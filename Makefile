# The commands of the README: `make up` runs the platform locally, `make test` runs every
# test. Each installs what it runs and is missing, side by side (test/infra/infra.sh): `make up`
# Node 24, the npm packages, Redis, Kafka, Keycloak, stripe-mock, and etcd + kube-apiserver built
# from the Go module proxy; `make test` also the tools of the tests and the
# single-node cluster. What is built is kept once per machine (test/infra/README.md, "The tool
# cache"), linked from the git-ignored .cache folder.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export PATH := $(CURDIR)/.cache/node/bin:$(CURDIR)/.cache/bin:$(PATH)
export npm_config_update_notifier := false

INFRA := bash test/infra/infra.sh
NPM_STAMP := node_modules/.install-stamp

.PHONY: help toolchain install build typecheck lint docs test test-unit test-only up down demo bench clean cluster-install cluster-up cluster-down release contracts

help:
	@echo "make up      start the dependencies and the services locally"
	@echo "make down    stop them"
	@echo "make demo    walk through the platform against make up"
	@echo "make test    install, start dependencies, build, lint and run every test suite"
	@echo "make test-unit  the unit tier alone: no dependencies, under a minute"
	@echo "make lint    eslint, type-check, and the generated docs up to date"
	@echo "make docs    regenerate the settings and chart values tables of the docs"
	@echo "make bench   run the benchmarks (results in bench/results)"
	@echo "make contracts  the contracts against the previous release (breaking changes need a CHANGELOG Upgrading entry)"
	@echo "make release REGISTRY=host:port [SIGNING_KEY=key.pem SIGNING_CERT=cert.pem]  build, package, push (and sign) the release of package.json's version (docs/releasing.md)"
	@echo "make cluster-up    a local single-node Kubernetes cluster with the service images (docs/deployment.md)"
	@echo "make cluster-down  stop it and restore the machine's settings"

toolchain:
	@bash test/infra/toolchain.sh install

# `npm install`, not `npm ci`: the registry mirror this project's machines reach serves only the
# Linux builds of packages with per-platform binaries (@swc/core, ...), so the lock file cannot list
# the others and `npm ci` refuses it as out of sync. `npm install` installs the locked versions.
# The root package's postinstall applies patches/ (patch-package): a changed patch reinstalls too.
# --prefer-offline: the lock file pins every version, so npm's machine-wide cache (~/.npm) serves
# what it holds without asking the registry again (a second clone's install: 105 s instead of 143 s
# on a loaded machine, measured).
# A fresh clone copies node_modules from the machine-wide tool cache when another clone installed
# the same inputs (test/infra/npm.sh: seconds instead of minutes).
$(NPM_STAMP): package.json package-lock.json $(wildcard packages/*/package.json services/*/package.json patches/*.patch) | toolchain
	@bash test/infra/npm.sh install root
	@touch $@

install: toolchain $(NPM_STAMP)

# `tsc --build`; a fresh clone first copies the compiled output another clone on this machine made
# of the same sources, which tsc then checks against them (test/infra/tsc.sh: a second, not a minute).
build: install
	@bash test/infra/tsc.sh build

typecheck: build
	npx tsc -p tsconfig.all.json

lint: typecheck
	npx eslint --max-warnings 0 .
	npx tsx scripts/docs.ts --check
	npx tsx scripts/version.ts --check

# Rewrites the generated sections of the docs: settings tables from each service's src/config.ts,
# chart values tables from each values.yaml (scripts/docs.ts); `make lint` fails while they differ.
docs: build
	npx tsx scripts/docs.ts

# The unit tier (jest.config.js): no dependency, no cluster, nothing built; what to run while editing.
test-unit: install
	npm test --silent -- --selectProjects unit

# Runs jest against already running dependencies (see `make deps`).
test-only: build
	npm test --silent

# `make test`: the single-node cluster's commands and images (test/infra/cluster.sh install), then
# the previous release's images and chart (the upgrade test's, which runs after the cluster suite;
# scripts/release/previous.sh, cached per machine by commit), start building in the background
# first, beside the lint, the dependencies and the tools of the tests (steps of infra.sh, those
# tools a step lower in CPU priority): cold, they are the longest builds of all, and the cluster
# tier's suites wait for them (test/cluster/support/platform.ts). The previous release comes after
# the cluster's install, not beside it: beside it, a cold run's previous release took the base
# image's build first and its five images took turns with the current ones, so the cluster suite
# waited for both. Reused after: keyed by version and content. Then the tiers run in two jest
# processes side by side (test/jest/lanes.cjs): the unit and integration tiers, and the cluster
# tier. The builds keep the same CPU priority as the tests: a cold run's kube
# commands are still building when the tiers start, and the cluster tier waits for them (at the
# lowest priority, beside the other tiers, they took 31 minutes). Their screen output:
# .cache/logs/cluster-install.screen. They run in a process group of their own (setsid), stopped
# with the run when it is interrupted or an install fails.
test: toolchain
	@mkdir -p .cache/logs; \
	  setsid bash -c 'bash test/infra/cluster.sh install && bash scripts/release/previous.sh > /dev/null' \
	    > .cache/logs/cluster-install.screen 2>&1 & cluster=$$!; \
	  trap 'kill -TERM -- -$$cluster 2> /dev/null; exit 130' INT TERM HUP; \
	  $(INFRA) install test lint && $(INFRA) up && $(INFRA) disk \
	    || { kill -TERM -- -$$cluster 2> /dev/null || true; wait $$cluster || true; exit 1; }; \
	  status=0; node test/jest/lanes.cjs || status=$$?; \
	  wait $$cluster || { echo "the cluster install failed: .cache/logs/cluster-install.screen"; tail -n 30 .cache/logs/cluster-install.screen; }; \
	  $(INFRA) down > .cache/run/down.log 2>&1; \
	  bash test/infra/cluster.sh down >> .cache/run/down.log 2>&1; exit $$status

deps: toolchain
	@$(INFRA) install test build
	@$(INFRA) up

# `make up`: the npm install and the build beside the dependencies' installs (the Go builds of
# kube-apiserver and etcd are the longest path), then the platform.
up: toolchain
	@$(INFRA) install up build start
	@bash scripts/platform.sh up

down:
	@bash scripts/platform.sh down

demo: install
	@npx tsx scripts/demo.ts

bench: build
	@$(INFRA) up
	@status=0; bash bench/run.sh || status=$$?; $(INFRA) down > .cache/run/down.log 2>&1; exit $$status

# `make release`: the images, the chart, an SBOM per image and the checksums of the version in
# package.json, pushed to REGISTRY when given, and signed with SIGNING_KEY and SIGNING_CERT
# (scripts/release.sh, docs/releasing.md).
REGISTRY ?=
PLAIN_HTTP ?=
SIGNING_KEY ?=
SIGNING_CERT ?=
ALLOW_DIRTY ?=
RELEASE_DIR ?=
release: install
	@REGISTRY="$(REGISTRY)" PLAIN_HTTP="$(PLAIN_HTTP)" SIGNING_KEY="$(SIGNING_KEY)" SIGNING_CERT="$(SIGNING_CERT)" ALLOW_DIRTY="$(ALLOW_DIRTY)" RELEASE_DIR="$(RELEASE_DIR)" bash scripts/release.sh

# `make contracts`: the contracts against the previous release's (release/previous): a breaking
# change fails unless the CHANGELOG's Unreleased "Upgrading" entries name it (scripts/contracts.ts).
# buf and oasdiff build once per machine (test/infra/release-tools.sh; make test installs them too).
contracts: install
	@bash test/infra/release-tools.sh install buf
	@bash test/infra/release-tools.sh install oasdiff
	@npx tsx scripts/contracts.ts

cluster-install: install
	@bash test/infra/cluster.sh install

cluster-up: cluster-install
	@bash test/infra/cluster.sh up

cluster-down:
	@bash test/infra/cluster.sh down

clean: down
	rm -rf node_modules packages/*/dist services/*/dist .cache/run
