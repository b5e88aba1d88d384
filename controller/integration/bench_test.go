package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/slowstart"
	"github.com/mlkube/mlkube/controller/mxjob"
	"github.com/mlkube/mlkube/internal/builders"
)

// bareClient is a plain client-go clientset with the manager's rate limits, the baseline every
// figure here is divided by.
func bareClient(b *testing.B) *kubernetes.Clientset {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = opts.QPS, opts.Burst
	return kubernetes.NewForConfigOrDie(c)
}

func benchNamespace(b *testing.B, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	k8s.MustCreate(b, ns)
	return ns.Name
}

// waitForPods polls until want pods match selector in ns. Polling every 50 ms costs at most that
// much on runs of seconds, and cannot hang the way a watch that ends early would.
func waitForPods(b *testing.B, ns, selector string, want int) {
	sel, err := labels.Parse(selector)
	if err != nil {
		b.Fatal(err)
	}
	patient := k8s
	patient.Interval, patient.Timeout = 50*time.Millisecond, 5*time.Minute
	patient.Eventually(b, fmt.Sprintf("%d pods %s in %s", want, selector, ns), func(ctx context.Context) (bool, error) {
		var pods metav1.PartialObjectMetadataList
		pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel})
		return len(pods.Items) >= want, err
	})
}

// BenchmarkMxJob200Workers: from creating a job of 1 scheduler, 1 server and 200 workers to all
// 202 pods existing, against a bare client-go loop creating the same 202 pods one by one.
func BenchmarkMxJob200Workers(b *testing.B) {
	ctx := context.Background()
	cs := bareClient(b)
	var ctrlTotal, bareTotal time.Duration
	for i := range b.N {
		ns := benchNamespace(b, "bench-create")
		job := builders.MxJob(fmt.Sprintf("big-%d", i)).Namespace(ns).Dist(1, 200).Obj()

		start := time.Now()
		if err := k8s.Create(ctx, job); err != nil {
			b.Fatal(err)
		}
		waitForPods(b, ns, mxjob.LabelJobName+"="+job.Name, 202)
		ctrlTotal += time.Since(start)

		tmpl := builders.PodTemplate("mxnet")
		start = time.Now()
		for j := range 202 {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bare-%d", j), Namespace: ns,
				Labels: map[string]string{"bench": "bare"}}, Spec: tmpl.Spec}
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		bareTotal += time.Since(start)
		b.StopTimer()
		_ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		b.StartTimer()
	}
	b.ReportMetric(float64(ctrlTotal.Milliseconds())/float64(b.N), "controller-ms/job")
	b.ReportMetric(float64(bareTotal.Milliseconds())/float64(b.N), "bare-loop-ms")
	b.ReportMetric(float64(ctrlTotal)/float64(bareTotal), "ratio-to-bare")
}

// BenchmarkMxJobReconcile500: 500 small (local) jobs created at once until each has its pod and
// its first status; reconciles per second from the controller's own metric. The baseline is a
// bare client-go loop doing each job's writes (pod, Service, status) one by one.
func BenchmarkMxJobReconcile500(b *testing.B) {
	ctx := context.Background()
	cs := bareClient(b)
	const jobs = 500
	var ctrlTotal, bareTotal time.Duration
	var reconciles float64
	for i := range b.N {
		ns := benchNamespace(b, "bench-reconcile")
		names := make([]string, jobs)
		for j := range names {
			names[j] = fmt.Sprintf("small-%d-%d", i, j)
		}
		before := reconcileCount(b)
		start := time.Now()
		if _, err := slowstart.Do(names, func(name string) error {
			return k8s.Create(ctx, builders.MxJob(name).Namespace(ns).Local().Obj())
		}); err != nil {
			b.Fatal(err)
		}
		waitForPods(b, ns, mxjob.LabelJobName, jobs)
		var started atomic.Int32
		k8s.Eventually(b, "every job's first status", func(ctx context.Context) (bool, error) {
			var list v1beta1.MxJobList
			if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			started.Store(0)
			for _, j := range list.Items {
				if j.Status.StartTime != nil {
					started.Add(1)
				}
			}
			return started.Load() == jobs, nil
		})
		ctrlTotal += time.Since(start)
		reconciles += reconcileCount(b) - before

		tmpl := builders.PodTemplate("mxnet")
		start = time.Now()
		for j := range jobs {
			name := fmt.Sprintf("bare-%d", j)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: tmpl.Spec}
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 9091}}}}
			if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			var job v1beta1.MxJob
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: names[j]}, &job); err != nil {
				b.Fatal(err)
			}
			job.Status.Reason = "bare"
			if err := k8s.Status().Update(ctx, &job); err != nil {
				b.Fatal(err)
			}
		}
		bareTotal += time.Since(start)
		b.StopTimer()
		_ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		b.StartTimer()
	}
	secs := ctrlTotal.Seconds()
	b.ReportMetric(reconciles/secs, "reconciles/s")
	b.ReportMetric(float64(jobs*b.N)/secs, "jobs/s")
	b.ReportMetric(float64(jobs*b.N)/bareTotal.Seconds(), "bare-jobs/s")
	b.ReportMetric(bareTotal.Seconds()/secs, "speedup-vs-bare")
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
