package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/cluster"
	"github.com/mlkube/mlkube/e2e/internal/podcgroup"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/loadgen"
)

// TestStoreRunOnTheCluster measures a TransformRun from a bucket of the e2e cluster's S3 server
// through the md5 Transform into another bucket, on every node, against the plain program (loadgen
// s3 md5: minio-go, GET → MD5 → PUT) in a pod on one node, at the same number of requests at a
// time as each node's run, and the same run with overwrite: true, which puts each result without
// asking first whether it exists, as the plain program does: MLKUBE_BENCH_STORE_OBJECTS objects (1,000) of MLKUBE_BENCH_STORE_KIB
// KiB (1,024), MLKUBE_BENCH_STORE_WORKERS at a time (4), MLKUBE_BENCH_ROUNDS rounds (3), the three
// taking turns. Every result of every round, the plain program's and the run's, is read back and
// checked against the MD5 of its object. The run is timed from its creation to its Succeeded
// phase, as its user waits for it; the plain program from its listing to its last PUT.
// MLKUBE_BENCH_ONLY leaves it out unless it matches "store".
func TestStoreRunOnTheCluster(t *testing.T) {
	_, k8s, cs := benchCluster(t)
	if only, err := regexp.Compile(os.Getenv("MLKUBE_BENCH_ONLY")); err != nil || !only.MatchString("store") {
		t.Skipf("MLKUBE_BENCH_ONLY=%s does not select store (%v)", os.Getenv("MLKUBE_BENCH_ONLY"), err)
	}
	objects := envInt(t, "MLKUBE_BENCH_STORE_OBJECTS", 1000)
	size := envInt(t, "MLKUBE_BENCH_STORE_KIB", 1024) << 10
	workers := envInt(t, "MLKUBE_BENCH_STORE_WORKERS", 4)
	rounds := envInt(t, "MLKUBE_BENCH_ROUNDS", 3)
	nodes := readyNodes(t, k8s)

	ns := "bench-store-" + strconv.FormatInt(time.Now().Unix(), 36)
	k8s.CreateTemporary(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	var root corev1.Secret
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: cluster.S3Namespace, Name: cluster.S3KeysSecret}, &root); err != nil {
		t.Fatalf("the e2e cluster's S3 server keys (cluster up installs them): %v", err)
	}
	keys := map[string][]byte{}
	for _, store := range []string{"raw", "out"} {
		keys[store+".accessKeyID"] = root.Data["accessKeyID"]
		keys[store+".secretAccessKey"] = root.Data["secretAccessKey"]
	}
	k8s.MustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ObjectStoreSecretName, Namespace: ns}, Data: keys})
	in, out := ns+"-in", ns+"-out"
	for store, bucket := range map[string]string{"raw": in, "out": out} {
		k8s.MustCreate(t, &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: store, Namespace: ns}, Spec: v1alpha1.ObjectStoreSpec{
			Endpoint: cluster.S3Endpoint, Region: cluster.S3Region, Bucket: bucket, Addressing: v1alpha1.AddressingPath,
			Credentials: &v1alpha1.ObjectStoreCredentials{SecretName: v1alpha1.ObjectStoreSecretName},
		}})
	}
	md5 := builders.Transform("md5").Namespace(ns).Runtime(images.TransformerMD5.Ref).Obj()
	k8s.MustCreate(t, md5)
	// The same transformer told to fetch each object from the URL it is given: handed presigned
	// GETs of the store, it reads the bucket itself.
	pull := builders.Transform("md5-pull").Namespace(ns).Runtime(images.TransformerMD5.Ref).Spec(func(s *v1alpha1.TransformSpec) {
		s.Communication, s.Argument = v1alpha1.CommHPull, v1alpha1.ArgURL
	}).Obj()
	k8s.MustCreate(t, pull)
	job := storeJobs{t: t, k8s: k8s, cs: cs, ns: ns, node: nodes[0]}
	job.run("seed", "seed", "-bucket", in, "-prefix", "in/", "-n", strconv.Itoa(objects), "-size", strconv.Itoa(size), "-workers", "8")
	k8s.WaitForStage(t, md5, v1alpha1.StageRunning)
	k8s.WaitForStage(t, pull, v1alpha1.StageRunning)

	meter := newCPUMeter(t, k8s, ns, md5.Name, pull.Name)
	plain := timedRuns{what: "plain program"}
	run := timedRuns{what: "TransformRun"}
	overwrite := timedRuns{what: "TransformRun, `overwrite: true`"}
	pulled := timedRuns{what: "TransformRun, `overwrite: true`, hpull handed presigned GETs"}
	for r := 1; r <= rounds; r++ {
		var res loadgen.S3Result
		spent := meter.spent("", func() {
			line := job.run(fmt.Sprintf("plain-%d", r), "md5", "-bucket", in, "-prefix", "in/", "-to-bucket", out,
				"-to-prefix", fmt.Sprintf("plain-%d/", r), "-workers", strconv.Itoa(workers))
			if err := json.Unmarshal([]byte(line), &res); err != nil || res.Objects != int64(objects) {
				t.Fatalf("round %d, the plain program: %q (%v); want %d objects", r, line, err, objects)
			}
		})
		if spent != nil {
			spent[cpuOwn] = res.CPU
		}
		plain.took, plain.cpu = append(plain.took, res.Elapsed), append(plain.cpu, spent)
		for _, kind := range []struct {
			runs      *timedRuns
			transform string
			prefix    string
			overwrite bool
		}{{&run, md5.Name, "run", false}, {&overwrite, md5.Name, "overwrite", true}, {&pulled, pull.Name, "pulled", true}} {
			var took time.Duration
			spent := meter.spent(kind.transform, func() {
				took = timeRun(t, k8s, ns, kind.transform, fmt.Sprintf("%s-%d", kind.prefix, r), objects, workers, kind.overwrite)
			})
			kind.runs.took, kind.runs.cpu = append(kind.runs.took, took), append(kind.runs.cpu, spent)
		}
		for _, prefix := range []string{"plain", "run", "overwrite", "pulled"} {
			job.run(fmt.Sprintf("check-%s-%d", prefix, r), "check", "-bucket", in, "-prefix", "in/", "-to-bucket", out,
				"-to-prefix", fmt.Sprintf("%s-%d/", prefix, r), "-workers", "8")
		}
	}
	tbl := storeTable(objects, size, workers, len(nodes), plain.took, run, overwrite, pulled) + cpuTable(objects, plain, run, overwrite, pulled)
	t.Logf("%d rounds, nodes %v:\n%s", rounds, nodes, tbl)
	if dir := os.Getenv("MLKUBE_BENCH_OUT"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "store.md"), tbl)
	}
}

// timeRun creates the TransformRun name from the bucket through transform into the other bucket under
// the prefix name, and returns how long it took to succeed, having done every object. A run
// without overwrite asks the store whether each result exists before it puts it (a HEAD), which
// the plain program does not; one with it does what the plain program does.
func timeRun(t *testing.T, k8s kubetest.Client, ns, transform, name string, objects, workers int, overwrite bool) time.Duration {
	run := &v1alpha1.TransformRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.TransformRunSpec{
			Transform:      transform,
			Source:         v1alpha1.RunSource{Store: "raw", Prefix: "in"},
			Destination:    v1alpha1.RunDestination{Store: "out", Prefix: name},
			WorkersPerNode: ptr.To(int32(workers)),
			Overwrite:      overwrite,
		},
	}
	k8s.Interval, k8s.Timeout = 200*time.Millisecond, 15*time.Minute
	start := time.Now()
	k8s.MustCreate(t, run)
	run = kubetest.WaitFor(t, k8s, "run "+run.Name+" to succeed", run, func(got *v1alpha1.TransformRun) (bool, error) {
		if got.Status.Phase == v1alpha1.RunFailed {
			return false, kubetest.Stop(fmt.Errorf("run %s failed: %+v", got.Name, got.Status))
		}
		return got.Status.Phase == v1alpha1.RunSucceeded, nil
	})
	elapsed := time.Since(start)
	if tot := run.Status.Totals; tot.DoneObjects != int64(objects) || tot.FailedObjects != 0 {
		t.Fatalf("run %s: totals %+v; want %d done", run.Name, tot, objects)
	}
	return elapsed
}

// storeJobs run loadgen s3 jobs in pods on node, with the keys of the namespace's ObjectStores.
type storeJobs struct {
	t    *testing.T
	k8s  kubetest.Client
	cs   *kubernetes.Clientset
	ns   string
	node string
}

// run runs `loadgen s3 JOB ARGS…` to its end in pod name and returns its JSON line.
func (j storeJobs) run(name, job string, args ...string) string {
	ctr := loadgenContainer(append([]string{"s3", job, "-endpoint", cluster.S3Endpoint}, args...)...)
	for env, key := range map[string]string{"AWS_ACCESS_KEY_ID": "raw.accessKeyID", "AWS_SECRET_ACCESS_KEY": "raw.secretAccessKey"} {
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: v1alpha1.ObjectStoreSecretName}, Key: key}}})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: j.ns},
		Spec:       corev1.PodSpec{NodeName: j.node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{ctr}},
	}
	k8s := j.k8s
	k8s.Timeout = 15 * time.Minute
	return strings.TrimSpace(runToEnd(j.t, k8s, j.cs, pod))
}

// cpuMeter reads the CPU the parts of the benchmark's runs spend from their pods' cgroups, where
// the test's host holds them (the local provider, kind): the node agents, the S3 server, and the
// transformer pods of each Transform, by its name. A part whose pods' cgroups are not found, or
// are gone when read (a pod replaced), leaves its rounds without CPU: the table says nothing
// rather than a wrong figure.
type cpuMeter struct {
	t    *testing.T
	dirs map[string][]string // part → the cgroup directories of its pods
}

func newCPUMeter(t *testing.T, k8s kubetest.Client, ns string, transforms ...string) *cpuMeter {
	m := &cpuMeter{t: t, dirs: map[string][]string{}}
	parts := map[string][]client.ListOption{
		cpuAgents: {client.InNamespace(wire.AgentNamespace), client.MatchingLabels{labels.Component: "node-agent"}},
		cpuS3:     {client.InNamespace(cluster.S3Namespace)},
	}
	for _, tr := range transforms {
		parts[tr] = []client.ListOption{client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelName: tr, labels.Component: "transformer"}}
	}
	for part, opts := range parts {
		var pods corev1.PodList
		if err := k8s.List(t.Context(), &pods, opts...); err != nil {
			t.Fatalf("the pods of %s: %v", part, err)
		}
		dirs, err := podcgroup.Find(podcgroup.CPUAcct, pods.Items)
		if err != nil || len(dirs) != len(pods.Items) || len(dirs) == 0 {
			t.Logf("CPU not read: the cgroups of %d of the %d pods of %s found (%v)", len(dirs), len(pods.Items), part, err)
			return &cpuMeter{t: t}
		}
		for _, dir := range dirs {
			m.dirs[part] = append(m.dirs[part], dir)
		}
	}
	return m
}

// read is each part's CPU so far; nil when one was not read.
func (m *cpuMeter) read() map[string]time.Duration {
	if len(m.dirs) == 0 {
		return nil
	}
	out := map[string]time.Duration{}
	for part, dirs := range m.dirs {
		for _, dir := range dirs {
			d, err := podcgroup.CPU(dir)
			if err != nil {
				m.t.Logf("CPU of %s not read: %v", part, err)
				return nil
			}
			out[part] += d
		}
	}
	return out
}

// spent runs do and returns what the agents, the S3 server and the transformer pods of the
// Transform own (as cpuOwn; none when "") spent meanwhile; nil when it was not read.
func (m *cpuMeter) spent(own string, do func()) cpuSpent {
	before := m.read()
	do()
	after := m.read()
	if before == nil || after == nil {
		return nil
	}
	spent := cpuSpent{cpuAgents: after[cpuAgents] - before[cpuAgents], cpuS3: after[cpuS3] - before[cpuS3]}
	if own != "" {
		spent[cpuOwn] = after[own] - before[own]
	}
	return spent
}
