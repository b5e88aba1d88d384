package etl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objectCase is a command against the fake agent holding objects, and its expected output.
type objectCase struct {
	args    string
	objects []string
	// stdin is the command's stdin; files are written into its working directory, a temporary
	// one; transforms are on the API server.
	stdin            string
	files            map[string]string
	transforms       []client.Object
	pageSize         int
	wantCode         int
	wantOut, wantErr string
	wantLeft         []string
	wantForwardsTo   []string
}

func runObjectCases(t *testing.T, cases map[string]objectCase) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			agent, url := newFakeAgent(t)
			for _, o := range tc.objects {
				agent.objects[o] = []byte("content of " + o)
			}
			if tc.pageSize > 0 {
				agent.pageSize = tc.pageSize
			}
			if tc.files != nil {
				dir := t.TempDir()
				for name, content := range tc.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				t.Chdir(dir)
			}
			env, code, forwards := runObjectsWith(t, url, tc.stdin, tc.transforms, strings.Fields(tc.args)...)
			env.Check(t, code, tc.wantCode, tc.wantOut, tc.wantErr)
			if tc.wantLeft != nil {
				var left []string
				for _, o := range tc.objects {
					if _, ok := agent.objects[o]; ok {
						left = append(left, o)
					}
				}
				if diff := cmp.Diff(tc.wantLeft, left, cmpEmptySlice); diff != "" {
					t.Errorf("objects left (-want +got):\n%s", diff)
				}
			}
			if tc.wantForwardsTo != nil {
				if diff := cmp.Diff(tc.wantForwardsTo, forwards); diff != "" {
					t.Errorf("port-forwards to nodes (-want +got):\n%s", diff)
				}
			}
		})
	}
}

var cmpEmptySlice = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

var tree = []string{"raw/a.txt", "raw/b.txt", "raw/sub/c.txt", "raw/sub/deep/d.txt", "raw2/e.txt", "top.txt"}

func TestLs(t *testing.T) {
	runObjectCases(t, map[string]objectCase{
		"the top, directories first, across pages": {
			args: "ls", objects: tree, pageSize: 1,
			wantOut: "" +
				"NAME      SIZE   MODIFIED   NODE\n" +
				"raw/                        \n" +
				"raw2/                       \n" +
				"top.txt   18B    10m        node-a\n",
			wantForwardsTo: []string{""},
		},
		"a prefix, etl: written or not": {
			args: "ls etl:raw/ --no-headers", objects: tree, pageSize: 2,
			wantOut: "" +
				"raw/sub/                \n" +
				"raw/a.txt   20B   10m   node-a\n" +
				"raw/b.txt   20B   10m   node-a\n",
		},
		"an ObjectStore's keys, across pages": {
			args: "ls s3://raw/raw/ --no-headers", objects: tree, pageSize: 2,
			wantOut: "" +
				"raw/sub/                \n" +
				"raw/a.txt   20B   10m   node-a\n" +
				"raw/b.txt   20B   10m   node-a\n",
		},
		"an ObjectStore's top": {
			args: "ls s3://raw -o name", objects: tree,
			wantOut: "raw/\nraw2/\ntop.txt\n",
		},
		"nothing in an ObjectStore": {
			args: "ls s3://raw/none/", objects: tree,
			wantErr: "No objects found under \"none/\" in ObjectStore raw of namespace default.\n",
		},
		"an ObjectStore the namespace does not have": {
			args: "ls s3://gone/x/", wantCode: 1,
			wantErr: "error: no ObjectStore gone in namespace default (404: namespace default has no ObjectStore gone); kubectl get objectstores lists the namespace's\n",
		},
		"an ObjectStore the ServiceAccount may not get": {
			args: "ls s3://locked/", wantCode: 1,
			wantErr: "error: ServiceAccount default:mlkube-cli may not get ObjectStore locked in namespace default (403: may not get objectstores.etl.mlkube.io locked), which listing its objects needs; bind it to mlkube-datapath-viewer: kubectl -n default create rolebinding mlkube-cli-datapath-list --clusterrole=mlkube-datapath-viewer --serviceaccount=default:mlkube-cli (docs/datapath-rbac.md), or pass --service-account\n",
		},
		"an ObjectStore that cannot be reached": {
			args: "ls s3://down/", wantCode: 1,
			wantErr: "error: ObjectStore down cannot be listed (502: ObjectStore down (bucket b at http://s3): the endpoint cannot be reached)\n",
		},
		"s3:// with no store": {
			args: "ls s3://", wantCode: 1,
			wantErr: "error: s3://: want s3://STORE/PREFIX, STORE an ObjectStore of the namespace (kubectl get objectstores); see 'kubectl etl ls --help'\n",
		},
		"recursive names": {
			args: "ls raw/ -R -o name", objects: tree, pageSize: 2,
			wantOut: "raw/a.txt\nraw/b.txt\nraw/sub/c.txt\nraw/sub/deep/d.txt\n",
		},
		"a limit stops paging": {
			args: "ls raw/ --recursive --limit 2 -o name", objects: tree, pageSize: 2,
			wantOut: "raw/a.txt\nraw/b.txt\n",
		},
		"json": {
			args: "ls raw/sub/deep/ -o json", objects: tree,
			wantOut: `{
  "items": [
    {
      "name": "raw/sub/deep/d.txt",
      "size": 29,
      "modified": "2026-05-01T11:50:00Z",
      "checksum": "` + checksumOf([]byte("content of raw/sub/deep/d.txt")) + `",
      "node": "node-a"
    }
  ]
}
`,
		},
		"yaml with a prefix": {
			args: "ls raw/sub/ -o yaml", objects: []string{"raw/sub/deep/d.txt"},
			wantOut: "items: []\nprefixes:\n- raw/sub/deep/\n",
		},
		"nothing": {
			args: "ls none/", objects: tree,
			wantErr: "No objects found under \"none/\" in namespace default.\n",
		},
		"an unknown output": {
			args: "ls -o wide", wantCode: 1,
			wantErr: "error: unknown output format \"wide\"; use one of: json, yaml, name; see 'kubectl etl ls --help'\n",
		},
		"a token the agent refuses": {
			args: "ls --service-account stranger", wantCode: 1,
			wantErr: "error: the data path agent did not accept the token of ServiceAccount default:stranger (401: bad token); the agent checks tokens for audience \"mlkube-datapath\" (its --token-audience), see docs/datapath-rbac.md\n",
		},
	})
}

func TestRmObjects(t *testing.T) {
	runObjectCases(t, map[string]objectCase{
		"objects": {
			args: "rm etl:raw/a.txt etl:top.txt", objects: tree,
			wantOut:  "object \"raw/a.txt\" deleted\nobject \"top.txt\" deleted\n",
			wantLeft: []string{"raw/b.txt", "raw/sub/c.txt", "raw/sub/deep/d.txt", "raw2/e.txt"},
		},
		"a prefix, recursively: raw2/ stays": {
			args: "rm -r etl:raw/", objects: tree,
			wantOut:  "objects under \"raw/\" deleted\n",
			wantLeft: []string{"raw2/e.txt", "top.txt"},
		},
		"a prefix needs --recursive": {
			args: "rm etl:raw/", objects: tree, wantCode: 1,
			wantErr:  "error: etl:raw/ is a prefix: pass --recursive to remove every object under it; see 'kubectl etl rm --help'\n",
			wantLeft: tree,
		},
		"not the whole namespace": {
			args: "rm -r etl:", objects: tree, wantCode: 1,
			wantErr:  "error: etl: alone names every object of the namespace; name the prefixes to remove; see 'kubectl etl rm --help'\n",
			wantLeft: tree,
		},
		"a missing object does not stop the others": {
			args: "rm etl:nope etl:top.txt", objects: tree, wantCode: 1,
			wantOut: "object \"top.txt\" deleted\n",
			wantErr: "error: no object nope in namespace default (404: no such object); see kubectl etl ls\n",
		},
		"Transforms and objects apart": {
			args: "rm md5 etl:top.txt", objects: tree, wantCode: 1,
			wantErr:  "error: \"md5\" is not an object: remove Transforms and objects (etl:NAME) in separate commands; see 'kubectl etl rm --help'\n",
			wantLeft: tree,
		},
		"--recursive is for objects": {
			args: "rm -r md5", wantCode: 1,
			wantErr: "error: --recursive removes objects: name prefixes as etl:PREFIX/; see 'kubectl etl rm --help'\n",
		},
		"a viewer may not delete": {
			args: "rm etl:top.txt --service-account viewer", objects: tree, wantCode: 1,
			wantErr:  "error: ServiceAccount default:viewer may not delete objects in namespace default (403: viewer may not DELETE); bind it to mlkube-datapath-user: kubectl -n default create rolebinding viewer-datapath-delete --clusterrole=mlkube-datapath-user --serviceaccount=default:viewer (docs/datapath-rbac.md), or pass --service-account\n",
			wantLeft: tree,
		},
	})
}

func TestCat(t *testing.T) {
	runObjectCases(t, map[string]objectCase{
		"as stored": {
			args: "cat raw/a.txt", objects: tree,
			wantOut: "content of raw/a.txt", wantForwardsTo: []string{""},
		},
		"through a pipeline on the object's node": {
			args: "cat etl:raw/sub/c.txt --transform md5>>upper --args hex --service-account viewer", objects: tree,
			wantOut: "GET md5>>upper(hex) raw/sub/c.txt: content of raw/sub/c.txt", wantForwardsTo: []string{"", "node-a"},
		},
		"a missing object": {
			args: "cat nope", wantCode: 1,
			wantErr: "error: no object nope in namespace default (404: no such object); see kubectl etl ls\n",
		},
		"an empty stage": {
			args: "cat raw/a.txt --transform md5>>", wantCode: 1,
			wantErr: "error: --transform \"md5>>\" has an empty stage; see 'kubectl etl cat --help'\n",
		},
		"args without a transform": {
			args: "cat raw/a.txt --args x", wantCode: 1,
			wantErr: "error: --args goes with --transform; see 'kubectl etl cat --help'\n",
		},
	})
}

func TestObjectRefusals(t *testing.T) {
	c := &objectClient{namespace: "ns", serviceAccount: "loader"}
	for code, want := range map[int]string{
		403: "ServiceAccount ns:loader may not list objects in namespace ns (403: no); bind it to mlkube-datapath-viewer: kubectl -n ns create rolebinding loader-datapath-list --clusterrole=mlkube-datapath-viewer --serviceaccount=ns:loader (docs/datapath-rbac.md), or pass --service-account",
		413: "the objects is larger than the agent accepts (413: no)",
		507: "no room for the objects on its node (507: no); free space with kubectl etl rm, or store it on another node",
		500: "GET the objects: 500 Internal Server Error: no",
	} {
		if diff := cmp.Diff(want, c.refusal("GET", "", code, "no").Error()); diff != "" {
			t.Errorf("%d (-want +got):\n%s", code, diff)
		}
	}
	for code, want := range map[int]string{
		413: "object big is larger than the agent accepts (413: max 1GiB)",
		507: "no room for object big on its node (507: disk full); free space with kubectl etl rm, or store it on another node",
	} {
		if diff := cmp.Diff(want, c.refusal("PUT", "big", code, map[int]string{413: "max 1GiB", 507: "disk full"}[code]).Error()); diff != "" {
			t.Errorf("%d (-want +got):\n%s", code, diff)
		}
	}
}
