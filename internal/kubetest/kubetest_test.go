package kubetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/internal/builders"
)

// fatalRecorder stands in for the test given to a helper: Fatalf records the failure and ends
// the goroutine, as testing's does.
type fatalRecorder struct {
	testing.TB
	failure string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failureOf runs f with a fatalRecorder and returns how it failed, "" if it did not.
func failureOf(f func(t testing.TB)) string {
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failure
}

func TestEventually(t *testing.T) {
	for name, tc := range map[string]struct {
		timeout time.Duration
		cond    func(polls int) (bool, error)
		want    string
	}{
		"holds after errors are retried": {
			timeout: time.Minute,
			cond: func(polls int) (bool, error) {
				if polls < 2 {
					return false, errors.New("unreachable")
				}
				return polls >= 3, nil
			},
		},
		"a stop fails at once": {
			timeout: time.Hour,
			cond:    func(int) (bool, error) { return false, Stop(errors.New("job ended Failed")) },
			want:    "waiting for the thing: job ended Failed",
		},
		"a timeout names the last error": {
			timeout: 20 * time.Millisecond,
			cond: func(polls int) (bool, error) {
				if polls == 0 {
					return false, errors.New("unreachable")
				}
				return false, nil
			},
			want: "timed out waiting for the thing (last error: unreachable)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := Client{Interval: time.Millisecond, Timeout: tc.timeout}
			got := failureOf(func(t testing.TB) {
				polls := 0
				c.Eventually(t, "the thing", func(context.Context) (bool, error) {
					defer func() { polls++ }()
					return tc.cond(polls)
				})
			})
			if got != tc.want {
				t.Errorf("failure %q; want %q", got, tc.want)
			}
		})
	}
}

func TestPodsOfAJobAndATransform(t *testing.T) {
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels}}
	}
	c := Client{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		pod("a-worker-0", map[string]string{v1beta1.LabelJobName: "a"}),
		pod("b-worker-0", map[string]string{v1beta1.LabelJobName: "b"}),
		pod("a-node-1", map[string]string{v1alpha1.LabelName: "a"}),
	).Build()}
	names := func(pods []corev1.Pod, err error) []string {
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return out
	}
	ctx := context.Background()
	if diff := cmp.Diff([]string{"a-worker-0"}, names(c.Pods(ctx, builders.MxJob("a").Obj()))); diff != "" {
		t.Errorf("MxJob a's pods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a-node-1"}, names(c.Pods(ctx, builders.Transform("a").Obj()))); diff != "" {
		t.Errorf("Transform a's pods (-want +got):\n%s", diff)
	}
}

func TestWaitForJobStopsAtTheOtherFinalState(t *testing.T) {
	job := builders.MxJob("ended").Local().Obj()
	job.Status.State, job.Status.Reason = v1beta1.StateFailed, "worker-0 failed"
	c := Client{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job).Build(),
		Interval: time.Millisecond, Timeout: time.Hour}
	got := failureOf(func(t testing.TB) { c.WaitForJob(t, job, v1beta1.StateSucceeded) })
	if want := "waiting for MxJob ended to be Succeeded: job ended Failed (worker-0 failed), not Succeeded"; got != want {
		t.Errorf("failure %q; want %q", got, want)
	}
}
