package suite

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/internal/podcgroup"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/loadgen"
)

// The hostile-tenant suite (issue 24, deliver 6): alice, an editor of namespace A only, attacks
// the node agents and the manager with each finding of issue 24 that is fixed and can be shown on
// a live cluster, while bob's namespace B keeps working: inline requests, a stream and
// TransformRuns, every output checked byte for byte. Both namespaces enforce the restricted Pod
// Security Standard, as onboarded namespaces do. At the end no agent or manager container has
// restarted, and B's data is exactly what B wrote.
//
// Each attack would take an agent or the manager past its memory limit, or hold a node's run slots
// for ever, were its bound missing: the restart counts, and the waits for runs and requests to
// end, are what fail then. No assertion is timed; every wait is bounded by pollTimeout or a
// generous client timeout.

// hostileImage is the e2e testserver, which HOSTILE turns into a malicious transformer.
const hostileImage = clientImage

// tenants is the fixture: A (the attacker) and B (the victim), a port-forward to every node's
// agent, and B's md5 Transform.
type tenants struct {
	nodes          []string
	agents         map[string]string // node → base URL of its agent, port-forwarded
	nsA, nsB       string
	alice, bob     kubetest.Client // the editors, impersonated
	tokenA, tokenB string          // data path tokens of each namespace's mlkube-cli
	md5            *v1alpha1.Transform
	// raw are B's objects (name → bytes) and where each lives; written are the objects B wrote
	// since (name → bytes): B's data is exactly both at the end.
	raw     map[string][]byte
	rawNode map[string]string
	mu      sync.Mutex
	written map[string][]byte
}

// TestHostileTenant: see the comment at the top of the file.
func TestHostileTenant(t *testing.T) {
	f := newTenants(t)
	restarts := systemRestarts(t)
	memory := newPeakMemory(t)
	// In a cleanup, so that they run after a failure that stops the test too: an attack that
	// killed an agent or a manager fails what follows it, and this says why.
	t.Cleanup(func() {
		restarts.unchanged(t)
		memory.log(t)
	})
	// Forged first and checked last, after the manager has had minutes to act on them.
	var forged *forgedObjects
	t.Run("ForgedManagedByLabels", func(t *testing.T) { forged = f.forgeManagedBy(t) })
	f.bWorks(t, "at the start")

	// In this order, each followed by B's check.
	for _, a := range []struct {
		name, what string // the subtest, and the attack as B's check names it
		attack     func(*testing.T)
	}{
		{"HeaderBomb", "the header bomb", f.headerBomb},
		{"TemplateBomb", "the template bomb", f.templateBomb},
		{"StallingHPull", "the stalling hpull", f.stallingHPull},
		{"BogusTokenFlood", "the token flood", f.tokenFlood},
		{"StatusIPSpoof", "the status IP spoof", f.statusIPSpoof},
		// Last of alice's data: it starts by deleting what the attacks before left in A.
		{"DiskFillUnderQuota", "the disk fill", f.diskFill},
		{"FairShare", "the fair share", f.fairShare},
	} {
		t.Run(a.name, a.attack)
		f.bWorks(t, "after "+a.what)
	}
	if forged != nil {
		t.Run("ForgedManagedByLabelsLeftAlone", func(t *testing.T) {
			forged.unchanged(t)
			forged.notCached(t, memory)
		})
	}

	f.bRun(t, "last")
	f.bDataIntact(t)
}

func newTenants(t *testing.T) *tenants {
	t.Helper()
	f := &tenants{nodes: readyNodes(t), agents: map[string]string{}, raw: map[string][]byte{}, rawNode: map[string]string{}, written: map[string][]byte{}}
	f.nsA, f.nsB = onboard(t, "alice"), onboard(t, "bob")
	f.alice, f.bob = impersonate(t, "alice"), impersonate(t, "bob")
	for _, node := range f.nodes {
		f.agents[node] = forwardToAgent(t, node)
	}
	f.tokenA, f.tokenB = dataPathToken(t, f.nsA, cliServiceAccount), dataPathToken(t, f.nsB, cliServiceAccount)

	rng := rand.New(rand.NewPCG(24, 6))
	for _, node := range f.nodes {
		shard := map[string][]byte{}
		for i := range 20 {
			name := fmt.Sprintf("raw/%s-%02d.bin", node, i)
			shard[name] = randomBytes(rng, 1+rng.IntN(64<<10))
			f.raw[name], f.rawNode[name] = shard[name], node
		}
		putObjects(t, f.nsB, node, shard)
	}
	f.md5 = &v1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Name: "md5", Namespace: f.nsB},
		Spec: v1alpha1.TransformSpec{
			Communication: v1alpha1.CommWS,
			PodTemplate:   restrictedTransformer("mlkube/transformer-md5:dev"),
		},
	}
	f.bob.MustCreate(t, f.md5)
	k8s.WaitForStage(t, f.md5, v1alpha1.StageRunning)
	return f
}

// impersonate is a client acting as user, as kubectl --as does: only the user's own rights.
func impersonate(t *testing.T, user string) kubetest.Client {
	t.Helper()
	return kubetest.Client{Client: kubetest.Impersonate(t, cfg, scheme.New(), user), Interval: time.Second, Timeout: pollTimeout}
}

// restrictedTransformer is a transformer pod template that the restricted Pod Security Standard
// admits, serving on the default port, ready once it answers wire.PathHealth.
func restrictedTransformer(image string, env ...corev1.EnvVar) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name: "transformer", Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Env: env,
			Ports: []corev1.ContainerPort{{Name: v1alpha1.DefaultPortName, ContainerPort: v1alpha1.DefaultPort}},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: wire.PathHealth, Port: intstr.FromString(v1alpha1.DefaultPortName)}},
				PeriodSeconds: 1,
			},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}}
}

// hostileTransform is alice's Transform named name over comm, its transformer the testserver in
// HOSTILE mode, Running.
func (f *tenants) hostileTransform(t *testing.T, name, mode string, comm v1alpha1.Communication) *v1alpha1.Transform {
	t.Helper()
	return f.aTransform(t, name, comm, restrictedTransformer(hostileImage, corev1.EnvVar{Name: "HOSTILE", Value: mode}))
}

// aTransform is alice's Transform named name over comm with template, Running.
func (f *tenants) aTransform(t *testing.T, name string, comm v1alpha1.Communication, template *corev1.PodTemplateSpec) *v1alpha1.Transform {
	t.Helper()
	tr := &v1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.nsA},
		Spec:       v1alpha1.TransformSpec{Communication: comm, PodTemplate: template},
	}
	f.alice.MustCreate(t, tr)
	return k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
}

// call is callAgent with a client that gives up only after a generous bound: a request that does
// not end within it is a hang, reported as status 0 and the error.
func call(base, method, path, token string, body []byte) (int, string) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hangClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, "reading the answer: " + err.Error()
	}
	return resp.StatusCode, string(b)
}

// hangClient waits for an answer far longer than any of the agent's bounds (object timeouts of
// 10 s, write timeouts of 30 s): reaching its timeout means the agent never answered.
var hangClient = &http.Client{Timeout: 4 * time.Minute}

// concurrently runs n calls of do at once and returns their results.
func concurrently(n int, do func(i int) (int, string)) []result {
	out := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i].code, out[i].body = do(i) })
	}
	wg.Wait()
	return out
}

type result struct {
	code int
	body string
}

// Finding 1: a transformer answering with headers without end. The agent bounds a ws handshake
// answer (16 KiB) and an hpush or hpull answer's headers (64 KiB); without the bounds, 64
// concurrent answers of net/http's default 10 MiB, or one endless handshake, take the agent past
// its 512 MiB limit.
func (f *tenants) headerBomb(t *testing.T) {
	node := f.nodes[0]
	putObjects(t, f.nsA, node, map[string][]byte{"bomb.txt": []byte("light the fuse")})
	for _, comm := range []v1alpha1.Communication{v1alpha1.CommWS, v1alpha1.CommHPush, v1alpha1.CommHPull} {
		t.Run(string(comm), func(t *testing.T) {
			tr := f.hostileTransform(t, "headers-"+string(comm), "headers", comm)
			results := concurrently(64, func(int) (int, string) {
				return call(f.agents[node], http.MethodGet, "/v1/transform/"+f.nsA+"/"+tr.Name+"/bomb.txt", f.tokenA, nil)
			})
			for i, r := range results {
				// The agent names what it refused: net/http's "server response headers exceeded
				// 65536 bytes", or package ws's "answer is too large".
				if tooLarge := strings.Contains(r.body, "exceeded") || strings.Contains(r.body, "too large"); r.code != http.StatusBadGateway || !tooLarge {
					t.Errorf("request %d of 64 to a %s transformer with endless headers: %d %.300q, want 502 saying the headers were too large", i, comm, r.code, r.body)
					break
				}
			}
			t.Logf("%s: %.300s", comm, results[0].body)
		})
	}
}

// Finding 2: a TransformRun template of 1 KiB whose names would take ~90 MB. The webhook bounds
// the bytes of the names from the template's parts and refuses it, naming the bound, in a create,
// a server-side dry run and a run with spec.dryRun alike; were it to expand the template, a few
// of these in parallel would take a manager replica (256 MiB) down.
func (f *tenants) templateBomb(t *testing.T) {
	// 100,000 names of 907 bytes: 90 MB of names from a template of 921 bytes.
	template := strings.Repeat("a", 900) + "-{00000..99999}"
	want := fmt.Sprintf("more than %d bytes of object names", v1alpha1.MaxRunTemplateBytes)
	results := concurrently(12, func(i int) (int, string) {
		run := &v1alpha1.TransformRun{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bomb-%d", i), Namespace: f.nsA},
			Spec: v1alpha1.TransformRunSpec{
				Transform:   "anything",
				Source:      v1alpha1.RunSource{Template: template},
				Destination: v1alpha1.RunDestination{Prefix: "out"},
				DryRun:      i%3 == 2,
			},
		}
		var opts []client.CreateOption
		if i%3 == 1 {
			opts = append(opts, client.DryRunAll)
		}
		if err := f.alice.Create(context.Background(), run, opts...); err != nil {
			return 1, err.Error()
		}
		return 0, "created"
	})
	for i, r := range results {
		kind := [...]string{"create", "server-side dry run", "spec.dryRun"}[i%3]
		if r.code == 0 || !strings.Contains(r.body, want) || !strings.Contains(r.body, "spec.source.template") {
			t.Errorf("%s of a TransformRun whose template names 90 MB: %.400s; want refused naming spec.source.template and %q", kind, r.body, want)
		}
	}
	t.Logf("refused: %.400s", results[0].body)
}

// Finding 5: an hpull transformer that takes its object and never reads on nor answers. The
// agent's write deadline (--write-timeout, 30 s) cuts the object's in-flight GET and release waits
// for it with a bound: the inline request fails, and runs over the transformer fail and give
// their slots back (--max-offline-runs, 4 a node). Without the bounds the request never ends, and
// A's four runs hold every run slot: B's run, waiting for a slot, never finishes.
func (f *tenants) stallingHPull(t *testing.T) {
	tr := f.hostileTransform(t, "stall", "stall", v1alpha1.CommHPull)
	// Past what socket buffers take in, so that the agent's writes block.
	big := make([]byte, 48<<20)
	for _, node := range f.nodes {
		putObjects(t, f.nsA, node, map[string][]byte{"big/stall.bin": big})
	}

	start := time.Now()
	code, body := call(f.agents[f.nodes[0]], http.MethodGet, "/v1/transform/"+f.nsA+"/"+tr.Name+"/big/stall.bin", f.tokenA, nil)
	if code == 0 || code == http.StatusOK {
		t.Fatalf("an inline request to a stalling hpull transformer: %d %.300q, want the agent to end it with an error", code, body)
	}
	t.Logf("the inline request ended after %s (reported, not asserted): %d %.300s", time.Since(start).Round(time.Second), code, body)

	const maxRuns = 4 // the agent's --max-offline-runs
	stalled := make([]*v1alpha1.TransformRun, maxRuns)
	for i := range stalled {
		stalled[i] = &v1alpha1.TransformRun{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("stall-%d", i), Namespace: f.nsA},
			Spec: v1alpha1.TransformRunSpec{
				Transform:   tr.Name,
				Source:      v1alpha1.RunSource{Objects: []string{"big/stall.bin"}},
				Destination: v1alpha1.RunDestination{Prefix: fmt.Sprintf("stalled-%d", i)},
			},
		}
		f.alice.MustCreate(t, stalled[i])
	}
	// B's run asks for a slot while A's runs hold them all.
	f.bRun(t, "during-stall")
	for _, run := range stalled {
		got := waitRun(t, run, v1alpha1.RunFailed)
		t.Logf("A's run %s: %s %+v", run.Name, got.Status.Phase, got.Status.Errors)
	}
}

// Finding 7: a flood of distinct bogus tokens, each of which would cost a TokenReview, and of
// Transform names of 60 KiB, which refusals were cached by. The agent reviews within a rate (429
// past it) and refuses over-long names before any review; B's requests, reviewed before, keep
// working through the flood.
func (f *tenants) tokenFlood(t *testing.T) {
	base := f.agents[f.nodes[0]]
	victim := objectPath(f.nsB, f.firstRaw())
	const bogus = 2000
	codes := map[int]int{}
	var unexpected []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				code, body := call(base, http.MethodGet, victim, bogusJWT(i), nil)
				mu.Lock()
				codes[code]++
				if code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
					unexpected = append(unexpected, fmt.Sprintf("bogus token %d: %d %.200q", i, code, body))
				}
				mu.Unlock()
			}
		})
	}
	bDuring := make(chan error, 1)
	go func() { bDuring <- f.bInline(f.nodes[0], 20) }()
	for i := range bogus {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := <-bDuring; err != nil {
		t.Errorf("B's inline requests during the flood: %v", err)
	}
	t.Logf("%d bogus tokens: %v (status → count)", bogus, codes)
	if len(unexpected) > 0 {
		t.Errorf("%d of %d bogus tokens were answered neither 401 nor 429; the first: %s", len(unexpected), bogus, unexpected[0])
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Errorf("no bogus token was refused with 429: every one cost a TokenReview (%v)", codes)
	}

	long := concurrently(64, func(i int) (int, string) {
		name := fmt.Sprintf("%04d-%s", i, strings.Repeat("n", 60<<10))
		return call(base, http.MethodGet, "/v1/transform/"+f.nsA+"/"+name+"/x", f.tokenA, nil)
	})
	for i, r := range long {
		if r.code < 400 || r.code >= 500 || r.code == http.StatusTooManyRequests {
			t.Errorf("a Transform name of 60 KiB (%d): %d %.200q, want refused as a bad request", i, r.code, r.body)
			break
		}
	}
	t.Logf("a Transform name of 60 KiB: %d %.200s", long[0].code, long[0].body)
}

// bogusJWT is the i-th of distinct tokens shaped as JWTs, which only a TokenReview tells from real
// ones.
func bogusJWT(i int) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256","kid":"forged"}`)) + "." +
		enc.EncodeToString(fmt.Appendf(nil, `{"iss":"alice","sub":"bogus-%d","aud":["%s"]}`, i, wire.Audience)) + "." +
		enc.EncodeToString(bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 128))
}

// Finding 10: pods and Services of A carrying the label the manager's controllers select theirs
// by, each with 200 KiB of annotations. The manager caches a small fixed amount of each and
// leaves them alone: they are checked at the end of the suite, unchanged. Their annotations, 100
// MiB, are more than a manager replica peaks at when it caches only what it needs (~40 MiB): a
// manager that cached them whole would peak above them, or pass its 256 MiB limit and restart.
type forgedObjects struct {
	objects []client.Object
	rv      map[string]string // kind/name → resourceVersion at creation
	bytes   int64             // of their annotations together
}

const (
	forgedPods, forgedServices = 4, 500
	forgedFiller               = 200 << 10
)

func (f *tenants) forgeManagedBy(t *testing.T) *forgedObjects {
	t.Helper()
	filler := strings.Repeat("f", forgedFiller)
	forgedLabels := func() map[string]string {
		return map[string]string{
			labels.ManagedBy: labels.ManagedByValue, labels.Component: "transformer",
			v1alpha1.LabelName: "ghost", v1alpha1.LabelNode: f.nodes[0],
		}
	}
	var objs []client.Object
	for i := range forgedPods {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("forged-%d", i), Namespace: f.nsA, Labels: forgedLabels(), Annotations: map[string]string{"filler": filler}},
			Spec:       restrictedTransformer(hostileImage).Spec,
		}
		p.Spec.NodeName = f.nodes[i%len(f.nodes)]
		objs = append(objs, p)
	}
	for i := range forgedServices {
		objs = append(objs, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("forged-%d", i), Namespace: f.nsA, Labels: forgedLabels(), Annotations: map[string]string{"filler": filler}},
			Spec: corev1.ServiceSpec{
				ClusterIP: corev1.ClusterIPNone, // no address taken from the cluster's range
				Selector:  forgedLabels(),
				Ports:     []corev1.ServicePort{{Name: "default", Port: 8000}},
			},
		})
	}
	fo := &forgedObjects{rv: map[string]string{}, bytes: int64(len(objs)) * forgedFiller}
	// Sixteen at a time: a kubectl apply of many files, not a storm of the API server.
	errs := make([]error, len(objs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				errs[i] = f.alice.Create(context.Background(), objs[i])
			}
		})
	}
	for i := range objs {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("alice creating forged %s: %v", forgedKey(objs[i]), err)
		}
		fo.rv[forgedKey(objs[i])] = objs[i].GetResourceVersion()
	}
	fo.objects = objs
	t.Logf("alice forged %d pods and %d Services labelled %s=%s, %d KiB of annotations each", forgedPods, forgedServices, labels.ManagedBy, labels.ManagedByValue, forgedFiller>>10)
	return fo
}

func forgedKey(o client.Object) string {
	return fmt.Sprintf("%T %s", o, o.GetName())
}

// unchanged: every forged object is there as alice made it (the kubelet writes a pod's status,
// which leaves its metadata and spec alone): not deleted, adopted, labelled or finalized.
func (fo *forgedObjects) unchanged(t *testing.T) {
	for _, o := range fo.objects {
		got := o.DeepCopyObject().(client.Object)
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("forged %s: %v", forgedKey(o), err)
			continue
		}
		_, isPod := o.(*corev1.Pod)
		switch {
		case got.GetDeletionTimestamp() != nil:
			t.Errorf("forged %s is being deleted", forgedKey(o))
		case len(got.GetOwnerReferences()) > 0 || len(got.GetFinalizers()) > 0:
			t.Errorf("forged %s was adopted: owners %v, finalizers %v", forgedKey(o), got.GetOwnerReferences(), got.GetFinalizers())
		case !isPod && got.GetResourceVersion() != fo.rv[forgedKey(o)]:
			t.Errorf("forged %s was written: resourceVersion %s, created as %s", forgedKey(o), got.GetResourceVersion(), fo.rv[forgedKey(o)])
		case !maps.Equal(got.GetLabels(), o.GetLabels()) || got.GetAnnotations()["filler"] != o.GetAnnotations()["filler"]:
			t.Errorf("forged %s was relabelled: %v", forgedKey(o), got.GetLabels())
		}
	}
}

// notCached: no manager replica's memory peaked above the forged objects' bytes since the peaks
// were reset, where they were measured (see peakMemory).
func (fo *forgedObjects) notCached(t *testing.T, pm *peakMemory) {
	pods, err := managerPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		peak, ok := pm.peak(p.Name)
		if !ok {
			t.Logf("the manager's memory against the forged objects not checked: %s's peak since the suite began is not known", p.Name)
			continue
		}
		if peak >= fo.bytes {
			t.Errorf("manager %s peaked at %.1f MiB during the suite, more than the %.1f MiB of annotations alice forged: it cached the forged objects whole",
				p.Name, float64(peak)/(1<<20), float64(fo.bytes)/(1<<20))
		}
	}
}

// bWorks: B's inline requests on every node, a stream, and B's own PUT, all right.
func (f *tenants) bWorks(t *testing.T, when string) {
	t.Helper()
	for _, node := range f.nodes {
		if err := f.bInline(node, 4); err != nil {
			t.Errorf("B's inline requests on %s %s: %v", node, when, err)
		}
	}
	if err := f.bStream(f.nodes[len(f.nodes)-1], 8); err != nil {
		t.Errorf("B's stream %s: %v", when, err)
	}
	name := "own/" + strings.ReplaceAll(when, " ", "-") + ".txt"
	data := []byte("bob wrote this " + when)
	if err := putObject(f.agents[f.nodes[0]], f.nsB, f.nodes[0], name, f.tokenB, data); err != nil {
		t.Errorf("B's PUT %s: %v", when, err)
	}
	f.wrote(name, data)
}

func (f *tenants) wrote(name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written[name] = data
}

// bInline transforms n of B's objects of node through B's md5 at node's agent.
func (f *tenants) bInline(node string, n int) error {
	for _, name := range f.rawOn(node)[:n] {
		code, body := call(f.agents[node], http.MethodGet, "/v1/transform/"+f.nsB+"/"+f.md5.Name+"/"+name, f.tokenB, nil)
		if want := md5hex(f.raw[name]); code != http.StatusOK || body != want {
			return fmt.Errorf("%s: %d %.300q, want 200 %s", name, code, body, want)
		}
	}
	return nil
}

// bStream sends n of B's objects on a stream of B's md5 at node's agent, and checks each result.
func (f *tenants) bStream(node string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), hangClient.Timeout)
	defer cancel()
	s, err := loadgen.DialAgentStream(ctx, loadgen.StreamURL(f.agents[node], f.nsB, f.md5.Name), f.tokenB)
	if err != nil {
		return fmt.Errorf("opening: %w", err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() { <-ctx.Done(); s.Close(); done <- ctx.Err() }()
	for _, name := range f.rawOn(node)[:n] {
		if err := s.Send(f.raw[name]); err != nil {
			return fmt.Errorf("sending %s: %w", name, err)
		}
		var got bytes.Buffer
		if err := s.Receive(&got); err != nil {
			return fmt.Errorf("receiving %s's result: %w", name, err)
		}
		if want := md5hex(f.raw[name]); got.String() != want {
			return fmt.Errorf("%s: %q, want %s", name, got.String(), want)
		}
	}
	return nil
}

// bRun runs B's md5 over all of B's raw objects into out-<label> and checks every output byte for
// byte, on the node that holds it.
func (f *tenants) bRun(t *testing.T, label string) {
	t.Helper()
	run := &v1alpha1.TransformRun{
		ObjectMeta: metav1.ObjectMeta{Name: "b-" + label, Namespace: f.nsB},
		Spec: v1alpha1.TransformRunSpec{
			Transform:   f.md5.Name,
			Source:      v1alpha1.RunSource{Prefix: "raw"},
			Destination: v1alpha1.RunDestination{Prefix: "out-" + label},
		},
	}
	f.bob.MustCreate(t, run)
	waitRun(t, run, v1alpha1.RunSucceeded)
	want := map[string][]byte{}
	for name, data := range f.raw {
		want["out-"+label+"/"+strings.TrimPrefix(name, "raw/")] = []byte(md5hex(data))
	}
	got := f.bObjects(t, "out-"+label+"/")
	sameFiles(t, "B's run "+run.Name+" into out-"+label, got, want)
	for name, data := range got {
		f.wrote(name, data)
	}
}

// bObjects reads every object of B under prefix, as B, from the node that holds it.
func (f *tenants) bObjects(t *testing.T, prefix string) map[string][]byte {
	t.Helper()
	list, err := listObjects(t, f.agents[f.nodes[0]], f.nsB, prefix, f.tokenB)
	if err != nil {
		t.Fatal(err)
	}
	if list.Next != "" {
		t.Fatalf("B's objects under %q fill more than a page: the suite reads one", prefix)
	}
	out := map[string][]byte{}
	for _, o := range list.Items {
		base, ok := f.agents[o.Node]
		if !ok {
			t.Errorf("B's %s is on %q, none of the nodes %v", o.Name, o.Node, f.nodes)
			continue
		}
		code, body := call(base, http.MethodGet, objectPath(f.nsB, o.Name), f.tokenB, nil)
		if code != http.StatusOK {
			t.Errorf("GET B's %s: %d %.300q", o.Name, code, body)
			continue
		}
		out[o.Name] = []byte(body)
	}
	return out
}

// bDataIntact: B's data is exactly B's raw objects, each on the node B put it on, and what B
// wrote since; A's token is refused B's data.
func (f *tenants) bDataIntact(t *testing.T) {
	t.Helper()
	want := map[string][]byte{}
	for name, data := range f.raw {
		want[name] = data
	}
	for name, data := range f.written {
		want[name] = data
	}
	got := f.bObjects(t, "")
	for name := range got {
		if strings.HasPrefix(name, "out-") && strings.Contains(name, "/mlkube-errors-") {
			t.Errorf("B's run wrote an error manifest %s: %.300s", name, got[name])
		}
	}
	sameFiles(t, "B's data after the attacks", got, want)
	if code, body := call(f.agents[f.nodes[0]], http.MethodGet, objectPath(f.nsB, f.firstRaw()), f.tokenA, nil); code != http.StatusForbidden {
		t.Errorf("A's token on B's object: %d %.100q, want 403", code, body)
	}
}

// rawOn names B's raw objects on node, sorted.
func (f *tenants) rawOn(node string) []string {
	var names []string
	for name, n := range f.rawNode {
		if n == node {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (f *tenants) firstRaw() string { return f.rawOn(f.nodes[0])[0] }

// systemPods are the node agents' and the managers' pods.
func systemPods(t *testing.T) []corev1.Pod {
	t.Helper()
	var agents corev1.PodList
	if err := k8s.List(context.Background(), &agents, client.InNamespace(wire.AgentNamespace), client.MatchingLabels{"app.kubernetes.io/component": "node-agent"}); err != nil {
		t.Fatal(err)
	}
	managers, err := managerPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return append(agents.Items, managers...)
}

// restartCounts are the containers' restart counts of the system pods, by pod UID and container.
type restartCounts map[string]int32

func systemRestarts(t *testing.T) restartCounts {
	t.Helper()
	rc := restartCounts{}
	for _, p := range systemPods(t) {
		for _, cs := range p.Status.ContainerStatuses {
			rc[p.Name+"/"+cs.Name+" "+string(p.UID)] = cs.RestartCount
		}
	}
	return rc
}

// unchanged: the same pods, none replaced, each container restarted no more than at the start.
func (rc restartCounts) unchanged(t *testing.T) {
	t.Helper()
	now := systemRestarts(t)
	for k, n := range rc {
		switch m, ok := now[k]; {
		case !ok:
			t.Errorf("%s is gone: the pod was replaced during the attacks", k)
		case m != n:
			t.Errorf("%s restarted during the attacks: restartCount %d, was %d", k, m, n)
		}
	}
	for k := range now {
		if _, ok := rc[k]; !ok {
			t.Errorf("%s appeared during the attacks: a pod was replaced", k)
		}
	}
}

// peakMemory reads the peak memory of the system pods from their cgroup v1 memory controllers
// (memory.max_usage_in_bytes), which the test process can read where the cluster's nodes run on
// its own host (the local provider, and kind's containers): the figures are logged, not asserted.
type peakMemory struct {
	dirs  map[string]string // pod → its cgroup directory
	reset map[string]bool   // pods whose peak was reset when the suite began
	why   string            // why there are none
}

func newPeakMemory(t *testing.T) *peakMemory {
	t.Helper()
	pm := &peakMemory{dirs: map[string]string{}, reset: map[string]bool{}}
	pods := systemPods(t)
	dirs, err := podcgroup.Find(podcgroup.Memory, pods)
	if err != nil {
		pm.why = err.Error()
	}
	for _, p := range pods {
		if dir, ok := dirs[p.UID]; ok {
			pm.dirs[p.Name] = dir
		}
	}
	// Start the peaks from now, where allowed (root); otherwise they cover the pods' lives.
	for pod, dir := range pm.dirs {
		if err := podcgroup.ResetPeakMemory(dir); err != nil {
			t.Logf("the peak memory of %s covers its whole life, not only the suite: resetting it: %v", pod, err)
			continue
		}
		pm.reset[pod] = true
	}
	return pm
}

// read is the peak memory of pod in bytes.
func (pm *peakMemory) read(pod string) (int64, error) {
	dir, ok := pm.dirs[pod]
	if !ok {
		return 0, errors.New("its cgroup was not found")
	}
	return podcgroup.PeakMemory(dir)
}

// peak is pod's peak memory since the suite began, when known.
func (pm *peakMemory) peak(pod string) (int64, bool) {
	if !pm.reset[pod] {
		return 0, false
	}
	n, err := pm.read(pod)
	return n, err == nil
}

func (pm *peakMemory) log(t *testing.T) {
	t.Helper()
	if pm.why != "" {
		t.Logf("peak memory not measured: %s", pm.why)
		return
	}
	pods := make([]string, 0, len(pm.dirs))
	for pod := range pm.dirs {
		pods = append(pods, pod)
	}
	slices.Sort(pods)
	for _, pod := range pods {
		n, err := pm.read(pod)
		if err != nil {
			t.Logf("peak memory of %s not read: %v", pod, err)
			continue
		}
		since := "during the suite"
		if !pm.reset[pod] {
			since = "in its life"
		}
		t.Logf("peak memory of %s %s: %.1f MiB (cgroup %s)", pod, since, float64(n)/(1<<20), pm.dirs[pod])
	}
}
