package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
)

// onboard makes a team's namespace as docs/install.md ("Onboarding a namespace") has the admin
// make it: the restricted Pod Security Standard enforced, editor bound to edit, and the
// ServiceAccount mlkube-cli, which the plugins' data path commands create on first use and act
// as, bound to mlkube-datapath-user.
func onboard(t *testing.T, editor string) string {
	t.Helper()
	ns := labelledNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	grant(t, ns, "edit", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: editor})
	bindCLI(t, ns)
	return ns
}

// grant binds subject to clusterRole in namespace ns.
func grant(t *testing.T, ns, clusterRole string, subject rbacv1.Subject) {
	t.Helper()
	k8s.MustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterRole + "-" + strings.ToLower(subject.Kind) + "-" + subject.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{subject},
	})
}

// restrictedMD5Pod is walkthroughPod as a namespace enforcing the restricted Pod Security
// Standard admits it (docs/walkthrough.md).
const restrictedMD5Pod = `apiVersion: v1
kind: Pod
metadata:
  name: transformer-md5
spec:
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: server
    image: mlkube/transformer-md5:dev
    ports:
    - name: default
      containerPort: 8000
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
`

// randomTree writes small files of random bytes (1 to maxSmall bytes each) spread over
// subdirs, and big files of a MiB and more at the top, under dir of the shell's working
// directory; it returns every file's bytes by its "/"-separated path relative to dir.
func (s *shell) randomTree(dir string, small, maxSmall int, subdirs []string, big int) map[string][]byte {
	s.t.Helper()
	rng := rand.New(rand.NewPCG(uint64(small), uint64(maxSmall)))
	files := map[string][]byte{}
	for i := range small {
		files[fmt.Sprintf("%s/%04d.bin", subdirs[i%len(subdirs)], i)] = randomBytes(rng, 1+rng.IntN(maxSmall))
	}
	for i := range big {
		files[fmt.Sprintf("big-%d.bin", i)] = randomBytes(rng, 1<<20+i*4099)
	}
	for name, data := range files {
		p := filepath.Join(s.dir, dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
	return files
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// readTree returns every file under dir of the shell's working directory by its "/"-separated
// path relative to dir.
func (s *shell) readTree(dir string) map[string][]byte {
	s.t.Helper()
	root := filepath.Join(s.dir, dir)
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		s.t.Fatalf("reading %s: %v", root, err)
	}
	return files
}

// sameFiles fails t unless got holds exactly want's files with want's bytes.
func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	var wrong, missing, extra []string
	for name, data := range want {
		g, ok := got[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case string(g) != string(data):
			wrong = append(wrong, fmt.Sprintf("%s (%d bytes, want %d%s)", name, len(g), len(data), shortIfText(g, data)))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			extra = append(extra, name)
		}
	}
	if len(wrong)+len(missing)+len(extra) > 0 {
		t.Errorf("%s: of %d files, %d differ %q, %d missing %q, %d unexpected %q",
			what, len(want), len(wrong), firstFew(wrong), len(missing), firstFew(missing), len(extra), firstFew(extra))
	}
}

// firstFew sorts names and keeps the first five, enough to start looking.
func firstFew(names []string) []string {
	slices.Sort(names)
	return names[:min(5, len(names))]
}

// shortIfText shows both contents when they are short, as an md5 digest is.
func shortIfText(got, want []byte) string {
	if len(want) <= 64 && len(got) <= 64 {
		return fmt.Sprintf(": %q, want %q", got, want)
	}
	return ""
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// wantSpread checks a listing of objects under prefix against files (relative to prefix):
// every one there with its size (and checksum when the agent knows it), on the ready nodes, each
// node holding a fair share: for two nodes between 30% and 70% of them.
func wantSpread(t *testing.T, list wire.ObjectList, prefix string, files map[string][]byte, nodes []string) {
	t.Helper()
	perNode := map[string]int{}
	seen := map[string]bool{}
	for _, o := range list.Items {
		rel, ok := strings.CutPrefix(o.Name, prefix)
		data, known := files[rel]
		switch {
		case !ok || !known:
			t.Errorf("listed %q, which was not copied under %s", o.Name, prefix)
		case o.Size != int64(len(data)) || (o.Checksum != "" && o.Checksum != sha256hex(data)):
			t.Errorf("%s: size %d checksum %s, want %d %s", o.Name, o.Size, o.Checksum, len(data), sha256hex(data))
		case !slices.Contains(nodes, o.Node):
			t.Errorf("%s on node %q, which is none of the ready nodes %v", o.Name, o.Node, nodes)
		}
		seen[rel] = true
		perNode[o.Node]++
	}
	if len(seen) != len(files) || len(list.Items) != len(files) {
		t.Errorf("listed %d objects (%d distinct) under %s, want %d", len(list.Items), len(seen), prefix, len(files))
	}
	// Highest-random-weight placement gives each node its share give or take 40% of it.
	n := float64(len(nodes))
	low, high := 0.6/n*float64(len(files)), 1.4/n*float64(len(files))
	for _, node := range nodes {
		if c := float64(perNode[node]); c < low || c > high {
			t.Errorf("node %s holds %d of %d objects, want between %.0f and %.0f (all: %v)", node, perNode[node], len(files), low, high, perNode)
		}
	}
	t.Logf("%s: %d objects over the nodes %v", prefix, len(files), perNode)
}

// TestWalkthroughAsNamespaceEditor: the admin onboards alice's namespace (restricted Pod
// Security, alice an editor, carol a viewer) and bob's; alice, through kubectl with her own
// rights only, copies 1,000 files in, makes an md5 Transform, runs it over them, lists and
// copies the results out, and every output is the md5 of its input; the objects are spread over
// the nodes; she runs an MxJob. Bob can reach none of it, with kubectl or with his namespace's
// data path token; carol and a ServiceAccount bound to view read it and change nothing.
func TestWalkthroughAsNamespaceEditor(t *testing.T) {
	admin := newShell(t)
	nodes := readyNodes(t)
	ns, nsBob := onboard(t, "alice"), onboard(t, "bob")
	grant(t, ns, "view", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"})
	k8s.MustCreate(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns}})
	grant(t, ns, "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns})
	alice, bob, carol := admin.as("alice"), admin.as("bob"), admin.as("carol")

	// Impersonation is in force: alice is no admin.
	alice.refused([]string{"get", "pods", "-n", nsBob}, "", "forbidden")

	images := alice.randomTree("images", 1000, 8192, []string{"cats", "dogs/puppies"}, 3)
	alice.do(ns, "etl cp ./images etl:raw/")
	raw := alice.do(ns, "etl ls raw/ --recursive -o json")
	var list wire.ObjectList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("kubectl etl ls raw/ --recursive -o json: %v in %.500s", err, raw)
	}
	wantSpread(t, list, "raw/", images, nodes)
	if out := alice.do(ns, "etl cat raw/big-1.bin"); out != string(images["big-1.bin"]) {
		t.Errorf("kubectl etl cat raw/big-1.bin: %d bytes, not the file's %d", len(out), len(images["big-1.bin"]))
	}

	alice.file("pod.yaml", restrictedMD5Pod)
	alice.do(ns, "etl init spec -f pod.yaml --name md5", "transform.etl.mlkube.io/md5 created")
	alice.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/md5 --timeout=3m", "condition met")
	if out := alice.do(ns, "etl cat raw/cats/0000.bin --transform md5"); out != md5hex(images["cats/0000.bin"]) {
		t.Errorf("kubectl etl cat raw/cats/0000.bin --transform md5 = %q, want %s", out, md5hex(images["cats/0000.bin"]))
	}
	alice.do(ns, "etl run md5 --src raw --dst out --wait", regexp.MustCompile(`transformrun\.etl\.mlkube\.io/md5-\S+ created`))
	quoted := make([]string, len(nodes))
	for i, n := range nodes {
		quoted[i] = regexp.QuoteMeta(n)
	}
	node := "(" + strings.Join(quoted, "|") + ")"
	alice.do(ns, "etl ls out/", regexp.MustCompile(`(?m)^NAME\s+SIZE\s+MODIFIED\s+NODE\s*$`),
		regexp.MustCompile(`(?m)^(out/)?big-0\.bin\s+32B\s+.*\s`+node+`\s*$`), regexp.MustCompile(`(?m)^(out/)?cats/(\s|$)`))
	alice.do(ns, "etl cp etl:out/ ./out")
	digests := map[string][]byte{}
	for name, data := range images {
		digests[name] = []byte(md5hex(data))
	}
	outputs := alice.readTree("out")
	for name := range outputs {
		if strings.HasPrefix(name, "mlkube-errors-") { // a run's error manifest, written only on errors
			t.Errorf("the run wrote an error manifest %s: %s", name, outputs[name])
			delete(outputs, name)
		}
	}
	sameFiles(t, "./out after kubectl etl cp etl:out/ ./out, against the md5 of each of ./images", outputs, digests)

	// Bob, an editor elsewhere, cannot reach alice's namespace through kubectl.
	bob.refused([]string{"etl", "ls", "-n", ns, "raw/"}, "big-0.bin", "forbidden")
	bob.refused([]string{"etl", "cat", "-n", ns, "raw/big-0.bin"}, string(images["big-0.bin"][:64]), "forbidden")
	bob.refused([]string{"get", "transforms.etl.mlkube.io", "-n", ns}, "md5", "forbidden")

	// Carol, a viewer of alice's namespace, reads its resources and changes nothing.
	carol.want([]string{"get", "transforms.etl.mlkube.io", "-n", ns}, "md5")
	carol.file("t.py", walkthroughUpper)
	carol.refused([]string{"etl", "init", "code", "-n", ns, "--name", "upper", "--runtime", "python3.11", "--from-file", "t.py"}, "", "forbidden")
	carol.refused([]string{"delete", "transforms.etl.mlkube.io", "md5", "-n", ns}, "", "forbidden")
	// view reads objects but cannot mint the tokens that the plugin's data path commands use.
	carol.refused([]string{"etl", "cp", "-n", ns, "./t.py", "etl:raw/t.py"}, "", "forbidden")

	// At the agent, bob's namespace's data path token is refused everything of alice's
	// namespace, and a ServiceAccount bound to view reads and changes nothing.
	base := forwardToAgent(t, nodes[0])
	aliceToken, bobToken, readerToken := dataPathToken(t, ns, cliServiceAccount), dataPathToken(t, nsBob, cliServiceAccount), dataPathToken(t, ns, "reader")
	object := objectPath(ns, "raw/big-0.bin")
	for _, c := range []struct {
		who, token, method, path string
		body                     []byte
		want                     int
	}{
		{"alice's mlkube-cli", aliceToken, http.MethodGet, object, nil, http.StatusOK},
		{"bob's mlkube-cli", bobToken, http.MethodGet, object, nil, http.StatusForbidden},
		{"bob's mlkube-cli", bobToken, http.MethodGet, listPath(ns, "raw/"), nil, http.StatusForbidden},
		{"bob's mlkube-cli", bobToken, http.MethodPut, objectPath(ns, "raw/bob.txt"), []byte("bob was here"), http.StatusForbidden},
		{"bob's mlkube-cli", bobToken, http.MethodDelete, object, nil, http.StatusForbidden},
		{"the ServiceAccount bound to view", readerToken, http.MethodGet, object, nil, http.StatusOK},
		{"the ServiceAccount bound to view", readerToken, http.MethodGet, listPath(ns, "raw/"), nil, http.StatusOK},
		{"the ServiceAccount bound to view", readerToken, http.MethodPut, objectPath(ns, "raw/reader.txt"), []byte("reader was here"), http.StatusForbidden},
		{"the ServiceAccount bound to view", readerToken, http.MethodDelete, object, nil, http.StatusForbidden},
	} {
		code, body := callAgent(t, base, c.method, c.path, c.token, c.body)
		if code != c.want {
			t.Errorf("%s %s as %s: %d %.300q, want %d", c.method, c.path, c.who, code, body, c.want)
		}
		if c.want == http.StatusOK && c.path == object && body != string(images["big-0.bin"]) {
			t.Errorf("%s %s as %s: %d bytes, not the file's %d", c.method, c.path, c.who, len(body), len(images["big-0.bin"]))
		}
		if c.want == http.StatusForbidden && strings.Contains(body, string(images["big-0.bin"][:64])) {
			t.Errorf("%s %s as %s: refused, but the answer holds the object's bytes", c.method, c.path, c.who)
		}
	}
	// Nothing refused was done.
	for name, want := range map[string]int{"raw/big-0.bin": http.StatusOK, "raw/bob.txt": http.StatusNotFound, "raw/reader.txt": http.StatusNotFound, "raw/t.py": http.StatusNotFound} {
		if code, _ := callAgent(t, base, http.MethodHead, objectPath(ns, name), aliceToken, nil); code != want {
			t.Errorf("HEAD %s after the refusals: %d, want %d", name, code, want)
		}
	}

	// Last, as it needs pods of the user's that meet the restricted standard.
	alice.do(ns, "mxjob submit walk --mode local --image "+builders.DefaultImage+" -- /mxjob-workload", "mxjob.mxnet.mlkube.io/walk created")
	alice.do(ns, "mxjob wait walk --for=Succeeded --timeout=3m", "mxjob.mxnet.mlkube.io/walk Succeeded")
	alice.do(ns, "mxjob logs walk", "local mode, no peers")
}
