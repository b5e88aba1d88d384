package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/repo"
)

// The walkthrough of docs/walkthrough.md (and the README's five minutes), typed as a user types
// it: the real kubectl, which finds kubectl-mxjob and kubectl-etl on PATH (built from this
// checkout, as `make plugins` builds them) and, once `completion install` linked them,
// kubectl_complete-mxjob and -etl. Each step checks the exit code and the lines a user reads; a
// failure shows the command and its output.

// walkthroughVersion stamps the plugins built here, so the test knows kubectl runs these.
const walkthroughVersion = "v0.0.0-e2e-walkthrough"

// shell runs kubectl with the plugins first on PATH, in a working directory of the user's files.
type shell struct {
	t       *testing.T
	kubectl string
	dir     string
	env     []string
}

func newShell(t *testing.T) *shell {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := fixture.BuildPlugins(root, bin, walkthroughVersion); err != nil {
		t.Fatal(err)
	}
	kubectl, err := fixture.Kubectl(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &shell{t: t, kubectl: kubectl, dir: t.TempDir()}
	s.env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+os.Getenv("MLKUBE_E2E_KUBECONFIG"),
		"KUBECACHEDIR="+t.TempDir(), // a first-time user's empty discovery cache
	)
	s.want([]string{"mxjob", "version", "--client"}, "kubectl-mxjob "+walkthroughVersion)
	s.want([]string{"etl", "version", "--client"}, "kubectl-etl "+walkthroughVersion)
	return s
}

// as is the shell of another user of the same cluster: the same kubectl and plugins, a working
// directory of its own, and a kubeconfig whose user entry impersonates user in the group
// system:authenticated (`as`, `as-groups`) on the suite's admin credentials, so that the API
// server decides every request with user's rights, not the admin's.
func (s *shell) as(user string) *shell {
	s.t.Helper()
	kc, err := clientcmd.LoadFromFile(os.Getenv("MLKUBE_E2E_KUBECONFIG"))
	if err != nil {
		s.t.Fatal(err)
	}
	// The copy lives elsewhere: its certificate paths must not be relative to the original.
	if err := clientcmd.ResolveLocalPaths(kc); err != nil {
		s.t.Fatal(err)
	}
	current, ok := kc.Contexts[kc.CurrentContext]
	if !ok || kc.AuthInfos[current.AuthInfo] == nil {
		s.t.Fatalf("the suite's kubeconfig has no user for its current context %q", kc.CurrentContext)
	}
	auth := kc.AuthInfos[current.AuthInfo].DeepCopy()
	auth.Impersonate, auth.ImpersonateGroups = user, []string{"system:authenticated"}
	kc.AuthInfos[current.AuthInfo] = auth
	path := filepath.Join(s.t.TempDir(), user+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		s.t.Fatal(err)
	}
	u := &shell{t: s.t, kubectl: s.kubectl, dir: s.t.TempDir()}
	for _, kv := range s.env {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "KUBECACHEDIR=") {
			u.env = append(u.env, kv)
		}
	}
	u.env = append(u.env, "KUBECONFIG="+path, "KUBECACHEDIR="+s.t.TempDir())
	return u
}

// start runs kubectl args in the background, as a command in another terminal, and returns the
// running command and its output so far (read it only once the command has ended). kubectl
// executes a plugin in its own process, so the command's process is the plugin's.
func (s *shell) start(args ...string) (*exec.Cmd, *bytes.Buffer) {
	s.t.Helper()
	cmd := exec.Command(s.kubectl, args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting kubectl %s: %v", strings.Join(args, " "), err)
	}
	s.t.Cleanup(func() {
		_ = cmd.Process.Kill() // it may have ended, or been killed, already
		_ = cmd.Wait()
	})
	return cmd, &out
}

// refused runs kubectl args, which must fail with every one of wants (case-insensitive) on
// stderr, and nothing of notOnStdout on stdout.
func (s *shell) refused(args []string, notOnStdout string, wants ...string) {
	s.t.Helper()
	code, stdout, stderr := s.exec(args...)
	var missing []string
	for _, w := range wants {
		if !strings.Contains(strings.ToLower(stderr), strings.ToLower(w)) {
			missing = append(missing, fmt.Sprintf("%q", w))
		}
	}
	leaked := notOnStdout != "" && strings.Contains(stdout, notOnStdout)
	if code == 0 || len(missing) > 0 || leaked {
		s.t.Errorf("$ kubectl %s\nexit code %d (want a failure); stderr lacks %v; stdout shows %q: %v\n--- stdout:\n%.2000s--- stderr:\n%s",
			strings.Join(args, " "), code, missing, notOnStdout, leaked, stdout, stderr)
	}
}

// file writes a file of the user's into the working directory, making its directory.
func (s *shell) file(name, content string) {
	s.t.Helper()
	path := filepath.Join(s.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// exec runs kubectl args and returns its exit code and output.
func (s *shell) exec(args ...string) (code int, stdout, stderr string) {
	s.t.Helper()
	// Longer than any wait a step asks for, so a step's own timeout is what fails it.
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.kubectl, args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		s.t.Fatalf("running kubectl %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// want runs kubectl args, which must exit 0 with every one of wants (a substring, or a
// *regexp.Regexp) on stdout, and returns stdout.
func (s *shell) want(args []string, wants ...any) string {
	s.t.Helper()
	code, stdout, stderr := s.exec(args...)
	var missing []string
	for _, w := range wants {
		switch w := w.(type) {
		case string:
			if !strings.Contains(stdout, w) {
				missing = append(missing, fmt.Sprintf("%q", w))
			}
		case *regexp.Regexp:
			if !w.MatchString(stdout) {
				missing = append(missing, "/"+w.String()+"/")
			}
		}
	}
	if code != 0 || len(missing) > 0 {
		s.t.Fatalf("$ kubectl %s\nexit code %d (want 0); stdout lacks %v\n--- stdout:\n%s--- stderr:\n%s",
			strings.Join(args, " "), code, missing, stdout, stderr)
	}
	return stdout
}

// do is want for a step typed in namespace ns: `kubectl PLUGIN COMMAND -n ns ARGS…`, the
// namespace before the arguments, which may end in `-- COMMAND…` that must not take it.
func (s *shell) do(ns string, args string, wants ...any) string {
	s.t.Helper()
	f := strings.Fields(args)
	n := min(2, len(f))
	return s.want(slices.Concat(f[:n], []string{"-n", ns}, f[n:]), wants...)
}

// completes checks what kubectl's own completion offers for line (`kubectl __complete …`, as
// the shell asks it on TAB), through the plugin's kubectl_complete-<name>.
func (s *shell) completes(ns, line string, want ...string) {
	s.t.Helper()
	args := append([]string{"__complete"}, strings.Fields(line)...)
	args = append(args, "-n", ns, "")
	out := s.want(args)
	got := strings.Split(strings.TrimSpace(out), "\n")
	for _, w := range want {
		if !slices.Contains(got, w) {
			s.t.Errorf("$ kubectl %s\noffers %q, want %q among them", strings.Join(args, " "), got, w)
		}
	}
}

// TestWalkthroughMxJob: submit a job, list it, wait for it, read its logs and description,
// complete its name, delete it.
func TestWalkthroughMxJob(t *testing.T) {
	s := newShell(t)
	ns := namespace(t)
	// The rendezvous workload in local mode computes alone and exits 0 at once.
	s.do(ns, "mxjob submit walk --mode local --image "+builders.DefaultImage+" -- /mxjob-workload",
		"mxjob.mxnet.mlkube.io/walk created")
	s.do(ns, "mxjob list", regexp.MustCompile(`(?m)^NAME\s+MODE\s+STATE`), regexp.MustCompile(`(?m)^walk\s+local\s`))
	s.do(ns, "mxjob wait walk --for=Succeeded --timeout=3m", "mxjob.mxnet.mlkube.io/walk Succeeded")
	s.do(ns, "mxjob logs walk", "[pod/walk-worker-0] ", "local mode, no peers")
	s.do(ns, "mxjob describe walk", regexp.MustCompile(`(?m)^Name:\s+walk$`), regexp.MustCompile(`(?m)^State:\s+Succeeded$`),
		regexp.MustCompile(`(?m)^\s+WORKER\s+1\s+0\s+1\s+0\s`))

	s.do(ns, "mxjob completion install", "kubectl_complete-mxjob -> ")
	s.completes(ns, "mxjob get", "walk")

	s.do(ns, "mxjob delete walk", `mxjob.mxnet.mlkube.io "walk" deleted`)

	// top needs a job that keeps running: the testserver serves until it is deleted. The
	// cluster's metrics-server samples pods every 15 s: poll until the worker has numbers.
	s.do(ns, "mxjob submit busy --mode local --image "+clientImage+" -- /testserver", "mxjob.mxnet.mlkube.io/busy created")
	k8s.Eventually(t, "kubectl mxjob top busy to show the worker's CPU and memory", func(context.Context) (bool, error) {
		code, out, stderr := s.exec("mxjob", "top", "busy", "-n", ns)
		if code != 0 {
			return false, fmt.Errorf("kubectl mxjob top busy: exit %d: %s", code, stderr)
		}
		return regexp.MustCompile(`(?m)^busy-worker-0\s+worker-0\s+\d+m\s+\d+Mi\s*$`).MatchString(out), nil
	})
	s.do(ns, "mxjob delete busy", `mxjob.mxnet.mlkube.io "busy" deleted`)
}

// walkthroughPod is the pod spec `kubectl etl init spec` turns into a Transform, as
// docs/walkthrough.md shows it: the md5 example transformer, serving on the port named default.
const walkthroughPod = `apiVersion: v1
kind: Pod
metadata:
  name: transformer-md5
spec:
  containers:
  - name: server
    image: mlkube/transformer-md5:dev
    ports:
    - name: default
      containerPort: 8000
`

// walkthroughUpper is the Python transformer of the README and docs/walkthrough.md.
const walkthroughUpper = `def transform(data):
    return data.upper()
`

// TestWalkthroughTransforms: Transforms from a pod spec and from code, listed and detailed, a
// local file through each, a dataset through md5 on every node, stop and start, completion of
// their names, and their removal.
func TestWalkthroughTransforms(t *testing.T) {
	s := newShell(t)
	c := &runCluster{ns: namespace(t), nodes: readyNodes(t), clients: map[string]string{}}
	for _, node := range c.nodes {
		c.clients[node] = clientOn(t, c.ns, node)
	}
	ns := c.ns
	s.file("pod.yaml", walkthroughPod)
	s.file("t.py", walkthroughUpper)
	local := "bytes of a local file, through the cluster's data path\n"
	s.file("local.txt", local)

	s.do(ns, "etl init spec -f pod.yaml --name md5", "transform.etl.mlkube.io/md5 created")
	s.do(ns, "etl init code --name upper --runtime python3.11 --from-file t.py", "transform.etl.mlkube.io/upper created")
	s.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/md5 transforms.etl.mlkube.io/upper --timeout=3m",
		"transform.etl.mlkube.io/md5 condition met", "transform.etl.mlkube.io/upper condition met")
	nodes := fmt.Sprintf("%d/%d", len(c.nodes), len(c.nodes))
	s.do(ns, "etl show", regexp.MustCompile(`(?m)^NAME\s+COMMUNICATION\s+STAGE\s+NODES`),
		regexp.MustCompile(`(?m)^md5\s+hpush\s+Running\s+`+nodes+`\s`), regexp.MustCompile(`(?m)^upper\s+\S+\s+Running\s+`+nodes+`\s`))
	details := []any{regexp.MustCompile(`(?m)^NODE\s+POD\s+READY`)}
	for _, node := range c.nodes {
		details = append(details, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(node)+`\s+md5-\S+\s+true\s`))
	}
	s.do(ns, "etl details md5", details...)
	// The cluster's metrics-server samples pods every 15 s: poll until each node's row has numbers.
	k8s.Eventually(t, "kubectl etl metrics md5 to show CPU and memory on every node", func(context.Context) (bool, error) {
		code, out, stderr := s.exec("etl", "metrics", "md5", "-n", ns)
		if code != 0 {
			return false, fmt.Errorf("kubectl etl metrics md5: exit %d: %s", code, stderr)
		}
		for _, node := range c.nodes {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(node) + `\s+md5-\S+\s+\d+m\s+\d+Mi\s*$`).MatchString(out) {
				return false, nil
			}
		}
		return true, nil
	})

	if out := s.do(ns, "etl object md5 local.txt -"); out != md5hex([]byte(local)) {
		t.Errorf("kubectl etl object md5 local.txt - wrote %q, want the file's md5 %s", out, md5hex([]byte(local)))
	}
	if out := s.do(ns, "etl object upper local.txt -"); out != strings.ToUpper(local) {
		t.Errorf("kubectl etl object upper local.txt - wrote %q, want %q", out, strings.ToUpper(local))
	}
	// The same file stored, then through a pipeline on the node that holds it.
	s.do(ns, "etl cp local.txt etl:in/local.txt -q")
	if out, want := s.do(ns, "etl object upper>>md5 etl:in/local.txt -"), md5hex([]byte(strings.ToUpper(local))); out != want {
		t.Errorf("kubectl etl object upper>>md5 etl:in/local.txt - wrote %q, want the md5 of the upper case file %s", out, want)
	}

	// A dataset on every node, each node its own objects, and a destination the agent may write.
	const count = 20
	c.generate(t, "raw", count, -1)
	s.do(ns, "etl run md5 --src raw --dst out --wait", regexp.MustCompile(`transformrun\.etl\.mlkube\.io/md5-\S+ created`))
	c.wantOutputs(t, count, nil)

	s.do(ns, "etl stop md5", "transform.etl.mlkube.io/md5 stopped")
	s.do(ns, "wait --for=jsonpath={.status.stage}=Stopped transforms.etl.mlkube.io/md5 --timeout=3m", "condition met")
	s.do(ns, "etl start md5", "transform.etl.mlkube.io/md5 started")
	s.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/md5 --timeout=3m", "condition met")

	s.do(ns, "etl completion install", "kubectl_complete-etl -> ")
	s.completes(ns, "etl details", "md5", "upper")

	s.do(ns, "etl rm md5 upper", `transform.etl.mlkube.io "md5" deleted`, `transform.etl.mlkube.io "upper" deleted`)
}

// TestPluginListSpeed reports what `kubectl mxjob list` costs next to `kubectl get mxjobs`, both
// real processes through the same kubectl, in an empty namespace and in one of 1000 MxJobs
// (suspended, so no pod runs): the median of 7 interleaved runs each and their ratio. Reported,
// not asserted: a timed assertion would fail on a loaded machine, not on slow code.
func TestPluginListSpeed(t *testing.T) {
	s := newShell(t)
	ns := namespace(t)
	measure := func(label string) {
		t.Helper()
		var plugin, get []time.Duration
		for range 7 {
			for _, c := range []struct {
				args []string
				into *[]time.Duration
			}{{[]string{"mxjob", "list", "-n", ns}, &plugin}, {[]string{"get", "mxjobs", "-n", ns}, &get}} {
				start := time.Now()
				if code, _, stderr := s.exec(c.args...); code != 0 {
					t.Fatalf("kubectl %s: exit %d: %s", strings.Join(c.args, " "), code, stderr)
				}
				*c.into = append(*c.into, time.Since(start))
			}
		}
		p, g := median(plugin), median(get)
		t.Logf("%s: kubectl mxjob list %s, kubectl get mxjobs %s (median of 7): %.2fx of kubectl",
			label, p.Round(time.Millisecond), g.Round(time.Millisecond), float64(p)/float64(g))
	}
	measure("empty namespace")

	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				job := builders.MxJob(fmt.Sprintf("job-%04d", i)).Namespace(ns).Local().
					RunPolicy(func(p *v1beta1.RunPolicy) { p.Suspend = ptr.To(true) }).Obj()
				if err := k8s.Create(context.Background(), job); err != nil {
					t.Errorf("creating %s: %v", job.Name, err)
				}
			}
		})
	}
	for i := range 1000 {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		return
	}
	measure("1000 MxJobs")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
