package integration

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/slowstart"
	"github.com/mlkube/mlkube/internal/builders"
)

// The baselines here are bare client-go loops that do the controller's writes at the controller's
// concurrency, through a client of their own with the manager's QPS and Burst, on objects the
// manager does not watch (pods and Services without its managed-by label, in a namespace of
// their own), and only once the controller has gone quiet, so the two never share a rate
// limiter or an object. Each benchmark also reports the rate limiter's floor, the time a client
// with those limits needs for that many writes once its burst is spent: where a figure is close
// to it, the limiter and not the code sets the pace.

// bareClient is a plain clientset with the manager's rate limits and a full token bucket.
func bareClient() *kubernetes.Clientset {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = opts.QPS, opts.Burst
	return kubernetes.NewForConfigOrDie(c)
}

// floorMillis is how long a client with the manager's QPS and Burst needs for writes requests.
func floorMillis(writes int) float64 {
	return float64(max(0, writes-opts.Burst)) / float64(opts.QPS) * 1000
}

func benchNamespace(b *testing.B, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	k8s.MustCreate(b, ns)
	return ns.Name
}

// waitForPods waits until want pods match selector in ns, counting the pods a watch announces.
// Polling a list of up to 500 pods every 20 ms instead cost the API server more CPU than the
// creates being timed: on two cores the controller's figure waited on the poller, which the bare
// loop, timing its own creates, never had. A watch that ends early is begun again from a list,
// so it cannot hang.
func waitForPods(b *testing.B, ns, selector string, want int) (first time.Time) {
	pods := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(ns)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seen := map[string]bool{}
	for {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			b.Fatalf("%d of %d pods %s in %s: %v", len(seen), want, selector, ns, err)
		}
		for _, p := range list.Items {
			seen[p.Name] = true
		}
		if len(seen) > 0 && first.IsZero() {
			first = time.Now()
		}
		if len(seen) >= want {
			return first
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			b.Fatalf("watching pods %s in %s: %v", selector, ns, err)
		}
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				seen[p.Name] = true
				if first.IsZero() {
					first = time.Now()
				}
			}
			if len(seen) >= want {
				w.Stop()
				return first
			}
		}
	}
}

// waitQuiet waits until the MxJob controller has not reconciled for half a second, so that a
// baseline timed next is not slowed by the controller still writing.
func waitQuiet(b *testing.B) {
	last := reconcileCount(b)
	for still := 0; still < 5; {
		time.Sleep(100 * time.Millisecond)
		now := reconcileCount(b)
		if now == last {
			still++
		} else {
			still, last = 0, now
		}
	}
}

// settle waits until the controller is quiet and its client's token bucket is full again, as
// the bare loop's fresh client's is: the Services, status updates and whole runs before it spend
// the manager's burst, and a controller timed on a half-empty bucket waits on tokens the bare
// loop never waits for.
func settle(b *testing.B) {
	waitQuiet(b)
	time.Sleep(time.Duration(float64(opts.Burst) / float64(opts.QPS) * float64(time.Second)))
}

// barePod is a pod of the bare loops: the controller's pod template, no managed-by label.
func barePod(name, ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"bench": "bare"}},
		Spec: builders.PodTemplate("mxnet").Spec}
}

// BenchmarkMxJob200Workers: from creating a job of 1 scheduler, 1 server and 200 workers to a
// watch having seen all 202 pods, against a bare loop creating the same 202 pods (copies of the
// controller's, without its label and owner) in the controller's slow-start batches (1, 2, 4, …
// 64 in flight), timed by the same watch. The controller's figure includes the MxJob's create
// through the webhooks and the watch delay; it creates the replicas' Services after the pods,
// which is not timed. first-pod-ms is the controller's latency from the job's create to its first
// pod.
func BenchmarkMxJob200Workers(b *testing.B) {
	ctx := context.Background()
	const pods = 202
	var ctrlTotal, bareTotal, firstTotal time.Duration
	for i := range b.N {
		ns := benchNamespace(b, "bench-create")
		job := builders.MxJob(fmt.Sprintf("big-%d", i)).Namespace(ns).Dist(1, 200).Obj()
		settle(b)
		start := time.Now()
		if err := k8s.Create(ctx, job); err != nil {
			b.Fatal(err)
		}
		first := waitForPods(b, ns, v1beta1.LabelJobName+"="+job.Name, pods)
		ctrlTotal += time.Since(start)
		firstTotal += first.Sub(start)
		waitQuiet(b)

		bareNS, cs := benchNamespace(b, "bench-create-bare"), bareClient()
		copies := bareCopies(b, ns, bareNS)
		start = time.Now()
		created := make(chan error, 1)
		go func() {
			_, err := slowstart.Do(copies, func(pod *corev1.Pod) error {
				_, err := cs.CoreV1().Pods(bareNS).Create(ctx, pod, metav1.CreateOptions{})
				return err
			})
			created <- err
		}()
		waitForPods(b, bareNS, "bench=bare", pods)
		bareTotal += time.Since(start)
		if err := <-created; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ctrlTotal.Milliseconds())/float64(b.N), "controller-ms")
	b.ReportMetric(float64(firstTotal.Milliseconds())/float64(b.N), "first-pod-ms")
	b.ReportMetric(float64(bareTotal.Milliseconds())/float64(b.N), "bare-ms")
	b.ReportMetric(floorMillis(pods), "floor-ms")
	b.ReportMetric(bareTotal.Seconds()/ctrlTotal.Seconds(), "x-bare")
}

// bareCopies are the pods the controller made in ns, as a bare loop creates them in bareNS: the
// same spec, labels and annotations, but labelled bench=bare in place of the controller's
// managed-by label and without its owner, so that the manager neither watches nor adopts them.
func bareCopies(b *testing.B, ns, bareNS string) []*corev1.Pod {
	var list corev1.PodList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	copies := make([]*corev1.Pod, len(list.Items))
	for i, p := range list.Items {
		podLabels := maps.Clone(p.Labels)
		delete(podLabels, labels.ManagedBy)
		podLabels["bench"] = "bare"
		copies[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: bareNS, Labels: podLabels, Annotations: p.Annotations},
			Spec:       p.Spec,
		}
	}
	return copies
}

// BenchmarkMxJobReconcile500: 500 small (local) jobs created at once (slow-start batches, by the
// test's client) until each has its pod, its Service and its first status. The controller does
// three writes per job (pod, Service, status) with MxJobWorkers reconciles at once. The baseline
// creates 500 ConfigMaps standing for the jobs the same way, and as each exists, MxJobWorkers
// workers do its three writes: a pod, a Service, and the pod's status in place of the job's.
func BenchmarkMxJobReconcile500(b *testing.B) {
	ctx := context.Background()
	const jobs, writesPerJob = 500, 3
	var ctrlTotal, bareTotal time.Duration
	var reconciles float64
	for i := range b.N {
		ns := benchNamespace(b, "bench-reconcile")
		names := make([]string, jobs)
		for j := range names {
			names[j] = fmt.Sprintf("small-%d-%d", i, j)
		}
		settle(b)
		before := reconcileCount(b)
		start := time.Now()
		if _, err := slowstart.Do(names, func(name string) error {
			return k8s.Create(ctx, builders.MxJob(name).Namespace(ns).Local().Obj())
		}); err != nil {
			b.Fatal(err)
		}
		waitForPods(b, ns, v1beta1.LabelJobName, jobs)
		k8s.Eventually(b, "every job's Service and first status", func(ctx context.Context) (bool, error) {
			var list v1beta1.MxJobList
			if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, j := range list.Items {
				if j.Status.StartTime == nil {
					return false, nil
				}
			}
			var svcs metav1.PartialObjectMetadataList
			svcs.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
			err := k8s.List(ctx, &svcs, client.InNamespace(ns))
			return len(list.Items) == jobs && len(svcs.Items) == jobs, err
		})
		ctrlTotal += time.Since(start)
		waitQuiet(b)
		reconciles += reconcileCount(b) - before

		bareNS := benchNamespace(b, "bench-reconcile-bare")
		start = time.Now()
		bareJobs(b, bareNS, names, opts.MxJobWorkers)
		bareTotal += time.Since(start)
	}
	secs := ctrlTotal.Seconds()
	b.ReportMetric(reconciles/secs, "reconciles/s")
	b.ReportMetric(float64(jobs*b.N)/secs, "jobs/s")
	b.ReportMetric(float64(jobs*b.N)/bareTotal.Seconds(), "bare-jobs/s")
	b.ReportMetric(float64(ctrlTotal.Milliseconds())/float64(b.N), "controller-ms")
	b.ReportMetric(float64(bareTotal.Milliseconds())/float64(b.N), "bare-ms")
	b.ReportMetric(floorMillis(jobs*writesPerJob), "floor-ms")
	b.ReportMetric(bareTotal.Seconds()/secs, "x-bare")
}

// bareJobs creates a ConfigMap per name with the test's client in slow-start batches, as the
// MxJobs are, and workers goroutines take each created one and do a job's three writes with a
// client of the manager's limits.
func bareJobs(b *testing.B, ns string, names []string, workers int) {
	ctx := context.Background()
	cs := bareClient()
	created := make(chan string, len(names))
	errs := make(chan error, workers+1)
	go func() {
		defer close(created)
		_, err := slowstart.Do(names, func(name string) error {
			err := k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
			if err == nil {
				created <- name
			}
			return err
		})
		errs <- err
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for name := range created {
				if err := bareJobWrites(ctx, cs, ns, name); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// bareJobWrites is one local job's writes: its pod, its headless Service, and a status write.
func bareJobWrites(ctx context.Context, cs *kubernetes.Clientset, ns, name string) error {
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, barePod(name, ns), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 9091}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: "bench.mlkube.io/Started", Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.Now(), Reason: "Bare"}}
	_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// reconcileCount reads controller-runtime's reconcile counter for the MxJob controller.
func reconcileCount(b *testing.B) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "mxjob" {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
