package etl

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// readyOn is a Transform of namespace default ready on nodes.
func readyOn(name string, nodes ...string) *v1alpha1.Transform {
	t := &v1alpha1.Transform{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for _, n := range nodes {
		t.Status.Nodes = append(t.Status.Nodes, v1alpha1.NodeStatus{Node: n, Ready: true})
	}
	return t
}

// TestObjectSources: what kubectl etl object sends through a Transform (stdin, a local file, a
// stored object), through what (one Transform or a pipeline), with what args, and as whom.
func TestObjectSources(t *testing.T) {
	photo := map[string]string{"photo.jpg": "meow"}
	both := []client.Object{readyOn("md5", "node-a", "node-b"), readyOn("upper", "node-b")}
	runObjectCases(t, map[string]objectCase{
		"stdin, named stdin": {
			args: "object md5 - -", stdin: "meow", transforms: both,
			wantOut: "PUT md5() stdin: meow", wantForwardsTo: []string{"node-a"},
		},
		"stdin with a name": {
			args: "object md5 - - --object-name photo.jpg", stdin: "meow", transforms: both,
			wantOut: "PUT md5() photo.jpg: meow",
		},
		"a local file, named after its base name": {
			args: "object md5 ./photo.jpg -", files: photo, transforms: both,
			wantOut: "PUT md5() photo.jpg: meow",
		},
		"a pipeline, on a node where every stage is ready": {
			args: "object md5>>upper photo.jpg -", files: photo, transforms: both,
			wantOut: "PUT md5>>upper() photo.jpg: meow", wantForwardsTo: []string{"node-b"},
		},
		"a pipeline on a node where a stage is not ready": {
			args: "object md5>>upper photo.jpg - --node node-a", files: photo, transforms: both, wantCode: 1,
			wantErr: "error: transform upper is not ready on node node-a; it is on node-b\n",
		},
		"a pipeline ready on no one node": {
			args: "object md5>>upper photo.jpg -", files: photo, transforms: []client.Object{readyOn("md5", "node-a"), readyOn("upper", "node-b")}, wantCode: 1,
			wantErr: "error: pipeline md5>>upper is ready on no one node: md5 is on node-a, upper on node-b; see kubectl etl health\n",
		},
		"a stage that does not exist": {
			args: "object md5>>nope photo.jpg -", files: photo, transforms: both, wantCode: 3,
			wantErr: "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n",
		},
		"an empty stage": {
			args: "object md5>> photo.jpg -", files: photo, wantCode: 1,
			wantErr: "error: NAME \"md5>>\" has an empty stage; see 'kubectl etl object --help'\n",
		},
		"args a code function cannot take": {
			args: "object upper photo.jpg - --args x", files: photo, wantCode: 1,
			transforms: []client.Object{func() client.Object {
				t := codeTransform("upper", "def transform(data):\n    return data.upper()\n")
				t.Status = readyOn("upper", "node-a").Status
				return t
			}()},
			wantErr: "error: --args cannot reach Transform upper: its function transform() takes no etl_args parameter, so the runtime would drop them; define it as transform(data, path, etl_args) (or give it a keyword-only etl_args) and create the Transform again, or leave out --args\n",
		},
		"args": {
			args: "object md5 photo.jpg - --args hex", files: photo, transforms: both,
			wantOut: "PUT md5(hex) photo.jpg: meow",
		},
		"a stored object, through a pipeline on its node": {
			args: "object md5>>upper etl:raw/a.txt - --args hex", objects: tree,
			wantOut: "GET md5>>upper(hex) raw/a.txt: content of raw/a.txt", wantForwardsTo: []string{"", "node-a"},
		},
		"a stored object that does not exist": {
			args: "object md5 etl:nope -", wantCode: 1,
			wantErr: "error: no object nope in namespace default (404); see kubectl etl ls\n",
		},
		"a prefix": {
			args: "object md5 etl:raw/ -", wantCode: 1,
			wantErr: "error: SRC etl:raw/ is a prefix: name one object, or transform every object under it with kubectl etl run; see 'kubectl etl object --help'\n",
		},
		"--node with a stored object": {
			args: "object md5 etl:raw/a.txt - --node node-a", wantCode: 1,
			wantErr: "error: --node does not go with a stored object: it goes through the Transform on the node that holds it; see 'kubectl etl object --help'\n",
		},
		"--object-name with a stored object": {
			args: "object md5 etl:raw/a.txt - --object-name x", wantCode: 1,
			wantErr: "error: --object-name does not go with a stored object, which keeps its name; see 'kubectl etl object --help'\n",
		},
		"a stored destination": {
			args: "object md5 photo.jpg etl:out/photo.md5", wantCode: 1,
			wantErr: "error: DST is a local file or - (stdout); to store the result: kubectl etl object NAME SRC - | kubectl etl cp - etl:out/photo.md5; see 'kubectl etl object --help'\n",
		},
		"the default ServiceAccount is mlkube-cli, and the remedy binds it": {
			args: "object secret photo.jpg -", files: photo, transforms: []client.Object{readyOn("secret", "node-a")}, wantCode: 1,
			wantErr: "error: ServiceAccount default:mlkube-cli may not use Transform secret (403: no binding lets default:mlkube-cli use transforms secret); bind it to the data path role: kubectl -n default create rolebinding mlkube-cli-datapath --clusterrole=mlkube-datapath-user --serviceaccount=default:mlkube-cli (docs/datapath-rbac.md), or pass --service-account\n",
		},
	})
}
