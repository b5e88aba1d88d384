# End-to-end harness: image tarballs built without a container engine, and a real cluster (kind
# where a container engine answers, otherwise the docker-less local cluster; force one with
# MLKUBE_CLUSTER_PROVIDER=kind|local). Included from the Makefile.
#
#   make cluster-deps    # local cluster only: Debian packages, Kubernetes and CoreDNS builds (root)
#   make cluster-up      # build images, create the cluster, load the images; kubeconfig in
#                        # _output/cluster/kubeconfig
#   make cluster-down    # remove the cluster and everything it made

E2E_GO ?= go

.PHONY: images cluster-deps cluster-up cluster-load-images cluster-down cluster-smoke

images: ## Build every image tarball into _output/images, its Go binaries stamped with VERSION.
	$(E2E_GO) run ./e2e/cmd/images -version=$(VERSION)

cluster-deps: ## Install what the local cluster needs (root; idempotent).
	hack/cluster/deps.sh

cluster-up: images ## Create the e2e cluster and load every image into each node.
	$(E2E_GO) run ./e2e/cmd/cluster up
	$(E2E_GO) run ./e2e/cmd/cluster load-images

cluster-load-images: ## Load _output/images/*.tar into a running cluster again.
	$(E2E_GO) run ./e2e/cmd/cluster load-images

cluster-down: ## Remove the cluster.
	$(E2E_GO) run ./e2e/cmd/cluster down

cluster-smoke: ## Create a cluster, prove nodes, DNS, Services and teardown work, remove it.
	MLKUBE_E2E_CLUSTER=1 $(E2E_GO) test ./e2e/cluster/ -run TestClusterSmoke -count=1 -v -timeout 20m
