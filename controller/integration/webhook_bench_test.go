package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/mxjob"
	"github.com/mlkube/mlkube/webhook/transform"
)

// skipWebhooksLabel: objects carrying it bypass mlkube's webhooks while the benchmark runs.
const skipWebhooksLabel = "bench.mlkube.io/skip-webhooks"

// BenchmarkCreateThroughWebhooks: server-side dry-run creates through the real API server, 8 in
// flight, with mlkube's webhooks (mutating, then validating) and without them, alternating in
// the same run. The webhook configurations get an object selector that lets objects labelled
// skipWebhooksLabel bypass them; both sides send the same already-defaulted object, so the API
// server does the same work but for the two webhook calls. Dry-run keeps the controller out.
//
// Where the time goes: each side also reports the CPU time per create of the kube-apiserver
// process and of this one (the manager's webhook server and the benchmark's client), so the
// cost the webhooks add is split into the API server's side of the two calls (encoding the
// AdmissionReview, its HTTP client, applying the patch) and mlkube's (TLS, HTTP and the
// admission handlers).
func BenchmarkCreateThroughWebhooks(b *testing.B) {
	apiserver := childPID(b, "kube-apiserver")
	bypassWebhooksForLabel(b)
	c := rest.CopyConfig(cfg)
	c.QPS = -1 // no client-side limit: the API server and the webhooks set the pace
	cl, err := client.New(c, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	job := builders.MxJob("train").Dist(1, 4).Obj()
	mxjob.Default(job)
	tr := builders.Transform("md5").Runtime("ghcr.io/mlkube/md5:1", "python3", "/md5.py").Obj()
	transform.Default(tr)
	for _, tc := range []struct {
		name string
		obj  client.Object
	}{{"MxJob", job}, {"Transform", tr}} {
		b.Run(tc.name, func(b *testing.B) {
			const creates, inFlight = 300, 8
			var with, without cpuSplit
			for range b.N {
				for range 2 { // alternate, so that drift in the machine's load hits both sides
					without.add(b, apiserver, func() time.Duration { return dryRunCreates(b, cl, tc.obj, true, creates, inFlight) })
					with.add(b, apiserver, func() time.Duration { return dryRunCreates(b, cl, tc.obj, false, creates, inFlight) })
				}
			}
			n := float64(2 * creates * b.N)
			b.ReportMetric(n/with.wall.Seconds(), "creates/s")
			b.ReportMetric(n/without.wall.Seconds(), "no-webhook-creates/s")
			b.ReportMetric(without.wall.Seconds()/with.wall.Seconds(), "x-no-webhooks")
			perCreate := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
			b.ReportMetric(perCreate(with.apiserver), "apiserver-µs/create")
			b.ReportMetric(perCreate(without.apiserver), "no-webhook-apiserver-µs/create")
			b.ReportMetric(perCreate(with.process), "manager-µs/create")
			b.ReportMetric(perCreate(without.process), "no-webhook-manager-µs/create")
		})
	}
}

// cpuSplit adds up the wall time of runs and the CPU time the API server and this process spent
// in them.
type cpuSplit struct{ wall, apiserver, process time.Duration }

func (c *cpuSplit) add(b *testing.B, apiserver int, run func() time.Duration) {
	before, err := procCPU(apiserver)
	if err != nil {
		b.Fatal(err)
	}
	self := selfCPU()
	c.wall += run()
	c.process += selfCPU() - self
	after, err := procCPU(apiserver)
	if err != nil {
		b.Fatal(err)
	}
	c.apiserver += after - before
}

// dryRunCreates makes n dry-run creates of obj, inFlight at a time, and returns how long they took.
func dryRunCreates(b *testing.B, cl client.Client, obj client.Object, skip bool, n, inFlight int) time.Duration {
	ctx := context.Background()
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	errs := make([]error, inFlight)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range inFlight {
		wg.Go(func() {
			for range next {
				o := obj.DeepCopyObject().(client.Object)
				if skip {
					o.SetLabels(map[string]string{skipWebhooksLabel: "true"})
				}
				if err := cl.Create(ctx, o, client.DryRunAll); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return took
}

// bypassWebhooksForLabel gives every mlkube webhook an object selector excluding objects labelled
// skipWebhooksLabel until b ends, and waits each time until the API server acts on the change.
func bypassWebhooksForLabel(b *testing.B) {
	skip := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: skipWebhooksLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
	setObjectSelectors(b, skip)
	waitWebhooksSkipped(b, true)
	b.Cleanup(func() {
		setObjectSelectors(b, &metav1.LabelSelector{})
		waitWebhooksSkipped(b, false)
	})
}

func setObjectSelectors(b *testing.B, sel *metav1.LabelSelector) {
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var m admissionregistrationv1.MutatingWebhookConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Name: mutatingConfig}, &m); err != nil {
			return err
		}
		for i := range m.Webhooks {
			m.Webhooks[i].ObjectSelector = sel
		}
		return k8s.Update(ctx, &m)
	})
	if err != nil {
		b.Fatal(err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Name: validatingConfig}, &v); err != nil {
			return err
		}
		for i := range v.Webhooks {
			v.Webhooks[i].ObjectSelector = sel
		}
		return k8s.Update(ctx, &v)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// waitWebhooksSkipped waits until a labelled MxJob the validating webhook refuses is accepted
// (skipped) or refused (not skipped) by a dry-run create.
func waitWebhooksSkipped(b *testing.B, skipped bool) {
	k8s.Eventually(b, "the API server to see the webhook object selectors", func(ctx context.Context) (bool, error) {
		job := builders.MxJob("probe").Local().Replica(v1beta1.ReplicaTypeScheduler, 1).Obj()
		job.Labels = map[string]string{skipWebhooksLabel: "true"}
		err := k8s.Create(ctx, job, client.DryRunAll)
		return (err == nil) == skipped, nil
	})
}
