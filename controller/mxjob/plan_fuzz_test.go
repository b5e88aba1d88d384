package mxjob

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/fuzzbytes"
	"github.com/mlkube/mlkube/webhook/mxjob"
)

// fuzzJob builds a valid, defaulted job from the stream: its mode, replica counts (up to the
// webhook's MaxReplicas), restart, clean and success policies, suspend, backoff limit, deadline
// and TTL.
func fuzzJob(s *fuzzbytes.Stream) *v1beta1.MxJob {
	b, specs := builders.MxJob("j"), 1
	if s.Next()%3 == 0 {
		b.Local()
	} else {
		servers, workers := 1+int32(s.Next()%3), s.Next()
		if workers == 0xFF {
			// The webhook's bound, for one spec only: a plan for 1000 replicas takes milliseconds.
			b.Dist(servers, v1beta1.MaxReplicas)
		} else {
			b.Dist(servers, 1+int32(workers%3))
		}
		specs = 3
	}
	for i := range specs {
		b.EditReplica(i, func(rs *v1beta1.ReplicaSpec) {
			rs.RestartPolicy = fuzzbytes.Pick(s, "", v1beta1.RestartPolicyNever, v1beta1.RestartPolicyExitCode,
				v1beta1.RestartPolicyOnFailure, v1beta1.RestartPolicyAlways)
		})
	}
	b.RunPolicy(func(rp *v1beta1.RunPolicy) {
		rp.CleanPodPolicy = fuzzbytes.Pick(s, "", v1beta1.CleanPodPolicyRunning, v1beta1.CleanPodPolicyAll, v1beta1.CleanPodPolicyNone)
		rp.Suspend = fuzzbytes.Pick(s, nil, ptrTo(false), ptrTo(true))
		rp.BackoffLimit = fuzzbytes.Pick(s, nil, ptrTo[int32](0), ptrTo[int32](2), ptrTo(v1beta1.MaxBackoffLimit))
		rp.ActiveDeadlineSeconds = fuzzbytes.Pick(s, nil, ptrTo[int64](0), ptrTo[int64](30), ptrTo[int64](600), ptrTo(v1beta1.MaxSeconds))
		rp.TTLSecondsAfterFinished = fuzzbytes.Pick(s, nil, ptrTo[int32](0), ptrTo[int32](60), ptrTo(int32(v1beta1.MaxSeconds)))
	})
	job := defaulted(b)
	if job.Spec.JobMode == v1beta1.DistMode {
		job.Spec.SuccessPolicy = fuzzbytes.Pick(s, v1beta1.SuccessPolicyDefault, v1beta1.SuccessPolicyAllWorkers)
	}
	job.Generation = 1
	return job
}

// jobWorld is the cluster as one job's reconciles see it.
type jobWorld struct {
	job      *v1beta1.MxJob
	pods     []corev1.Pod
	services []corev1.Service
	now      time.Time
	uids     int
}

// addPod stores replica r's pod as the API server does on create: no phase yet.
func (w *jobWorld) addPod(r replica) {
	p := podOf(w.job, r)
	w.uids++
	p.UID = types.UID(fmt.Sprintf("uid-%d", w.uids))
	p.CreationTimestamp = metav1.NewTime(w.now)
	w.pods = append(w.pods, *p)
}

// evolve moves each pod on as the kubelet or a person might, chosen by the stream.
func (w *jobWorld) evolve(s *fuzzbytes.Stream) {
	exitCodes := []int32{0, 1, 2, 127, 128, 137, 143, 255}
	kept := w.pods[:0]
	for _, p := range w.pods {
		b := s.Next()
		st := &p.Status
		switch b % 10 {
		case 2:
			st.Phase = corev1.PodPending
		case 3:
			st.Phase = corev1.PodRunning
			st.StartTime = &metav1.Time{Time: w.now}
		case 4: // the kubelet restarted its container in place
			st.Phase = corev1.PodRunning
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: v1beta1.DefaultContainerName, RestartCount: int32(b / 10)}}
		case 5:
			st.Phase = corev1.PodSucceeded
			st.ContainerStatuses = w.terminated(0, 0)
		case 6:
			st.Phase = corev1.PodFailed
			st.ContainerStatuses = w.terminated(exitCodes[int(b/10)%len(exitCodes)], time.Duration(b/10)*time.Second)
		case 7: // evicted: no container terminated
			st.Phase, st.ContainerStatuses = corev1.PodFailed, nil
			st.StartTime = &metav1.Time{Time: w.now.Add(-time.Minute)}
		case 8:
			p.DeletionTimestamp = &metav1.Time{Time: w.now}
		case 9: // deleted by hand
			continue
		}
		kept = append(kept, p)
	}
	w.pods = kept
	if s.Next()%16 == 0 {
		// A pod beyond the spec's replicas: left by hand, or by an older spec.
		w.addPod(replica{Type: v1beta1.ReplicaTypeWorker, Index: int(count(w.job.Spec.ReplicaSpecFor(v1beta1.ReplicaTypeWorker)))})
	}
}

// terminated is the mxnet container's status after it exited with code, ago before now.
func (w *jobWorld) terminated(code int32, ago time.Duration) []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: v1beta1.DefaultContainerName, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(w.now.Add(-ago))}}}}
}

// apply carries a plan out; creates beyond a few fail, as they may against a busy API server.
func (w *jobWorld) apply(s *fuzzbytes.Stream, p plan) {
	const maxCreates = 16
	w.job.Status = *p.status.DeepCopy()
	gone := map[string]bool{}
	for _, d := range p.deletePods {
		gone[d.Name] = true
	}
	terminating := s.Next()%2 == 0
	w.pods = slices.DeleteFunc(w.pods, func(pod corev1.Pod) bool { return gone[pod.Name] && !terminating })
	for i := range w.pods {
		if gone[w.pods[i].Name] {
			w.pods[i].DeletionTimestamp = &metav1.Time{Time: w.now}
		}
	}
	for i, r := range p.createPods {
		if i < maxCreates {
			w.addPod(r)
		}
	}
	w.services = slices.DeleteFunc(w.services, func(svc corev1.Service) bool { return slices.Contains(p.deleteServices, svc.Name) })
	for i, r := range p.createServices {
		if i < maxCreates {
			w.services = append(w.services, *buildReplicaService(w.job, r))
		}
	}
}

// FuzzMxJobPlan runs a fuzzed job through a few reconciles while its pods succeed, fail, restart
// and vanish, and checks every plan: it creates only replicas the spec asks for, never twice and
// never one whose pod exists; a suspended or finished job creates nothing; a finished job stays
// finished with Running neither True nor its last condition; restarts never go down; it deletes
// only pods that exist and are not already going; and the plan is a pure function of its inputs.
func FuzzMxJobPlan(f *testing.F) {
	f.Add([]byte{})                                                  // a local job, created and left
	f.Add([]byte{1, 1, 2, 0, 0, 0, 1, 0, 2, 0, 0, 5, 0, 3, 3, 3, 3}) // dist, pods come up and run
	f.Add([]byte{1, 0, 0, 2, 0, 0, 0, 1, 3, 0, 4, 60, 1, 5, 16, 66}) // dist ExitCode, a worker fails and retries
	f.Add([]byte{0, 0, 0, 2, 0, 0, 2, 4, 0, 200, 5, 5, 5, 5, 9, 9})  // local, suspended, deadline, pods vanish
	f.Add([]byte{1, 0xFF, 0xFF, 3, 3, 3, 1, 0, 3, 0, 0, 1, 30, 0})   // dist at MaxReplicas
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzbytes.Stream(data)
		w := &jobWorld{job: fuzzJob(&s), now: now}
		if errs := mxjob.ValidateCreate(w.job); len(errs) > 0 {
			t.Fatalf("the generator made a job the webhook refuses: %v", errs)
		}
		steps := 1 + int(s.Next()%6)
		if len(replicasOf(w.job)) > 16 {
			steps = 1 // a plan at the webhook's bound takes milliseconds: one is enough
		}
		for ; steps > 0; steps-- {
			p := checkedPlan(t, w)
			if p.deleteJob {
				return
			}
			w.apply(&s, p)
			w.now = w.now.Add(time.Duration(s.Next()) * fuzzbytes.Pick(&s, time.Second, time.Minute))
			if s.Next()%8 == 0 {
				w.job.Spec.RunPolicy.Suspend = ptrTo(w.job.Spec.RunPolicy.Suspend == nil || !*w.job.Spec.RunPolicy.Suspend)
				w.job.Generation++
			}
			w.evolve(&s)
		}
	})
}

// checkedPlan computes the plan for w and checks its properties.
func checkedPlan(t *testing.T, w *jobWorld) plan {
	t.Helper()
	job, pods, services := w.job.DeepCopy(), clonePods(w.pods), slices.Clone(w.services)
	p := computePlan(w.job, w.pods, w.services, w.now)
	if !reflect.DeepEqual(job, w.job) || !reflect.DeepEqual(pods, w.pods) || !reflect.DeepEqual(services, w.services) {
		t.Fatal("computePlan changed its inputs")
	}
	if again := computePlan(job, pods, services, w.now); !reflect.DeepEqual(p, again) {
		t.Fatalf("computePlan is not deterministic (-first +second):\n%s",
			cmp.Diff(p, again, cmp.Exporter(func(reflect.Type) bool { return true })))
	}

	asked := map[string]bool{}
	for _, r := range replicasOf(w.job) {
		asked[replicaName(w.job.Name, r)] = true
	}
	existing := map[string]bool{}
	for _, pod := range w.pods {
		existing[pod.Name] = true
	}
	if len(p.createPods) > len(asked) {
		t.Fatalf("the plan creates %d pods; the job has %d replicas", len(p.createPods), len(asked))
	}
	created := map[string]bool{}
	for _, r := range p.createPods {
		name := replicaName(w.job.Name, r)
		switch {
		case !asked[name]:
			t.Fatalf("the plan creates %s, which the spec does not ask for", name)
		case existing[name]:
			t.Fatalf("the plan creates %s, which exists", name)
		case created[name]:
			t.Fatalf("the plan creates %s twice", name)
		}
		created[name] = true
	}
	for _, d := range p.deletePods {
		if !existing[d.Name] || d.DeletionTimestamp != nil {
			t.Fatalf("the plan deletes %s, which is gone or already going", d.Name)
		}
	}
	if p.status.Restarts < w.job.Status.Restarts {
		t.Fatalf("restarts went down from %d to %d", w.job.Status.Restarts, p.status.Restarts)
	}

	wasFinished := finished(&w.job.Status)
	suspended := w.job.Spec.RunPolicy.Suspend != nil && *w.job.Spec.RunPolicy.Suspend
	if (wasFinished || suspended) && (len(p.createPods) > 0 || len(p.createServices) > 0) {
		t.Fatalf("a finished (%v) or suspended (%v) job creates pods %v and Services %v", wasFinished, suspended, p.createPods, p.createServices)
	}
	if wasFinished && (!finished(&p.status) || p.status.State != w.job.Status.State) {
		t.Fatalf("a finished job in state %s became %s (finished %v)", w.job.Status.State, p.status.State, finished(&p.status))
	}
	if finished(&p.status) {
		conds := p.status.Conditions
		if last := conds[len(conds)-1]; last.Type == v1beta1.ConditionRunning {
			t.Fatalf("a finished job shows Running as its last condition: %+v", conds)
		}
		if meta.IsStatusConditionTrue(conds, v1beta1.ConditionRunning) {
			t.Fatalf("a finished job is still Running=True: %+v", conds)
		}
		if p.status.CompletionTime == nil {
			t.Fatal("a finished job has no completion time")
		}
	}
	return p
}

func clonePods(pods []corev1.Pod) []corev1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]corev1.Pod, len(pods))
	for i := range pods {
		pods[i].DeepCopyInto(&out[i])
	}
	return out
}
