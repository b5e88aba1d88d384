# mlkube's make targets are its interface: README.md and .ci/run call nothing else.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := build

GO ?= go
TOOLS := $(GO) tool -modfile=hack/tools/go.mod
GOLANGCI_LINT := $(GO) tool -modfile=hack/tools/lint/go.mod golangci-lint
CONTROLLER_GEN := $(TOOLS) controller-gen
# The manager's markers; the node agent's role is generated on its own from datapath/ (target
# manifests).
MARKER_PATHS := paths="{./api/...,./controller/...,./webhook/...}"
# Slow builds (Kubernetes binaries, CoreDNS) are cached here, keyed by version.
export MLKUBE_CACHE ?= $(HOME)/.cache/mlkube
# A count of executions, not a duration: Go 1.26's fuzz coordinator can fail a target with
# "context deadline exceeded" and no failing input when a -fuzztime deadline races its workers
# (go.dev/issue/75804, fixed in Go 1.27; seen in CI on FuzzReadFrame and FuzzTransformAdmission
# under load). A count has no deadline to race; a loaded machine only takes longer.
FUZZTIME ?= 3000x
# Minimizing a new interesting input is bounded the same way. Crashers are still written to
# testdata/fuzz.
FUZZMINIMIZETIME ?= 10x
# Generated files `verify` checks.
GENERATED := api manifests docs/commands
# Modules whose go.mod and go.sum pin what is built from the module proxy: the project, its tools,
# and every tool hack/build/pinned.sh builds (Kubernetes, kubeadm, etcd, CoreDNS and metrics-server
# for the e2e clusters and the integration tests, Helm for chart-check, krew for krew-check). Named
# one by one, not found by a wildcard, so that a deleted go.mod fails verify-pins.
PINNED_MODULES := . hack/tools hack/tools/lint hack/build/kube hack/build/kubeadm hack/build/etcd hack/build/coredns \
	hack/build/metrics-server hack/build/helm hack/build/krew hack/build/versitygw hack/build/kueue

.PHONY: all
all: generate manifests build lint test

##@ Generate

.PHONY: generate
generate: ## deepcopy functions for the API types
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: ## CRDs, RBAC and webhook configurations from markers, then manifests/install.yaml
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true rbac:roleName=manager webhook $(MARKER_PATHS) \
		output:crd:artifacts:config=manifests/crd/bases \
		output:rbac:artifacts:config=manifests/rbac \
		output:webhook:artifacts:config=manifests/webhook
	$(CONTROLLER_GEN) rbac:roleName=node-agent paths=./datapath/... output:rbac:artifacts:config=manifests/agent
	$(CONTROLLER_GEN) rbac:roleName=mlkube-manager-transformer-keys paths=./internal/tokenkeys/... output:rbac:artifacts:config=manifests/agent/manager-keys
	hack/release/render-install.sh
	hack/release/render-chart.sh

.PHONY: docs
docs: ## the command reference of kubectl mxjob and kubectl etl (docs/commands) from their cobra trees
	$(GO) run ./plugin/internal/gendocs docs/commands

.PHONY: verify
verify: generate manifests docs verify-pins chart-check verify-links ## fail when generated files are stale, a pinned module file is missing or untidy, the chart drifts from the bundle, or a Markdown link is broken
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated files are stale; run 'make generate manifests docs' and commit:"; \
		git status --porcelain -- $(GENERATED); git --no-pager diff --stat -- $(GENERATED); exit 1; fi
	@echo "generated files are up to date"

.PHONY: chart-check
chart-check: ## helm lint manifests/chart/mlkube, and fail when its objects differ from manifests/install.yaml's (pinned helm: hack/build/pinned.sh helm)
	hack/verify/chart.sh

.PHONY: verify-links
verify-links: ## fail when a relative link in a tracked *.md file names nothing, or a path outside the repository (hack/verify/mdlinks)
	$(GO) run ./hack/verify/mdlinks

.PHONY: verify-pins
verify-pins: ## fail when a pinned module's go.mod or go.sum is missing, untidy or unpinned
	hack/verify/pins.sh $(PINNED_MODULES)

##@ Build

# The one version of a build, stamped into every binary (internal/version: the plugins' `version`,
# the manager's and the agent's --version and startup log) by build, plugins and images. The
# VERSION file names the release being prepared (also krew's and the chart's); hack/release/version.sh
# gives the tag at HEAD for a release build, else e.g. v0.1.0-dev.g8427725. `make ... VERSION=v0.2.0`
# stamps another.
VERSION ?= $(shell hack/release/version.sh)
VERSION_LDFLAGS = -X github.com/mlkube/mlkube/internal/version.Version=$(VERSION)

.PHONY: build
build: ## static binaries into bin/, stamped with VERSION
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(VERSION_LDFLAGS)" -o bin/ ./cmd/...

.PHONY: plugins
plugins: ## bin/kubectl-mxjob and bin/kubectl-etl, stamped with VERSION; put bin/ on PATH to use them
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(VERSION_LDFLAGS)" \
		-o bin/ ./cmd/kubectl-mxjob ./cmd/kubectl-etl

.PHONY: lint
lint: ## gofmt, go vet, golangci-lint (.golangci.yml) and the manager's dependency boundary
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...
	hack/verify/deps.sh

##@ krew

# The release make krew stamps into the plugins and plugins/*.yaml: the VERSION file at the root when
# there is one. plugins/ at the root makes the repository a krew index: `kubectl krew index add
# mlkube <repository URL>`, then `kubectl krew install mlkube/etl mlkube/mxjob`.
KREW_VERSION ?= $(if $(wildcard VERSION),$(strip $(file < VERSION)),v0.1.0)
KREW_ARCHIVES := _output/krew
# The platforms make krew-check builds: linux on both architectures (the release's images compile
# linux/arm64 anyway) and windows, whose archives hold kubectl-<plugin>.exe. darwin's archives are
# linux's layout from files linux or windows compile too, which check.sh verifies; empty checks all six.
KREW_CHECK_PLATFORMS ?= linux/amd64 linux/arm64 windows/amd64

.PHONY: krew
krew: ## kubectl-etl and kubectl-mxjob archives for linux, darwin and windows on amd64 and arm64 into _output/krew, their sha256s into plugins/*.yaml
	hack/release/krew/archives.sh $(KREW_ARCHIVES) $(KREW_VERSION)
	hack/release/krew/manifests.sh $(KREW_VERSION) $(KREW_ARCHIVES) plugins/*.yaml

.PHONY: krew-check
krew-check: ## krew's validator on plugins/*.yaml, their sha256s against fresh archives of KREW_CHECK_PLATFORMS, the real krew's install of each and from this repository as an index, the plugins run by kubectl, and `go install ...@VERSION` from a clean GOPATH
	KREW_PLATFORMS="$(KREW_CHECK_PLATFORMS)" hack/release/krew/check.sh $(KREW_VERSION) $(KREW_ARCHIVES) plugins/*.yaml
	hack/release/krew/go-install-check.sh $(KREW_VERSION)

##@ Release

# make release REGISTRY=host/path VERSION=vX.Y.Z: hack/release pushes every shipped image to
# REGISTRY/<name>:VERSION as a linux/amd64 + linux/arm64 index and writes _output/release/VERSION/
# (install.yaml pinned by digest, images.txt, krew/). RELEASE_INSECURE=1 pushes over plain HTTP.
.PHONY: release
release: ## every shipped image for linux/amd64 and linux/arm64 pushed to REGISTRY as VERSION; install.yaml pinned by digest, the chart's values.yaml, images.txt and the krew archives into _output/release/VERSION
	@[ -n "$(REGISTRY)" ] || { echo "usage: make release REGISTRY=host/path VERSION=vX.Y.Z [RELEASE_INSECURE=1]"; exit 1; }
	$(GO) run ./hack/release -registry "$(REGISTRY)" -version "$(VERSION)" -archives-url "$(ARCHIVES_URL)"

##@ Test

.PHONY: envtest-assets
envtest-assets: ## build kube-apiserver (cached) for the integration tests
	hack/build/envtest-assets.sh

.PHONY: test-all
test-all: lint test krew-check e2e ## everything README promises: lint, unit, integration, fuzz, the krew manifests, e2e on a real cluster

.PHONY: test
test: test-unit test-race test-python fuzz ## unit and integration tests (real kube-apiserver + etcd), the data path under -race, the Python client, then fuzzing

# The packages whose goroutines share connections, buffers and counters: the data path (the agent and
# its run executor), the SDK, the io shim, the WebSocket and the buffer pool. They run under the race
# detector (test-race), and not a second time without it (test-unit).
RACE_PACKAGES := ./datapath/... ./sdk/... ./runtimes/ioshim/... ./internal/ws/... ./internal/bufpool/...

.PHONY: test-unit
test-unit: ## the tests of every package but RACE_PACKAGES, with a real kube-apiserver and S3 server
	assets=$$(hack/build/envtest-assets.sh); s3=$$(hack/build/pinned.sh versitygw); \
	race=$$($(GO) list $(RACE_PACKAGES)); pkgs=$$($(GO) list ./... | grep -vxF "$$race"); \
	KUBEBUILDER_ASSETS=$$assets MLKUBE_S3_SERVER=$$s3 MLKUBE_REQUIRE_ENVTEST=1 $(GO) test -count=1 $$pkgs

.PHONY: test-race
test-race: ## the data path packages' tests under the race detector, with a real S3 server
	s3=$$(hack/build/pinned.sh versitygw); \
	CGO_ENABLED=1 MLKUBE_S3_SERVER=$$s3 $(GO) test -count=1 -race $(RACE_PACKAGES)

# The Python client (python/) is built and tested with Debian's python3, not a pyenv shim on PATH:
# it depends only on what Debian packages (hack/build/install-deps.sh installs them).
PYTHON ?= /usr/bin/python3

.PHONY: test-python
test-python: ## the Python client's tests against an in-process fake agent, its datasets with a real DataLoader (python3-torch)
	@$(PYTHON) -c 'import torch' 2>/dev/null || { echo "test-python: python3-torch is not installed, and the datasets' tests would be skipped: run hack/build/install-deps.sh"; exit 1; }
	cd python && $(PYTHON) -m pytest -q -p no:cacheprovider tests

.PHONY: python-wheel
python-wheel: ## the Python client (import mlkube) as a wheel into _output/python
	$(PYTHON) -m pip wheel --no-deps --no-build-isolation --no-index -w _output/python ./python
	rm -rf python/build python/mlkube.egg-info

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each
	@for target in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for fn in $$(grep -h -o '^func Fuzz[A-Za-z0-9_]*' $$target/*_test.go | cut -d' ' -f2); do \
			echo "fuzz $$fn in $$target for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$target; \
		done; \
	done

##@ Cluster and e2e (targets of hack/cluster/e2e.mk: images, cluster-deps, cluster-up, cluster-down)

include hack/cluster/e2e.mk

.PHONY: deploy
deploy: ## deploy manifests/install.yaml to $$KUBECONFIG and wait for the manager
	hack/cluster/deploy.sh

.PHONY: demo
demo: ## fresh machine to a running cluster with mlkube, a sample MxJob and a sample Transform
	hack/cluster/demo.sh

.PHONY: e2e
e2e: ## images, cluster up, deploy, the e2e suite, teardown (MLKUBE_E2E_KUBECONFIG uses a given cluster)
	hack/cluster/e2e.sh

.PHONY: e2e-kind
e2e-kind: ## the e2e suite's provider tests on kind; starts and stops Debian's docker.io where no engine answers, and then builds the node image with no registry
	hack/cluster/e2e-kind.sh

.PHONY: e2e-release
e2e-release: ## make release to a real registry on this machine (Debian's docker-registry), then the e2e suite's install tests on the local cluster installed from it, once with the bundle and once with the chart
	hack/cluster/e2e-release.sh

.PHONY: kind-node-image
kind-node-image: ## a kind node image of the pinned Kubernetes built with no registry (cached by its inputs; needs an engine: hack/cluster/engine.sh start)
	hack/cluster/kind-node-image.sh

.PHONY: bench
# Every benchmark runs BENCH_COUNT times (benchstat needs 6 samples for a 95% confidence
# interval); benchstat gives each figure's median and spread per package. The raw runs stay in
# BENCH_OUT. Each package's test binary runs on its own with its log (stderr) in BENCH_OUT/*.log:
# under go test a log line can land inside a result line, which benchstat then cannot parse.
BENCH_COUNT ?= 6
BENCH_OUT ?= _output/bench
BENCHSTAT := $(TOOLS) benchstat
# The noderun benchmarks drive datapath/noderun through the agent's runs API with a real transformer,
# so they are datapath/agent's.
# $(call run-bench,name,package dir,flags)
define run-bench
$(GO) test -c -o $(BENCH_OUT)/$(1).test ./$(2)
assets=$$(hack/build/envtest-assets.sh) && cd $(2) && KUBEBUILDER_ASSETS=$$assets $(abspath $(BENCH_OUT))/$(1).test -test.run '^$$' -test.count $(BENCH_COUNT) $(3) \
	>$(abspath $(BENCH_OUT))/$(1).txt 2>$(abspath $(BENCH_OUT))/$(1).log || { tail -40 $(abspath $(BENCH_OUT))/$(1).txt $(abspath $(BENCH_OUT))/$(1).log; exit 1; }
endef
bench: ## benchmarks, each a ratio to a baseline in the same run, BENCH_COUNT times, summarised by benchstat
	mkdir -p $(BENCH_OUT)
	$(call run-bench,controller,controller/integration,-test.bench . -test.benchtime 1x -test.timeout 60m)
	$(call run-bench,webhook,webhook,-test.bench . -test.benchtime 5000x -test.benchmem)
	$(call run-bench,sdk,sdk/transformer,-test.bench . -test.benchmem)
	$(call run-bench,datapath,datapath/agent,-test.bench 'DataPath|Authorization' -test.benchtime 500ms)
	$(call run-bench,noderun,datapath/agent,-test.bench NodeRun -test.benchtime 1x)
	$(call run-bench,h1client,internal/h1client,-test.bench RoundTrip -test.benchtime 20000x)
	$(call run-bench,mxconfig,api/mxnet/mxconfig,-test.bench . -test.benchmem)
	@for f in controller webhook sdk datapath noderun h1client mxconfig; do \
		printf '\n### %s\n\n```\n' $$f; $(BENCHSTAT) $(BENCH_OUT)/$$f.txt; printf '```\n'; \
	done > $(BENCH_OUT)/bench.md
	cat $(BENCH_OUT)/bench.md
	$(GO) run ./hack/bench/benchdoc -block bench -in $(BENCH_OUT)/bench.md

.PHONY: bench-cluster
bench-cluster: ## the data path on a real cluster: a load generator pod against a bare echo pod and a TCP relay chain, every communication type
	BENCH_OUT=$(BENCH_OUT) hack/bench/cluster.sh

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
