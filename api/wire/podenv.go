package wire

// AgentServiceURL is the node agents' Service as pods reach it. Its internalTrafficPolicy is
// Local, so a pod reaches the agent of its own node and reads that node's objects from local disk.
const AgentServiceURL = "http://node-agent." + AgentNamespace + ".svc"

// The environment the MxJob controller gives every container of a worker pod of a job with a
// dataset, and what the Python client (python/mlkube) reads to find its agent, its token and its
// dataset: one list, so both sides spell them alike (docs/design/mxjob.md, "Dataset").
const (
	// EnvDatapathURL is the agent's URL, AgentServiceURL.
	EnvDatapathURL = "MLKUBE_DATAPATH_URL"
	// EnvDatapathTokenFile is the path of the pod's data path token, TokenFile, which the
	// kubelet replaces before it expires: read it again per request or when it changes. (It is
	// not EnvTokenFile, a transformer's credential.)
	EnvDatapathTokenFile = "MLKUBE_DATAPATH_TOKEN_FILE"
	// EnvNamespace is the pod's namespace, whose data the dataset is.
	EnvNamespace = "MLKUBE_NAMESPACE"
	// EnvNodeName is the name of the pod's node (MLKUBE_NODE, as in transformer pods), so that
	// a reader can tell its own node's objects (X-Mlkube-Node) from the others'.
	EnvNodeName = EnvNode
	// EnvDatasetPrefix is spec.dataset.prefix with a trailing slash, "train/", ready for a
	// list's ?prefix=; unset when the dataset is a template.
	EnvDatasetPrefix = "MLKUBE_DATASET_PREFIX"
	// EnvDatasetTemplate is spec.dataset.template; unset when the dataset is a prefix.
	EnvDatasetTemplate = "MLKUBE_DATASET_TEMPLATE"
	// EnvDatasetTransform is spec.dataset.transform, a Transform or a pipeline "a>>b"; unset
	// when the objects are read as stored.
	EnvDatasetTransform = "MLKUBE_DATASET_TRANSFORM"
	// EnvDatasetArgs is spec.dataset.args; unset when empty.
	EnvDatasetArgs = "MLKUBE_DATASET_ARGS"
)
