package images

// CoreDNSVersion is the CoreDNS release `hack/build/pinned.sh coredns` builds for both clusters, the
// one kubeadm of the pinned Kubernetes deploys (so kind's nodes can carry it under kubeadm's name);
// it is pinned by hack/build/coredns/go.mod, and TestVersionsArePinned keeps the two the same.
const CoreDNSVersion = "v1.14.6"

// MetricsServerVersion is the metrics-server release `hack/build/pinned.sh metrics-server` builds
// for the e2e clusters; it is pinned by hack/build/metrics-server/go.mod, and TestVersionsArePinned
// keeps the two the same.
const MetricsServerVersion = "v0.9.0"

// VersityGWVersion is the versitygw release `hack/build/pinned.sh versitygw` builds for the e2e
// clusters' S3 server; it is pinned by hack/build/versitygw/go.mod, and TestVersionsArePinned keeps
// the two the same.
const VersityGWVersion = "v1.8.0"

// KueueVersion is the Kueue release `hack/build/pinned.sh kueue` builds for the e2e clusters; it
// is pinned by hack/build/kueue/go.mod, and TestVersionsArePinned keeps the two the same and the
// Kueue module of the repository's go.mod, whose manifests e2e/cluster installs.
const KueueVersion = "v0.17.0"

// The images the project builds. A new image is one more entry here and in All.
var (
	// Manager is the mlkube controller manager (webhook + reconcilers).
	Manager = Spec{Ref: "mlkube/manager:dev", Package: "./cmd/manager"}
	// Pause is containerd's sandbox_image on the local cluster.
	Pause = Spec{Ref: "mlkube/pause:dev", Package: "./e2e/images/pause"}
	// CoreDNS serves cluster DNS on the local cluster, where the upstream image cannot be pulled.
	CoreDNS = Spec{
		Ref:    "mlkube/coredns:" + CoreDNSVersion,
		Script: "hack/build/pinned.sh",
		Args:   []string{"coredns"},
	}
	// MetricsServer serves metrics.k8s.io on the e2e clusters (`kubectl mxjob top`, `kubectl etl
	// metrics`); e2e/cluster deploys it on every provider.
	MetricsServer = Spec{
		Ref:    "mlkube/metrics-server:" + MetricsServerVersion,
		Script: "hack/build/pinned.sh",
		Args:   []string{"metrics-server"},
	}
	// S3Server is the S3 server of the e2e clusters (versitygw on an emptyDir), which TransformRuns
	// read ObjectStores from; e2e/cluster deploys it on every provider.
	S3Server = Spec{
		Ref:    "mlkube/versitygw:" + VersityGWVersion,
		Script: "hack/build/pinned.sh",
		Args:   []string{"versitygw"},
	}
	// Kueue queues and admits MxJobs on the e2e clusters; e2e/cluster installs it on every
	// provider. Kueue's manifests run /manager, the name its own image gives the binary.
	Kueue = Spec{
		Ref:    "mlkube/kueue:" + KueueVersion,
		Script: "hack/build/pinned.sh",
		Args:   []string{"kueue"},
		Links:  []string{"manager"},
	}
	// TestServer is the e2e suite's workload: it answers with its pod and node, and fetches or
	// resolves on request, so a test can probe the cluster network from inside a pod.
	TestServer = Spec{Ref: "mlkube/e2e-testserver:dev", Package: "./e2e/images/testserver"}
)

// LoadGen is `make bench-cluster`'s load generator and the bare parts it measures the data path
// against: an echo, a file server, a store and a TCP relay, and the tar that kubectl cp runs in the
// pod it copies to and from (e2e/images/loadgen).
var LoadGen = Spec{Ref: "mlkube/loadgen:dev", Package: "./e2e/images/loadgen", Links: []string{"tar"}}

// MxJobWorkload is the MxJob e2e workload: a parameter-server rendezvous wired by the DMLC
// environment (e2e/images/mxjob-workload).
var MxJobWorkload = Spec{Ref: "mlkube/mxjob-workload:dev", Package: "./e2e/images/mxjob-workload"}

// TorchTrainer is the e2e suite's PyTorch training workload (e2e/images/torch-trainer): Debian's
// python3 with python3-torch and this repository's Python client, collected by
// hack/build/python-runtime-image.sh torch (about 630 MB, for this machine's architecture only),
// under the binary that runs the embedded training script.
var TorchTrainer = Spec{
	Ref:             "mlkube/e2e-torch:dev",
	Package:         "./e2e/images/torch-trainer",
	BaseLayerScript: "hack/build/python-runtime-image.sh",
	BaseLayerArgs:   []string{"torch"},
}

// Example transformers built on the transformer SDK.
var (
	TransformerEcho = Spec{Ref: "mlkube/transformer-echo:dev", Package: "./examples/transformers/echo"}
	TransformerMD5  = Spec{Ref: "mlkube/transformer-md5:dev", Package: "./examples/transformers/md5"}
	TransformerGzip = Spec{Ref: "mlkube/transformer-gzip:dev", Package: "./examples/transformers/gzip"}
)

// The `io` transformer shim and the `code` runtimes (runtimes/ioshim, runtimes/python).
var (
	// IOShim is copied into `io` transformer pods by their init container.
	IOShim = Spec{Ref: "mlkube/io-shim:dev", Package: "./cmd/io-shim"}
	// RuntimePython311 is the runtime on Debian's python3.11, which hack/build/python-runtime-image.sh
	// collects (installing the packages with apt-get on first use) and caches.
	RuntimePython311 = Spec{
		Ref:             "mlkube/runtime-python3.11:dev",
		Package:         "./cmd/runtime-python",
		BaseLayerScript: "hack/build/python-runtime-image.sh",
	}
)

// NodeAgent is the node data path agent (DaemonSet).
var NodeAgent = Spec{Ref: "mlkube/node-agent:dev", Package: "./cmd/node-agent"}

// KindNodeNet is the pod network of the project's kind node image (e2e/images/nodenet), which
// hack/cluster/kindnode/default-cni.yaml runs on every node; the node image preloads it, as no registry
// can serve it.
var KindNodeNet = Spec{Ref: "mlkube/kind-nodenet:dev", Package: "./e2e/images/nodenet"}

// All lists every image `make images` builds.
func All() []Spec {
	return []Spec{Manager, Pause, CoreDNS, MetricsServer, S3Server, Kueue, TestServer, MxJobWorkload, TransformerEcho, TransformerMD5, TransformerGzip,
		IOShim, RuntimePython311, NodeAgent, LoadGen, KindNodeNet, TorchTrainer}
}
