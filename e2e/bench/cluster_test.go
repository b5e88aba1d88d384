package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/loadgen"
)

const (
	agentURL  = fixture.AgentURL
	echoImage = "mlkube/transformer-echo:dev"
	// podDataDir is where the load generator mounts its node's data root, to write hpull's
	// objects there.
	podDataDir = "/data"
	port       = 8080
)

// A setting is one size at one in-flight window: the 4 KiB with 1 and 16 in flight, 1 MiB
// and 64 MiB. The object API's rows run at the settings marked objects.
type setting struct {
	size, inFlight int
	objects        bool
}

var settings = []setting{{4 << 10, 1, false}, {4 << 10, 16, true}, {1 << 20, 4, true}, {64 << 20, 1, false}}

// where the rows of a run go: the namespace, the bare pod's IP, the relay's Service, the node
// of the load generator and the pods, and another node (empty on a cluster of one).
type where struct {
	ns, bare, relay, node, other string
}

func TestDataPathOnTheCluster(t *testing.T) {
	kubeconfig, k8s, cs := benchCluster(t)
	// MLKUBE_BENCH_ONLY selects rows, e.g. for a profile of one path under a long load.
	only, err := regexp.Compile(os.Getenv("MLKUBE_BENCH_ONLY"))
	if err != nil {
		t.Fatalf("MLKUBE_BENCH_ONLY: %v", err)
	}
	seconds := envInt(t, "MLKUBE_BENCH_SECONDS", 3)
	rounds := envInt(t, "MLKUBE_BENCH_ROUNDS", 3)

	ns := "bench-" + strconv.FormatInt(time.Now().Unix(), 36)
	k8s.CreateTemporary(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	// The load generator pods present their own token (default's); kubectl etl cp acts as
	// mlkube-cli, which it creates on first use.
	k8s.MustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "datapath", Namespace: ns},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns},
			{Kind: rbacv1.ServiceAccountKind, Name: "mlkube-cli", Namespace: ns},
		},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "mlkube-datapath-user"},
	})
	nodes := readyNodes(t, k8s)
	node := nodes[0]

	transforms := map[v1alpha1.Communication]*v1alpha1.Transform{}
	for _, comm := range v1alpha1.Communications {
		b := builders.Transform("echo-" + string(comm)).Namespace(ns).Runtime(echoImage).Comm(comm)
		if comm == v1alpha1.CommIO {
			// The smallest command a process per object can run: a static binary copying its input.
			b = builders.Transform("cat-io").Namespace(ns).Runtime(images.LoadGen.Ref, "/loadgen", "cat").Comm(comm)
		}
		tr := b.Spec(slowObjects).Obj()
		k8s.MustCreate(t, tr)
		transforms[comm] = tr
	}
	// The same copy by one long-lived command per worker, objects framed on stdin.
	persistent := builders.Transform("cat-io-persistent").Namespace(ns).Runtime(images.LoadGen.Ref, "/loadgen", "cat-framed").
		Comm(v1alpha1.CommIO).Spec(slowObjects).Spec(func(s *v1alpha1.TransformSpec) { s.IOMode = v1alpha1.IOPersistent }).Obj()
	k8s.MustCreate(t, persistent)
	sizes := make([]string, 0, len(settings))
	for _, s := range settings {
		sizes = append(sizes, strconv.Itoa(s.size))
	}
	bare := servePod(t, k8s, ns, node, "bare", "serve", "-files", strings.Join(sizes, ","))
	servePod(t, k8s, ns, node, "relay", "relay", "-backend", fmt.Sprintf("%s:%d", bare, port))
	// Clients reach the relay as they reach the agent, through a node-local Service, so the chain
	// has every hop the data path has: kube-proxy's rules are not counted against the agent.
	relay := nodeLocalService(t, k8s, ns, "relay")
	for _, tr := range transforms {
		k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	}
	k8s.WaitForStage(t, persistent, v1alpha1.StageRunning)

	at := where{ns: ns, bare: bare, relay: relay, node: node}
	if len(nodes) > 1 {
		at.other = nodes[1]
	} else {
		t.Logf("one ready node: no row of a GET forwarded to another node's agent")
	}
	plan := loadgen.Plan{TokenFile: wire.TokenFile, Rounds: rounds, Files: map[string]int{},
		Ready: []string{fmt.Sprintf("http://%s:%d/healthz", relay, port), agentURL + "/healthz"}}
	for _, s := range settings {
		rows, objects := rowsOf(s, at, time.Duration(seconds)*time.Second), false
		for _, r := range rows {
			if only.MatchString(fmt.Sprintf("%s/%dx%d", r.Name, r.Size, r.InFlight)) {
				plan.Rows = append(plan.Rows, r)
				objects = objects || strings.HasPrefix(r.Name, "obj-")
			}
		}
		if objects {
			addObjectSeeds(&plan, rows, ns)
		}
		plan.Files[path.Join(podDataDir, ns, hpullObject(s.size))] = s.size
	}
	var sets []copySet
	for _, s := range copySets(t) {
		if only.MatchString("cp/" + s.name) {
			sets = append(sets, s)
		}
	}
	var pys []pySet
	for _, s := range pySets(t) {
		if only.MatchString(s.String()) {
			pys = append(pys, s)
		}
	}
	if len(plan.Rows) == 0 && len(sets) == 0 && len(pys) == 0 {
		if only.MatchString("store") {
			t.Skipf("MLKUBE_BENCH_ONLY=%s selects only the store benchmark (TestStoreRunOnTheCluster)", only)
		}
		t.Fatalf("MLKUBE_BENCH_ONLY=%s selects no row; rows are named <path>/<size>x<in flight>, e.g. hpush/4096x16, or cp/files and cp/big, or py/4096 and py/1048576, or store", only)
	}
	var lines []string
	var tbl string
	if len(plan.Rows) > 0 {
		lines = drive(t, k8s, cs, ns, node, plan)
		tbl = summarize(parse(t, lines), baselines)
	}
	if len(sets) > 0 {
		tbl += copyTable(compareCopies(t, k8s, kubeconfig, ns, node, sets))
	}
	if len(pys) > 0 {
		tbl += pyTable(readInATrainingPod(t, k8s, cs, ns, node, rounds, pys))
	}
	t.Logf("node %s (other %q), %d rounds of %d s a row:\n%s", node, at.other, rounds, seconds, tbl)
	if out := os.Getenv("MLKUBE_BENCH_OUT"); out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(out, "cluster.jsonl"), strings.Join(lines, "\n")+"\n")
		write(t, filepath.Join(out, "cluster.md"), tbl)
	}
}

func hpullObject(size int) string { return "bench-" + strconv.Itoa(size) }

// rowsOf is every path at setting s, each after the baselines it is compared to.
func rowsOf(s setting, w where, d time.Duration) []loadgen.Row {
	ns := w.ns
	at := func(name, method, url string) loadgen.Row {
		return loadgen.Row{Name: name, Method: method, URL: url, Size: s.size, InFlight: s.inFlight, Duration: d}
	}
	direct := fmt.Sprintf("http://%s:%d", w.bare, port)
	relayed := fmt.Sprintf("http://%s:%d", w.relay, port)
	through := func(name, tr string) loadgen.Row {
		r := at(name, http.MethodPut, fmt.Sprintf("%s%s%s/%s/object", agentURL, wire.PathTransform, ns, tr))
		r.Auth = true
		return r
	}
	hpull := at("hpull", http.MethodGet, fmt.Sprintf("%s%s%s/echo-hpull/%s", agentURL, wire.PathTransform, ns, hpullObject(s.size)))
	hpull.Auth = true
	stream := at("ws-stream", "STREAM", loadgen.StreamURL(agentURL, ns, "echo-ws"))
	stream.Agent = true
	file := "/file/" + strconv.Itoa(s.size)
	rows := []loadgen.Row{
		at("bare", http.MethodPut, direct+"/echo"),
		at("chain", http.MethodPut, relayed+"/echo"),
		through("hpush", "echo-hpush"),
		through("ws", "echo-ws"),
		through("io", "cat-io"),
		through("io-persistent", "cat-io-persistent"),
		at("bare-get", http.MethodGet, direct+file),
		at("chain-get", http.MethodGet, relayed+file),
		hpull,
		at("bare-ws", "STREAM", "ws"+strings.TrimPrefix(direct, "http")+"/ws"),
		at("chain-ws", "STREAM", "ws"+strings.TrimPrefix(relayed, "http")+"/ws"),
		stream,
	}
	if !s.objects {
		return rows
	}
	// Each object on the node named: placement would put about half of them elsewhere.
	object := func(name, method, object, node string) loadgen.Row {
		r := at(name, method, fmt.Sprintf("%s%s%s/%s/%s?%s=%s", agentURL, wire.PathObjects, ns, objectPrefix, object, wire.QueryNode, node))
		r.Auth = true
		return r
	}
	size := strconv.Itoa(s.size)
	rows = append(rows,
		at("bare-store", loadgen.MethodStore, direct+"/store/"+size+"/{client}"),
		object("obj-put", loadgen.MethodStore, "put/"+size+"/{client}", w.node),
		object("obj-get", http.MethodGet, "get/"+size, w.node))
	if w.other != "" {
		rows = append(rows, object("obj-get-fwd", http.MethodGet, "remote/"+size, w.other))
	}
	return rows
}

// objectPrefix holds every object the object API's rows store.
const objectPrefix = "bench"

// addObjectSeeds stores the objects the object API's GET rows among rows read, through the object
// API itself (so the agent records their checksum), and deletes everything under objectPrefix
// once the rows are done. The bare pod serves the same bytes as its files. The seeds are stored
// even when only the PUT row runs: the load generator stores them before it writes hpull's files
// as root, so that the agent (not root) makes the namespace's directory on the node and can write
// in it.
func addObjectSeeds(plan *loadgen.Plan, rows []loadgen.Row, ns string) {
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "obj-") && r.Method == http.MethodGet {
			plan.Seeds = append(plan.Seeds, loadgen.Seed{URL: r.URL, Size: r.Size})
		}
	}
	if len(plan.Cleanup) == 0 {
		plan.Cleanup = []string{fmt.Sprintf("%s%s%s/%s/?%s=true", agentURL, wire.PathObjects, ns, objectPrefix, wire.QueryRecursive)}
	}
}

// slowObjects gives a bench Transform's objects time: 64 MiB on a loaded node.
func slowObjects(s *v1alpha1.TransformSpec) {
	s.ObjectTimeout = &metav1.Duration{Duration: 2 * time.Minute}
}

// baselines says what each row is compared with: like for like, the same object size, the same
// objects in flight, the same pod.
var baselines = map[string][]string{
	"hpush":         {"bare", "chain"},
	"ws":            {"bare", "chain", "hpush"},
	"io":            {"bare", "chain"},
	"io-persistent": {"bare", "chain", "io"},
	"hpull":         {"bare-get", "chain-get"},
	"ws-stream":     {"bare-ws", "chain-ws", "hpush"},
	"chain":         {"bare"},
	"chain-get":     {"bare-get"},
	"chain-ws":      {"bare-ws"},
	// The object API: a PUT against the same durable write by a bare Go server, a GET against
	// net/http's file server of the same bytes, a forwarded GET against both.
	"obj-put":     {"bare-store"},
	"obj-get":     {"bare-get", "chain-get"},
	"obj-get-fwd": {"bare-get", "obj-get"},
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}

func write(t *testing.T, name, data string) {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// benchCluster is the cluster of MLKUBE_BENCH_KUBECONFIG, as a client and a clientset; the test
// is skipped without it.
func benchCluster(t *testing.T) (string, kubetest.Client, *kubernetes.Clientset) {
	kubeconfig := os.Getenv("MLKUBE_BENCH_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("MLKUBE_BENCH_KUBECONFIG is not set; run `make bench-cluster`")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	fixture.LogAPIWarnings()
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, kubetest.Client{Client: c, Interval: time.Second, Timeout: 3 * time.Minute}, kubernetes.NewForConfigOrDie(cfg)
}

// readyNodes are the cluster's ready nodes, at least one.
func readyNodes(t *testing.T, k8s kubetest.Client) []string {
	ready, err := fixture.ReadyNodes(context.Background(), k8s)
	if err != nil {
		t.Fatal(err)
	}
	if len(ready) == 0 {
		t.Fatal("no ready node")
	}
	return ready
}

// loadgenContainer runs the load generator image with args, as restricted pods run.
func loadgenContainer(args ...string) corev1.Container {
	return corev1.Container{
		Name: "loadgen", Image: images.LoadGen.Ref, ImagePullPolicy: corev1.PullIfNotPresent, Args: args,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// nodeLocalService makes a Service in front of the pods labelled app=name, with the internal
// traffic policy of the agent's (each client reaches the pod on its own node), and returns its
// host name.
func nodeLocalService(t *testing.T, k8s kubetest.Client, ns, name string) string {
	k8s.MustCreate(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector:              map[string]string{"app": name},
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
			Ports:                 []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt(port)}},
		},
	})
	return name + "." + ns + ".svc"
}

// servePod runs a loadgen server on node and returns its IP once it is ready.
func servePod(t *testing.T, k8s kubetest.Client, ns, node, name string, args ...string) string {
	return servePodWith(t, k8s, nil, ns, node, name, args...)
}

// servePodWith is servePod with mutate applied to the pod before it is created.
func servePodWith(t *testing.T, k8s kubetest.Client, mutate func(*corev1.Pod), ns, node, name string, args ...string) string {
	ctr := loadgenContainer(args...)
	ctr.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: port}}
	ctr.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(port)}}, PeriodSeconds: 1}
	ctr.VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName: node, Containers: []corev1.Container{ctr},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	if mutate != nil {
		mutate(pod)
	}
	k8s.MustCreate(t, pod)
	pod = kubetest.WaitFor(t, k8s, name+" pod ready", pod, func(p *corev1.Pod) (bool, error) {
		if p.Status.Phase == corev1.PodFailed {
			return false, kubetest.Stop(fmt.Errorf("pod %s failed: %s", p.Name, p.Status.Message))
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return p.Status.PodIP != "", nil
			}
		}
		return false, nil
	})
	return pod.Status.PodIP
}

// drive runs plan in a load generator pod on node and returns its result lines. The pod mounts
// the node's data root, where it writes hpull's objects into namespace ns's data (and removes
// them when it is done), and a data path token of ns's default ServiceAccount, which the object
// API's rows present.
func drive(t *testing.T, k8s kubetest.Client, cs *kubernetes.Clientset, ns, node string, plan loadgen.Plan) []string {
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctr := loadgenContainer("drive", "-plan", string(raw))
	// The node's data root belongs to the agent's user (its init container gives it to 65532, mode
	// 0750), which loadgenContainer runs as: what it writes there is the agent's to read and remove.
	ctr.VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: podDataDir},
		{Name: "token", MountPath: path.Dir(wire.TokenFile), ReadOnly: true},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loadgen", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{ctr},
			Volumes: []corev1.Volume{
				fixture.NodeDataVolume("data", node),
				fixture.TokenVolume("token"),
			},
		},
	}
	var total time.Duration
	for _, r := range plan.Rows {
		total += r.Duration
	}
	k8s.Timeout = time.Duration(plan.Rounds)*total*2 + 5*time.Minute
	return strings.Split(strings.TrimSpace(runToEnd(t, k8s, cs, pod)), "\n")
}

// runToEnd creates pod, waits up to k8s.Timeout for it to end and returns its log; a pod that
// fails fails the test with its log.
func runToEnd(t *testing.T, k8s kubetest.Client, cs *kubernetes.Clientset, pod *corev1.Pod) string {
	k8s.MustCreate(t, pod)
	pod = kubetest.WaitFor(t, k8s, "pod "+pod.Name+" to finish", pod, func(p *corev1.Pod) (bool, error) {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	logs, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod %s failed:\n%s", pod.Name, logs)
	}
	return string(logs)
}

// parse reads the load generator's lines; every row must have moved and checked objects.
func parse(t *testing.T, lines []string) []loadgen.RoundResult {
	var out []loadgen.RoundResult
	for _, l := range lines {
		var r loadgen.RoundResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("load generator line %q: %v", l, err)
		}
		if r.Error != "" || r.Objects == 0 {
			t.Fatalf("row %s (%d bytes, %d in flight), round %d: %d objects, %s", r.Row, r.Size, r.InFlight, r.Round, r.Objects, r.Error)
		}
		out = append(out, r)
	}
	return out
}
